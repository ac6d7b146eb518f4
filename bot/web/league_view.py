"""The league table page's model (`/league overlay`): what the page at /l/<token>/ shows, as JSON.

Only what the table image shows (rank, name, factions, games, W-D-L, VP, rating) for the first 25 players; the
page writes it with textContent only, so names are text, never markup.
"""

from __future__ import annotations

from typing import Any

from bot.leagues.export import player_rows
from bot.leagues.store import Standing

ROWS_SHOWN = 25


def league_model(standing: Standing) -> dict[str, Any]:
    rows = player_rows(standing.rows, standing.members)
    league = standing.league
    return {"league": league.name, "status": league.status, "seq": league.last_seq, "total": len(rows),
            "battle_size": league.battle_size, "season_end": league.season_end,
            "players": [{k: r[k] for k in ("rank", "name", "factions", "games", "wins", "draws", "losses", "vp_for",
                                           "vp_against", "rating")} for r in rows[:ROWS_SHOWN]]}
