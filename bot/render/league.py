"""League answers: the standings as a PNG table with a text version beside it, statistics, a player's card
with a small rating chart.

The PNG is drawn with Pillow and the DejaVu faces engine/plot.py uses (no chart library): a page of 25
rows is a few milliseconds. Every image has the same rows as text in the embed, one plain sentence per
player, for screen readers and for clients that don't load images.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

import discord
import numpy as np
from PIL import Image, ImageDraw

from bot.leagues.stats import CATEGORIES, Stats
from bot.leagues.store import League
from bot.render.common import COLOUR_GAME, EMBED_DESCRIPTION_MAX, EMBED_FIELD_VALUE_MAX, escape, truncate
from engine import canvas
from engine.plot import BACKGROUND, BAR, GRID, MEAN, MUTED, PX_PER_PT, TEXT

PAGE_ROWS = 25
TABLE_FILE = "league-table.png"
CHART_FILE = "rating-history.png"
_ROW_H, _HEAD_H, _WIDTH = 30, 78, 960
# Column left edges (x) and widths in characters of the cut text.
_COLUMNS = (("#", 16, 4), ("Player", 62, 22), ("Faction(s)", 300, 28), ("G", 600, 4), ("W-D-L", 650, 10),
            ("VP +/-", 760, 12), ("Rating", 880, 7))


def _cut(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[: chars - 1] + "…"


def _cells(row: dict[str, Any]) -> list[str]:
    return [str(row["rank"]), row["name"], ", ".join(row["factions"]) or "–", str(row["games"]),
            f"{row['wins']}-{row['draws']}-{row['losses']}", f"{row['vp_for']}/{row['vp_against']}",
            f"{row['rating']:.0f}"]


STRIPE = "#313338"
# The table's colours: solids, and text blends for (ink, ground) pairs (engine/canvas.py).
_PALETTE = canvas.Palette((BACKGROUND, TEXT, MUTED, GRID, STRIPE),
                          ((TEXT, BACKGROUND), (TEXT, STRIPE), (MUTED, BACKGROUND)), levels=50)


def _face(points: float, bold: bool = False) -> tuple[int, bool]:
    return round(points * PX_PER_PT), bold


def table_png(league: League, rows: Sequence[dict[str, Any]], *, page: int, pages: int) -> bytes:
    """One page of the standings (`bot.leagues.export.player_rows` rows) as a palette PNG.

    Drawn on engine/canvas.py's palette canvas: each cell's text mask is rasterised once and cached (ranks,
    counts, W-D-L and faction names repeat from page to page), and a palette PNG encodes in a fraction of the
    time of an RGB one."""
    height = _HEAD_H + _ROW_H * max(1, len(rows)) + 16
    index = _PALETTE.index
    pixels = np.full((height, _WIDTH), index[BACKGROUND], np.uint8)
    title = _cut(league.name, 40) + (" (closed)" if league.status == "closed" else "")
    canvas.text(pixels, _PALETTE, (16, 22), title, _face(14, True), TEXT, "lm")
    canvas.text(pixels, _PALETTE, (_WIDTH - 16, 22), f"page {page}/{pages} · Elo K=32", _face(9), MUTED, "rm")
    for label, x, _ in _COLUMNS:
        canvas.text(pixels, _PALETTE, (x, 58), label, _face(9.5, True), MUTED, "lm")
    pixels[_HEAD_H - 5:_HEAD_H - 3, 12:_WIDTH - 12] = index[GRID]
    if not rows:
        canvas.text(pixels, _PALETTE, (16, _HEAD_H + _ROW_H // 2), "No players yet: /league join.", _face(9.5),
                    MUTED, "lm")
    for i, row in enumerate(rows):
        top = _HEAD_H + i * _ROW_H
        if i % 2:
            pixels[top:top + _ROW_H, 12:_WIDTH - 12] = index[STRIPE]
        for (_, x, chars), cell in zip(_COLUMNS, _cells(row), strict=True):
            canvas.text(pixels, _PALETTE, (x, top + _ROW_H // 2), _cut(cell, chars), _face(9.5), TEXT, "lm")
    return canvas.to_png(pixels, _PALETTE)


def table_lines(rows: Sequence[dict[str, Any]]) -> str:
    """The same rows as plain sentences (the accessible version)."""
    lines = []
    for row in rows:
        factions = ", ".join(row["factions"]) or "no faction yet"
        lines.append(f"{row['rank']}. {escape(truncate(row['name'], 40))} ({escape(truncate(factions, 60))}): "
                     f"{_games(row['games'])}, {row['wins']}-{row['draws']}-{row['losses']} W-D-L, "
                     f"VP {row['vp_for']} for {row['vp_against']} against, rating {row['rating']:.0f}")
    return "\n".join(lines) or "No players yet: join with /league join."


def _games(count: int) -> str:
    return f"{count} game{'s' if count != 1 else ''}"


def table_embed(league: League, rows: Sequence[dict[str, Any]], *, page: int, pages: int, total: int) -> discord.Embed:
    embed = discord.Embed(title=truncate(f"{escape(league.name)}: standings", 256), colour=COLOUR_GAME,
                          description=truncate(table_lines(rows), EMBED_DESCRIPTION_MAX))
    embed.set_image(url=f"attachment://{TABLE_FILE}")
    details = [f"{total} players", f"page {page} of {pages}"]
    if league.battle_size:
        details.append(league.battle_size)
    if league.season_end:
        details.append(f"season ends {league.season_end}")
    embed.set_footer(text=" · ".join(details) + " · ranked by Elo rating (K=32), then wins, VP difference, "
                                                  "VP scored")
    return embed


def _percent(value: float) -> str:
    return f"{value * 100:.0f}%"


def stats_embed(league: League, stats: Stats, *, heading: str) -> discord.Embed:
    embed = discord.Embed(title=truncate(f"{escape(league.name)}: {escape(heading)}", 256), colour=COLOUR_GAME)
    if not stats.games:
        embed.description = "No confirmed games match yet."
        return embed
    lines = []
    for row in stats.factions[:20]:
        low, high = row.interval
        rate = (f"win rate {_percent(row.win_rate)} (95% CI {_percent(low)}–{_percent(high)}, {_games(row.rated)})"
                if row.win_rate is not None else "mirror games only")
        vp = ", ".join(f"{c} {row.mean_vp(c):.1f}" for c in CATEGORIES)
        lines.append(f"**{escape(truncate(row.faction, 60))}**: {_games(row.games)}, {rate}; mean VP {vp}")
    embed.description = truncate(f"{_games(stats.games)} confirmed.\n" + "\n".join(lines), EMBED_DESCRIPTION_MAX)
    missions = "\n".join(f"{escape(truncate(name, 60))}: {count}" for name, count in stats.missions[:15])
    embed.add_field(name="Missions played", value=truncate(missions, EMBED_FIELD_VALUE_MAX), inline=False)
    embed.set_footer(text="Win rate: draws count half, mirror games left out; interval: Wilson score, 95%.")
    return embed


def rating_chart_png(history: Sequence[tuple[str, float]], *, title: str) -> bytes:
    """The rating after each game as a small line chart (600 x 240)."""
    width, height, left, right, top, bottom = 600, 240, 56, 584, 36, 206
    image = Image.new("RGB", (width, height), BACKGROUND)
    draw = ImageDraw.Draw(image)
    draw.text((left, 18), _cut(title, 60), font=canvas.font(*_face(11, True)), fill=TEXT, anchor="lm")
    values = [r for _, r in history]
    low, high = min(values), max(values)
    if high - low < 20:
        low, high = (low + high) / 2 - 10, (low + high) / 2 + 10
    small = canvas.font(*_face(8))
    for value in (low, (low + high) / 2, high):
        y = bottom - (value - low) / (high - low) * (bottom - top)
        draw.line([(left, y), (right, y)], fill=GRID)
        draw.text((left - 6, y), f"{value:.0f}", font=small, fill=MUTED, anchor="rm")
    step = (right - left) / max(1, len(values) - 1)
    points = [(left + i * step, bottom - (v - low) / (high - low) * (bottom - top)) for i, v in enumerate(values)]
    if len(points) > 1:
        draw.line(points, fill=BAR, width=3)
    for x, y in points[-1:]:
        draw.ellipse([x - 4, y - 4, x + 4, y + 4], fill=MEAN)
    draw.text(((left + right) / 2, height - 14), f"games played: {len(values) - 1}", font=small, fill=MUTED, anchor="mm")
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", compress_level=1)
    return buffer.getvalue()


def player_embed(league: League, name: str, row: dict[str, Any] | None, games: Sequence[dict[str, Any]],
                 user_id: int, history: Sequence[tuple[str, float]]) -> discord.Embed:
    """A player's card: standing, factions, rating history (as text too) and their newest games."""
    embed = discord.Embed(title=truncate(f"{escape(name)} in {escape(league.name)}", 256), colour=COLOUR_GAME)
    if row is None:
        embed.description = "Not in this league now (their confirmed games still count for their opponents)."
    else:
        embed.description = (f"Rank {row['rank']}, rating {row['rating']:.0f}; {_games(row['games'])}, "
                             f"{row['wins']}-{row['draws']}-{row['losses']} W-D-L, VP {row['vp_for']} for "
                             f"{row['vp_against']} against.\nFactions: "
                             f"{escape(', '.join(row['factions'])) or 'none yet'}.")
    ratings = " → ".join(f"{r:.0f}" for _, r in history[-12:])
    embed.add_field(name="Rating history" + (" (last 12)" if len(history) > 12 else ""), value=ratings, inline=False)
    lines = []
    for result in list(reversed(games))[:10]:
        other = next(int(u) for u in result["players"] if int(u) != user_id)
        outcome = "draw" if result["winner"] is None else ("win" if result["winner"] == user_id else "loss")
        lines.append(f"#{result['id']} {result['date']}: {outcome} {result['vp'][str(user_id)]}–"
                     f"{result['vp'][str(other)]} as {escape(truncate(result['factions'][str(user_id)], 40))} vs "
                     f"{escape(truncate(result['names'][str(other)], 40))} "
                     f"({escape(truncate(result['factions'][str(other)], 40))}), {result['status']}")
    embed.add_field(name="Newest games", value=truncate("\n".join(lines) or "None yet.", EMBED_FIELD_VALUE_MAX),
                    inline=False)
    embed.set_image(url=f"attachment://{CHART_FILE}")
    return embed


def result_text(league: League, result_id: int, body: dict[str, Any]) -> str:
    """One line about a result: who, factions, VP, mission."""
    a, b = (str(u) for u in body["players"])
    names, factions, vp = body["names"], body["factions"], body["vp"]
    outcome = "draw" if body["winner"] is None else f"{escape(names[str(body['winner'])])} wins"
    mission = f", {escape(body['mission'])}" if body.get("mission") else ""
    size = f", {escape(body['battle_size'])}" if body.get("battle_size") else ""
    return (f"Result #{result_id} for **{escape(league.name)}**: {escape(names[a])} ({escape(factions[a])}) "
            f"{vp[a]}–{vp[b]} {escape(names[b])} ({escape(factions[b])}), {outcome}{mission}{size}, {body['date']} "
            f"([game #{body['game_id']}]({body['link']}), `/game history` there).")
