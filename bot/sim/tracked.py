"""/sim between tracked units: a channel's game units -> the planner's plan, with their tracked state.

The units of an imported list (bot/armies, bot/games) name their datasheets, their list's loadout, models
left, the wounds lost on the damaged model and which leader leads which unit; `bot.units.listed` fields them
as listed and `bot.sim.fielded.plan` builds the request. Tracked state is applied where the seeds (or the
datasets they point to) define its effect on an attack, and every state is named in the answer
(`Plan.tracked`), applied or not (docs/rules-notes.md, "/sim between tracked units"):
- riled up, 11e (seed 001, Waaagh!: "While a unit is riled up: That unit has 5+ InSv"): a riled target;
- the 10e Waaagh! while active (Wahapedia 10e Abilities 000003676): +1 S and A to the attacker's melee
  weapons, a 5+ invulnerable save for the target;
- Judgement tokens on the target of a Votann attacker: named, not applied — seed 000's Eye of the Ancestors
  says "apply the relevant bonus from the table below", and the table on that page is empty (line "|");
- battle-shock: named, not applied — no rule in the seeds changes an attack by or against such a unit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from bot.armies import faction_rules
from bot.errors import UserError
from bot.games.commands import AmbiguousUnit, resolve_unit
from bot.games.model import GameState
from bot.games.model import Unit as GameUnit
from bot.sim.fielded import Plan, plan
from bot.sim.planner import UnitPlanner, split_count
from bot.sim.requests import SimOptions, weapon_kind
from bot.units.listed import as_listed
from bot.units.model import ModelType, Unit

RILED_INVULNERABLE = 5  # seed 001, Waaagh!: "That unit has 5+ InSv"
WAAAGH_INVULNERABLE = 5  # Wahapedia 10e 000003676: "a 5+ invulnerable save"
WAAAGH_MELEE_BONUS = 1  # ibid.: "Add 1 to the Strength and Attacks characteristics of melee weapons"


@dataclass
class Side:
    """A tracked unit as it fights: the unit (the bodyguard when a leader leads it) and its leader."""

    unit: GameUnit
    leader: GameUnit | None = None


def names_tracked_unit(state: GameState | None, name: str) -> bool:
    """Whether a typed `name` is a unit of this game's lists (an autocomplete datasheet id never is), so
    /sim takes the tracked path; an ambiguous name counts (the tracked path asks which)."""
    if state is None or not state.armies or ":datasheet:" in name:
        return False
    for owner in range(len(state.players)):
        if state.army(owner) is None:
            continue
        try:
            resolve_unit(state, owner, name, create=False)
            return True
        except AmbiguousUnit:
            return True
        except UserError:
            continue
    return False


def _owner_of(state: GameState, name: str, owners: list[int]) -> tuple[int, str] | None:
    for owner in owners:
        try:
            return owner, resolve_unit(state, owner, name, create=False)[0]
        except AmbiguousUnit:
            raise
        except UserError:
            continue
    return None


def _pick(state: GameState, name: str, owners: list[int], option: str) -> GameUnit:
    """The unit `name` of one of `owners`, refused (ephemeral) when it is another player's, destroyed or
    unlisted."""
    try:
        found = _owner_of(state, name, owners)
    except AmbiguousUnit as error:
        raise UserError(str(error), field=option) from None
    if found is None:
        other = _owner_of(state, name, [i for i in range(len(state.players)) if i not in owners])
        whose = " or ".join(state.players[i].name for i in owners)
        if other is not None:
            role = "attack with" if option == "attacker" else "target"
            raise UserError(f"{other[1]} is {state.players[other[0]].name}'s unit; you can only {role} "
                            f"{whose}'s units here.", field=option)
        raise UserError(f"{name[:80]!r} is not a unit of {whose} in this game. Pick one from the list as you "
                        "type.", field=option)
    owner, resolved = found
    unit = state.find_unit(owner, resolved)
    assert unit is not None
    if unit.destroyed:
        raise UserError(f"{unit.name} is destroyed.", field=option)
    if unit.unlisted or not unit.datasheet_id:
        raise UserError(f"{unit.name} is {'unlisted' if unit.unlisted else 'not matched to a datasheet'}: "
                        "import the army with /army import to simulate it as it stands.", field=option)
    return unit


def _side(state: GameState, unit: GameUnit) -> Side:
    """A leader fights with the unit it leads; a led unit fights with its (living, listed) leader."""
    if unit.leading:
        led = state.find_unit(unit.owner, unit.leading)
        if led is not None and not led.destroyed and led.datasheet_id and not led.unlisted:
            return Side(led, unit)
    leader = next((u for u in state.units_of(unit.owner)
                   if u.leading == unit.name and not u.destroyed and u.datasheet_id and not u.unlisted), None)
    return Side(unit, leader)


def sides(state: GameState, attacker: str, target: str, *, user_id: int | None) -> tuple[Side, Side]:
    """The invoker's unit against the opponent's; someone not playing (or the CLI) may pick either side."""
    me = state.player_index(user_id) if user_id is not None else None
    everyone = list(range(len(state.players)))
    mine = _pick(state, attacker, [me] if me is not None else everyone, "attacker")
    theirs = _pick(state, target, [i for i in everyone if i != mine.owner], "target")
    return _side(state, mine), _side(state, theirs)


def _waaagh_active(state: GameState, unit: GameUnit) -> bool:
    until = state.players[unit.owner].waaagh_until
    return until is not None and until > state.turn and state.waaagh_applies(unit)


def _plus(value: Any, bonus: int) -> Any:
    """An Attacks characteristic plus `bonus`: 3 -> 4, "D6" -> "D6+1", "2D6+2" -> "2D6+3"."""
    if isinstance(value, int) or str(value).isdigit():
        return int(value) + bonus
    match = re.fullmatch(r"(\d*D\d+)(?:\+(\d+))?", str(value).strip().upper())
    return f"{match.group(1)}+{int(match.group(2) or 0) + bonus}" if match else value


def _melee_bonus(unit: Unit, bonus: int) -> Unit:
    weapons = tuple({**w, "S": _plus(w.get("S"), bonus), "A": _plus(w.get("A"), bonus)}
                    if weapon_kind(w) == "melee" else w for w in unit.weapons)
    return replace(unit, weapons=weapons)


def _invulnerable(unit: Unit, save: int) -> Unit:
    def better(model: ModelType) -> ModelType:
        current = model.profile.invulnerable
        return replace(model, profile=replace(model.profile, invulnerable=save if current is None
                                              else min(current, save)))
    return replace(unit, models=tuple(better(m) for m in unit.models))


def _state_effects(state: GameState, attacker: Side, target: Side) -> tuple[int | None, int, list[str]]:
    """(target invulnerable save, attacker melee bonus, the words for each tracked state)."""
    words: list[str] = []
    invulnerable: int | None = None
    bonus = 0
    body, victim = attacker.unit, target.unit
    victims = [u for u in (victim, target.leader) if u is not None]
    if state.edition == "11e" and any(state.riled(u) for u in victims):
        invulnerable = RILED_INVULNERABLE
        words.append(f"{victim.name} is riled up: 5+ invulnerable save (seed 001, Waaagh!)")
    if state.edition == "10e":
        if any(_waaagh_active(state, u) for u in victims):
            invulnerable = WAAAGH_INVULNERABLE
            words.append(f"Waaagh! active for {victim.name}: 5+ invulnerable save (10e army rule)")
        if _waaagh_active(state, body):
            bonus = WAAAGH_MELEE_BONUS
            words.append(f"Waaagh! active for {body.name}: +1 Strength and Attacks to melee weapons (10e army rule)")
    tokens = max(u.judgement for u in victims)
    if tokens and faction_rules.plays(state, body.owner, "Leagues of Votann") is not False:
        words.append(f"{victim.name} has {tokens} Judgement token{'s' if tokens != 1 else ''}: not applied — the "
                     "Eye of the Ancestors bonus table is empty in the seed page (set hit/wound options by hand)")
    for unit in (body, attacker.leader, victim, target.leader):
        if unit is not None and unit.shocked:
            words.append(f"{unit.name} is battle-shocked: not applied — no rule in the seeds changes its attacks "
                         "or saves")
    return invulnerable, bonus, words


def _fielded(planner: UnitPlanner, state: GameState, unit: GameUnit, edition: str, role: str,
             notes: list[str]) -> tuple[Any, Unit, int | None]:
    """(catalog entry, the unit as its list fields it, a size for plan() when the list gives no loadout)."""
    entry = planner.datasheet(str(unit.datasheet_id), edition, role)
    datasheet = planner.unit(entry)
    army = state.army(unit.owner) or {}
    listed = army.get("units") or []
    row = listed[unit.army_index] if unit.army_index is not None and 0 <= unit.army_index < len(listed) else {}
    fielded, said = as_listed(datasheet, unit.name, row.get("composition"), unit.models_left)
    notes.extend(said)
    left = unit.models if unit.models_left is None else unit.models_left
    return entry, fielded, (left if fielded is datasheet else fielded.sized().total)


def listed_attacker(planner: UnitPlanner, state: GameState, attacker: str, *, user_id: int | None) -> Unit:
    """The attacker as its list fields it (for the weapon autocomplete): the unit, not its leader."""
    everyone = list(range(len(state.players)))
    me = state.player_index(user_id) if user_id is not None else None
    unit = _side(state, _pick(state, attacker, [me] if me is not None else everyone, "attacker")).unit
    return _fielded(planner, state, unit, state.edition, "attacker", [])[1]


def plan_between(planner: UnitPlanner, state: GameState, attacker: str, target: str, options: SimOptions, *,
                 user_id: int | None, weapon: str | None = None, phase: str | None = None, fnp: int | None = None,
                 abilities: bool = True, force: bool = False, unused: tuple[str, ...] = ()) -> tuple[Plan, list[Any], str]:
    """The plan for two tracked units (the game's edition), the datasheets used, and the title. `unused` names
    the options given that the game decides instead (sizes, leaders, wounds lost, edition): the answer says so."""
    mine, theirs = sides(state, attacker, target, user_id=user_id)
    result, entries = plan_sides(planner, state, mine, theirs, options, weapon=weapon, phase=phase, fnp=fnp,
                                 abilities=abilities, force=force)
    if unused:
        result.assumptions.insert(0, f"not used: {', '.join(unused)} — the game's lists and tracked state decide")
    return result, entries, f"{mine.unit.name} → {theirs.unit.name}"


Fielded = tuple[Any, Unit, "int | None", list[str]]


def plan_sides(planner: UnitPlanner | None, state: GameState, mine: Side, theirs: Side, options: SimOptions, *,
               weapon: str | None = None, phase: str | None = None, fnp: int | None = None, abilities: bool = True,
               force: bool = False, fielded_cache: dict[tuple[int, str], Fielded] | None = None,
               ) -> tuple[Plan, list[Any]]:
    """The plan for one side's unit against another's, and the datasheets used. `fielded_cache` keeps each
    unit as its list fields it across calls (/sim matchup plans every pair of two lists); with every unit
    in it, no `planner` (catalog) is needed."""
    options = replace(options, edition=state.edition)
    invulnerable, bonus, tracked = _state_effects(state, mine, theirs)
    roles = {"attacker": mine.unit, "leader": mine.leader, "target": theirs.unit, "target_leader": theirs.leader}
    cache = {} if fielded_cache is None else fielded_cache
    fielded: dict[str, Fielded] = {}
    for role, unit in roles.items():
        if unit is None:
            continue
        key = (unit.owner, unit.name)
        if key not in cache:
            assert planner is not None, "a unit missing from fielded_cache needs the planner"
            said: list[str] = []
            cache[key] = (*_fielded(planner, state, unit, state.edition, role, said), said)
        fielded[role] = cache[key]
    notes = [note for f in fielded.values() for note in f[3]]
    units = {role: f[1] for role, f in fielded.items()}
    if bonus:
        for role in ("attacker", "leader"):
            if role in units:
                units[role] = _melee_bonus(units[role], bonus)
    if invulnerable is not None:
        for role in ("target", "target_leader"):
            if role in units:
                units[role] = _invulnerable(units[role], invulnerable)
    # The list says who leads whom and what is fielded: taken as given (the plan notes what the data disagrees with).
    led = all(units[body].may_be_led_by(units[lead]) for lead, body in (("leader", "attacker"),
                                                                         ("target_leader", "target")) if lead in units)
    name, count = split_count(weapon)
    result = plan(units["attacker"], units["target"], options, phase=phase, weapon=name, count=count,
                  models=fielded["attacker"][2], target_models=fielded["target"][2], leader=units.get("leader"),
                  target_leader=units.get("target_leader"), wounds_lost=theirs.unit.wounds_lost, fnp=fnp,
                  abilities=abilities, force=force or not led or any(
                      f[2] is not None and not f[1].size_allowed(f[2]) for f in fielded.values()))
    result.tracked = [f"{side.leader.name} leads {side.unit.name}" for side in (mine, theirs) if side.leader]
    result.tracked += [f"{u.name}: {u.models_left} of {u.models} models left" for u in roles.values()
                       if u is not None and u.models is not None and u.models_left not in (None, u.models)]
    if theirs.unit.wounds_lost:
        result.tracked.append(f"{theirs.unit.name}: its damaged model has lost {theirs.unit.wounds_lost} "
                              f"wound{'s' if theirs.unit.wounds_lost != 1 else ''}")
    result.tracked += tracked
    entries = [f[0] for f in fielded.values()]
    result.assumptions = [*dict.fromkeys(notes), *result.assumptions]
    result.assumptions += [f"{e.name}: {e.edition} datasheet used with {state.edition} rules" for e in entries
                           if e.edition != state.edition]
    return result, entries


def fielded_units(planner: UnitPlanner, state: GameState, sides_: list[Side]) -> dict[tuple[int, str], Fielded]:
    """Each unit of `sides_` (bodies and leaders) as its list fields it: plan_sides' `fielded_cache`,
    filled where the catalog is, so the plans themselves can be made elsewhere (a /sim worker)."""
    cache: dict[tuple[int, str], Fielded] = {}
    for side in sides_:
        for unit in (side.unit, side.leader):
            if unit is not None and (unit.owner, unit.name) not in cache:
                said: list[str] = []
                cache[(unit.owner, unit.name)] = (*_fielded(planner, state, unit, state.edition, "attacker", said),
                                                  said)
    return cache


def fighting_sides(state: GameState, owner: int) -> list[Side]:
    """Every unit of `owner` that can fight, as a side (a leader inside the unit it leads), in list order;
    destroyed, unlisted and unmatched units are left out."""
    out: list[Side] = []
    seen: set[str] = set()
    units = sorted(state.units_of(owner), key=lambda u: (u.army_index is None, u.army_index or 0))
    for unit in units:
        if unit.destroyed or unit.unlisted or not unit.datasheet_id:
            continue
        side = _side(state, unit)
        if side.unit.name not in seen:
            seen.add(side.unit.name)
            out.append(side)
    return out
