"""Embeds for the game tracker: the status board, command results, the log and the history.

Every player, faction, unit and stratagem name is user text: it is escaped here (Markdown and
mentions) and trimmed to Discord's limits, and messages are sent with allowed mentions none.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import discord

from bot.games.model import LAST_ROUND, PERMANENT, PHASE_LABELS, GameState, Unit
from bot.render import mission as mission_render
from bot.render.common import (
    COLOUR_ERROR,
    COLOUR_GAME,
    EMBED_DESCRIPTION_MAX,
    EMBED_FIELD_VALUE_MAX,
    EMBED_TITLE_MAX,
    edition_label,
    escape,
    truncate,
)

UNIT_LINES_MAX = 15


def clock_line(state: GameState) -> str:
    if state.over:
        text = f"Battle over · after battle round {LAST_ROUND}"
    else:
        who = escape(state.players[state.active].name, limit=40)
        text = f"Battle round {state.round} · {who}'s {PHASE_LABELS[state.phase]} phase"
    return f"Game {state.ended} · {text}" if state.ended else text


def until_text(state: GameState, until: int | None) -> str:
    if until is None:
        return ""
    if until >= PERMANENT:
        return "for the battle"
    round_, active = state.whose_turn(until)
    if round_ > LAST_ROUND:
        return "until the end of the battle"
    return f"until {escape(state.players[active].name, limit=40)}'s turn, round {round_}"


def damaged(unit: Unit) -> bool:
    return bool(unit.wounds_lost) or (unit.models_left is not None and unit.models_left != unit.models)


def unit_line(state: GameState, unit: Unit) -> str:
    bits: list[str] = []
    if unit.destroyed:
        bits.append(f"destroyed (round {unit.destroyed_round})" if unit.destroyed_round else "destroyed")
    elif damaged(unit):
        bits.append(f"{unit.models_left}/{unit.models}" + (f", {unit.wounds_lost}w lost" if unit.wounds_lost else ""))
    if unit.judgement:
        bits.append(f"Judgement {'●' * unit.judgement}")
    if state.riled(unit):
        bits.append(f"riled up ({until_text(state, state.riled_expiry(unit))})")
    if unit.shocked:
        bits.append("battle-shocked")
    if unit.oathband:
        bits.append("Oathband mark")
    status = " · ".join(bits) if bits else "no status"
    tag = " (unlisted)" if unit.unlisted else ""
    return f"• {escape(unit.name, limit=60)}{tag} — {status}"


def _player_block(state: GameState, index: int) -> str:
    player = state.players[index]
    lines = [f"**{player.cp} CP** · **{player.vp} VP**"]
    if player.vp and (any(player.vp_primary) or any(player.vp_secondary)):
        lines[0] += f" ({mission_render.vp_split(state, index)})"
    cards = mission_render.cards_line(state, index)
    if cards:
        lines.append(cards)
    used = []
    if "waaagh" in player.once_used:
        used.append("Waaagh! called" + (f" (riled {until_text(state, player.waaagh_until)})"
                                        if player.waaagh_until and player.waaagh_until > state.turn else ""))
    used += [n.title() for n in player.once_used if n != "waaagh"]
    if used:
        lines.append("Used: " + escape(", ".join(used)))
    army = state.army(index)
    if army is not None:
        listed = [u for u in state.units_of(index) if not u.unlisted]
        lost = sum(1 for u in listed if u.destroyed)
        hurt = sum(1 for u in listed if damaged(u) and not u.destroyed)
        lines.append(f"Army: {len(listed)} units" + (f", {army['points']} pts" if army.get("points") else "")
                     + (f" · {hurt} damaged" if hurt else "") + (f" · {lost} destroyed" if lost else ""))
    units = [u for u in state.units_of(index)
             if u.judgement or state.riled(u) or u.shocked or u.oathband or u.destroyed or damaged(u)]
    lines += [unit_line(state, u) for u in units[:UNIT_LINES_MAX]]
    if len(units) > UNIT_LINES_MAX:
        lines.append(f"… and {len(units) - UNIT_LINES_MAX} more (see /game log or export)")
    return truncate("\n".join(lines), EMBED_FIELD_VALUE_MAX)


def board_embed(state: GameState, game_id: int, *, note: str | None = None, now: float | None = None) -> discord.Embed:
    """The shared status board: battle round and phase, mission, both players' CP/VP, units with statuses,
    the score by round and the chess clocks (as of `now`, default the current time)."""
    p0, p1 = state.players
    description = (f"{edition_label(state.edition)} · {escape(p0.name, limit=40)} ({escape(p0.faction, limit=40)}) "
                   f"vs {escape(p1.name, limit=40)} ({escape(p1.faction, limit=40)})")
    mission = mission_render.mission_line(state)
    if mission:
        description += "\n" + mission
    if note:
        description += "\n" + note
    reminder = battleshock_reminder(state)
    if reminder:
        description += "\n" + reminder
    embed = discord.Embed(title=truncate(clock_line(state), EMBED_TITLE_MAX),
                          description=truncate(description, EMBED_DESCRIPTION_MAX), colour=COLOUR_GAME)
    for index, player in enumerate(state.players):
        marker = " ▶" if index == state.active and not state.over else ""
        title = truncate(f"{escape(player.name, limit=40)} — {escape(player.faction, limit=40)}{marker}", EMBED_TITLE_MAX)
        embed.add_field(name=title, value=_player_block(state, index), inline=False)
    drawn = time.time() if now is None else now
    mission_render.add_board_fields(embed, state, drawn)
    embed.set_footer(text=f"Game #{game_id} · event {state.seq} · /game log for the history · drawn")
    # Discord shows it in each reader's own time zone: a board no longer redrawn (a bot restart, an expired
    # token) is visibly stale instead of showing frozen clocks as if current.
    embed.timestamp = datetime.fromtimestamp(drawn, UTC)
    return embed


def battleshock_reminder(state: GameState) -> str | None:
    """11e 08.03: in its owner's Command phase a battle-shocked unit rolls to recover."""
    if state.over or state.phase != "command" or state.edition != "11e":
        return None
    shocked = [u for u in state.units_of(state.active) if u.shocked and not u.destroyed]
    if not shocked:
        return None
    names = ", ".join(escape(u.name, limit=40) for u in shocked[:10])
    return f"Battle-shock step: roll for {names} (clear with `/shock unit:<name> clear:true` on a success)."


def result_embed(state: GameState, game_id: int, message: str, *, warnings: Sequence[str] = (),
                 now: float | None = None) -> discord.Embed:
    """The answer to a change: what happened, then the round, both CP and VP totals, and the chess clocks."""
    text = escape(message)  # a forced change's summary already names the overridden rule
    if warnings:
        text = "⚠️ " + text
    p0, p1 = state.players
    text += (f"\n\n{clock_line(state)}\n{escape(p0.name, limit=40)} {p0.cp} CP · {p0.vp} VP  |  "
             f"{escape(p1.name, limit=40)} {p1.cp} CP · {p1.vp} VP")
    clocks = mission_render.clock_field(state, time.time() if now is None else now)
    if clocks:  # every answer shows the clocks too: the board may not be live (a restart, an old board)
        text += "\n" + clocks
    embed = discord.Embed(description=truncate(text, EMBED_DESCRIPTION_MAX), colour=COLOUR_GAME)
    embed.set_footer(text=f"Game #{game_id} · event {state.seq} · /game undo reverts it")
    return embed


def log_embed(state: GameState, log: Sequence[dict[str, Any]], *, total: int) -> discord.Embed:
    lines = []
    for ev in log:
        text = escape(ev.get("summary", ev["type"]), limit=160)
        if ev.get("undone"):
            text = f"~~{text}~~"
        if ev.get("forced"):
            text += " ⚠️"
        lines.append(f"`{ev['seq']:>3}` {text}")
    description = "\n".join(lines) or "No events."
    while len(description) > EMBED_DESCRIPTION_MAX and lines:
        lines.pop(0)
        description = "\n".join(lines)
    embed = discord.Embed(title=f"Game log · {len(log)} of {total} events", description=description, colour=COLOUR_GAME)
    embed.set_footer(text="Struck-through events were undone · ⚠️ a soft rule was overridden with force:true")
    return embed


def units_embed(state: GameState, title: str, units: Sequence[Unit]) -> discord.Embed:
    lines = [unit_line(state, u) for u in units[:40]]
    description = truncate("\n".join(lines) or "No units yet.", EMBED_DESCRIPTION_MAX)
    return discord.Embed(title=truncate(title, EMBED_TITLE_MAX), description=description, colour=COLOUR_GAME)


def history_embed(games: Sequence[dict[str, Any]], *, more: bool = False) -> discord.Embed:
    """The channel's ended games, newest first; `more` when older ones are not shown (the title says so)."""
    lines = [mission_render.history_line(g) for g in games]
    title = f"Finished games in this channel (the newest {len(games)})" if more else "Finished games in this channel"
    return discord.Embed(title=title,
                         description=truncate("\n".join(lines) or "None yet.", EMBED_DESCRIPTION_MAX),
                         colour=COLOUR_GAME)


def refusal_embed(message: str) -> discord.Embed:
    return discord.Embed(description=escape(message), colour=COLOUR_ERROR)
