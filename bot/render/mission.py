"""Embeds and board lines for mission play: the mission line, the per-round score table, the clocks,
the roll-off, the mission card, the score breakdown and the final summary.

Everything fits a phone (tables stay within about 36 characters) and escapes user text.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import discord

from bot.games import missions
from bot.games.mission_play import rounds_played
from bot.games.model import LAST_ROUND, GameState
from bot.render.common import (
    COLOUR_GAME,
    EMBED_DESCRIPTION_MAX,
    EMBED_FIELD_VALUE_MAX,
    EMBED_TITLE_MAX,
    edition_label,
    escape,
    truncate,
)

NAME_COLUMN = 9
LIST_BUDGET = 240  # characters of one list line in a summary field (see bounded_list)


def mission_line(state: GameState) -> str | None:
    """Mission, deployment and primary rule in one line (None when the game has no mission)."""
    m = state.mission
    if not m:
        return None
    bits = [f"**{escape(m['name'], limit=60)}**"]
    if m.get("deployment"):
        bits.append(escape(m["deployment"], limit=40))
    text = "🎯 " + " · ".join(bits)
    if m.get("primary"):
        text += f" — {escape(m['primary'], limit=160)}"
    elif not m.get("catalog"):
        text += " — (free text: not in the mission catalog)"
    return text


def clock_text(seconds: float) -> str:
    """h:mm:ss or m:ss, whole seconds rounded up like a chess clock; negative times show how far over."""
    sign = "-" if seconds < 0 else ""
    whole = math.ceil(seconds) if seconds >= 0 else math.floor(-seconds)
    h, rest = divmod(whole, 3600)
    m, s = divmod(rest, 60)
    return f"{sign}{h}:{m:02d}:{s:02d}" if h else f"{sign}{m}:{s:02d}"


def clock_field(state: GameState, now: float) -> str | None:
    clock = state.clock
    if clock is None:
        return None
    parts = []
    for i, p in enumerate(state.players):
        left = clock.remaining(i, now)
        mark = " ▶" if clock.running and clock.holder == i else ""
        parts.append(f"{escape(p.name, limit=20)} **{clock_text(left)}**{mark}")
    text = "⏱ " + " · ".join(parts)
    if clock.stopped or state.over:
        text += " (stopped: the battle is over)"
    elif not clock.running:
        text += " (paused)"
    late = [escape(state.players[i].name, limit=20) for i in range(2) if clock.remaining(i, now) <= 0]
    if late:
        text += "\n⌛ Out of time: " + ", ".join(late) + " (nothing is enforced)"
    return text


def score_table(state: GameState) -> str:
    """Rounds down, players across, primary/secondary/other per cell; phone width (at most 36 columns).

    Columns are measured in display cells, so a name in CJK or with emoji (two cells a character) stays
    aligned; two names that start alike get their player number; a cell never runs into the next one."""
    names = [_fit(p.name, NAME_COLUMN) for p in state.players]
    if names[0] == names[1]:
        names = [_fit(p.name, NAME_COLUMN - 1) + str(i + 1) for i, p in enumerate(state.players)]
    rows = [("Rd", names)]
    for r in rounds_played(state):
        rows.append((f"{r:>2}", [f"{p.vp_primary[r - 1]}/{p.vp_secondary[r - 1]}/{p.vp_other[r - 1]}"
                                 for p in state.players]))
    rows.append(("Σ ", [f"{p.vp}" for p in state.players]))
    lines = [f"{head} {_pad(a, NAME_COLUMN + 2)}{b}" for head, (a, b) in rows]
    # user names are inside a code block: backticks are the only thing to neutralise
    return "```\n" + "\n".join(lines).replace("`", "'") + "\n```primary/secondary/other"


def display_width(text: str) -> int:
    """Monospace cells: East Asian wide and fullwidth characters take two, combining marks none."""
    return sum(0 if unicodedata.combining(ch) else 2 if unicodedata.east_asian_width(ch) in "WF" else 1
               for ch in text)


def _fit(text: str, width: int) -> str:
    out = ""
    for ch in text:
        if display_width(out + ch) > width:
            break
        out += ch
    return out


def _pad(text: str, width: int) -> str:
    return text + " " * max(1, width - display_width(text))


def cards_line(state: GameState, index: int) -> str | None:
    held = [c for c in state.players[index].secondaries if c["status"] in ("drawn", "kept")]
    if not held:
        return None
    names = [escape(c["name"], limit=30) + (" (fixed)" if c["mode"] == "fixed" else "") for c in held]
    return "Cards: " + ", ".join(names)


def vp_split(state: GameState, index: int) -> str:
    p = state.players[index]
    return f"P {sum(p.vp_primary)} · S {sum(p.vp_secondary)} · O {sum(p.vp_other)}"


def add_board_fields(embed: discord.Embed, state: GameState, now: float) -> None:
    """The board's mission-play fields: score by round once anything is scored, and the clocks."""
    if any(p.vp for p in state.players) or state.mission:
        embed.add_field(name="Score by round", value=truncate(score_table(state), EMBED_FIELD_VALUE_MAX), inline=False)
    clocks = clock_field(state, now)
    if clocks:
        embed.add_field(name="Chess clock", value=truncate(clocks, EMBED_FIELD_VALUE_MAX), inline=False)


def rolloff_embed(state: GameState, message: str) -> discord.Embed:
    text = escape(message)
    if state.rolloff is not None and state.first_chosen is False:
        winner = state.players[state.rolloff["winner"]].name
        text += f"\n\n{escape(winner, limit=40)}: choose who takes the first turn (only you can press)."
    return discord.Embed(title="Roll-off", description=truncate(text, EMBED_DESCRIPTION_MAX), colour=COLOUR_GAME)


def card_embed(edition: str, mission: missions.Mission | None, record: dict[str, Any] | None) -> discord.Embed:
    """The full mission card: matchup, primary rule, every VP award with its timing, caps, deployment."""
    if mission is None:
        embed = discord.Embed(title=truncate(escape(record["name"] if record else "No mission chosen"), EMBED_TITLE_MAX),
                              colour=COLOUR_GAME, description=_no_card_text(edition, record))
        caps = missions.caps_of(record, edition)
    else:
        lines = []
        if mission.matchup:
            lines.append(f"*{escape(mission.matchup)}*")
        if mission.primary is not None:
            lines.append(escape(mission.primary.text))
            lines.append("")
            lines += [f"• {escape(a)}" for a in mission.primary.award_lines()]
            if mission.primary.actions:
                lines.append("Actions: " + ", ".join(escape(a.replace("-", " ")) for a in mission.primary.actions))
        embed = discord.Embed(title=truncate(escape(mission.name), EMBED_TITLE_MAX), colour=COLOUR_GAME,
                              description=truncate("\n".join(lines), EMBED_DESCRIPTION_MAX))
        caps = mission.caps
        if record and record.get("deployment"):
            embed.add_field(name="Deployment", value=escape(record["deployment"], limit=100), inline=False)
    embed.add_field(name="Caps", value=caps_text(caps, edition), inline=False)
    source = mission.source if mission else "free text"
    embed.set_footer(text=f"{edition_label(edition)} · {source} · summary by {missions.SOURCE} (community prose)"
                     if mission else f"{edition_label(edition)} · {source}")
    return embed


def _no_card_text(edition: str, record: dict[str, Any] | None) -> str:
    """Why there is no card to show, and how to get one: the edition's missions when the catalog has them."""
    known = missions.catalog().missions.get(edition, [])
    if record is not None:
        where = "is not in the mission catalog" + ("" if known else f" ({missions.SOURCE} has no {edition} missions)")
        return f"This mission {where}; the {edition} caps apply."
    if not known:
        return (f"No mission is set, and {missions.SOURCE} has no {edition} missions: name one as free text with "
                f"`/mission set`. The {edition} caps apply.")
    names = ", ".join(escape(m.name) for m in known[:12]) + (", …" if len(known) > 12 else "")
    return (f"No mission is set here. Show one with `/mission show name:` or choose it with `/mission set` "
            f"({len(known)} {edition} missions in {missions.SOURCE}: {names}). Until then the {edition} caps apply.")


def caps_text(caps: missions.Caps, edition: str) -> str:
    """The caps applied, and where another source gives a different figure, that figure and its source."""
    def cap(game: int | None, rnd: int | None, kind: str) -> str:
        bits = [f"{game} per game" if game is not None else "no game cap"]
        if rnd is not None:
            bits.append(f"{rnd} per round")
        other = missions.cap_disagreement(edition, f"{kind}_game", game)
        return ", ".join(bits) + (f" ({other})" if other else "")

    return (f"Primary: {cap(caps.primary_game, caps.primary_round, 'primary')}\n"
            f"Secondary: {cap(caps.secondary_game, caps.secondary_round, 'secondary')} · tactical card: "
            f"{caps.tactical_card} per scoring\nTotal: {caps.total} per player · caps warn; `force:true` scores "
            "past them")


def mission_show_embed(state: GameState | None, edition: str, mission: missions.Mission | None,
                       record: dict[str, Any] | None) -> discord.Embed:
    """/mission show: the card, then its secondaries (the edition's deck) and each player's cards."""
    embed = card_embed(edition, mission, record)
    deck = missions.catalog().secondaries.get(edition, [])
    if deck:
        lines = [f"{escape(c.name)} — {_card_vp(c)}" for c in deck]
        _add_long_field(embed, f"Secondary cards ({len(deck)}, {edition} deck)", lines)
    else:
        embed.add_field(name="Secondary cards", value=f"No {edition} deck in the catalog: name cards as free text.",
                        inline=False)
    if state is not None:
        for p in state.players:
            cards = [f"{escape(c['name'], limit=40)} ({c['mode']}, {c['status']}, {c['vp']}VP)" for c in p.secondaries]
            if cards:
                _add_long_field(embed, f"{escape(p.name, limit=40)}'s cards", cards)
    return embed


def _card_vp(card: missions.Card) -> str:
    awards = card.award_lines()
    tactical = card.max_vp("tactical")
    fixed = card.max_vp("fixed")
    fixed_text = "uncapped" if fixed is None else f"{fixed}"
    head = f"up to {tactical}VP tactical / {fixed_text} fixed per scoring"
    return head + ("; " + "; ".join(awards[:2]) if awards else "")


def _add_long_field(embed: discord.Embed, name: str, lines: Sequence[str]) -> None:
    """Split long lists over fields of at most 1,024 characters (at most 4, then an ellipsis)."""
    chunk, fields = "", 0
    for line in lines:
        if len(chunk) + len(line) + 1 > EMBED_FIELD_VALUE_MAX:
            embed.add_field(name=name if fields == 0 else "\u200b", value=chunk, inline=False)
            fields += 1
            chunk = ""
            if fields >= 4:
                embed.add_field(name="\u200b", value="…", inline=False)
                return
        chunk += ("\n" if chunk else "") + truncate(line, 300)
    if chunk:
        embed.add_field(name=name if fields == 0 else "\u200b", value=chunk, inline=False)


def score_embed(state: GameState, game_id: int, summary: dict[str, Any], *, headline: str,
                final: bool = False) -> discord.Embed:
    """/game score (the breakdown) and /game end (the final summary); `headline` is the board's round line."""
    players = summary["players"]
    if state.ended == "abandoned":  # no result: nobody won an abandoned game, whatever the score was
        title = f"Abandoned · {players[0]['name']} {players[0]['vp']} – {players[1]['vp']} {players[1]['name']}"
    elif final or state.ended:
        if summary["winner"] is None:
            title = f"Draw · {players[0]['vp']} – {players[1]['vp']}"
        else:
            w = players[summary["winner"]]
            loser = players[1 - summary["winner"]]
            title = f"{w['name']} wins · {w['vp']} – {loser['vp']}"
    else:
        title = f"Score · {players[0]['name']} {players[0]['vp']} – {players[1]['vp']} {players[1]['name']}"
    lines = [headline]  # already escaped (render.game.clock_line)
    line = mission_line(state)
    if line:
        lines.append(line)
    destroyed = destroyed_line(state, players)
    if destroyed:
        lines.append(destroyed)
    lines.append(score_table(state))
    embed = discord.Embed(title=truncate(escape(title), EMBED_TITLE_MAX),
                          description=truncate("\n".join(lines), EMBED_DESCRIPTION_MAX), colour=COLOUR_GAME)
    for p in players:
        bits = [f"**{p['vp']} VP** (primary {p['primary']} · secondary {p['secondary']} · other {p['other']})",
                f"CP spent {p['cp_spent']} · CP left {p['cp']}"]
        if p["stratagems"]:
            counts: dict[str, int] = {}
            for name in p["stratagems"]:
                counts[name] = counts.get(name, 0) + 1
            used = [escape(n, limit=40) + (f" ×{k}" if k > 1 else "") for n, k in counts.items()]
            bits.append(f"Stratagems ({len(p['stratagems'])}): " + bounded_list(used))
        else:
            bits.append("Stratagems: none")
        if p["lost"]:
            pts = f", {p['points_lost']} pts" if p["points_lost"] else ""
            names = [escape(u["name"], limit=40) + (f" (R{u['round']})" if u["round"] else "") for u in p["lost"]]
            bits.append(f"Units lost ({len(p['lost'])}{pts}): " + bounded_list(names))
        if p["cards"]:
            bits.append("Cards: " + bounded_list([f"{escape(c['name'], limit=30)} {c['vp']}VP ({c['status']})"
                                                  for c in p["cards"]]))
        if p["time_used_s"] is not None:
            bits.append(f"Time used {clock_text(p['time_used_s'])}")
        embed.add_field(name=truncate(f"{escape(p['name'], limit=40)} — {escape(p['faction'], limit=40)}",
                                      EMBED_TITLE_MAX),
                        value=truncate("\n".join(bits), EMBED_FIELD_VALUE_MAX), inline=False)
    status = state.ended or ("battle over" if state.over else f"round {state.round} of {LAST_ROUND}")
    embed.set_footer(text=f"Game #{game_id} · {status} · played for {clock_text(summary['duration_s'])} · "
                          "units destroyed as tracked (/unit damage to 0 models, /unit destroyed, /oathband "
                          "destroyed); a unit one player lost counts as destroyed by the other")
    return embed


def destroyed_line(state: GameState, players: Sequence[dict[str, Any]]) -> str | None:
    """"💀 Units destroyed: Alice 3 (450 pts) · Bob 1 (85 pts)" once any unit is tracked (points need a list)."""
    if not state.units:
        return None
    parts = []
    for p in players:
        pts = f" ({p['points_destroyed']} pts)" if p["points_destroyed"] is not None else ""
        parts.append(f"{escape(p['name'], limit=20)} {p['units_destroyed']}{pts}")
    # points the bot filled in for units a list left blank name their source (issue 23: every figure does)
    filled = sorted({str(army["points_filled"].get("source")) for i in range(len(state.players))
                     if (army := state.army(i)) is not None and isinstance(army.get("points_filled"), dict)})
    source = f" — points a list left blank: {escape(', '.join(filled), limit=120)}" if filled else ""
    return "💀 Units destroyed: " + " · ".join(parts) + source


def bounded_list(items: Sequence[str], budget: int = LIST_BUDGET) -> str:
    """Items joined with commas within `budget` characters, then "… +N more", so one long list (150 units,
    60 stratagems) never pushes the lines after it (cards, time used) out of a 1,024-character field."""
    text = ", ".join(items)
    if len(text) <= budget:
        return text
    out: list[str] = []
    used = 0
    for i, item in enumerate(items):
        if used + len(item) + len(f" … +{len(items) - i} more") > budget:
            break
        out.append(item)
        used += len(item) + 2
    return ", ".join(out) + f" … +{len(items) - len(out)} more"


def history_line(g: dict[str, Any]) -> str:
    state: GameState = g["state"]
    p0, p1 = state.players
    when = datetime.fromtimestamp(g["ended_at"] or g["created_at"], UTC).strftime("%Y-%m-%d")
    leader = p0 if p0.vp > p1.vp else p1
    if g["status"] == "abandoned":
        result = "no result"
    else:
        result = "draw" if p0.vp == p1.vp else f"{escape(leader.name, limit=30)} wins"
    mission = f" · {escape(state.mission['name'], limit=40)}" if state.mission else ""
    return (f"#{g['game_id']} · {when} · {g['status']} · {escape(p0.name, limit=30)} {p0.vp} – "
            f"{p1.vp} {escape(p1.name, limit=30)} · {result}{mission} ({state.edition}, round {state.round})")


def mission_card_for(state: GameState) -> discord.Embed:
    """The board's Mission card button: the game's mission, looked up in the catalog by its id."""
    record = state.mission
    mission = missions.catalog().mission(state.edition, record["id"]) if record and record.get("id") else None
    return card_embed(state.edition, mission, record)
