"""The reducer: how each logged event changes the game state.

State is the fold of the effective events, so undo is "drop the last effective event and fold again",
and a snapshot can always be checked against its log. Every edition rule that changes state as time
passes (Command-phase CP, expiring statuses) lives here, in `advance`, so replay reproduces it exactly.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from bot.games.model import LAST_ROUND, MAX_JUDGEMENT, PHASES, GameState, Player, StratagemUse, Unit, turn_of

Event = dict[str, Any]


def initial_state(event: Event) -> GameState:
    """A `start` event: round 1, the starter's Command phase, both players gain the Command-phase CP."""
    data = event["data"]
    players = [Player(user_id=p["user_id"], name=p["name"], faction=p["faction"], cp=data["starting_cp"])
               for p in data["players"]]
    state = GameState(edition=data["edition"], players=players)
    _enter_command_phase(state)
    return state


def fold(events: Iterable[Event]) -> GameState:
    """Replay effective events (undo already resolved) into a state."""
    state: GameState | None = None
    for seq, event in enumerate(events, start=1):
        state = initial_state(event) if state is None else apply(state, event)
        state.seq = event.get("seq", seq)
    if state is None:
        raise ValueError("a game log must begin with a start event")
    return state


def effective(events: Iterable[Event]) -> list[Event]:
    """Resolve `undo` events: each one cancels the newest event that is still in effect."""
    stack: list[Event] = []
    for event in events:
        if event["type"] == "undo":
            if len(stack) > 1:
                stack.pop()
        else:
            stack.append(event)
    return stack


def apply(state: GameState, event: Event) -> GameState:
    """Apply one event in place and return the state."""
    kind, data = event["type"], event.get("data", {})
    handler = _HANDLERS.get(kind)
    if handler is None:
        raise ValueError(f"unknown event type {kind!r}")
    handler(state, data)
    return state


def unit_for(state: GameState, ref: dict[str, Any]) -> Unit:
    """The unit an event names, created on first mention."""
    unit = state.find_unit(ref["owner"], ref["name"])
    if unit is None:
        unit = Unit(owner=ref["owner"], name=ref["name"])
        state.units.append(unit)
    return unit


def advance(state: GameState) -> None:
    """Next phase; after the fight phase the next turn begins (and after the last turn, the battle ends)."""
    state.strat_uses = []  # once-per-phase bookkeeping starts afresh
    i = PHASES.index(state.phase)
    if i < len(PHASES) - 1:
        state.phase = PHASES[i + 1]
        return
    new_turn = state.turn + 1
    if new_turn >= 2 * LAST_ROUND:
        state.over = True
        return
    state.round, state.active = turn_of(new_turn)
    state.phase = "command"
    for unit in state.units:
        if unit.riled_until is not None and unit.riled_until <= new_turn:
            unit.riled_until = None
    for player in state.players:
        if player.waaagh_until is not None and player.waaagh_until <= new_turn:
            player.waaagh_until = None
    _enter_command_phase(state)


def _enter_command_phase(state: GameState) -> None:
    # 10e Command phase / 11e 08.02: both players gain 1CP.
    for player in state.players:
        player.cp += 1
    # 10e: battle-shocked "until the start of your next Command phase". 11e (08.03): it lasts until a
    # battle-shock roll in the owner's Battle-shock step succeeds, which the owner records with /shock.
    if state.edition == "10e":
        for unit in state.units_of(state.active):
            unit.shocked = False


def _next(state: GameState, data: dict[str, Any]) -> None:
    advance(state)


def _cp(state: GameState, data: dict[str, Any]) -> None:
    player = state.players[data["player"]]
    player.cp += data["delta"]
    if data["delta"] > 0 and data.get("counts_to_cap", True):
        key = str(state.round)
        player.extra_cp[key] = player.extra_cp.get(key, 0) + data["delta"]
    if data.get("once"):
        player.once_used.append(data["once"])


def _cp_set(state: GameState, data: dict[str, Any]) -> None:
    state.players[data["player"]].cp = data["value"]


def _vp(state: GameState, data: dict[str, Any]) -> None:
    state.players[data["player"]].vp += data["delta"]


def _vp_set(state: GameState, data: dict[str, Any]) -> None:
    state.players[data["player"]].vp = data["value"]


def _strat(state: GameState, data: dict[str, Any]) -> None:
    player = state.players[data["player"]]
    player.cp -= data["cp"]
    if data.get("once"):
        player.once_used.append(data["once"])
    unit = unit_for(state, data["unit"]) if data.get("unit") else None
    if unit is not None and data.get("clears_shock"):
        unit.shocked = False
    state.strat_uses.append(StratagemUse(
        player=data["player"], name=data["name"], entry_id=data.get("entry_id"), cp=data["cp"],
        round=state.round, turn=state.turn, phase=state.phase,
        unit=unit.name if unit else None, unit_owner=unit.owner if unit else None,
        forced=bool(data.get("forced")),
    ))


def _judgement(state: GameState, data: dict[str, Any]) -> None:
    unit = unit_for(state, data["unit"])
    # Eye of the Ancestors: never more than 2; further gains are ignored.
    unit.judgement = max(0, min(MAX_JUDGEMENT, unit.judgement + data["delta"]))


def _riled(state: GameState, data: dict[str, Any]) -> None:
    unit = unit_for(state, data["unit"])
    until = data["until"]
    if until is None:
        unit.riled_until = None
    else:
        unit.riled_until = max(until, unit.riled_until or 0)


def _waaagh(state: GameState, data: dict[str, Any]) -> None:
    player = state.players[data["player"]]
    player.waaagh_until = data["until"]
    player.once_used.append("waaagh")


def _shock(state: GameState, data: dict[str, Any]) -> None:
    unit_for(state, data["unit"]).shocked = bool(data["on"])


def _oathband(state: GameState, data: dict[str, Any]) -> None:
    unit_for(state, data["unit"]).oathband = bool(data["on"])


def _destroyed(state: GameState, data: dict[str, Any]) -> None:
    unit_for(state, data["unit"]).destroyed = bool(data["on"])


def _unit(state: GameState, data: dict[str, Any]) -> None:
    unit_for(state, data["unit"])


def _end(state: GameState, data: dict[str, Any]) -> None:
    state.ended = data.get("status", "finished")


_HANDLERS = {
    "next": _next, "cp": _cp, "cp_set": _cp_set, "vp": _vp, "vp_set": _vp_set, "strat": _strat,
    "judgement": _judgement, "riled": _riled, "waaagh": _waaagh, "shock": _shock, "oathband": _oathband,
    "destroyed": _destroyed, "unit": _unit, "end": _end,
}
EVENT_TYPES = frozenset(_HANDLERS) | {"start", "undo"}
