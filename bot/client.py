"""The discord.py bot: one CommandTree with the central error handler, cogs loaded in setup_hook."""

from __future__ import annotations

import asyncio
import importlib
import logging
import pkgutil
import secrets
import time
import traceback
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import discord
from discord import app_commands
from discord.ext import commands

import cogs
from bot.background import BACKGROUND_TASK_PREFIX
from bot.catalog.normalize import clean_text
from bot.config import Settings
from bot.errors import ConfigError, UserError
from bot.ops import metrics
from bot.ops.live import Ops, Sources
from bot.render.common import COLOUR_ERROR, NO_MENTIONS
from bot.services import Services

if TYPE_CHECKING:
    from bot.ops.sdnotify import Notifier
    from bot.ops.server import OpsServer
    from bot.web.server import WebServer

log = logging.getLogger("cogitator.client")

# The bot never joins voice: silence discord.py's start-up warnings about missing voice libraries.
discord.VoiceClient.warn_nacl = False
discord.VoiceClient.warn_dave = False

INTENTS = discord.Intents.none()
INTENTS.guilds = True  # the only intent the bot needs: slash commands arrive as interactions


def cog_modules() -> list[str]:
    """Every `cogs/<name>.py` that defines `setup`, so a new feature needs no registration elsewhere."""
    names = []
    for info in sorted(pkgutil.iter_modules(cogs.__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"cogs.{info.name}")
        if hasattr(module, "setup"):
            names.append(f"cogs.{info.name}")
    return names


def new_error_id() -> str:
    return secrets.token_hex(4)


def user_message(error: BaseException) -> tuple[str, bool]:
    """Words for the user and whether the failure was unexpected (needs an error id and a traceback)."""
    original = getattr(error, "original", None) or error.__cause__ or error
    if isinstance(original, UserError):
        return str(original), False
    if isinstance(error, app_commands.MissingPermissions):
        perms = ", ".join(p.replace("_", " ").title() for p in error.missing_permissions)
        return f"You need the {perms} permission to do that.", False
    if isinstance(error, app_commands.NoPrivateMessage):
        return "This command only works in a server channel.", False
    if isinstance(error, app_commands.CommandOnCooldown):
        return f"Slow down: try again in {error.retry_after:.0f} s.", False
    if isinstance(error, app_commands.CheckFailure):
        return str(error) or "You can't use this command here.", False
    if isinstance(error, app_commands.TransformerError):
        return f"That value doesn't fit this option: {error.value!r}.", False
    if isinstance(error, app_commands.CommandNotFound):
        return "This command is outdated or unknown. Discord may still be updating the command list.", False
    if isinstance(error, app_commands.CommandSignatureMismatch):
        return "This command has changed since your Discord client loaded it; try again in a minute.", False
    from bot.storage.base import StorageUnavailable
    from bot.storage.check import CORRUPT_MESSAGE, FULL_MESSAGE, is_corrupt, is_full

    if isinstance(original, StorageUnavailable):  # the server dropped us and did not come back at once
        log.warning("database unavailable", extra={"error": original.detail})
        return str(original), False
    if is_full(original):  # the transaction rolled back: say so, it is not a bug to report
        log.warning("storage is full", extra={"error": str(original)})
        return FULL_MESSAGE, False
    if is_corrupt(original):  # damaged on disk, not a bug: the operator restores or repairs the database
        log.error("state database damaged", extra={"error": str(original)})
        return CORRUPT_MESSAGE, False
    return "Something went wrong on our side.", True


def clean_options(options: list[dict]) -> None:
    """Lone surrogates in typed option text become U+FFFD, in place (subcommands included).

    Only a broken or hostile client sends them; left in, any reply that echoes the text cannot be encoded
    for Discord (UTF-8 JSON) or SQLite. Found by the console fuzz (tests/fuzz)."""
    for option in options:
        if isinstance(option.get("value"), str):
            option["value"] = clean_text(option["value"])
        clean_options(option.get("options") or [])


class CogitatorTree(app_commands.CommandTree):
    """Owns the one error handler: every failure becomes an ephemeral, friendly message."""

    async def interaction_check(self, interaction: discord.Interaction) -> bool:
        """Runs before options are parsed, for commands and autocomplete alike: every string option a
        command, transformer or autocomplete callback sees is valid Unicode text. A command's clock starts
        here (`cogitator_command_duration_seconds`)."""
        interaction.extras["started"] = time.perf_counter()
        clean_options((interaction.data or {}).get("options") or [])  # type: ignore[arg-type]
        return True

    async def on_error(self, interaction: discord.Interaction, error: app_commands.AppCommandError) -> None:
        message, unexpected = user_message(error)
        command = interaction.command.qualified_name if interaction.command else None
        if interaction.type is discord.InteractionType.application_command:
            record_command(interaction, "error" if unexpected else "refused")
        if unexpected:
            error_id = new_error_id()
            original = getattr(error, "original", error)
            log.error(
                "command failed",
                extra={
                    "error_id": error_id,
                    "command": command,
                    "user_id": interaction.user.id if interaction.user else None,
                    "channel_id": interaction.channel_id,
                    "traceback_text": "".join(traceback.format_exception(original)),
                },
            )
            message = f"{message} (error id `{error_id}`)"
        await send_error(interaction, message)


def record_command(interaction: discord.Interaction, outcome: str) -> None:
    """Counts one answered command by its name in the tree (never by user, guild or text: a name the tree
    does not know, which any client can send, is `unknown`)."""
    command = interaction.command
    name = command.qualified_name if command is not None else metrics.UNKNOWN_COMMAND
    started = interaction.extras.get("started")
    metrics.command_done(name, outcome, None if started is None else time.perf_counter() - started)


async def send_error(interaction: discord.Interaction, message: str) -> None:
    """Reply ephemerally whether or not the interaction was already answered or deferred."""
    embed = discord.Embed(description=message, colour=COLOUR_ERROR)
    try:
        if interaction.type is discord.InteractionType.autocomplete:
            if not interaction.response.is_done():
                await interaction.response.autocomplete([])
            return
        if interaction.response.is_done():
            await interaction.followup.send(embed=embed, ephemeral=True, allowed_mentions=NO_MENTIONS)
        else:
            await interaction.response.send_message(embed=embed, ephemeral=True, allowed_mentions=NO_MENTIONS)
    except discord.HTTPException:
        log.warning("could not deliver an error message", extra={"error": message})


class CogitatorBot(commands.AutoShardedBot):
    def __init__(self, settings: Settings, *, services: Services | None = None, sync_on_start: bool = False,
                 **options) -> None:
        super().__init__(
            command_prefix=commands.when_mentioned,  # no message commands; slash commands only
            intents=INTENTS,
            tree_cls=CogitatorTree,
            help_command=None,
            allowed_mentions=NO_MENTIONS,
            **options,
        )
        self.settings = settings
        self.services = services or Services(settings)
        self.sync_on_start = sync_on_start
        self.web: WebServer | None = None
        self.standing_forms: set[str] = set()  # custom_ids of the forms answered (bot.discord_glue.forms)
        self.data_refresh_task: asyncio.Task | None = None  # COGITATOR_DATA_REFRESH; kept so it is not collected
        self.console = False  # the offline console drives this bot (no gateway): it counts as connected
        self.notifier: Notifier | None = None  # systemd's notification socket (python -m bot run)
        self.ops = Ops(self._ops_sources())
        self.ops_server: OpsServer | None = None

    async def setup_hook(self) -> None:
        await asyncio.to_thread(self.services.open_state)
        for name in cog_modules():
            await self.load_extension(name)
        log.info("cogs loaded", extra={"commands": len(self.tree.get_commands())})
        self.ops.start()
        await self.start_web()
        await self.start_ops()
        if self.sync_on_start:
            await self.sync_commands()
        if not self.console:
            from bot.discord_glue.points_news import announce_forever

            self.points_news_task = asyncio.create_task(announce_forever(self),
                                                        name=f"{BACKGROUND_TASK_PREFIX}points-news")
        if self.settings.data_refresh:
            from bot.catalog import update

            # named as a background task: close() cancels it with the others
            self.data_refresh_task = asyncio.create_task(
                update.refresh_forever(self.services.catalog, self.settings), name=f"{BACKGROUND_TASK_PREFIX}data-refresh")
            log.info("data refresh scheduled", extra={"every_seconds": self.settings.data_refresh})

    async def sync_commands(self) -> None:
        """Publish the commands: globally, or to one guild for instant updates while developing."""
        guild_id = self.settings.dev_guild_id
        if guild_id:
            guild = discord.Object(id=guild_id)
            self.tree.copy_global_to(guild=guild)
            synced = await self.tree.sync(guild=guild)
        else:
            synced = await self.tree.sync()
        log.info("commands synced", extra={"count": len(synced), "guild_id": guild_id})

    async def on_interaction(self, interaction: discord.Interaction) -> None:
        """A submitted form that no registered kind answers (opened before a restart into a version that
        renamed it) is told so: without this, Discord shows the user a failure and the text is lost silently."""
        from bot.discord_glue.forms import FORM_GONE, is_unknown_form

        if is_unknown_form(interaction, self.standing_forms):
            log.warning("unknown form submitted", extra={"custom_id": (interaction.data or {}).get("custom_id")})
            await send_error(interaction, FORM_GONE)

    async def on_ready(self) -> None:
        log.info("ready", extra={"user": str(self.user), "guilds": len(self.guilds), "shards": self.shard_count})
        if self.notifier is not None:
            self.notifier.ready()

    async def on_app_command_completion(self, interaction: discord.Interaction, _command: Any) -> None:
        record_command(interaction, "ok")

    async def on_shard_disconnect(self, _shard_id: int) -> None:
        metrics.RECONNECTS.inc()

    def _ops_sources(self) -> Sources:
        """The running bot as the ops endpoints and /status read it (bot.ops.live)."""
        services = self.services

        def connected() -> bool:
            if self.console:
                return True
            return self.is_ready() and not self.is_closed() and any(not s.is_closed() for s in self.shards.values())

        def probe_store() -> None:
            with services.storage.read() as conn:
                conn.execute("SELECT COUNT(*) FROM schema_migrations").fetchone()

        def pools() -> dict[str, tuple[Any, int]]:
            from bot.armies.reader import WORKERS as LIST_WORKERS

            simulation, reader = services.__dict__.get("simulation"), services.__dict__.get("army_reader")
            workers = self.settings.sim_workers
            return {"simulation": (simulation.pool if simulation else None, workers),
                    "army-list": (reader.pool if reader else None, LIST_WORKERS if workers else 0)}

        def sim_pending() -> int:
            simulation = services.__dict__.get("simulation")
            return simulation.admitted if simulation else 0

        return Sources(
            connected=connected,
            shards=lambda: {sid: (not info.is_closed(), info.latency) for sid, info in self.shards.items()},
            probe_store=probe_store,
            store_backend="postgresql" if self.settings.database_url else "sqlite",
            catalog=lambda: services.__dict__.get("catalog"),
            pools=pools,
            sim_pending=sim_pending,
            open_pages=lambda: self.web.open_streams if self.web is not None else None,
        )

    async def start_ops(self) -> None:
        """The ops endpoints (COGITATOR_OPS_PORT): on the live board's server when they share its port."""
        port = self.settings.ops_port
        if port is None or self.ops_server is not None or self._ops_on_board():
            return
        from bot.ops.server import OpsServer

        self.ops_server = await _listening(OpsServer(self.ops, port=port, bind=self.settings.ops_bind),
                                           "the ops endpoints", self.settings.ops_bind, port)

    def _ops_on_board(self) -> bool:
        settings = self.settings
        return (bool(settings.ops_port) and settings.ops_port == settings.web_port  # port 0 (tests): each its own
                and settings.ops_bind == settings.web_bind)

    async def start_web(self) -> None:
        """The optional live board (COGITATOR_WEB_PORT), in this process and event loop."""
        if self.settings.web_port is None or self.web is not None:
            return
        from bot.web.server import WebServer, WebSettings

        add_routes = None
        if self._ops_on_board():
            from bot.ops.server import add_routes as add_ops
            from bot.ops.server import warn_if_public

            warn_if_public(self.settings.ops_bind, self.settings.ops_port)

            def add_routes(app: Any) -> None:
                add_ops(app, self.ops)
        web = WebServer(WebSettings(port=self.settings.web_port, bind=self.settings.web_bind,
                                    public_url=self.settings.web_public_url),
                        tokens_of=lambda: self.services.overlay_tokens, store_of=lambda: self.services.games,
                        add_routes=add_routes, leagues_of=lambda: self.services.leagues)
        self.web = await _listening(web, "the live board", self.settings.web_bind, self.settings.web_port)

    async def close(self) -> None:
        for task in asyncio.all_tasks():
            if task.get_name().startswith(BACKGROUND_TASK_PREFIX):
                task.cancel()
        try:
            if self.ops_server is not None:
                await self.ops_server.close()
                self.ops_server = None
            if self.web is not None:
                await self.web.close()
                self.web = None
            await super().close()
        finally:
            self.ops.close()
            self.services.close()


class _Server(Protocol):
    async def start(self) -> None: ...
    async def close(self) -> None: ...


S = TypeVar("S", bound=_Server)


async def _listening(server: S, what: str, bind: str, port: int) -> S:
    """`server` started; a port it cannot take (in use, not allowed) is a ConfigError naming it, not a traceback."""
    try:
        await server.start()
    except OSError as error:
        await server.close()
        raise ConfigError(f"{what} cannot listen on {bind}:{port}: {error.strerror or error}") from None
    return server
