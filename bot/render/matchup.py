"""The /sim matchup answer: the heatmap image, then each attacker's best target in words.

The image shades each cell by the expected share of the target destroyed (or, with `value: points`, by the
expected points destroyed relative to the row's best) and prints the number; the embed names the numbered
columns and lists, per attacker, the target it is likeliest to destroy with that chance. While rows are
still running the same embed says how many are done (the cog edits it as rows finish).
"""

from __future__ import annotations

from typing import Any

import discord

from bot.render.common import COLOUR_SIM, escape, source_footer, truncate
from bot.render.sim import percent
from bot.sim.matchup import Matchup

MATCHUP_FILENAME = "matchup.png"
VALUES = ("share", "points")
FIELD_MAX = 1024
LEGEND_MAX = 1500  # with 3 fields of best targets and one of notes, inside Discord's 6,000 per embed


def _label(cell: dict[str, Any] | None, value: str) -> str:
    if cell is None:
        return "–"
    if value == "points":
        points = cell.get("expected_points")
        return "?" if points is None else f"{points:.0f}"
    return f"{cell['share'] * 100:.0f}"


def picture_inputs(matchup: Matchup, outcomes: list[list[dict[str, Any] | None]], value: str,
                   best: list[int | None]) -> tuple:
    """What the heatmap shows, as the arguments of bot.sim.compute.draw_matchup (plain data: it is drawn
    in a /sim worker, ~100 ms of CPU for 30 x 30 that would otherwise hold the bot's interpreter)."""
    shades: list[list[float | None]] = []
    for row in outcomes:
        if value == "points":
            worth = [None if c is None or c.get("expected_points") is None else c["expected_points"] for c in row]
            top = max([w for w in worth if w is not None], default=0.0) or 1.0
            shades.append([None if w is None else w / top for w in worth])
        else:
            shades.append([None if c is None else c["share"] for c in row])
    labels = [[_label(c, value) for c in row] for row in outcomes]
    scale = ("expected points destroyed (shade: against the row's best)" if value == "points"
             else "expected % of each target's models destroyed") + " · outlined: likeliest to be destroyed"
    title = f"Matchup, {matchup.phase} phase: {len(matchup.attackers)} × {len(matchup.targets)}"
    return (list(matchup.attackers), len(matchup.targets), shades, labels, best, title, scale)


def embed(matchup: Matchup, best: list[dict[str, Any]], *, source: str, done: int | None = None) -> discord.Embed:
    """The answer's embed; `done` (rows finished so far) makes it the progress message."""
    rows = len(matchup.attackers)
    title = f"Matchup: {len(matchup.attackers)} attackers × {len(matchup.targets)} targets, {matchup.phase}"
    if done is not None:
        return discord.Embed(title=title, colour=COLOUR_SIM,
                             description=f"Simulating… {done} of {rows} attackers done "
                                         f"({matchup.cells} simulations in all).")
    legend = " · ".join(f"**{j + 1}** {escape(name, limit=40)}" for j, name in enumerate(matchup.targets))
    out = discord.Embed(title=title, colour=COLOUR_SIM, description=truncate(legend, LEGEND_MAX))
    lines = [f"{escape(b['attacker'], limit=40)} → **{escape(b['target'], limit=40)}** "
             f"({percent(b['p_destroy'])} to destroy it)" for b in best]
    chunk: list[str] = []
    used = 0
    for line in lines:
        if used + len(line) + 1 > FIELD_MAX and chunk:
            out.add_field(name="Best target" if not out.fields else "Best target (cont.)", value="\n".join(chunk),
                          inline=False)
            chunk, used = [], 0
        chunk.append(line)
        used += len(line) + 1
        if len(out.fields) >= 3:
            break
    if chunk and len(out.fields) < 3:
        out.add_field(name="Best target" if not out.fields else "Best target (cont.)", value="\n".join(chunk),
                      inline=False)
    if matchup.assumptions:
        notes = "\n".join(f"• {escape(a, limit=200)}" for a in matchup.assumptions[:8])
        out.add_field(name="Assumptions", value=truncate(notes, FIELD_MAX), inline=False)
    out.set_image(url=f"attachment://{MATCHUP_FILENAME}")
    out.set_footer(text=truncate(source_footer(matchup.edition, source) + " · exact", 2048))
    return out
