"""Standings: the fold of a league's confirmed results, in the order they were confirmed.

A result is contract 10's object (`bot.leagues.export`): `players` [a, b], `winner` (a user id or None for a
draw), `vp` and `factions` keyed by the user id as a string, `status`, and `confirmed` (the league event
number of its confirmation). Only `confirmed` results count; they are applied in confirmation order, so
a result confirmed last is applied last and the stored standings grow by one `apply` per confirmation,
while a void re-folds. Rebuilding from the exported results gives the same numbers to the last bit,
because the same floats are computed in the same order (tests/leagues/test_rebuild.py).

Rating: Elo (Arpad Elo, *The Rating of Chessplayers*, 1978) with the logistic expectation
E_a = 1 / (1 + 10^((R_b - R_a) / 400)), every player starting at 1500, K = 32 for every game, a win
scoring 1, a draw 0.5, a loss 0. docs/leagues.md says why Elo and not Glicko-2.

Ranking order (`ranked`): players with games before players without; then rating, wins, VP difference and
VP scored, each higher first; then the lower user id, so the order is total and the same everywhere.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

START = 1500.0
K = 32.0
SCALE = 400.0


def expected(rating: float, other: float) -> float:
    """Elo's expected score of a player rated `rating` against one rated `other`."""
    return 1.0 / (1.0 + 10.0 ** ((other - rating) / SCALE))


@dataclass
class Line:
    """One player's row of the standings."""

    user_id: int
    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    vp_for: int = 0
    vp_against: int = 0
    rating: float = START
    factions: dict[str, int] = field(default_factory=dict)  # games played with each faction

    def sort_key(self) -> tuple:
        return (self.games == 0, -self.rating, -self.wins, -(self.vp_for - self.vp_against), -self.vp_for,
                self.user_id)


Table = dict[int, Line]


def score_of(result: dict[str, Any], user: int) -> float:
    """1 for the winner, 0 for the loser, 0.5 each for a draw."""
    winner = result.get("winner")
    return 0.5 if winner is None else (1.0 if winner == user else 0.0)


def apply(table: Table, result: dict[str, Any]) -> None:
    """Add one confirmed result to `table` (the incremental step)."""
    a, b = (int(u) for u in result["players"])
    la = table.setdefault(a, Line(a))
    lb = table.setdefault(b, Line(b))
    sa = score_of(result, a)
    ea = expected(la.rating, lb.rating)
    delta = K * (sa - ea)
    la.rating, lb.rating = la.rating + delta, lb.rating - delta
    vp = result["vp"]
    for me, other, line, score in ((a, b, la, sa), (b, a, lb, 1.0 - sa)):
        line.games += 1
        line.wins += score == 1.0
        line.draws += score == 0.5
        line.losses += score == 0.0
        line.vp_for += int(vp[str(me)])
        line.vp_against += int(vp[str(other)])
        faction = result["factions"][str(me)]
        line.factions[faction] = line.factions.get(faction, 0) + 1


def counted(results: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The confirmed results in the order they count (confirmation order)."""
    return sorted((r for r in results if r["status"] == "confirmed"), key=lambda r: r["confirmed"])


def fold(results: Iterable[dict[str, Any]]) -> Table:
    """Standings from results alone (any order; only confirmed ones count)."""
    table: Table = {}
    for result in counted(results):
        apply(table, result)
    return table


def ranked(table: Table, members: Iterable[int] | None = None) -> list[Line]:
    """The rows in ranking order; with `members`, only (and every one of) those players."""
    if members is None:
        rows = list(table.values())
    else:
        rows = [table.get(u) or Line(u) for u in dict.fromkeys(members)]
    return sorted(rows, key=Line.sort_key)


def dump(table: Table) -> dict[str, Any]:
    """The stored snapshot (JSON): floats round-trip exactly through JSON, so a loaded snapshot continues
    the fold exactly."""
    return {str(u): asdict(line) for u, line in table.items()}


def load(data: dict[str, Any]) -> Table:
    return {int(u): Line(**row) for u, row in data.items()}
