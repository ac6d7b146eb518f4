"""Contract 4: a game as JSON-able data (`python -m bot game export`, the live board), from its stored row,
its state and its log. Clock times are as of `now`, derived from the logged timestamps."""

from __future__ import annotations

from typing import Any

from bot.games.model import GameState
from bot.games.summary import lost_points, unit_points


def export_game(row: Any, state: GameState, log: list[dict[str, Any]], now: float) -> dict[str, Any]:
    """The game of `row` (id, status) with `state` and its `log` (events flagged `undone`)."""
    users = [p.user_id for p in state.players]
    return {
        "game_id": row["id"],
        "status": row["status"],
        "edition": state.edition,
        "round": state.round,
        "phase": "over" if state.over else state.phase,
        "active_player": users[state.active],
        "players": [{"user_id": p.user_id, "name": p.name, "faction": p.faction, "cp": p.cp, "vp": p.vp}
                    for p in state.players],
        "units": [{"owner": users[u.owner], "name": u.name, "judgement_tokens": u.judgement,
                   "riled_up": state.riled(u), "battle_shocked": u.shocked, "oathband_marked": u.oathband,
                   "destroyed": u.destroyed, "datasheet_id": u.datasheet_id, "models": u.models,
                   "models_left": u.models_left, "wounds_lost": u.wounds_lost, "leading": u.leading,
                   "unlisted": u.unlisted, "destroyed_round": u.destroyed_round,
                   "points": unit_points(state, u)} for u in state.units],
        "units_destroyed": [{"player": users[i], "units": sum(1 for u in state.units_of(1 - i) if u.destroyed),
                             "points": lost_points(state, 1 - i)} for i in range(len(users))],
        "armies": [{"player": users[int(owner)], **army} for owner, army in sorted(state.armies.items())],
        "stratagems_used": [_strat_use(e, users) for e in log if e["type"] == "strat" and not e["undone"]],
        "log": [{"seq": e["seq"], "ts": e["ts"], "user_id": e["actor_user"], "type": e["type"],
                 "summary": e["summary"], "forced": bool(e.get("forced")), "overrides": e.get("overrides", []),
                 "undone": e["undone"]} for e in log],
        **mission_export(state, now),
    }


def mission_export(state: GameState, now: float) -> dict[str, Any]:
    """Contract 4's mission-play keys: mission, first player, roll-off, VP by round, secondaries, clock."""
    users = [p.user_id for p in state.players]
    rolloff = None
    if state.rolloff is not None:
        rolloff = {"rolls": [dict(zip(map(str, users), r, strict=True)) for r in state.rolloff["rolls"]],
                   "winner": users[state.rolloff["winner"]], "physical": state.rolloff["physical"]}
    clock = None
    if state.clock is not None:
        c = state.clock
        clock = {"running": c.running, "holder": users[c.holder], "follow": c.follow, "stopped": c.stopped,
                 "budget_s": {str(u): c.budget_s[i] for i, u in enumerate(users)},
                 "used_s": {str(u): round(c.used(i, now), 3) for i, u in enumerate(users)},
                 "remaining_s": {str(u): round(c.remaining(i, now), 3) for i, u in enumerate(users)},
                 "out_of_time": [u for i, u in enumerate(users) if c.remaining(i, now) <= 0]}
    return {
        "mission": dict(state.mission) if state.mission else None,
        "first_player": users[state.first],
        "first_player_chosen": state.first_chosen,
        "rolloff": rolloff,
        "vp_by_round": [{"round": r + 1, "player": users[i], "primary": p.vp_primary[r],
                         "secondary": p.vp_secondary[r], "other": p.vp_other[r]}
                        for r in range(state.round) for i, p in enumerate(state.players)],
        "secondaries": [{"player": users[i], "card": c["card"], "name": c["name"], "mode": c["mode"],
                         "status": c["status"], "round": c["round"], "vp": c["vp"]}
                        for i, p in enumerate(state.players) for c in p.secondaries],
        "clock": clock,
    }


def _strat_use(ev: dict[str, Any], users: list[int]) -> dict[str, Any]:
    data = ev["data"]
    unit = data.get("unit") or {}
    return {"player": users[data["player"]], "name": data["name"], "entry_id": data.get("entry_id"), "cp": data["cp"],
            "round": data.get("round"), "phase": data.get("phase"), "unit": unit.get("name"),
            "unit_owner": users[unit["owner"]] if unit else None, "forced": bool(ev.get("forced"))}
