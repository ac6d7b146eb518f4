"""Small rendering helpers every embed uses: colours, escaping, footers, safe mentions."""

from __future__ import annotations

import functools
import re

import discord

NO_MENTIONS = discord.AllowedMentions.none()

COLOUR_RULES = discord.Colour(0x3B82F6)
COLOUR_SIM = discord.Colour(0xF59E0B)
COLOUR_GAME = discord.Colour(0x10B981)
COLOUR_META = discord.Colour(0x8B5CF6)
COLOUR_ERROR = discord.Colour(0xEF4444)

EDITION_LABELS = {"10e": "10th edition", "11e": "11th edition"}

# Discord's hard limits, so renderers can trim instead of failing.
EMBED_TITLE_MAX = 256
EMBED_DESCRIPTION_MAX = 4096
EMBED_FIELD_VALUE_MAX = 1024
EMBED_FIELDS_MAX = 25
SELECT_OPTIONS_MAX = 25


# Names (units, players, factions) up to this length are escaped once and remembered: a board with two
# armies escapes dozens of the same names on every command.
ESCAPE_CACHE_CHARS = 200


def escape(text: str, *, limit: int | None = None) -> str:
    """Neutralise Markdown and mentions in user-supplied text (unit names, player names)."""
    cleaned = _escape_short(text) if len(text) <= ESCAPE_CACHE_CHARS else _escape(text)
    return truncate(cleaned, limit) if limit else cleaned


def _escape(text: str) -> str:
    return discord.utils.escape_mentions(discord.utils.escape_markdown(text))


_escape_short = functools.lru_cache(maxsize=4096)(_escape)


_OTHER_MENTIONS = re.compile(r"<(?=[#/]|t:|a?:\w+:\d)")  # channel, slash command, timestamp, custom emoji
_HEADING = re.compile(r"(?m)^([ \t]*)(#{1,3}|-#)(?=[ \t])")
_MASKED_LINK = re.compile(r"\]\(")


def safe_markdown(text: str, *, limit: int | None = None) -> str:
    """Imported rules text keeps its own formatting (bold, italics, lists) but can never ping, show a mention,
    open a code block that swallows the rest, hide a link behind other words, or shout in a heading:
    @everyone/@here/<@id>/<@&id> get a zero-width space, as do <#channel>, </command:id> and <t:...>;
    triple backticks are broken up; `](` of a masked link is split; a leading '#', '##', '###' or '-#' is
    escaped."""
    text = discord.utils.escape_mentions(text)
    text = _OTHER_MENTIONS.sub("<\u200b", text)
    text = text.replace("```", "`\u200b`\u200b`")
    text = _MASKED_LINK.sub("]\u200b(", text)
    text = _HEADING.sub(lambda m: m.group(1) + "\\" + m.group(2), text)
    return truncate(text, limit) if limit else text


def code_safe(text: str) -> str:
    """Text placed inside a code block: a backtick could close it, so it becomes an apostrophe."""
    return text.replace("`", "'")


def truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(0, limit - 1)].rstrip() + "…"


def edition_label(edition: str) -> str:
    return EDITION_LABELS.get(edition, edition)


def source_footer(edition: str, source: str) -> str:
    """Every rules answer names its edition and source."""
    return f"{edition_label(edition)} · {source}"
