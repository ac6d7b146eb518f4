"""The end-of-game summary: winner, VP by category and round, CP spent, stratagems, units destroyed, time used.

Computed from the state and its log on demand (nothing extra is stored), so `/game end`, `/game score`
and `/game history` always agree with the log. Units destroyed are the tracked units marked destroyed, however
it was recorded: an army unit brought to 0 models (`/unit damage`), `/unit destroyed`, or `/oathband destroyed`
(which also covers players without a list). A unit one player lost counts as destroyed by the other.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bot.games.model import LAST_ROUND, GameState, Unit


def summarise(state: GameState, log: Sequence[dict[str, Any]], now: float,
              span: tuple[float, float] | None = None) -> dict[str, Any]:
    """`log` holds the game's events with their `undone` flags (as `GameStore.log` returns them; the `cp`
    and `strat` ones suffice); `span` is (first, last) event timestamp, else taken from `log`."""
    live = [e for e in log if not e.get("undone") and e["type"] != "undo"]
    cp_spent = [0, 0]
    strats: list[list[str]] = [[], []]
    for ev in live:
        data = ev.get("data") or {}
        if ev["type"] == "cp" and data.get("delta", 0) < 0:
            cp_spent[data["player"]] -= data["delta"]
        elif ev["type"] == "strat":
            cp_spent[data["player"]] += data["cp"]
            strats[data["player"]].append(data["name"])
    vps = [p.vp for p in state.players]
    winner = None if vps[0] == vps[1] else (0 if vps[0] > vps[1] else 1)
    players = []
    for i, p in enumerate(state.players):
        players.append({
            "user_id": p.user_id, "name": p.name, "faction": p.faction, "vp": p.vp,
            "primary": sum(p.vp_primary), "secondary": sum(p.vp_secondary), "other": sum(p.vp_other),
            "rounds": [[p.vp_primary[r], p.vp_secondary[r], p.vp_other[r]] for r in range(LAST_ROUND)],
            "cp": p.cp, "cp_spent": cp_spent[i], "stratagems": strats[i],
            "units_lost": [u.name for u in state.units_of(i) if u.destroyed],
            "lost": [_lost(state, u) for u in state.units_of(i) if u.destroyed],
            "points_lost": lost_points(state, i),
            "time_used_s": round(state.clock.used(i, now), 1) if state.clock else None,
            "cards": [{"name": c["name"], "mode": c["mode"], "status": c["status"], "vp": c["vp"]}
                      for c in p.secondaries],
        })
    for i, p in enumerate(players):  # what each player destroyed is what the other lost
        p["units_destroyed"] = len(players[1 - i]["lost"])
        p["points_destroyed"] = players[1 - i]["points_lost"]
    start, last = span if span is not None else ((log[0]["ts"], log[-1]["ts"]) if log else (now, now))
    finish = last if state.ended else now
    return {"winner": winner, "players": players, "mission": state.mission, "round": state.round,
            "over": state.over, "ended": state.ended, "duration_s": round(max(0.0, finish - start), 1)}


def unit_points(state: GameState, unit: Unit) -> int | None:
    """The unit's points from its owner's army list (None for a free-text unit or a list without points)."""
    army = state.army(unit.owner)
    if army is None or unit.unlisted or unit.army_index is None:
        return None
    entries = army.get("units") or []
    points = entries[unit.army_index].get("points") if unit.army_index < len(entries) else None
    return points if isinstance(points, int) else None


def _lost(state: GameState, unit: Unit) -> dict[str, Any]:
    return {"name": unit.name, "round": unit.destroyed_round, "points": unit_points(state, unit)}


def lost_points(state: GameState, owner: int) -> int | None:
    """Points of the player's destroyed units, when their list gives points (else None: unknown, not 0)."""
    if state.army(owner) is None:
        return None
    return sum(unit_points(state, u) or 0 for u in state.units_of(owner) if u.destroyed)
