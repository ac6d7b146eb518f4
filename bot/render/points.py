"""Embeds for points news: what changed between two MFM versions (/points changes and the points channel)."""

from __future__ import annotations

import discord

from bot.points import answers
from bot.points.book import Book
from bot.render.common import COLOUR_META, EMBED_DESCRIPTION_MAX, EMBED_TITLE_MAX, escape, truncate

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
