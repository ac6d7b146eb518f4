"""Contract 10: a league's standings and results as JSON-able data, and as CSV.

`results` are the league's every result (pending and void too) with what a rebuild needs: `players`,
`winner`, `vp`, `factions`, `status` and `confirmed` (the league event number of the confirmation, which
orders the rating updates). `bot.leagues.standings.fold(results)` gives back `players`' numbers exactly.
"""

from __future__ import annotations

import csv
import io
from typing import Any

from bot.leagues import standings
from bot.leagues.store import League, Member

RESULT_KEYS = ("id", "date", "players", "winner", "vp", "factions", "mission", "status", "confirmed", "game_id",
               "vp_by_category", "battle_size", "names", "link")


def player_rows(lines: list[standings.Line], members: dict[int, Member]) -> list[dict[str, Any]]:
    """The members' rows (`standings.ranked(table, members)`, in ranking order) as contract 10's players."""
    rows = []
    for rank, line in enumerate(lines, start=1):
        member = members[line.user_id]
        played = sorted(line.factions, key=lambda f: (-line.factions[f], f))
        rows.append({"rank": rank, "user_id": line.user_id, "name": member.name,
                     "factions": played or ([member.faction] if member.faction else []), "games": line.games,
                     "wins": line.wins, "draws": line.draws, "losses": line.losses, "vp_for": line.vp_for,
                     "vp_against": line.vp_against, "rating": round(line.rating, 1)})
    return rows


def export_league(league: League, members: dict[int, Member], results: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "league": league.name, "guild_id": league.guild_id, "status": league.status,
        "season_end": league.season_end, "battle_size": league.battle_size, "edition": league.edition,
        "rating": {"method": "Elo", "k": standings.K, "start": standings.START, "scale": standings.SCALE},
        "players": player_rows(standings.ranked(standings.fold(results), members), members),
        "results": [{k: r.get(k) for k in RESULT_KEYS} for r in results],
    }


def _cell(value: Any) -> Any:
    """A text cell a spreadsheet would run as a formula (=, +, -, @ first) is quoted with a leading '."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


def to_csv(data: dict[str, Any]) -> str:
    """Two CSV tables one after the other, each with its header: the standings, then the results."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["league", "rank", "user_id", "name", "factions", "games", "wins", "draws", "losses",
                     "vp_for", "vp_against", "rating"])
    for p in data["players"]:
        writer.writerow([_cell(v) for v in (data["league"], p["rank"], p["user_id"], p["name"], "; ".join(p["factions"]),
                                             p["games"], p["wins"], p["draws"], p["losses"], p["vp_for"],
                                             p["vp_against"], p["rating"])])
    writer.writerow([])
    writer.writerow(["result_id", "date", "status", "confirmed", "game_id", "player_a", "player_b", "winner",
                     "vp_a", "vp_b", "faction_a", "faction_b", "mission", "battle_size"])
    for r in data["results"]:
        a, b = r["players"]
        writer.writerow([_cell(v) for v in (r["id"], r["date"], r["status"], r["confirmed"] or "", r["game_id"], a, b,
                                             r["winner"] or "draw", r["vp"][str(a)], r["vp"][str(b)],
                                             r["factions"][str(a)], r["factions"][str(b)], r["mission"] or "",
                                             r["battle_size"] or "")])
    return out.getvalue()
