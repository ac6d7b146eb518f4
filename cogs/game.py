"""/game: start, status board (with restart-proof buttons), next, undo, log, end, history.

Thin adapter: parse options, run a `bot.games.commands` function through the store in a worker
thread (the store holds the per-channel lock and the `BEGIN IMMEDIATE` transaction), render.
What the game cogs share (acting on the store, replying, autocompletes) lives in bot/discord_glue/.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from typing import Literal

import aiohttp
import discord
from discord import app_commands
from discord.ext import commands

from bot.background import BACKGROUND_TASK_PREFIX
from bot.discord_glue.choices import battle_size_ac, deployment_ac, mission_ac
from bot.discord_glue.games import act, call, channel_of, live_boards, reply, store_of
from bot.discord_glue.leagues import league_ac, put_forward
from bot.errors import UserError
from bot.games import commands as game_commands
from bot.games import mission_play, missions
from bot.games.model import GameState
from bot.games.store import DamagedGame, Result
from bot.render import game as render
from bot.render import mission as mission_render
from bot.render.common import NO_MENTIONS, escape

log = logging.getLogger("cogitator.game")

class LiveBoards:
    """The newest board message of each channel, so that a change made by any command updates it in place.

    A board is edited through the interaction that posted it (or last pressed one of its buttons): that
    interaction's token lets the bot edit the message for 15 minutes, with no channel permission needed.
    Older boards keep their Refresh button. Kept in memory: after a restart, the next `/game status` or
    button press makes a board live again (every board carries the time it was drawn, so a board that is no
    longer redrawn is visibly stale).

    While a chess clock runs, a background task re-renders the live board at most once every
    `CLOCK_REFRESH_S` seconds (well inside Discord's rate limits) so the clocks visibly move. The times
    themselves always come from the logged event timestamps; the task only redraws. Just before the
    interaction token expires, the board is drawn one last time saying it is no longer updated and how to
    get a live one (`RETIRED_NOTE`), instead of freezing silently.
    """

    TOKEN_LIFETIME_S = 14 * 60
    CLOCK_REFRESH_S = 10.0
    RETIRED_NOTE = ("⏸ No longer updated here (Discord lets a bot edit a reply for 15 minutes): press Refresh "
                    "or use `/game status` for a live board.")

    def __init__(self) -> None:
        self._boards: dict[int, tuple[discord.Interaction, float]] = {}
        self._edited: dict[int, float] = {}
        self._tickers: dict[int, asyncio.Task] = {}
        self._expiries: dict[int, asyncio.Task] = {}

    def remember(self, channel_id: int, interaction: discord.Interaction, state: GameState | None = None) -> None:
        self._boards[channel_id] = (interaction, time.monotonic())
        self._edited[channel_id] = time.monotonic()
        old = self._expiries.pop(channel_id, None)
        if old is not None:
            old.cancel()
        self._expiries[channel_id] = asyncio.get_running_loop().create_task(
            self._expire(channel_id, interaction), name=f"{BACKGROUND_TASK_PREFIX}board-expiry-{channel_id}")
        if state is not None:
            self.follow_clock(channel_id, state)

    async def _expire(self, channel_id: int, interaction: discord.Interaction) -> None:
        """When the board's token is about to lapse (and no newer board took over), say it is not live."""
        await asyncio.sleep(self.TOKEN_LIFETIME_S)
        board = self._boards.get(channel_id)
        if board is not None and board[0] is interaction:
            await self._retire(channel_id)

    async def _retire(self, channel_id: int) -> None:
        board = self._boards.pop(channel_id, None)
        if board is None:
            return
        store = store_of(board[0])
        try:
            found = await asyncio.to_thread(store.active, channel_id)
            if found is not None:
                game_id, state = found
                await board[0].edit_original_response(
                    embed=render.board_embed(state, game_id, note=self.RETIRED_NOTE, now=store.now()),
                    view=board_view(channel_id, state), allowed_mentions=NO_MENTIONS)
        except Exception as error:  # a closed store, an expired token, a lost connection: it is only a view
            log.info("board not retired", extra={"channel_id": channel_id, "error": repr(error)})

    def follow_clock(self, channel_id: int, state: GameState) -> None:
        """Start redrawing the live board while the clock runs (one task per channel)."""
        running = state.clock is not None and state.clock.running
        task = self._tickers.get(channel_id)
        if running and (task is None or task.done()) and channel_id in self._boards:
            self._tickers[channel_id] = asyncio.get_running_loop().create_task(
                self._tick(channel_id), name=f"{BACKGROUND_TASK_PREFIX}clock-{channel_id}")

    async def _tick(self, channel_id: int) -> None:
        while True:
            await asyncio.sleep(self.CLOCK_REFRESH_S)
            board = self._boards.get(channel_id)
            if board is None:
                return
            if time.monotonic() - self._edited.get(channel_id, 0.0) < self.CLOCK_REFRESH_S:
                continue  # a command redrew it recently
            store = store_of(board[0])
            try:
                found = await asyncio.to_thread(store.active, channel_id)
            except Exception:  # a closed store (shutdown) or a database error: stop redrawing
                log.info("clock refresh stopped", extra={"channel_id": channel_id}, exc_info=True)
                return
            if found is None or found[1].clock is None or not found[1].clock.running:
                return
            game_id, state = found
            await self._edit(channel_id, state, game_id, store.now())

    async def refresh(self, channel_id: int, result: Result) -> None:
        board = self._boards.get(channel_id)
        if board is None:
            return
        await self._edit(channel_id, result.state, result.game_id, store_of(board[0]).now())
        self.follow_clock(channel_id, result.state)

    async def _edit(self, channel_id: int, state: GameState, game_id: int, now: float) -> None:
        board = self._boards.get(channel_id)
        if board is None:
            return
        interaction, since = board
        if time.monotonic() - since > self.TOKEN_LIFETIME_S:
            await self._retire(channel_id)
            return
        try:
            await interaction.edit_original_response(embed=render.board_embed(state, game_id, now=now),
                                                     view=board_view(channel_id, state),
                                                     allowed_mentions=NO_MENTIONS)
            self._edited[channel_id] = time.monotonic()
        except discord.HTTPException as error:  # deleted board or expired token: stop following it
            log.info("board no longer editable", extra={"channel_id": channel_id, "error": str(error)})
            self._boards.pop(channel_id, None)
        except (aiohttp.ClientError, TimeoutError, RuntimeError) as error:
            # The connection went away mid-edit (a shutdown closing the HTTP session raises RuntimeError
            # "Session is closed"; a network drop, ClientError). The change itself is saved and was
            # answered; the board is only a view, redrawn by the next command or button.
            log.warning("board not redrawn", extra={"channel_id": channel_id, "error": repr(error)})

    def close(self) -> None:
        for task in [*self._tickers.values(), *self._expiries.values()]:
            task.cancel()
        self._tickers.clear()
        self._expiries.clear()


# ---- the status board's buttons (persistent across restarts) -------------------------------------

BUTTONS = {"next": ("Next phase", discord.ButtonStyle.primary),
           "cp": ("+1 CP", discord.ButtonStyle.success),
           "undo": ("Undo", discord.ButtonStyle.secondary),
           "refresh": ("Refresh", discord.ButtonStyle.secondary),
           "pass": ("Pass clock", discord.ButtonStyle.success),
           "card": ("Mission card", discord.ButtonStyle.secondary)}
READ_ONLY = ("refresh", "card")


class BoardButton(discord.ui.DynamicItem[discord.ui.Button],
                  template=r"game:(?P<action>next|cp|undo|refresh|pass|card):(?P<channel>[0-9]{1,20})"):
    """A board button; its custom_id names the action and the channel, so it works after a restart."""

    def __init__(self, action: str, channel_id: int, *, disabled: bool = False) -> None:
        label, style = BUTTONS[action]
        super().__init__(discord.ui.Button(label=label, style=style, custom_id=f"game:{action}:{channel_id}",
                                           disabled=disabled))
        self.action = action
        self.channel_id = channel_id

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction, item: discord.ui.Button,
                             match: re.Match[str]) -> BoardButton:
        return cls(match["action"], int(match["channel"]))

    async def callback(self, interaction: discord.Interaction) -> None:
        store = store_of(interaction)
        try:
            if interaction.channel_id != self.channel_id:
                raise UserError("This board belongs to another channel's game.")
            user = interaction.user.id
            if self.action == "refresh":  # reading is for everyone
                found = await asyncio.to_thread(store.require_active, self.channel_id)
                await interaction.response.edit_message(embed=render.board_embed(found[1], found[0], now=store.now()),
                                                        view=board_view(self.channel_id, found[1]),
                                                        allowed_mentions=NO_MENTIONS)
                live_boards(interaction).remember(self.channel_id, interaction, found[1])
                return
            if self.action == "card":  # the full mission card, for everyone, only to the presser
                state = (await asyncio.to_thread(store.require_active, self.channel_id))[1]
                embed = await asyncio.to_thread(mission_render.mission_card_for, state)
                await interaction.response.send_message(embed=embed, ephemeral=True, allowed_mentions=NO_MENTIONS)
                return
            if self.action == "undo":
                result = await asyncio.to_thread(store.undo, self.channel_id, user)
            else:
                command, args = {"next": (game_commands.next_phase, (user,)), "cp": (game_commands.cp_gain, (user, 1)),
                                 "pass": (mission_play.clock_pass, (user,))}[self.action]
                result = await asyncio.to_thread(store.act, self.channel_id, command, *args)
        except UserError as error:
            text = str(error)
            if isinstance(error, game_commands.SoftRuleError):
                text = " ".join(f"⚠️ {w}" for w in error.warnings) + " To do it anyway: /cp gain amount:1 force:true."
            await interaction.response.send_message(embed=render.refusal_embed(text), ephemeral=True,
                                                    allowed_mentions=NO_MENTIONS)
            return
        embed = render.board_embed(result.state, result.game_id, note=escape(result.outcome.message), now=store.now())
        await interaction.response.edit_message(embed=embed, view=board_view(self.channel_id, result.state),
                                                allowed_mentions=NO_MENTIONS)
        live_boards(interaction).remember(self.channel_id, interaction, result.state)


def board_view(channel_id: int, state: GameState | None = None) -> discord.ui.View:
    """Next, +1 CP, Undo, Refresh; Pass clock while a clock is set; Mission card when there is a mission."""
    view = discord.ui.View(timeout=None)
    over = bool(state and state.over)
    actions = ["next", "cp", "undo", "refresh"]
    if state is not None and state.clock is not None and not state.clock.stopped:
        actions.append("pass")
    if state is not None and state.mission:
        actions.append("card")
    for action in actions:
        view.add_item(BoardButton(action, channel_id, disabled=over and action not in ("undo", "refresh", "card")))
    return view


class FirstTurnButton(discord.ui.DynamicItem[discord.ui.Button],
                      template=r"game:first:(?P<channel>[0-9]{1,20}):(?P<player>[01])"):
    """After a roll-off: "<name> goes first". Only the roll-off winner can press; works after a restart."""

    def __init__(self, channel_id: int, player: int, label: str = "", *, disabled: bool = False) -> None:
        super().__init__(discord.ui.Button(label=label[:80] or f"Player {player + 1} goes first",
                                           style=discord.ButtonStyle.primary,
                                           custom_id=f"game:first:{channel_id}:{player}", disabled=disabled))
        self.channel_id = channel_id
        self.player = player

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction, item: discord.ui.Button,
                             match: re.Match[str]) -> FirstTurnButton:
        return cls(int(match["channel"]), int(match["player"]), item.label or "")

    async def callback(self, interaction: discord.Interaction) -> None:
        store = store_of(interaction)
        try:
            if interaction.channel_id != self.channel_id:
                raise UserError("This roll-off belongs to another channel's game.")
            result = await asyncio.to_thread(store.act, self.channel_id, mission_play.choose_first,
                                             interaction.user.id, self.player)
        except UserError as error:
            await interaction.response.send_message(embed=render.refusal_embed(str(error)), ephemeral=True,
                                                    allowed_mentions=NO_MENTIONS)
            return
        embed = mission_render.rolloff_embed(result.state, result.outcome.message)
        await interaction.response.edit_message(embed=embed, view=first_turn_view(self.channel_id, result.state),
                                                allowed_mentions=NO_MENTIONS)
        await live_boards(interaction).refresh(self.channel_id, result)


def first_turn_view(channel_id: int, state: GameState) -> discord.ui.View:
    view = discord.ui.View(timeout=None)
    done = state.first_chosen or not mission_play.first_turn_open(state)
    for index, player in enumerate(state.players):
        view.add_item(FirstTurnButton(channel_id, index, f"{player.name} goes first", disabled=done))
    return view


# ---- /game ---------------------------------------------------------------------------------------

EditionChoice = Literal["10e", "11e"]
HISTORY_SHOWN = 10  # /game history: the newest games (says so when there are more)
DAMAGED_ABANDONED = ("Game abandoned. Its stored record was damaged, so there is no final score. "
                     "/game start begins a new game.")
DAMAGED_ENDED_NOTE = "Game ended. Its stored log is damaged, so there is no final score. /game start begins a new game."


@app_commands.guild_only()
class Game(commands.GroupCog, group_name="game", group_description="Track a battle in this channel: clock, CP, VP, statuses."):
    def __init__(self, bot: commands.Bot) -> None:
        self.bot = bot
        self.boards = LiveBoards()

    async def cog_unload(self) -> None:
        self.boards.close()

    @app_commands.command(name="start", description="Start a game here: round 1, your Command phase.")
    @app_commands.describe(opponent="Who you are playing against", edition="Rules edition (default: the server's)",
                           faction="Your faction", opponent_faction="Your opponent's faction",
                           starting_cp="CP each player starts with, before the first Command phase (default 0)",
                           mission="The mission (11e: from the catalog; 10e: free text)",
                           deployment="The deployment map (optional)",
                           battle_size="Incursion, Strike Force or Onslaught: what /army check uses here "
                                       "(default Strike Force)")
    @app_commands.autocomplete(mission=mission_ac, deployment=deployment_ac, battle_size=battle_size_ac)
    async def start(self, interaction: discord.Interaction, opponent: discord.User, faction: str,
                    opponent_faction: str, edition: EditionChoice | None = None,
                    starting_cp: app_commands.Range[int, 0, 20] = 0, mission: str | None = None,
                    deployment: str | None = None, battle_size: str | None = None) -> None:
        if opponent.bot:
            raise UserError("You cannot play against a bot: pick a person.", field="opponent")
        if edition is None:
            edition = self.bot.services.guild_settings.edition(interaction.guild_id)  # type: ignore[attr-defined]
        if battle_size is not None:
            from bot.points import sizes

            try:
                battle_size = sizes.resolve(self.bot.services.settings.data_dir, battle_size)  # type: ignore[attr-defined]
            except sizes.SizesError as error:
                raise UserError(f"{error}.", field="battle_size") from None
        store = store_of(interaction)
        record = await call(interaction, missions.mission_record, edition, mission, deployment)
        result = await call(interaction, store.start, channel_of(interaction), interaction.guild_id,
                            user_id=interaction.user.id, user_name=interaction.user.display_name,
                            opponent_id=opponent.id, opponent_name=opponent.display_name, edition=edition,
                            faction=faction, opponent_faction=opponent_faction, starting_cp=starting_cp,
                            mission=record, battle_size=battle_size)
        note = "The game begins. Who goes first? `/game rolloff`."
        embed = render.board_embed(result.state, result.game_id, note=note, now=store.now())
        await interaction.response.send_message(embed=embed, view=board_view(channel_of(interaction), result.state),
                                                allowed_mentions=NO_MENTIONS)
        self.boards.remember(channel_of(interaction), interaction, result.state)

    @app_commands.command(name="status", description="Show the board: round, mission, CP, VP, clocks, with buttons.")
    async def status(self, interaction: discord.Interaction) -> None:
        store = store_of(interaction)
        game_id, state = await call(interaction, store.require_active, channel_of(interaction))
        embed = render.board_embed(state, game_id, now=store.now())
        await interaction.response.send_message(embed=embed, view=board_view(channel_of(interaction), state),
                                                allowed_mentions=NO_MENTIONS)
        self.boards.remember(channel_of(interaction), interaction, state)

    @app_commands.command(name="rolloff", description="Roll off for the first turn (or record a physical roll).")
    @app_commands.describe(winner="Who won a roll-off made with real dice (leave out to roll here)")
    async def rolloff(self, interaction: discord.Interaction, winner: discord.User | None = None) -> None:
        result = await act(interaction, mission_play.rolloff, interaction.user.id,
                           winner_user=winner.id if winner else None)
        embed = mission_render.rolloff_embed(result.state, result.outcome.message)
        view = first_turn_view(channel_of(interaction), result.state)
        await interaction.response.send_message(embed=embed, view=view, allowed_mentions=NO_MENTIONS)
        await live_boards(interaction).refresh(channel_of(interaction), result)

    @app_commands.command(name="score", description="The score: VP by category and round, CP, stratagems, time.")
    async def score(self, interaction: discord.Interaction) -> None:
        game_id, state, summary = await call(interaction, store_of(interaction).summary, channel_of(interaction))
        await interaction.response.send_message(embed=mission_render.score_embed(
            state, game_id, summary, headline=render.clock_line(state)),
                                                ephemeral=True, allowed_mentions=NO_MENTIONS)

    @app_commands.command(name="next", description="Advance to the next phase (either player).")
    async def next(self, interaction: discord.Interaction) -> None:
        await reply(interaction, await act(interaction, game_commands.next_phase, interaction.user.id))

    @app_commands.command(name="undo", description="Revert the last change (repeat to go further back).")
    async def undo(self, interaction: discord.Interaction) -> None:
        store = store_of(interaction)
        await reply(interaction, await call(interaction, store.undo, channel_of(interaction), interaction.user.id))

    @app_commands.command(name="log", description="Show the game's history of changes.")
    @app_commands.describe(count="How many of the newest events (default 25)")
    async def log(self, interaction: discord.Interaction, count: app_commands.Range[int, 1, 200] = 25) -> None:
        if not 1 <= count <= 200:
            raise UserError("count must be between 1 and 200.", field="count")
        store = store_of(interaction)
        state, events = await call(interaction, store.log, channel_of(interaction))
        embed = render.log_embed(state, events[-count:], total=len(events))
        await interaction.response.send_message(embed=embed, ephemeral=True, allowed_mentions=NO_MENTIONS)

    @app_commands.command(name="end", description="End the game (players, or members with Manage Channel).")
    @app_commands.describe(abandon="Reset: record the game as abandoned instead of finished",
                           league="Put the result forward to this league (default: the channel's bound league)")
    @app_commands.autocomplete(league=league_ac)
    async def end(self, interaction: discord.Interaction, abandon: bool = False, league: str | None = None) -> None:
        perms = interaction.permissions
        manager = bool(perms and (perms.manage_channels or perms.administrator))
        store = store_of(interaction)
        result = await call(interaction, store.end, channel_of(interaction), interaction.user.id,
                            manager=manager, abandon=abandon)
        if result is None:  # a damaged game was abandoned: there is no state to score or draw
            await interaction.response.send_message(DAMAGED_ABANDONED, allowed_mentions=NO_MENTIONS)
            return
        try:
            game_id, state, summary = await call(interaction, store.summary, channel_of(interaction))
        except DamagedGame:  # ended, but its log can't be read for the final score
            await interaction.response.send_message(DAMAGED_ENDED_NOTE, allowed_mentions=NO_MENTIONS)
            return
        embed = mission_render.score_embed(state, game_id, summary, headline=render.clock_line(state), final=True)
        await interaction.response.send_message(embed=embed, allowed_mentions=NO_MENTIONS)
        await live_boards(interaction).refresh(channel_of(interaction), result)
        ended = result.outcome.events[-1]
        await put_forward(interaction, game_id=game_id, status=ended["data"]["status"], ended_at=ended["ts"],
                          summary=summary, league=league)

    @app_commands.command(name="overlay", description="A read-only live-board link of this game for stream overlays.")
    @app_commands.describe(revoke="Stop every live-board link of this channel's games instead")
    async def overlay(self, interaction: discord.Interaction, revoke: bool = False) -> None:
        from bot.web import links

        web = getattr(self.bot, "web", None)
        if web is None:
            raise UserError(links.WEB_OFF)
        perms = interaction.permissions
        manager = bool(perms and (perms.manage_channels or perms.administrator))
        services = self.bot.services  # type: ignore[attr-defined]
        who = {"channel_id": channel_of(interaction), "user_id": interaction.user.id, "manager": manager}
        if revoke:
            text = await call(interaction, links.revoke_links, services.games, services.overlay_tokens, **who)
        else:
            text = await call(interaction, links.issue_link, services.games, services.overlay_tokens, web.link, **who)
        await interaction.response.send_message(text, ephemeral=True, allowed_mentions=NO_MENTIONS,
                                                suppress_embeds=True)

    @app_commands.command(name="history", description="List the finished games of this channel.")
    async def history(self, interaction: discord.Interaction) -> None:
        games = await call(interaction, store_of(interaction).history, channel_of(interaction), limit=HISTORY_SHOWN + 1)
        embed = render.history_embed(games[:HISTORY_SHOWN], more=len(games) > HISTORY_SHOWN)
        await interaction.response.send_message(embed=embed, ephemeral=True,
                                                allowed_mentions=NO_MENTIONS)


async def setup(bot: commands.Bot) -> None:
    bot.add_dynamic_items(BoardButton, FirstTurnButton)
    await bot.add_cog(Game(bot))


async def teardown(bot: commands.Bot) -> None:
    bot.remove_dynamic_items(BoardButton, FirstTurnButton)
