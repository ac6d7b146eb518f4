"""Discord glue for the game commands: run a store command off the event loop, reply with the change and
redraw the live board, find the channel's game, name a unit or a card the way the game knows it.

Shared by every game cog (game, game_resources, game_mission, army), so no cog imports another.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol

import discord
from rapidfuzz import fuzz

from bot.errors import UserError
from bot.games import commands as game_commands
from bot.games import mission_play as mp
from bot.games.commands import Outcome
from bot.games.model import GameState
from bot.games.store import DamagedGame, GameStore, Result
from bot.render import game as render
from bot.render.common import NO_MENTIONS, escape

log = logging.getLogger("cogitator.game")


def store_of(interaction: discord.Interaction) -> GameStore:
    return interaction.client.services.games  # type: ignore[attr-defined]


def escaped(error: UserError) -> UserError:
    """Refusals quote user text (unit names): neutralise Markdown and mentions before showing them."""
    if isinstance(error, DamagedGame):  # the store's own words, and callers tell it apart
        return error
    return UserError(escape(str(error)), field=error.field)


@contextmanager
def escaped_errors() -> Iterator[None]:
    """For cog code that raises refusals quoting user text directly."""
    try:
        yield
    except UserError as error:
        raise escaped(error) from None


async def act(interaction: discord.Interaction, command: Callable[..., Outcome], *args: Any, **kwargs: Any) -> Result:
    store = store_of(interaction)
    try:
        return await asyncio.to_thread(store.act, channel_of(interaction), command, *args, **kwargs)
    except UserError as error:
        raise escaped(error) from None


async def call(interaction: discord.Interaction, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    try:
        return await asyncio.to_thread(fn, *args, **kwargs)
    except UserError as error:
        raise escaped(error) from None


async def current_state(interaction: discord.Interaction) -> GameState:
    return await call(interaction, store_of(interaction).require, channel_of(interaction))


def channel_of(interaction: discord.Interaction) -> int:
    """The channel a game lives in; a refusal in direct messages."""
    if interaction.channel_id is None or interaction.guild_id is None:
        raise UserError("Games live in a server channel, not in direct messages.")
    return interaction.channel_id


async def reply(interaction: discord.Interaction, result: Result) -> None:
    """Changes are public so both players see them; mentions are never resolved. The board follows."""
    embed = render.result_embed(result.state, result.game_id, result.outcome.message, warnings=result.outcome.warnings,
                                now=store_of(interaction).now())
    await interaction.response.send_message(embed=embed, allowed_mentions=NO_MENTIONS)
    await live_boards(interaction).refresh(channel_of(interaction), result)


class LiveBoards(Protocol):
    """What the commands need of the Game cog's live boards (cogs/game.py draws and keeps them)."""

    def remember(self, channel_id: int, interaction: discord.Interaction, state: GameState | None = None) -> None: ...

    async def refresh(self, channel_id: int, result: Result) -> None: ...


def live_boards(interaction: discord.Interaction) -> LiveBoards:
    """The loaded Game cog's boards, found by the cog's name: glue never imports a cog."""
    cog = interaction.client.get_cog("Game")
    if cog is None:
        raise RuntimeError("the Game cog is not loaded")
    return cog.boards  # type: ignore[attr-defined]


def catalog_or_none(interaction: discord.Interaction) -> Any:
    """The rules catalog, or None while it is not built/installed (free-text names still work)."""
    try:
        return interaction.client.services.catalog  # type: ignore[attr-defined]
    except Exception:  # the catalog is optional for the tracker
        log.debug("catalog unavailable", exc_info=True)
        return None


async def canonical_unit(interaction: discord.Interaction, state: GameState, owner: int, raw: str) -> str:
    """A unit the game already knows keeps its name; otherwise a confident catalog datasheet match names it."""
    try:
        name, _ = game_commands.resolve_unit(state, owner, raw, create=False)
        return name
    except game_commands.AmbiguousUnit as error:
        raise escaped(error) from None
    except UserError:
        if state.army(owner) is not None:
            raise
    catalog = catalog_or_none(interaction)
    if catalog is None:
        return raw
    try:
        resolution = await asyncio.to_thread(catalog.resolve, raw, kind="datasheet", edition=state.edition)
    except Exception:
        log.debug("catalog resolve failed", exc_info=True)
        return raw
    best = resolution.best
    if best is not None and resolution.confident and same_unit_name(raw, best.name):
        return best.name
    return raw


def same_unit_name(typed: str, catalog_name: str) -> bool:
    """Take the catalog's spelling only for a case or typo fix: "Boyz 2" stays a unit of its own."""
    a, b = typed.casefold().strip(), catalog_name.casefold().strip()
    digits = [c for c in a if c.isdigit()] == [c for c in b if c.isdigit()]
    return digits and fuzz.ratio(a, b) >= 85


async def resolve_card(interaction: discord.Interaction, raw: str, mode: str | None = None) -> dict:
    """A card named in a command: a card the invoker holds keeps its mode; otherwise the catalog decides."""
    state = await call(interaction, store_of(interaction).require, channel_of(interaction))
    return await call(interaction, mp.card_ref, state.edition, raw, mode=mode)
