"""Turn a player's request into events, after the permission and rules checks.

Each function takes the current state (never mutated here) and returns an `Outcome`: the events to
append and a one-line answer. Refusals are `UserError`s; soft rules become `SoftRuleError` unless
`force` is set, in which case the event records the override.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rapidfuzz import fuzz, process

from bot.errors import UserError
from bot.games import rules
from bot.games.events import Event, advance
from bot.games.model import PHASE_LABELS, GameState, Unit, unit_key


class SoftRuleError(UserError):
    """A soft rule refused the request; `force:true` overrides it."""

    def __init__(self, warnings: list[str]) -> None:
        text = " ".join(f"⚠️ {w}" for w in warnings)
        super().__init__(f"{text} Repeat with force:true to do it anyway (the override is logged).", field="force")
        self.warnings = warnings


@dataclass
class Outcome:
    events: list[Event]
    message: str
    warnings: list[str] = field(default_factory=list)


def event(kind: str, actor: int | None, summary: str, data: dict[str, Any] | None = None, *,
          overrides: list[str] | None = None) -> Event:
    ev: Event = {"type": kind, "actor": actor, "summary": summary, "data": data or {}}
    if overrides:
        ev["forced"] = True
        ev["overrides"] = list(overrides)
    return ev


def _soft(warnings: list[str], force: bool) -> list[str]:
    if warnings and not force:
        raise SoftRuleError(warnings)
    return warnings


def _forced_note(warnings: list[str]) -> str:
    return f" (forced: {'; '.join(warnings)})" if warnings else ""


# ---- who may act ---------------------------------------------------------------------------------

def require_player(state: GameState, user_id: int) -> int:
    index = state.player_index(user_id)
    if index is None:
        names = " and ".join(p.name for p in state.players)
        raise UserError(f"Only the players of this channel's game ({names}) can do that.", field="user")
    return index


def require_running(state: GameState) -> None:
    if state.over:
        raise UserError("The battle is over (after battle round 5). Use /game undo to go back, or /game end.")


def own_target(state: GameState, actor: int, target_user: int | None) -> None:
    """Only the two players change their own resources."""
    if target_user is not None and target_user != state.players[actor].user_id:
        raise UserError("You can only change your own CP and VP, not your opponent's.", field="player")


# ---- units ---------------------------------------------------------------------------------------

def resolve_unit(state: GameState, owner: int, raw: str, *, create: bool) -> tuple[str, bool]:
    """(the unit's name, exists): exact, then a close fuzzy match among that player's units."""
    name = rules.clean_name(raw)
    units = state.units_of(owner)
    key = unit_key(name)
    for unit in units:
        if unit.key == key:
            return unit.name, True
    if units:
        match = process.extractOne(key, {i: u.key for i, u in enumerate(units)}, scorer=fuzz.ratio, score_cutoff=90)
        if match is not None:
            return units[match[2]].name, True
    if create:
        return name, False
    owner_name = state.players[owner].name
    known = ", ".join(u.name for u in units[:10]) or "none yet"
    raise UserError(f"{owner_name} has no unit called {name!r}. Known units: {known}.", field="unit")


def _unit(state: GameState, owner: int, name: str) -> Unit:
    unit = state.find_unit(owner, name)
    return unit if unit is not None else Unit(owner=owner, name=name)


def _ref(owner: int, name: str) -> dict[str, Any]:
    return {"owner": owner, "name": name}


# ---- the clock -----------------------------------------------------------------------------------

def next_phase(state: GameState, user_id: int) -> Outcome:
    actor = require_player(state, user_id)
    require_running(state)
    probe = GameState.from_dict(state.to_dict())
    advance(probe)
    if probe.over:
        summary = "Battle round 5 ends: the battle is over"
    else:
        who = probe.players[probe.active].name
        summary = f"Round {probe.round}: {who}'s {PHASE_LABELS[probe.phase]} phase"
        if probe.phase == "command" and probe.turn != state.turn:
            summary += " (both players gain 1CP)"
    return Outcome([event("next", actor, summary)], summary)


def end_game(state: GameState, user_id: int, *, manager: bool, abandon: bool) -> Outcome:
    actor = state.player_index(user_id)
    if actor is None and not manager:
        raise UserError("Only a player or a member with Manage Channel can end this game.", field="user")
    status = "abandoned" if abandon else "finished"
    summary = f"Game {status}"
    return Outcome([event("end", actor, summary, {"status": status, "by": user_id})], summary)


# ---- CP and VP -----------------------------------------------------------------------------------

def cp_gain(state: GameState, user_id: int, amount: int, *, force: bool = False,
            target_user: int | None = None) -> Outcome:
    actor = require_player(state, user_id)
    own_target(state, actor, target_user)
    require_running(state)
    rules.check_amount(amount, field="amount", low=1, high=rules.MAX_CP_STEP, what="CP gained")
    if state.players[actor].cp + amount > rules.MAX_CP:
        raise UserError(f"CP cannot exceed {rules.MAX_CP}.", field="amount")
    warning = rules.extra_cp_warning(state, actor, amount)
    warnings = _soft([warning] if warning else [], force)
    me = state.players[actor]
    summary = f"{me.name} gains {amount}CP ({me.cp} → {me.cp + amount})" + _forced_note(warnings)
    return Outcome([event("cp", actor, summary, {"player": actor, "delta": amount}, overrides=warnings)],
                   summary, warnings)


def cp_spend(state: GameState, user_id: int, amount: int, *, target_user: int | None = None) -> Outcome:
    actor = require_player(state, user_id)
    own_target(state, actor, target_user)
    require_running(state)
    rules.check_amount(amount, field="amount", low=1, high=rules.MAX_CP_STEP, what="CP spent")
    rules.spend_check(state, actor, amount, "that")
    me = state.players[actor]
    summary = f"{me.name} spends {amount}CP ({me.cp} → {me.cp - amount})"
    return Outcome([event("cp", actor, summary, {"player": actor, "delta": -amount})], summary)


def cp_set(state: GameState, user_id: int, value: int, *, target_user: int | None = None) -> Outcome:
    actor = require_player(state, user_id)
    own_target(state, actor, target_user)
    rules.check_amount(value, field="amount", low=0, high=rules.MAX_CP, what="CP")
    me = state.players[actor]
    summary = f"{me.name} sets CP to {value} (was {me.cp})"
    return Outcome([event("cp_set", actor, summary, {"player": actor, "value": value})], summary)


def vp_add(state: GameState, user_id: int, amount: int, *, target_user: int | None = None) -> Outcome:
    actor = require_player(state, user_id)
    own_target(state, actor, target_user)
    require_running(state)
    rules.check_amount(amount, field="amount", low=1, high=rules.MAX_VP_STEP, what="VP scored")
    me = state.players[actor]
    if me.vp + amount > rules.MAX_VP:
        raise UserError(f"VP cannot exceed {rules.MAX_VP}.", field="amount")
    summary = f"{me.name} scores {amount}VP ({me.vp} → {me.vp + amount})"
    return Outcome([event("vp", actor, summary, {"player": actor, "delta": amount})], summary)


def vp_set(state: GameState, user_id: int, value: int, *, target_user: int | None = None) -> Outcome:
    actor = require_player(state, user_id)
    own_target(state, actor, target_user)
    rules.check_amount(value, field="amount", low=0, high=rules.MAX_VP, what="VP")
    me = state.players[actor]
    summary = f"{me.name} sets VP to {value} (was {me.vp})"
    return Outcome([event("vp_set", actor, summary, {"player": actor, "value": value})], summary)


# ---- stratagems ----------------------------------------------------------------------------------

def use_stratagem(state: GameState, user_id: int, spec: rules.StratagemSpec, unit_name: str | None, *,
                  force: bool = False, extra: bool = False, cost: int | None = None) -> Outcome:
    actor = require_player(state, user_id)
    require_running(state)
    if extra and not spec.cp_extra:
        raise UserError(f"{spec.name} has no section with an additional CP cost.", field="extra")
    if cost is not None:
        rules.check_amount(cost, field="cost", low=0, high=rules.MAX_CP_STEP, what="The CP cost")
    price = spec.cost(state.edition, extra=extra) if cost is None else cost
    ref = None
    unit = None
    if unit_name:
        owner, name = _strat_target(state, actor, unit_name)
        unit = _unit(state, owner, name)
        ref = _ref(owner, name)
    warnings = _soft(rules.stratagem_checks(state, actor, spec, unit, price), force)
    me = state.players[actor]
    target = f" on {unit.name}" if unit else ""
    cleared = bool(unit and unit.shocked and unit.owner == actor and spec.clears_battleshock)
    summary = f"{me.name} uses {spec.name}{target} for {price}CP ({me.cp} → {me.cp - price})"
    if cleared:
        summary += f"; {unit.name} is not battle-shocked"
    summary += _forced_note(warnings)
    data = {"player": actor, "name": spec.name, "entry_id": spec.entry_id, "cp": price, "unit": ref,
            "round": state.round, "turn": state.turn, "phase": state.phase,
            "once": spec.key if spec.once_per_battle else None, "clears_shock": cleared, "forced": bool(warnings)}
    return Outcome([event("strat", actor, summary, data, overrides=warnings)], summary, warnings)


def _strat_target(state: GameState, actor: int, raw: str) -> tuple[int, str]:
    """Your own unit unless the name only matches one of the opponent's units."""
    try:
        name, _ = resolve_unit(state, actor, raw, create=False)
        return actor, name
    except UserError:
        pass
    try:
        name, _ = resolve_unit(state, 1 - actor, raw, create=False)
        return 1 - actor, name
    except UserError:
        name, _ = resolve_unit(state, actor, raw, create=True)
        return actor, name


# ---- unit statuses -------------------------------------------------------------------------------

def judgement(state: GameState, user_id: int, unit_name: str, amount: int, *, remove: bool) -> Outcome:
    """Judgement tokens go on the invoker's opponent's units (Eye of the Ancestors)."""
    actor = require_player(state, user_id)
    require_running(state)
    rules.check_amount(amount, field="amount", low=1, high=rules.MAX_JUDGEMENT_STEP, what="Judgement tokens")
    owner = 1 - actor
    name, exists = resolve_unit(state, owner, unit_name, create=not remove)
    unit = _unit(state, owner, name)
    if remove:
        rules.judgement_loss_check(unit, amount)
        summary = f"{name} loses {amount} Judgement token(s) ({unit.judgement} → {unit.judgement - amount})"
        return Outcome([event("judgement", actor, summary, {"unit": _ref(owner, name), "delta": -amount})], summary)
    gained, ignored = rules.judgement_gain(unit, amount)
    summary = f"{name} gains {gained} Judgement token(s) ({unit.judgement} → {unit.judgement + gained})"
    if ignored:
        summary += f"; {ignored} ignored (never more than 2)"
    return Outcome([event("judgement", actor, summary, {"unit": _ref(owner, name), "delta": gained})], summary)


def riled(state: GameState, user_id: int, unit_name: str, until: str, *, remove: bool = False) -> Outcome:
    actor = require_player(state, user_id)
    require_running(state)
    name, _ = resolve_unit(state, actor, unit_name, create=not remove)
    if remove:
        summary = f"{name} is no longer riled up"
        return Outcome([event("riled", actor, summary, {"unit": _ref(actor, name), "until": None})], summary)
    end = rules.riled_until(state, actor, until)
    summary = f"{name} is riled up {rules.RILED_DURATIONS[until]}"
    return Outcome([event("riled", actor, summary, {"unit": _ref(actor, name), "until": end, "duration": until})],
                   summary)


def waaagh(state: GameState, user_id: int, *, force: bool = False) -> Outcome:
    """War Cry (11e Orks): once per battle, at the start of the Command phase; riled until the end of the next turn."""
    actor = require_player(state, user_id)
    require_running(state)
    me = state.players[actor]
    if "waaagh" in me.once_used:
        raise UserError("The Waaagh! War Cry can be used only once per battle, and your army has already used it.")
    warnings = []
    if state.phase != "command":
        warnings.append("War Cry is used at the start of the Command phase.")
    warnings = _soft(warnings, force)
    end = rules.riled_until(state, actor, "end-of-next-turn")
    summary = f"{me.name} calls the Waaagh!: their units are riled up until the end of the next turn" + _forced_note(warnings)
    return Outcome([event("waaagh", actor, summary, {"player": actor, "until": end}, overrides=warnings)],
                   summary, warnings)


def shock(state: GameState, user_id: int, unit_name: str, *, clear: bool = False) -> Outcome:
    actor = require_player(state, user_id)
    require_running(state)
    name, _ = resolve_unit(state, actor, unit_name, create=not clear)
    unit = _unit(state, actor, name)
    if clear:
        if not unit.shocked:
            raise UserError(f"{name} is not battle-shocked.", field="unit")
        summary = f"{name} is no longer battle-shocked"
    else:
        if unit.shocked:
            raise UserError(f"{name} is already battle-shocked.", field="unit")
        summary = f"{name} is battle-shocked"
    return Outcome([event("shock", actor, summary, {"unit": _ref(actor, name), "on": not clear})], summary)


def oathband_mark(state: GameState, user_id: int, unit_name: str, *, clear: bool = False) -> Outcome:
    """Ruthless Efficiency (10e Oathband): mark enemy units at the start of the battle."""
    actor = require_player(state, user_id)
    require_running(state)
    owner = 1 - actor
    name, _ = resolve_unit(state, owner, unit_name, create=not clear)
    unit = _unit(state, owner, name)
    if clear:
        if not unit.oathband:
            raise UserError(f"{name} is not marked.", field="unit")
        summary = f"{name} is no longer marked for Ruthless Efficiency"
        return Outcome([event("oathband", actor, summary, {"unit": _ref(owner, name), "on": False})], summary)
    if unit.oathband:
        raise UserError(f"{name} is already marked.", field="unit")
    marked = sum(1 for u in state.units_of(owner) if u.oathband)
    if marked >= rules.MAX_OATHBAND_MARKS:
        raise UserError(f"Ruthless Efficiency marks at most {rules.MAX_OATHBAND_MARKS} units (Onslaught).", field="unit")
    summary = f"{name} is marked for Ruthless Efficiency"
    return Outcome([event("oathband", actor, summary, {"unit": _ref(owner, name), "on": True})], summary)


def destroyed(state: GameState, user_id: int, unit_name: str, *, mine: bool) -> Outcome:
    actor = require_player(state, user_id)
    require_running(state)
    owner = actor if mine else 1 - actor
    name, _ = resolve_unit(state, owner, unit_name, create=True)
    unit = _unit(state, owner, name)
    if unit.destroyed:
        raise UserError(f"{name} is already destroyed.", field="unit")
    summary = f"{name} ({state.players[owner].name}) is destroyed"
    return Outcome([event("destroyed", actor, summary, {"unit": _ref(owner, name), "on": True})], summary)


def ruthless_claim(state: GameState, user_id: int, amount: int, *, force: bool = False) -> Outcome:
    """Gain the Ruthless Efficiency CP: once per battle, exempt from the 10e 1CP-per-round limit."""
    actor = require_player(state, user_id)
    require_running(state)
    me = state.players[actor]
    if "ruthless efficiency" in me.once_used:
        raise UserError("Ruthless Efficiency grants CP only once per battle, and you have already gained it.")
    rules.check_amount(amount, field="amount", low=1, high=rules.MAX_RUTHLESS_CP, what="Ruthless Efficiency CP")
    if not any(u.oathband and u.destroyed for u in state.units_of(1 - actor)):
        raise UserError("None of the units you marked for Ruthless Efficiency has been destroyed yet "
                        "(use /oathband mark and /oathband destroyed).", field="amount")
    warnings = []
    if not (state.phase == "command" and state.active == actor):
        warnings.append("Ruthless Efficiency CP is gained at the start of your Command phase.")
    warnings = _soft(warnings, force)
    summary = f"{me.name} gains {amount}CP from Ruthless Efficiency ({me.cp} → {me.cp + amount})" + _forced_note(warnings)
    data = {"player": actor, "delta": amount, "counts_to_cap": False, "once": "ruthless efficiency"}
    return Outcome([event("cp", actor, summary, data, overrides=warnings)], summary, warnings)
