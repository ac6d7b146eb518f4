"""The reducer: how each logged event changes the game state.

State is the fold of the effective events, so undo is "drop the last effective event and fold again",
and a snapshot can always be checked against its log. Every edition rule that changes state as time
passes (Command-phase CP, expiring statuses) lives here, in `advance`, so replay reproduces it exactly.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from bot.games.model import (
    LAST_ROUND,
    MAX_JUDGEMENT,
    PHASES,
    Clock,
    GameState,
    Player,
    StratagemUse,
    Unit,
    army_unit_names,
)

Event = dict[str, Any]


def initial_state(event: Event) -> GameState:
    """A `start` event: round 1, the starter's Command phase, both players gain the Command-phase CP."""
    data = event["data"]
    players = [Player(user_id=p["user_id"], name=p["name"], faction=p["faction"], cp=data["starting_cp"])
               for p in data["players"]]
    state = GameState(edition=data["edition"], players=players, mission=data.get("mission"),
                      battle_size=data.get("battle_size"))
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
    if handler is not None:
        handler(state, data)
        return state
    timed = _TIMED_HANDLERS.get(kind)
    if timed is None:
        raise ValueError(f"unknown event type {kind!r}")
    timed(state, data, float(event.get("ts") or 0.0))
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
    state.round, state.active = state.whose_turn(new_turn)
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


def _next(state: GameState, data: dict[str, Any], ts: float) -> None:
    """Next phase; a following chess clock moves to the new active player (and stops when the battle is over)."""
    advance(state)
    clock = state.clock
    if clock is None or clock.stopped:
        return
    if state.over:
        clock.settle(ts)
        clock.since = None
    elif clock.follow and clock.holder != state.active:
        clock.settle(ts)
        clock.holder = state.active


def _clock_start(state: GameState, data: dict[str, Any], ts: float) -> None:
    state.clock = Clock(budget_s=[float(b) for b in data["budget_s"]], holder=data["holder"], since=ts,
                        follow=bool(data.get("follow", True)))


def _clock_pause(state: GameState, data: dict[str, Any], ts: float) -> None:
    clock = state.clock
    assert clock is not None
    clock.settle(ts)
    clock.since = None


def _clock_resume(state: GameState, data: dict[str, Any], ts: float) -> None:
    assert state.clock is not None
    state.clock.since = ts


def _clock_pass(state: GameState, data: dict[str, Any], ts: float) -> None:
    clock = state.clock
    assert clock is not None
    clock.settle(ts)
    clock.holder = data["to"]


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


def _round_slot(state: GameState, data: dict[str, Any]) -> int:
    """Index into the per-round VP lists: the event's round, else the round it was logged in."""
    return min(LAST_ROUND, max(1, int(data.get("round") or state.round))) - 1


def _vp(state: GameState, data: dict[str, Any]) -> None:
    """/vp add: "other" VP (not primary, not a secondary card) in the current round."""
    player = state.players[data["player"]]
    player.vp += data["delta"]
    player.vp_other[_round_slot(state, data)] += data["delta"]


def _vp_set(state: GameState, data: dict[str, Any]) -> None:
    """/vp set corrects the total; the difference is booked as "other" VP of the current round."""
    player = state.players[data["player"]]
    player.vp_other[_round_slot(state, data)] += data["value"] - player.vp
    player.vp = data["value"]


def _vp_primary(state: GameState, data: dict[str, Any]) -> None:
    player = state.players[data["player"]]
    player.vp += data["amount"]
    player.vp_primary[_round_slot(state, data)] += data["amount"]


def _vp_secondary(state: GameState, data: dict[str, Any]) -> None:
    """Secondary VP; with a card, that card scores it (a tactical card is then achieved and leaves the hand)."""
    player = state.players[data["player"]]
    slot = _round_slot(state, data)
    player.vp += data["amount"]
    player.vp_secondary[slot] += data["amount"]
    ref = data.get("card")
    if not ref:
        return
    card = held_card(state, data["player"], ref["card"])
    if card is None:
        card = _new_card(ref, slot + 1)
        player.secondaries.append(card)
    card["vp"] += data["amount"]
    if card["mode"] == "tactical":
        card["status"] = "achieved"
        card["achieved_round"] = slot + 1


def _secondary(state: GameState, data: dict[str, Any]) -> None:
    """Draw a secondary card into the hand, or keep or discard one held."""
    ref, action = data["card"], data["action"]
    if action == "draw":
        state.players[data["player"]].secondaries.append(_new_card(ref, state.round))
        return
    card = held_card(state, data["player"], ref["card"])
    if card is not None:
        card["status"] = {"discard": "discarded", "keep": "kept"}[action]


def _new_card(ref: dict[str, Any], round_: int) -> dict[str, Any]:
    return {"card": ref["card"], "name": ref["name"], "mode": ref.get("mode", "tactical"), "status": "drawn",
            "round": round_, "vp": 0}


def held_card(state: GameState, player: int, key: str) -> dict[str, Any] | None:
    """The player's card `key` that is still in play (drawn or kept)."""
    return next((c for c in state.players[player].secondaries
                 if c["card"] == key and c["status"] in ACTIVE_CARD), None)


ACTIVE_CARD = ("drawn", "kept")


def _mission(state: GameState, data: dict[str, Any]) -> None:
    state.mission = data.get("mission")


def _rolloff(state: GameState, data: dict[str, Any]) -> None:
    state.rolloff = {"rolls": [list(r) for r in data["rolls"]], "winner": data["winner"],
                     "physical": bool(data.get("physical"))}


def _first(state: GameState, data: dict[str, Any], ts: float) -> None:
    """Who takes the first turn; only recorded during the first turn, which then becomes theirs. A following
    clock that was already running passes to them (`clock_to`; events logged before it existed carry none)."""
    state.first = data["player"]
    state.first_chosen = True
    state.active = state.first
    to = data.get("clock_to")
    if to is not None and state.clock is not None and not state.clock.stopped:
        state.clock.settle(ts)
        state.clock.holder = to


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
    unit = unit_for(state, data["unit"])
    unit.destroyed = bool(data["on"])
    unit.destroyed_round = state.round if unit.destroyed else None
    if unit.destroyed and unit.models is not None:
        unit.models_left, unit.wounds_lost = 0, 0


def _army(state: GameState, data: dict[str, Any]) -> None:
    """A player's list: it replaces their earlier list's units; a free-text unit of the same name joins it."""
    owner, army = data["player"], data["army"]
    state.armies[str(owner)] = army
    state.units = [u for u in state.units if u.owner != owner or u.unlisted]
    listed = army.get("units") or []
    names = army_unit_names([u["name"] for u in listed])
    for index, (entry, name) in enumerate(zip(listed, names, strict=True)):
        unit = state.find_unit(owner, name)
        if unit is None:
            unit = Unit(owner=owner, name=name)
            state.units.append(unit)
        unit.unlisted = False
        unit.datasheet_id = entry.get("datasheet_id")
        unit.army_index = index
        unit.models = unit.models_left = int(entry.get("models") or 1)
        unit.wounds = entry.get("wounds")
        unit.wounds_lost = 0
        unit.tags = list(entry.get("tags") or [])
        lead = entry.get("leading")
        unit.leading = names[lead] if isinstance(lead, int) and 0 <= lead < len(names) else None


def _army_clear(state: GameState, data: dict[str, Any]) -> None:
    owner = data["player"]
    state.armies.pop(str(owner), None)
    state.units = [u for u in state.units if u.owner != owner or u.unlisted]


def _damage(state: GameState, data: dict[str, Any]) -> None:
    unit = unit_for(state, data["unit"])
    unit.models_left = data["models_left"]
    unit.wounds_lost = data["wounds_lost"]
    if unit.models_left == 0 and not unit.destroyed:
        unit.destroyed, unit.destroyed_round = True, state.round
    elif unit.models_left and unit.destroyed:
        unit.destroyed, unit.destroyed_round = False, None


def _attach(state: GameState, data: dict[str, Any]) -> None:
    unit_for(state, data["unit"]).leading = data["leading"]


def _unit(state: GameState, data: dict[str, Any]) -> None:
    unit_for(state, data["unit"])


def _end(state: GameState, data: dict[str, Any], ts: float) -> None:
    state.ended = data.get("status", "finished")
    if state.clock is not None:
        state.clock.settle(ts)
        state.clock.since = None
        state.clock.stopped = True


_HANDLERS = {
    "cp": _cp, "cp_set": _cp_set, "vp": _vp, "vp_set": _vp_set, "strat": _strat,
    "judgement": _judgement, "riled": _riled, "waaagh": _waaagh, "shock": _shock, "oathband": _oathband,
    "destroyed": _destroyed, "unit": _unit,
    "mission": _mission, "rolloff": _rolloff, "vp_primary": _vp_primary,
    "vp_secondary": _vp_secondary, "secondary": _secondary,
    "army": _army, "army_clear": _army_clear, "damage": _damage, "attach": _attach,
}
# Events whose effect depends on when they happened (the chess clock): they receive the event's `ts`.
_TIMED_HANDLERS = {
    "next": _next, "end": _end, "first": _first, "clock_start": _clock_start, "clock_pause": _clock_pause,
    "clock_resume": _clock_resume, "clock_pass": _clock_pass,
}
EVENT_TYPES = frozenset(_HANDLERS) | frozenset(_TIMED_HANDLERS) | {"start", "undo"}
