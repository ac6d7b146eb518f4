"""The console session: a real bot, a fake user in a fake channel and guild, one line at a time.

Nothing here re-implements command dispatch. A typed line is parsed as the Discord client would
(bot.console.lines), becomes the JSON payload Discord would send (`INTERACTION_CREATE`,
bot.console.interaction), and is fed to discord.py's own `ConnectionState.parse_interaction_create`;
the tree, transformers, checks, autocomplete, views and the error handler all run as in production.
The session then waits until every task the interaction started has finished and returns the replies.
"""

from __future__ import annotations

import asyncio
import shlex
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import discord
from discord import app_commands
from discord.webhook import async_ as webhook_async

from bot.background import BACKGROUND_TASK_PREFIX
from bot.client import CogitatorBot
from bot.config import Settings
from bot.console.interaction import (
    APPLICATION_ID,
    Actor,
    CaptureAdapter,
    FakeDiscord,
    Reply,
    _flatten_components,
    _Message,
    _modal_inputs,
)
from bot.console.lines import (
    DEFAULT_MEMBER_PERMISSIONS,
    ConsoleInputError,
    form_fields,
    last_option,
    parse_command_line,
    parse_id,
    read_upload,
)

DEFAULT_USERS = {111: "Alice", 222: "Bob"}
DEFAULT_CHANNEL = 1001
DEFAULT_GUILD = 501
QUIESCE_TIMEOUT_S = 120.0


class ConsoleSession:
    """A bot plus a fake user, channel and guild; `send` a line, get back what the bot replied."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.user_id = 111
        self.channel_id: int = DEFAULT_CHANNEL
        self.guild_id: int | None = DEFAULT_GUILD
        self.names: dict[int, str] = dict(DEFAULT_USERS)
        self.permissions: dict[int, discord.Permissions] = {}
        self.bot: CogitatorBot | None = None
        self.discord = FakeDiscord()

    @property
    def _messages(self) -> dict[int, _Message]:
        """The messages the bot has sent so far, by id (tests look at a board's newest drawing)."""
        return self.discord.messages

    @property
    def _modal(self) -> dict[str, Any] | None:
        """The form the bot opened last, until it is submitted (None: no form open)."""
        return self.discord.modal

    @_modal.setter
    def _modal(self, form: dict[str, Any] | None) -> None:
        self.discord.modal = form

    def _actor(self, user: int | None) -> Actor:
        return Actor(self.user_id if user is None else user, self.channel_id, self.guild_id, self.names, self.permissions)

    # ----------------------------------------------------------------- lifecycle
    @classmethod
    async def open(cls, settings: Settings) -> ConsoleSession:
        session = cls(settings)
        await session._start_bot()
        return session

    @classmethod
    @asynccontextmanager
    async def opened(cls, settings: Settings) -> AsyncIterator[ConsoleSession]:
        """`open`, and `close` when the block ends however it ends (tests' fixtures, the terminal)."""
        session = await cls.open(settings)
        try:
            yield session
        finally:
            await session.close()

    async def _start_bot(self) -> None:
        webhook_async.async_context.set(CaptureAdapter(self.discord))
        bot = CogitatorBot(self.settings)
        bot.console = True  # connected as far as readiness goes: the console is this bot's Discord
        bot.owner_id = self.user_id  # whoever runs the console owns this bot (/status); never asks Discord
        await bot._async_setup_hook()
        bot._connection.application_id = APPLICATION_ID
        bot._connection.user = discord.ClientUser(state=bot._connection, data=self.discord.bot_user_payload())
        bot.http.get_from_cdn = self.discord.cdn_get  # type: ignore[method-assign]  # attachments are served locally
        await bot.setup_hook()
        self.bot = bot

    async def close(self) -> None:
        if self.bot is not None:
            await self.bot.close()
            self.bot = None

    async def restart(self) -> None:
        """Drop every in-memory object and reopen the stores, as a crashed and restarted bot would."""
        await self.close()
        self.discord.tokens.clear()
        await self._start_bot()

    @property
    def tree(self) -> app_commands.CommandTree:
        assert self.bot is not None
        return self.bot.tree

    def set_permissions(self, user_id: int, *names: str) -> None:
        perms = discord.Permissions(DEFAULT_MEMBER_PERMISSIONS.value)
        for name in names:
            if not hasattr(perms, name):
                raise ValueError(f"unknown permission {name!r}")
            setattr(perms, name, True)
        self.permissions[user_id] = perms

    # ----------------------------------------------------------------- public API
    async def send(self, line: str, *, user: int | None = None) -> list[Reply]:
        """Run one console line (a slash command or a directive) and return every reply it caused."""
        line = line.strip()
        if not line or line.startswith("#"):
            return []
        if line.startswith(":"):
            return await self._directive(line, user=user)
        try:
            command, options = self._parse(line, user=user)
        except ConsoleInputError as error:
            return [Reply(command=line.split(" ", 1)[0].lstrip("/"), kind="client", ephemeral=True, content=str(error))]
        who = self._actor(user)
        payload = self.discord.interaction(2, who, data=self.discord.command_data(command, options, who))
        return await self._dispatch(payload, command.qualified_name)

    async def autocomplete(self, line: str, focused: str, *, user: int | None = None) -> list[dict[str, Any]]:
        command, options = self._parse(line, partial=True, focused=focused, user=user)
        who = self._actor(user)
        payload = self.discord.interaction(4, who, data=self.discord.command_data(command, options, who))
        replies = await self._dispatch(payload, command.qualified_name)
        return next((r.choices for r in replies if r.kind == "autocomplete"), [])

    async def click(self, custom_id: str, *, values: list[str] | None = None, user: int | None = None) -> list[Reply]:
        """Press the newest button (or choose in the newest select menu) with this custom_id."""
        message = self.discord.message_with_component(custom_id)
        if message is None:
            return [Reply(command=custom_id, kind="client", ephemeral=True, content=f"No component {custom_id!r} on screen.")]
        component = next(c for c in _flatten_components(message.payload.get("components", [])) if c["custom_id"] == custom_id)
        if component.get("disabled"):
            return [Reply(command=custom_id, kind="client", ephemeral=True, content="That control is disabled.")]
        data: dict[str, Any] = {"custom_id": custom_id, "component_type": 3 if component["type"] == "select" else 2}
        if component["type"] == "select":
            data["values"] = list(values or [])
        payload = self.discord.interaction(3, self._actor(user), data=data, message=message.payload,
                                           channel_id=message.channel_id)
        return await self._dispatch(payload, custom_id)

    async def submit(self, fields: dict[str, str], *, user: int | None = None) -> list[Reply]:
        """Fill in and submit the form (modal) the bot opened last."""
        modal = self._modal
        if modal is None:
            return [Reply(command="submit", kind="client", ephemeral=True, content="No form is open.")]
        known = {c["custom_id"]: c for c in _modal_inputs(modal.get("components") or [])}
        unknown = [k for k in fields if k not in known]
        if unknown:
            return [Reply(command="submit", kind="client", ephemeral=True,
                          content=f"The form has no field {unknown[0]!r}; its fields: {', '.join(known)}.")]
        rows = []
        for custom_id, spec in known.items():
            value = fields.get(custom_id, "")
            if spec.get("required", True) and not value:
                return [Reply(command="submit", kind="client", ephemeral=True, content=f"{custom_id} is required.")]
            if spec.get("max_length") and len(value) > spec["max_length"]:
                return [Reply(command="submit", kind="client", ephemeral=True,
                              content=f"{custom_id}: must be {spec['max_length']} characters or fewer.")]
            rows.append({"type": 1, "components": [{"type": 4, "custom_id": custom_id, "value": value}]})
        self._modal = None
        payload = self.discord.interaction(5, self._actor(user), data={"custom_id": modal["custom_id"], "components": rows})
        return await self._dispatch(payload, modal["custom_id"])

    def _parse(self, line: str, *, user: int | None, partial: bool = False,
               focused: str | None = None) -> tuple[app_commands.Command, dict[str, Any]]:
        return parse_command_line(self.tree, line, user_id=self.user_id if user is None else user,
                                  guild_id=self.guild_id, permissions=self.permissions, attach=self._attach,
                                  partial=partial, focused=focused)

    def _attach(self, name: str, value: str) -> str:
        """`@path/to/file`: read it now (as the Discord client uploads it) and return the attachment id."""
        filename, data = read_upload(name, value)
        return self.discord.upload(filename, data)

    # ----------------------------------------------------------------- directives
    async def _directive(self, line: str, *, user: int | None = None) -> list[Reply]:
        name, _, rest = line.partition(" ")
        rest = rest.strip()
        note = Reply(command=name, kind="console")
        try:
            if name == ":as":
                self.user_id = parse_id(rest, "user")
                note.content = f"Now acting as {self.names.get(self.user_id, self.user_id)} ({self.user_id})."
            elif name == ":channel":
                self.channel_id = parse_id(rest, "channel")
                note.content = f"Now in channel {self.channel_id}."
            elif name == ":guild":
                self.guild_id = None if rest.lower() in ("none", "dm", "0") else parse_id(rest, "guild")
                note.content = f"Now in guild {self.guild_id}." if self.guild_id else "Now in direct messages."
            elif name == ":restart":
                await self.restart()
                note.content = "Restarted: in-memory state dropped, stores reopened."
            elif name == ":perms":
                words = rest.split()
                self.set_permissions(self.user_id, *words)
                note.content = f"Permissions of {self.user_id}: {', '.join(words) or 'defaults'}."
            elif name == ":name":
                self.names[self.user_id] = rest or str(self.user_id)
                note.content = f"User {self.user_id} is now called {self.names[self.user_id]!r}."
            elif name == ":click":
                parts = shlex.split(rest)
                if not parts:
                    raise ConsoleInputError("usage: :click CUSTOM_ID [VALUE ...]")
                return await self.click(parts[0], values=parts[1:] or None, user=user)
            elif name == ":submit":
                return await self.submit(form_fields(rest), user=user)
            elif name == ":complete":
                command_line, focused = last_option(rest)
                choices = await self.autocomplete(command_line, focused)
                return [Reply(command=command_line, kind="autocomplete", ephemeral=True, choices=choices)]
            else:
                raise ConsoleInputError(
                    f"Unknown directive {name}. Directives: :as, :channel, :guild, :restart, :perms, :name, :click, "
                    ":submit, :complete."
                )
        except (ConsoleInputError, ValueError) as error:
            note.kind, note.ephemeral, note.content = "client", True, str(error)
        return [note]

    # ----------------------------------------------------------------- dispatch
    async def _dispatch(self, payload: dict[str, Any], label: str) -> list[Reply]:
        assert self.bot is not None
        self.discord.replies = []
        self.discord.current_command = label
        self.discord.default_channel = self.channel_id
        self.discord.clicked_message_id = int(payload["message"]["id"]) if "message" in payload else None
        before = asyncio.all_tasks()
        self.bot._connection.parse_interaction_create(payload)
        await self._quiesce(before)
        return self.discord.replies

    async def _quiesce(self, before: set[asyncio.Task]) -> None:
        """Wait until every task this interaction started has finished (view timers excepted)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + QUIESCE_TIMEOUT_S
        while True:
            await asyncio.sleep(0)
            pending = {t for t in asyncio.all_tasks() - before if not t.done() and _is_interaction_work(t)}
            pending.discard(asyncio.current_task())
            if not pending:
                return
            remaining = deadline - loop.time()
            if remaining <= 0:
                still = ", ".join(sorted(f"{t.get_name()} ({getattr(t.get_coro(), '__qualname__', '?')})"
                                         for t in pending))
                raise TimeoutError(f"the bot did not finish answering in time; still running: {still}")
            await asyncio.wait(pending, timeout=remaining)


def _is_interaction_work(task: asyncio.Task) -> bool:
    """Tasks an interaction may leave running: view timers, the live board's connections and feed (a page's
    event stream never ends by itself, and a page may connect while a command runs), and background tasks
    (`BACKGROUND_TASK_PREFIX`, e.g. the Discord board's clock redraw)."""
    coro = task.get_coro()
    name = getattr(coro, "__qualname__", "") or ""
    return ("timeout" not in name.lower() and "inner_call" not in name and not name.startswith("RequestHandler")
            and not task.get_name().startswith(("discord-ui-view-timeout", "overlay-feed", BACKGROUND_TASK_PREFIX)))
