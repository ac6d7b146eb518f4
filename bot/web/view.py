"""What an overlay page shows, shaped from the game's contract-4 export.

The page gets plain data and writes it with `textContent` only, so hostile player names and unit names
arrive as text, never as markup. This module also bounds every string and list, so one page update
stays small however long the game or the names are.
"""

from __future__ import annotations

import time
from typing import Any

LOG_LINES = 5
TEXT_MAX = 120
PHASE_NAMES = {"command": "Command", "movement": "Movement", "shooting": "Shooting", "charge": "Charge",
               "fight": "Fight", "over": "Battle over"}


def _text(value: Any, limit: int = TEXT_MAX) -> str:
    text = "" if value is None else str(value)
    text = text.encode("utf-8", "replace").decode("utf-8")  # no lone surrogates in the JSON stream
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int | float) else 0


def overlay_view(export: dict[str, Any], *, now: float | None = None) -> dict[str, Any]:
    """The page model of one game: scoreboard, per-round score, round and phase, clocks, last log lines."""
    now = time.time() if now is None else now
    players = export.get("players", [])
    names = {p["user_id"]: _text(p.get("name"), 60) for p in players}
    rounds = _rounds(export, [p["user_id"] for p in players])
    clock = export.get("clock") or {}
    remaining = {str(k): v for k, v in (clock.get("remaining_s") or {}).items()}
    running = clock.get("holder") if clock.get("running") and not clock.get("stopped") else None
    view_players = []
    for p in players:
        uid = p["user_id"]
        totals = {k: sum(r["scores"][str(uid)][k] for r in rounds) for k in ("primary", "secondary")}
        totals["other"] = _int(p.get("vp")) - totals["primary"] - totals["secondary"]  # /vp add and /vp set
        seconds = remaining.get(str(uid))
        view_players.append({
            "id": str(uid),
            "name": names[uid],
            "faction": _text(p.get("faction"), 60),
            "cp": _int(p.get("cp")),
            "vp": _int(p.get("vp")),
            **totals,
            "clock_s": None if seconds is None else round(float(seconds), 1),
            "clock_running": running is not None and str(running) == str(uid),
        })
    mission = export.get("mission")
    active = export.get("active_player")
    log = [e for e in export.get("log", []) if not e.get("undone")][-LOG_LINES:]
    return {
        "as_of": round(now, 3),
        "status": _text(export.get("status"), 20),
        "edition": _text(export.get("edition"), 10),
        "round": _int(export.get("round")),
        "phase": PHASE_NAMES.get(export.get("phase", ""), _text(export.get("phase"), 20)),
        "active": names.get(active, ""),
        "active_id": str(active) if active is not None else "",
        "mission": _mission(mission),
        "players": view_players,
        "rounds": rounds,
        "clock_running": running is not None,
        "log": [{"seq": _int(e.get("seq")), "text": _text(e.get("summary"), 200)} for e in log],
    }


def _mission(mission: Any) -> dict[str, str] | None:
    if not mission:
        return None
    if isinstance(mission, str):
        return {"name": _text(mission), "deployment": "", "primary": ""}
    return {"name": _text(mission.get("name")), "deployment": _text(mission.get("deployment")),
            "primary": _text(mission.get("primary") or mission.get("primary_name"), 200)}


def _rounds(export: dict[str, Any], users: list[int]) -> list[dict[str, Any]]:
    """Primary, secondary and other VP per battle round and player (rounds 1..the current one)."""
    by_round: dict[int, dict[str, dict[str, int]]] = {}
    for row in export.get("vp_by_round") or []:
        rnd = _int(row.get("round"))
        if not 1 <= rnd <= 10:
            continue
        scores = by_round.setdefault(rnd, {})
        scores[str(row.get("player"))] = {k: _int(row.get(k)) for k in ("primary", "secondary", "other")}
    last = max([_int(export.get("round")), *by_round.keys(), 1])
    zero = {"primary": 0, "secondary": 0, "other": 0}
    return [{"round": rnd, "scores": {str(u): by_round.get(rnd, {}).get(str(u), dict(zero)) for u in users}}
            for rnd in range(1, min(last, 10) + 1)]
