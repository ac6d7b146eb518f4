"""League statistics from confirmed results: faction win rates with Wilson score intervals, mean VP by
category, missions played, and one player's rating history.

Win rate counts a draw as half a win (the usual convention of 40k statistics sites), and leaves mirror
games (both players on the same faction) out of that faction's win rate, since they always average 50%.
The interval is Wilson's score interval (E. B. Wilson, 1927) at 95% (z = 1.96), which, unlike the normal
approximation, stays inside [0, 1] and is honest for the small game counts of a club league.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from bot.leagues import standings

Z95 = 1.959963984540054
CATEGORIES = ("primary", "secondary", "other")


def wilson(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson's score interval for a proportion successes / n; (0, 1) with no games."""
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass
class FactionStats:
    faction: str
    games: int = 0  # every game played with it, mirrors included
    rated: int = 0  # games counted in the win rate (mirrors left out)
    score: float = 0.0  # wins + draws / 2 over the rated games
    vp: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CATEGORIES, 0))

    @property
    def win_rate(self) -> float | None:
        return self.score / self.rated if self.rated else None

    @property
    def interval(self) -> tuple[float, float]:
        return wilson(self.score, self.rated)

    def mean_vp(self, category: str) -> float:
        return self.vp[category] / self.games if self.games else 0.0


@dataclass
class Stats:
    games: int
    factions: list[FactionStats]  # most played first
    missions: list[tuple[str, int]]  # most played first


def _key(text: str) -> str:
    return " ".join(text.casefold().split())


def faction_stats(results: list[dict[str, Any]], *, faction: str | None = None,
                  player: int | None = None) -> Stats:
    """Statistics of the confirmed results; `player` keeps that player's games (and only their side),
    `faction` keeps one faction's row and the games it played."""
    rows: dict[str, FactionStats] = {}
    missions: Counter[str] = Counter()
    games = 0
    wanted = _key(faction) if faction else None
    for result in standings.counted(results):
        sides = [int(u) for u in result["players"]]
        names = [result["factions"][str(u)] for u in sides]
        if player is not None and player not in sides:
            continue
        if wanted is not None and wanted not in {_key(n) for n in names}:
            continue
        games += 1
        missions[result.get("mission") or "(no mission)"] += 1
        mirror = _key(names[0]) == _key(names[1])
        for user, name in zip(sides, names, strict=True):
            if (player is not None and user != player) or (wanted is not None and _key(name) != wanted):
                continue
            row = rows.setdefault(_key(name), FactionStats(name))
            row.games += 1
            by_category = (result.get("vp_by_category") or {}).get(str(user)) or {}
            for category in CATEGORIES:
                row.vp[category] += int(by_category.get(category, 0))
            if not mirror:
                row.rated += 1
                row.score += standings.score_of(result, user)
    ordered = sorted(rows.values(), key=lambda r: (-r.games, r.faction.casefold()))
    return Stats(games, ordered, sorted(missions.items(), key=lambda m: (-m[1], m[0])))


def rating_history(results: list[dict[str, Any]], user: int) -> list[tuple[str, float]]:
    """(date, rating after the game) for each of the player's confirmed games, starting at (None, START)."""
    table: standings.Table = {}
    history: list[tuple[str, float]] = [("start", standings.START)]
    for result in standings.counted(results):
        standings.apply(table, result)
        if user in (int(u) for u in result["players"]):
            history.append((result["date"], table[user].rating))
    return history
