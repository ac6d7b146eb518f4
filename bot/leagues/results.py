"""What a league result holds, built from a tracked game's end-of-game summary, and the checks on what
people type (league names, void reasons).

Names are refused, not silently cleaned: a league name is typed once and shown to the whole server, so a
name with a mention, a control or format character or a lone surrogate gets a refusal saying what to fix.
"""

from __future__ import annotations

import re
import time
from typing import Any

from bot.errors import UserError
from bot.games.rules import MAX_FACTION, MAX_PLAYER_NAME, printable_name

MAX_LEAGUE_NAME = 40
MAX_REASON = 200
BATTLE_SIZES = ("Incursion", "Strike Force", "Onslaught")
EDITIONS = ("10e", "11e")
_MENTION = re.compile(r"@|<[#@/]|<a?:\w+:\d|<t:")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def _checked_text(raw: str, *, what: str, field: str, limit: int) -> str:
    text = str(raw)
    if any(0xD800 <= ord(ch) <= 0xDFFF for ch in text) or "\ufffd" in text:
        raise UserError(f"{what} contains a character that can't be shown (a lone surrogate): retype it.",
                        field=field)
    if any(not ch.isprintable() for ch in text):
        raise UserError(f"{what} contains a control or invisible formatting character: retype it.", field=field)
    text = " ".join(text.split())
    if not text:
        raise UserError(f"{what} is empty.", field=field)
    if len(text) > limit:
        raise UserError(f"{what} is too long: at most {limit} characters (got {len(text)}).", field=field)
    return text


def league_name(raw: str) -> str:
    """A league name as typed, checked: 1-40 printable characters, no mentions (`@`, `<@…>`, `<#…>`)."""
    text = _checked_text(raw, what="A league name", field="name", limit=MAX_LEAGUE_NAME)
    if _MENTION.search(text):
        raise UserError("A league name can't contain @ or a mention: name it with plain words.", field="name")
    return text


def name_key(name: str) -> str:
    """Two names that differ only in case or spacing name the same league."""
    return " ".join(name.casefold().split())


def reason_text(raw: str) -> str:
    return _checked_text(raw, what="The reason", field="reason", limit=MAX_REASON)


def season_end(raw: str | None) -> str | None:
    """YYYY-MM-DD, a real date, or None."""
    if raw is None or not raw.strip():
        return None
    text = raw.strip()
    try:
        if not _DATE.fullmatch(text):
            raise ValueError
        time.strptime(text, "%Y-%m-%d")
    except ValueError:
        raise UserError(f"season_end is a date written YYYY-MM-DD, e.g. 2027-03-31 (got {text[:20]!r}).",
                        field="season_end") from None
    return text


def player_name(raw: str) -> str:
    return printable_name(raw)[:MAX_PLAYER_NAME] or "?"


def faction_name(raw: str | None) -> str | None:
    if raw is None:
        return None
    text = printable_name(raw)
    if len(text) > MAX_FACTION:
        raise UserError(f"A faction is at most {MAX_FACTION} characters (got {len(text)}).", field="faction")
    return text or None


def date_of(ts: float) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(ts))


def from_game(*, game_id: int, guild_id: int, channel_id: int, status: str, ended_at: float,
              summary: dict[str, Any], battle_size: str | None) -> dict[str, Any]:
    """A result's body from a game's end-of-game summary (`bot.games.summary.summarise`). An abandoned or
    unfinished game is refused: it never counts."""
    if status != "finished":
        raise UserError("An abandoned game never counts for a league." if status == "abandoned" else
                        "The game is still being played: end it with /game end first.")
    players = summary["players"]
    ids = [int(p["user_id"]) for p in players]
    winner = summary["winner"]
    mission = summary.get("mission") or {}
    return {
        "game_id": game_id,
        "date": date_of(ended_at),
        "ended_at": ended_at,
        "players": ids,
        "names": {str(u): player_name(p["name"]) for u, p in zip(ids, players, strict=True)},
        "winner": None if winner is None else ids[winner],
        "vp": {str(u): int(p["vp"]) for u, p in zip(ids, players, strict=True)},
        "vp_by_category": {str(u): {"primary": int(p["primary"]), "secondary": int(p["secondary"]),
                                    "other": int(p["other"])} for u, p in zip(ids, players, strict=True)},
        "factions": {str(u): p["faction"] for u, p in zip(ids, players, strict=True)},
        "mission": mission.get("name") if isinstance(mission, dict) else None,
        "battle_size": battle_size,
        "rounds": summary.get("round"),
        "link": f"https://discord.com/channels/{guild_id}/{channel_id}",
        "channel_id": channel_id,
    }
