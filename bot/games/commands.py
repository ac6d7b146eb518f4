"""Turn a player's request into events, after the permission and rules checks.

Each function takes the current state (never mutated here) and returns an `Outcome`: the events to
append and a one-line answer. Refusals are `UserError`s; soft rules become `SoftRuleError` unless
`force` is set, in which case the event records the override.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rapidfuzz import fuzz, process

from bot.armies import faction_rules
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


def soft(warnings: list[str], force: bool) -> list[str]:
    """The soft rule warnings a command goes ahead with: all of them when forced, else SoftRuleError."""
    if warnings and not force:
        raise SoftRuleError(warnings)
    return warnings


def forced_note(warnings: list[str]) -> str:
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

class AmbiguousUnit(UserError):
    """A typed name that fits several of a player's units ("Boyz" with three Boyz units): ask which."""

    def __init__(self, typed: str, units: list[Unit]) -> None:
        options = "; ".join(u.label() for u in units[:10])
        super().__init__(f"Which {typed}? {options}. Pick one from the list (autocomplete tells them apart).",
                         field="unit")
        self.units = units


def resolve_unit(state: GameState, owner: int, raw: str, *, create: bool) -> tuple[str, bool]:
    """(the unit's name, exists): exact, then the one unit a list numbered ("Boyz" when only "Boyz #2" is
    left alive counts as ambiguous: ask), then a close fuzzy match among that player's units. A player whose
    army list is loaded has no units beyond it, so nothing is created for them."""
    name = rules.clean_name(raw)
    units = state.units_of(owner)
    key = unit_key(name)
    for unit in units:
        if unit.key == key:
            return unit.name, True
    numbered = [u for u in units if u.base_key == key]
    if len(numbered) == 1:
        return numbered[0].name, True
    if len(numbered) > 1:
        raise AmbiguousUnit(name, numbered)
    if units:
        match = process.extractOne(key, {i: u.key for i, u in enumerate(units)}, scorer=fuzz.ratio, score_cutoff=90)
        if match is not None:
            return units[match[2]].name, True
    listed = state.army(owner) is not None
    if create and not listed:
        return name, False
    owner_name = state.players[owner].name
    if listed:
        close = process.extract(key, {i: u.key for i, u in enumerate(units)}, scorer=fuzz.WRatio, limit=3,
                                score_cutoff=60)
        hint = f" Did you mean: {', '.join(units[m[2]].name for m in close)}?" if close else ""
        raise UserError(f"{name!r} is not in {owner_name}'s army list.{hint}", field="unit")
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
    warnings = soft([warning] if warning else [], force)
    me = state.players[actor]
    summary = f"{me.name} gains {amount}CP ({me.cp} → {me.cp + amount})" + forced_note(warnings)
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
    warnings = soft(rules.stratagem_checks(state, actor, spec, unit, price), force)
    me = state.players[actor]
    target = f" on {unit.name}" if unit else ""
    cleared = bool(unit and unit.shocked and unit.owner == actor and spec.clears_battleshock)
    summary = f"{me.name} uses {spec.name}{target} for {price}CP ({me.cp} → {me.cp - price})"
    if cleared:
        summary += f"; {unit.name} is not battle-shocked"
    summary += forced_note(warnings)
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

def judgement(state: GameState, user_id: int, unit_name: str, amount: int, *, remove: bool,
              force: bool = False) -> Outcome:
    """Judgement tokens: a Leagues of Votann player puts them on the opponent's units (Eye of the Ancestors)."""
    actor = require_player(state, user_id)
    require_running(state)
    rules.check_amount(amount, field="amount", low=1, high=rules.MAX_JUDGEMENT_STEP, what="Judgement tokens")
    owner = 1 - actor
    name, exists = resolve_unit(state, owner, unit_name, create=not remove)
    unit = _unit(state, owner, name)
    # Removing tokens is a correction anyone playing may make; giving them is the Votann player's rule.
    warnings = [] if remove else soft(faction_rules.check(state, actor, "judgement"), force)
    note = forced_note(warnings)
    if remove:
        rules.judgement_loss_check(unit, amount)
        summary = f"{name} loses {amount} Judgement token(s) ({unit.judgement} → {unit.judgement - amount})" + note
        return Outcome([event("judgement", actor, summary, {"unit": _ref(owner, name), "delta": -amount},
                              overrides=warnings)], summary, warnings)
    gained, ignored = rules.judgement_gain(unit, amount)
    summary = f"{name} gains {gained} Judgement token(s) ({unit.judgement} → {unit.judgement + gained})"
    if ignored:
        summary += f"; {ignored} ignored (never more than 2)"
    summary += note
    return Outcome([event("judgement", actor, summary, {"unit": _ref(owner, name), "delta": gained},
                          overrides=warnings)], summary, warnings)


def riled(state: GameState, user_id: int, unit_name: str, until: str, *, remove: bool = False,
          force: bool = False) -> Outcome:
    """Riled up (11e Orks): only the Orks player's own units; a listed unit needs the Waaagh! ability."""
    actor = require_player(state, user_id)
    require_running(state)
    name, _ = resolve_unit(state, actor, unit_name, create=not remove)
    if remove:
        summary = f"{name} is no longer riled up"
        return Outcome([event("riled", actor, summary, {"unit": _ref(actor, name), "until": None})], summary)
    warnings = faction_rules.check(state, actor, "riled")
    unit = _unit(state, actor, name)
    if not unit.unlisted and "waaagh" not in unit.tags:
        warnings.append(f"{name}'s datasheet does not have the Waaagh! ability (only units with it become riled up).")
    warnings = soft(warnings, force)
    end = rules.riled_until(state, actor, until)
    summary = f"{name} is riled up {rules.RILED_DURATIONS[until]}" + forced_note(warnings)
    return Outcome([event("riled", actor, summary, {"unit": _ref(actor, name), "until": end, "duration": until},
                          overrides=warnings)], summary, warnings)


def waaagh(state: GameState, user_id: int, *, force: bool = False) -> Outcome:
    """The Waaagh!, once per battle, for the Orks player's units with the Waaagh! ability (all units without a list).

    11e War Cry (seed 001): at the start of the Command phase (either player's); riled up until the end of the
    next turn. 10e army rule (Wahapedia 10e Abilities 000003676): at the start of *your* Command phase; active
    until the start of your next Command phase."""
    actor = require_player(state, user_id)
    require_running(state)
    me = state.players[actor]
    if "waaagh" in me.once_used:
        raise UserError("The Waaagh! can be called only once per battle, and your army has already called it.")
    warnings = faction_rules.check(state, actor, "waaagh")
    ten = state.edition == "10e"
    if ten and not (state.phase == "command" and state.active == actor):
        warnings.append("The 10e Waaagh! is called at the start of your Command phase.")
    elif not ten and state.phase != "command":
        warnings.append("War Cry is used at the start of the Command phase.")
    warnings = soft(warnings, force)
    end = rules.riled_until(state, actor, "start-of-your-next-turn" if ten else "end-of-next-turn")
    how = "until the start of your next Command phase" if ten else "until the end of the next turn"
    if state.army(actor) is None:
        who = "all their units (no army list loaded, so the bot cannot tell which have the Waaagh! ability)"
    else:
        able = [u.name for u in state.units_of(actor) if "waaagh" in u.tags and not u.destroyed]
        who = (f"{len(able)} units with the Waaagh! ability ({', '.join(able[:6])}{', …' if len(able) > 6 else ''})"
               if able else "no unit (none in the list has the Waaagh! ability)")
    verb = "the Waaagh! is active for" if ten else "riled up:"
    summary = f"{me.name} calls the Waaagh! {how}; {verb} {who}" + forced_note(warnings)
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


def oathband_mark(state: GameState, user_id: int, unit_name: str, *, clear: bool = False,
                  force: bool = False) -> Outcome:
    """Ruthless Efficiency (10e Needgaârd Oathband): mark enemy units at the start of the battle."""
    actor = require_player(state, user_id)
    require_running(state)
    owner = 1 - actor
    name, _ = resolve_unit(state, owner, unit_name, create=not clear)
    unit = _unit(state, owner, name)
    warnings = [] if clear else soft(faction_rules.check(state, actor, "oathband"), force)
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
    summary = f"{name} is marked for Ruthless Efficiency" + forced_note(warnings)
    return Outcome([event("oathband", actor, summary, {"unit": _ref(owner, name), "on": True}, overrides=warnings)],
                   summary, warnings)


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
    warnings = soft(warnings, force)
    summary = f"{me.name} gains {amount}CP from Ruthless Efficiency ({me.cp} → {me.cp + amount})" + forced_note(warnings)
    data = {"player": actor, "delta": amount, "counts_to_cap": False, "once": "ruthless efficiency"}
    return Outcome([event("cp", actor, summary, data, overrides=warnings)], summary, warnings)


# ---- armies --------------------------------------------------------------------------------------

def import_army(state: GameState, user_id: int, army: dict[str, Any]) -> Outcome:
    """The invoker's own list; a second import replaces the first (its units' state starts afresh)."""
    actor = require_player(state, user_id)
    if army.get("edition") != state.edition:
        raise UserError(f"This list was read for {army.get('edition')} but the game is {state.edition}.", field="list")
    me = state.players[actor]
    units = army.get("units") or []
    unresolved = sum(1 for u in units if not u.get("datasheet_id"))
    again = " (replaces the earlier list)" if state.army(actor) is not None else ""
    summary = (f"{me.name} imports a {army.get('faction')} army: {len(units)} units"
               + (f", {army['points']} pts" if army.get("points") else "")
               + (f", {unresolved} unlisted (names not found)" if unresolved else "") + again)
    return Outcome([event("army", actor, summary, {"player": actor, "army": army})], summary)


def clear_army(state: GameState, user_id: int) -> Outcome:
    actor = require_player(state, user_id)
    if state.army(actor) is None:
        raise UserError("You have no army list in this game.")
    summary = f"{state.players[actor].name} clears their army list"
    return Outcome([event("army_clear", actor, summary, {"player": actor})], summary)


def damage(state: GameState, user_id: int, unit_name: str, *, wounds: int | None = None,
           models_left: int | None = None, wounds_lost: int | None = None) -> Outcome:
    """Your unit's models left and the wounds lost on its damaged model: set them, or apply `wounds` of damage
    (each model has the datasheet's W; wounds beyond the last model are lost, 11e 05.04 / 10e Inflict Damage)."""
    actor = require_player(state, user_id)
    require_running(state)
    name, _ = resolve_unit(state, actor, unit_name, create=False)
    unit = _unit(state, actor, name)
    if unit.models is None:
        raise UserError(f"{name} is unlisted: the bot does not know its models (import your army with /army import).",
                        field="unit")
    if wounds is None and models_left is None and wounds_lost is None:
        raise UserError("Give wounds: (damage to apply), or models_left: and/or wounds_lost: to set.", field="wounds")
    per_model = unit.wounds
    left = unit.models if unit.models_left is None else unit.models_left
    lost = unit.wounds_lost
    if wounds is not None:
        rules.check_amount(wounds, field="wounds", low=1, high=rules.MAX_DAMAGE_STEP, what="Damage")
        if per_model is None:
            raise UserError(f"The bot does not know {name}'s wounds per model: set models_left: and wounds_lost:.",
                            field="wounds")
        total = lost + wounds
        left = max(0, left - total // per_model)
        lost = total % per_model if left else 0
    if models_left is not None:
        left = rules.check_amount(models_left, field="models_left", low=0, high=unit.models, what="Models left")
    if wounds_lost is not None:
        high = (per_model - 1) if per_model else rules.MAX_DAMAGE_STEP
        lost = rules.check_amount(wounds_lost, field="wounds_lost", low=0, high=high,
                                  what=f"Wounds lost on the damaged model (W{per_model})" if per_model else "Wounds lost")
    if left == 0:
        lost = 0
    was = unit.label()
    if (left, lost) == (unit.models_left, unit.wounds_lost):
        raise UserError(f"{was}: nothing changes.", field="unit")
    after = Unit(**{**unit.__dict__, "models_left": left, "wounds_lost": lost, "destroyed": left == 0})
    summary = f"{name}: {after.label().split(' · ', 1)[-1]}" + (" (was " + was.split(" · ", 1)[-1] + ")")
    return Outcome([event("damage", actor, summary, {"unit": _ref(actor, name), "models_left": left,
                                                     "wounds_lost": lost})], summary)


def unit_destroyed(state: GameState, user_id: int, unit_name: str) -> Outcome:
    """Your unit is destroyed (feeds the destroyed-unit log and the opponent's Ruthless Efficiency)."""
    return destroyed(state, user_id, unit_name, mine=True)


def attach(state: GameState, user_id: int, leader_name: str, unit_name: str | None) -> Outcome:
    """Which of your units a leader leads (none: it fights on its own)."""
    actor = require_player(state, user_id)
    leader, _ = resolve_unit(state, actor, leader_name, create=False)
    target = None
    if unit_name:
        target, _ = resolve_unit(state, actor, unit_name, create=False)
        if target == leader:
            raise UserError("A leader cannot lead itself.", field="unit")
        other = next((u for u in state.units_of(actor) if u.leading == target and u.name != leader), None)
        if other is not None:
            raise UserError(f"{other.name} already leads {target}: detach it first (/army attach leader:{other.name}).",
                            field="unit")
    summary = f"{leader} leads {target}" if target else f"{leader} leads no unit"
    return Outcome([event("attach", actor, summary, {"unit": _ref(actor, leader), "leading": target})], summary)
