"""Embeds for army lists: a player's army with each unit's tracked state, and the import diagnostics.

Unit and list names are user text: escaped and trimmed here; phone-width lines, one unit per line.
"""

from __future__ import annotations

from typing import Any

import discord

from bot.games.model import GameState, Unit
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

DIAGNOSTICS_SHOWN = 10
_LEVEL = {"error": "❌", "warning": "⚠️", "info": "ℹ️"}


def unit_state(state: GameState, unit: Unit) -> str:
    """One compact line: size, damage, leading, statuses."""
    bits = [unit.label().split(" · ", 1)[1]] if " · " in unit.label() else []
    if unit.judgement:
        bits.append(f"Judgement {'●' * unit.judgement}")
    if state.riled(unit):
        bits.append("riled up")
    if unit.shocked:
        bits.append("battle-shocked")
    if unit.oathband:
        bits.append("Oathband mark")
    if not unit.unlisted and not unit.datasheet_id:
        bits.append("no datasheet")
    return f"• {escape(unit.name, limit=50)}" + (f" — {escape(', '.join(bits), limit=120)}" if bits else "")


def army_embed(state: GameState, index: int, *, note: str | None = None,
               diagnostics: list[dict[str, Any]] | None = None) -> discord.Embed:
    player = state.players[index]
    army = state.army(index)
    if army is None:
        return discord.Embed(title=truncate(f"{escape(player.name, limit=40)} — no army list", EMBED_TITLE_MAX),
                             description="Import one with `/army import file:` or `/army paste`; until then units "
                                         "are free text (shown as unlisted).", colour=COLOUR_GAME)
    points = f" · {army['points']} pts" if army.get("points") else ""
    title = f"{escape(player.name, limit=40)} — {escape(str(army.get('faction')), limit=40)}{points}"
    head = [f"{edition_label(state.edition)} · {escape(str(army.get('format')), limit=40)}"]
    if army.get("detachments"):
        head.append("Detachment: " + escape(" + ".join(army["detachments"]), limit=200))
    if note:
        head.append(escape(note, limit=400))
    units = [u for u in state.units_of(index) if not u.unlisted]
    lines = [unit_state(state, u) for u in units]
    destroyed = [u for u in units if u.destroyed]
    body = "\n".join(head) + "\n\n" + "\n".join(lines)
    embed = discord.Embed(title=truncate(title, EMBED_TITLE_MAX), description=truncate(body, EMBED_DESCRIPTION_MAX),
                          colour=COLOUR_GAME)
    if destroyed:
        embed.add_field(name="Destroyed", value=truncate(", ".join(
            f"{escape(u.name, limit=40)} (round {u.destroyed_round})" if u.destroyed_round else escape(u.name, limit=40)
            for u in destroyed), EMBED_FIELD_VALUE_MAX), inline=False)
    shown = diagnostics if diagnostics is not None else army.get("diagnostics") or []
    if shown:
        text = "\n".join(f"{_LEVEL.get(d['level'], '•')} {escape(d['message'], limit=200)}"
                         + (f" (line {d['line']})" if d.get("line") else "") for d in shown[:DIAGNOSTICS_SHOWN])
        if len(shown) > DIAGNOSTICS_SHOWN:
            text += f"\n… and {len(shown) - DIAGNOSTICS_SHOWN} more"
        embed.add_field(name="What the bot could not read or assumed", value=truncate(text, EMBED_FIELD_VALUE_MAX),
                        inline=False)
    resolved = sum(1 for u in units if u.datasheet_id)
    embed.set_footer(text=f"{resolved}/{len(units)} units matched to datasheets · /game undo reverts an import")
    return embed


def refusal(message: str) -> discord.Embed:
    return discord.Embed(description=escape(message), colour=COLOUR_ERROR)


PROBLEMS_SHOWN = 15
UNITS_SHOWN = 20


def _of(value: int | None, limit: int | None) -> str:
    if value is None:
        return "?"
    return f"{value:,}" + (f"/{limit:,}" if limit is not None else "")


def check_embed(report: dict[str, Any], army: dict[str, Any]) -> discord.Embed:
    """`/army check`: the verdict, the totals against the battle size, every problem with its rule (the first
    PROBLEMS_SHOWN; the CLI's --json lists all), and the units whose MFM cost differs from the list's."""
    problems = report.get("problems") or []
    errors = [p for p in problems if p["severity"] == "error"]
    size = report.get("battle_size") or "no battle size"
    source = report.get("points_source") or "no MFM imported"
    title = f"List check — {escape(str(army.get('faction')), limit=40)} · {size} · {source}"
    points = report.get("points") or {}
    dp = report.get("detachment_points") or {}
    totals = [f"Points {_of(points.get('total'), points.get('limit'))}"
              + (f" (the list states {points['stated']:,})" if points.get("stated") is not None else ""),
              f"DP {_of(dp.get('spent'), dp.get('limit'))}" if dp.get("spent") is not None else "",
              f"Enhancements {_of((report.get('enhancements') or {}).get('count'), (report.get('enhancements') or {}).get('limit'))}"]
    totals = [t for t in totals if t]
    plural = "s" if len(errors) != 1 else ""
    if report.get("battle_size"):
        verdict = (f"❌ {len(errors)} problem{plural} make{'' if plural else 's'} it illegal for {size}." if errors
                   else f"✅ Legal for {size} by these checks.")
    else:  # 10e: no battle-size table in the data, so no verdict on legality for a size
        verdict = (f"❌ {len(errors)} problem{plural} found." if errors
                   else "✅ No problem found by these checks (the battle size is not checked).")
    lines = [verdict, " · ".join(totals), ""]
    for p in problems[:PROBLEMS_SHOWN]:
        lines.append(f"{_LEVEL.get(p['severity'], '•')} **{escape(p['rule'], limit=60)}**: {escape(p['message'], limit=300)}")
    if len(problems) > PROBLEMS_SHOWN:
        lines.append(f"… and {len(problems) - PROBLEMS_SHOWN} more (`python -m bot army check FILE --json` lists all)")
    embed = discord.Embed(title=truncate(title, EMBED_TITLE_MAX), description=truncate("\n".join(lines),
                          EMBED_DESCRIPTION_MAX), colour=COLOUR_ERROR if errors else COLOUR_GAME)
    units = army.get("units") or []
    differ = [u for u in report.get("units") or [] if u.get("note")]
    if differ:
        text = "\n".join(f"• {escape(str(units[u['index']].get('name')), limit=40)}: "
                         f"{u['points'] if u['points'] is not None else '?'}"
                         + (f" (list {u['stated']})" if u.get("stated") is not None else "")
                         + f" — {escape(u['note'], limit=120)}" for u in differ[:UNITS_SHOWN])
        if len(differ) > UNITS_SHOWN:
            text += f"\n… and {len(differ) - UNITS_SHOWN} more"
        embed.add_field(name="Unit by unit", value=truncate(text, EMBED_FIELD_VALUE_MAX), inline=False)
    if report.get("sizes_source"):
        embed.set_footer(text=truncate(f"Limits: {report['sizes_source']} · points: {source}", 2048))
    return embed
