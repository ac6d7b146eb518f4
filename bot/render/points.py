"""Embeds for points: what changed between two MFM versions (/points changes and the points channel), and
the points field of an 11e /datasheet."""

from __future__ import annotations

from pathlib import Path

import discord

from bot.points import answers
from bot.points.book import Book, current, name_key
from bot.points.mfm import PointsDataError
from bot.render.common import (
    COLOUR_META,
    EMBED_DESCRIPTION_MAX,
    EMBED_FIELD_VALUE_MAX,
    EMBED_TITLE_MAX,
    escape,
    truncate,
)

CHANGES_SHOWN = 40


def changes_embed(old: Book, new: Book, faction: str | None = None) -> discord.Embed:
    """The changes from `old` to `new` (also what the points channel is sent)."""
    found = answers.changes(old, new, faction)
    lines = [f"• {escape(c.line(), limit=200)}" for c in found[:CHANGES_SHOWN]]
    if len(found) > CHANGES_SHOWN:
        lines.append(f"… and {len(found) - CHANGES_SHOWN} more (`python -m bot points changes` lists all)")
    title = f"Points changes: {old.label} → {new.label}" + (f" · {faction}" if faction else "")
    body = "\n".join(lines) if lines else "No points changed."
    return discord.Embed(title=truncate(escape(title), EMBED_TITLE_MAX), description=truncate(body, EMBED_DESCRIPTION_MAX),
                         colour=COLOUR_META)


def datasheet_points_field(data_dir: Path, name: str, faction: str | None) -> tuple[str, str] | None:
    """/datasheet's points: cost by size, the requisition threshold and wargear costs, by the MFM in force
    (None when no MFM is imported or it has no unit of exactly this name)."""
    try:
        book = current(data_dir)
    except PointsDataError:
        return None
    if book is None or not book.units.get(name_key(name)):
        return None
    unit = book.unit(name, book.faction(faction) if faction else None)
    if unit is None:
        return None
    lines = []
    for tier in unit.tiers:
        sizes = ", ".join(f"{c.desc or f'{c.models} model' + ('s' if c.models != 1 else '')}: {c.points}"
                          for c in tier.costs)
        lines.append(f"{tier.label or 'Your unit costs'} — {sizes}" if len(unit.tiers) > 1 else sizes)
    if unit.threshold is not None:
        lines.append(f"Requisition threshold: from the {_ordinal(unit.threshold)} unit, the dearer cost")
    if unit.wargear:
        lines.append("Wargear (each): " + ", ".join(f"{item} +{points}" for item, points in unit.wargear))
    return f"Points · {book.label}", truncate(escape("\n".join(lines)), EMBED_FIELD_VALUE_MAX)


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"
