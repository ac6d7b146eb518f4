"""Units as fielded -> a contract-1 request: who fires what, and the target as groups (contract 1b).

The decisions, each recorded with its rule in docs/rules-notes.md (Units as fielded):
- size: the datasheet's minimum unless `models:` (refused outside the datasheet's sizes unless forced);
- shooting: every model fires every ranged weapon of its default loadout, except that a model that is not
  a MONSTER or VEHICLE fires either its PISTOL/CLOSE-QUARTERS weapons or its other ranged weapons, never
  both (11e 24.07/24.27; 10e PISTOL): the other weapons when it has any;
- fight: each model fights with one melee weapon (11e 04.01), the first its loadout lists;
- a weapon with several profiles fires its first profile unless `weapon:` names another;
- `weapon:` narrows the volley to the models that carry it; a weapon no model carries by default (a
  wargear option) fires from `count:` models (default 1), never more than the options allow;
- a leader's models join the attacker's volley; a target leader joins the target as CHARACTER groups.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any

from bot.errors import UserError
from bot.sim.requests import SimOptions, base_name, build_request, engine_weapon, weapon_kind
from bot.units.model import ModelType, Sized, Unit, norm

PHASES = ("shooting", "fight")
MAX_GROUPS = 20  # contract 1b: more target groups are refused by the engine


@dataclass
class Plan:
    """What /sim unit and `sim plan` run: the request, the words for the embed, the assumptions."""

    request: dict[str, Any]
    assumptions: list[str] = field(default_factory=list)
    attacker_lines: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    target_groups: list[dict[str, Any]] = field(default_factory=list)  # with "wounds_lost" on the one it applies to
    target_name: str = ""
    abilities: list[str] = field(default_factory=list)
    tracked: list[str] = field(default_factory=list)  # a game's tracked state, applied or not (bot/sim/tracked.py)


def _models(n: int) -> str:
    return f"{n} model" if n == 1 else f"{n} models"


def _is_pistol(weapon: dict[str, Any]) -> bool:
    return any(re.sub(r"[\s\u2011-]+", " ", str(k)).strip().upper() in ("PISTOL", "CLOSE QUARTERS")
               for k in weapon.get("keywords") or [])


def _big(unit: Unit) -> bool:
    return any(norm(k) in ("monster", "vehicle") for k in unit.keywords)


def _profile_choice(profiles: list[dict[str, Any]], wanted: str | None) -> dict[str, Any]:
    if wanted:
        key = norm(wanted)
        for p in profiles:
            if norm(str(p.get("name"))) == key:
                return p
    return profiles[0]


@dataclass
class _Fire:
    model: str
    models: int
    weapon: dict[str, Any]
    character: bool
    note: str | None = None


def _model_weapons(unit: Unit, model: ModelType, count: int, phase: str, notes: list[str]) -> list[_Fire]:
    """What `count` models of one type attack with in `phase` (before `weapon:` narrows it)."""
    out: list[_Fire] = []
    carried: list[tuple[list[dict[str, Any]], int]] = []
    for c in model.loadout:
        profiles = unit.weapon(c.weapon)
        if not profiles:
            notes.append(f"{model.name}: no profile for {c.weapon} in the datasheet's weapons; not fired")
            continue
        carried.append((profiles, c.count))
    kind = "ranged" if phase == "shooting" else "melee"
    mine = [(p, n) for p, n in carried if weapon_kind(p[0]) == kind]
    if kind == "ranged" and not _big(unit):
        other = [(p, n) for p, n in mine if not _is_pistol(p[0])]
        if other and len(other) < len(mine):
            skipped = ", ".join(str(p[0].get("weapon") or base_name(str(p[0].get("name")))) for p, _ in mine
                                if _is_pistol(p[0]))
            notes.append(f"{model.name}: fires its other ranged weapons, not {skipped} (PISTOL: one or the other)")
            mine = other
    if kind == "melee" and len(mine) > 1:
        first = mine[0][0][0]
        rest = ", ".join(str(p[0].get("weapon") or p[0].get("name")) for p, _ in mine[1:])
        notes.append(f"{model.name}: fights with {first.get('weapon') or first.get('name')} "
                     f"(one melee weapon per model); not {rest}")
        mine = mine[:1]
        mine = [(p, 1) for p, _ in mine]
    for profiles, n in mine:
        chosen = profiles[0]
        if len(profiles) > 1:
            notes.append(f"{chosen.get('weapon') or base_name(str(chosen.get('name')))}: fired as "
                         f"{chosen.get('name')} (one profile per attack; pick another with weapon:)")
        out.append(_Fire(model.name, count * n, chosen, model.character))
    return out


def _narrow(fires: list[_Fire], unit: Unit, wanted: str, sized: list[Sized], count: int | None,
            force: bool, notes: list[str]) -> list[_Fire]:
    """`weapon:` narrows the volley to that weapon (or one of its profiles)."""
    key = norm(wanted)
    hits = []
    for f in fires:
        base = str(f.weapon.get("weapon") or base_name(str(f.weapon.get("name"))))
        profiles = unit.weapon(base) or [f.weapon]
        names = {norm(base), norm(str(f.weapon.get("name")))} | {norm(str(p.get("name"))) for p in profiles}
        if key in names:  # the weapon, or any one of its profiles
            f.weapon = _profile_choice(profiles, wanted)
            hits.append(f)
    if hits:
        if count is not None:
            carried = sum(f.models for f in hits)
            if count > carried and not force:
                raise UserError(f"Only {carried} models carry {wanted[:60]} in this loadout; `count:` can be at most "
                                f"{carried}. Add `force:True` (`--force` in `sim plan`) to simulate it anyway.", field="count")
            scale = hits[0]
            return [_Fire(scale.model, count, scale.weapon, scale.character,
                          f"{count} × {wanted[:60]} as asked" + (" (forced)" if count > carried else ""))]
        return hits
    profiles = unit.weapon(wanted) or [w for w in unit.weapons if norm(str(w.get("name"))) == key]
    if not profiles:
        names = ", ".join(dict.fromkeys(str(w.get("weapon") or w.get("name")) for w in unit.weapons))
        raise UserError(f"{unit.name} has no weapon `{wanted[:60]}`; its weapons: {names[:900]}.", field="weapon")
    chosen = _profile_choice(profiles, wanted)
    limit = option_limit(unit, str(chosen.get("weapon") or base_name(str(chosen.get("name")))), sized)
    n = 1 if count is None else count
    if n > limit and not force:
        raise UserError(f"{unit.name} can field at most {limit} × {wanted[:60]} at this size; `count:` {n} is "
                        "more than the datasheet allows. Add `force:True` (`--force` in `sim plan`) to simulate it anyway.", field="count")
    notes.append(f"{chosen.get('weapon') or chosen.get('name')} is a wargear option, not in the default loadout: "
                 f"fired by {n} model(s){' (forced)' if n > limit else ''} (set count:)")
    return [_Fire("option", n, chosen, False)]


def option_limit(unit: Unit, weapon: str, sized: list[Sized]) -> int:
    """How many of `weapon` a unit of this size may take through its wargear options, from the options'
    structure (per N models, a named model type, or any number; times the copies one choice gives). Options
    of one version (dataslate, codex) add up; of several versions, the most generous one counts."""
    key = norm(weapon)
    counts = {norm(m.name): n for s in sized for m, n in s.counts}
    total = sum(counts.values())
    by_version: dict[str | None, int] = {}
    for option in unit.options:
        copies = max((sum(1 for w in choice if norm(w) == key) for choice in option.choices), default=0)
        if not copies:
            continue
        if option.per_n_models:
            models = max(total // option.per_n_models, 1)
        elif option.model:
            wanted = norm(option.model)
            models = sum(n for name, n in counts.items() if wanted in name or name in wanted)
        else:
            models = total
        by_version[option.version] = by_version.get(option.version, 0) + models * copies
    return max(by_version.values()) if by_version else total


def target_groups(sized: list[Sized], *, fnp: int | None, extra_fnp: int | None, extra_toughness: int = 0,
                  own_abilities: bool = True, merge: bool = True) -> list[dict[str, Any]]:
    """Contract-1b groups: the bodyguard's rank and file first, its special models next, characters last; model
    types of one unit with the same defensive profile are one group named after the unit."""
    groups: list[dict[str, Any]] = []
    for part in sized:
        merged: dict[tuple, dict[str, Any]] = {}
        for model, count in part.counts:
            p = model.profile
            # A profile's FNP and damage reduction come from abilities: off with them.
            own = p.feel_no_pain if own_abilities else None
            feel = fnp if fnp is not None else min(x for x in (own, extra_fnp, 7) if x is not None)
            group = {
                "name": model.name, "models": count,
                "toughness": int(p.toughness or 0) + extra_toughness, "save": int(p.save or 7),
                "invulnerable": p.invulnerable, "wounds": int(p.wounds or 1),
                "feel_no_pain": None if feel == 7 else feel, "feel_no_pain_mortal": p.feel_no_pain_mortal,
                "damage_reduction": p.damage_reduction if own_abilities else 0, "character": model.character,
            }
            key = tuple((k, v) for k, v in group.items() if k not in ("name", "models"))
            if merge and key in merged:
                merged[key]["models"] += count
                merged[key]["name"] = part.unit.name
            else:
                merged[key] = group
        groups.extend(merged.values())
    # The defender allocates: the rank and file (the biggest group) first, special models next, characters last.
    groups.sort(key=lambda g: (g["character"], -g["models"]))
    return groups


@functools.cache
def engine_takes_groups() -> bool:
    """Whether this engine validates contract 1b `target.groups` (asked once, by validating a tiny request)."""
    from engine import RequestError, validate

    probe = {"volley": [{"models": 1, "weapon": {"name": "w", "range": 24, "attacks": 1, "skill": 3, "strength": 4,
                                                 "ap": 0, "damage": 1, "keywords": []}}],
             "target": {"groups": [{"name": "a", "models": 1, "toughness": 4, "save": 3, "wounds": 1}]}}
    try:
        validate(probe)
    except RequestError:
        return False
    return True


def single_target(groups: list[dict[str, Any]], keywords: list[str], wounds_lost: int,
                  notes: list[str] | None = None) -> dict[str, Any]:
    """The single-profile form when there is one group (identical results, contract 1), else 1b groups.
    An engine without 1b gets the first bodyguard group's profile for every model, and the note says so."""
    if len(groups) > 1 and not engine_takes_groups():
        first = max((g for g in groups if not g["character"]), key=lambda g: g["models"], default=groups[0])
        if notes is not None:
            notes.append(f"this engine simulates one profile per target: every model uses the {first['name']} "
                         "profile (mixed units need contract 1b)")
        groups = [{**first, "models": sum(g["models"] for g in groups)}]
    if len(groups) == 1:
        g = dict(groups[0])
        g.pop("name")
        g.pop("character")
        return {**g, "keywords": keywords, "wounds_lost": wounds_lost}
    return {"groups": groups, "keywords": keywords, "wounds_lost": wounds_lost}


def plan(
    attacker: Unit,
    target: Unit,
    options: SimOptions,
    *,
    phase: str | None = None,
    weapon: str | None = None,
    models: int | None = None,
    target_models: int | None = None,
    count: int | None = None,
    leader: Unit | None = None,
    target_leader: Unit | None = None,
    wounds_lost: int = 0,
    fnp: int | None = None,
    abilities: bool = True,
    force: bool = False,
) -> Plan:
    """The request `/sim unit` runs and everything it assumed to get there."""
    from bot.sim.abilities import apply_abilities

    notes: list[str] = []
    forced: list[str] = []
    for leader_unit, body, option in ((leader, attacker, "leader"), (target_leader, target, "target_leader")):
        if leader_unit is None:
            continue
        if not body.may_be_led_by(leader_unit):
            allowed = ", ".join(body.led_by[:15]) or "no leader in the data"
            if not force:
                raise UserError(f"{leader_unit.name} may not lead {body.name} (the data lists: {allowed}). "
                                "Add `force:True` (`--force` in `sim plan`) to simulate it anyway.", field=option)
            forced.append(f"{leader_unit.name} leading {body.name} is not in the data (forced)")
    attackers = [attacker.sized(models, force=force)] + ([leader.sized(force=force)] if leader else [])
    defenders = [target.sized(target_models, force=force)] + ([target_leader.sized(force=force)] if target_leader else [])
    for part in attackers + defenders:
        forced.extend(part.notes)
    units = [attacker] + ([leader] if leader else [])
    fires: list[_Fire] = []
    if phase is None:
        phase = "shooting"
        probe: list[_Fire] = []
        for unit, part in zip(units, attackers, strict=True):
            for model, n in part.counts:
                probe += _model_weapons(unit, model, n, "shooting", [])
        wanted_melee = weapon and any(weapon_kind(w) == "melee" for u in units for w in u.weapon(weapon) or
                                      [x for x in u.weapons if norm(str(x.get("name"))) == norm(weapon)])
        if wanted_melee or (not probe and weapon is None):
            phase = "fight"
    selection: list[str] = []  # how the default volley was chosen: moot once weapon: narrows it
    for unit, part in zip(units, attackers, strict=True):
        for model, n in part.counts:
            fires += _model_weapons(unit, model, n, phase, selection)
    if not weapon:
        notes.extend(selection)
    if weapon:
        key = norm(weapon)
        owner = next((u for u in units if u.weapon(weapon) or any(norm(str(w.get("name"))) == key for w in u.weapons)),
                     attacker)
        fires = _narrow(fires, owner, weapon, attackers, count, force, notes)
        phase = "fight" if weapon_kind(fires[0].weapon) == "melee" else "shooting"
    elif count is not None:
        raise UserError("`count:` says how many models fire the weapon named by `weapon:`; name one.", field="count")
    if not fires:
        raise UserError(f"{attacker.name} has no {'ranged' if phase == 'shooting' else 'melee'} weapon in its "
                        "default loadout. Pick one with `weapon:` or another `phase:`.", field="phase")
    volley: list[dict[str, Any]] = []
    merged: dict[str, dict[str, Any]] = {}
    for f in fires:
        w = engine_weapon(f.weapon)
        key = repr(sorted(w.items()))
        if key in merged:
            merged[key]["models"] += f.models
        else:
            merged[key] = {"models": f.models, "weapon": w}
            volley.append(merged[key])
        if f.note:
            notes.append(f.note)
    keywords = list(dict.fromkeys([*target.keywords]))
    effects = apply_abilities(attacker, target, leader, target_leader, phase=phase, edition=options.edition,
                              enabled=abilities)
    notes.extend(effects.skipped)
    groups = target_groups(defenders, fnp=fnp, extra_fnp=effects.feel_no_pain,
                           extra_toughness=effects.toughness, own_abilities=abilities)
    for g in groups:
        if effects.damage_reduction:
            g["damage_reduction"] = max(g["damage_reduction"], effects.damage_reduction)
    if len(groups) > MAX_GROUPS:
        raise UserError(f"The target has {len(groups)} model groups; at most {MAX_GROUPS}.", field="target")
    if len(groups) > 1:
        notes.append("wounds go to " + ", then ".join(g["name"] for g in groups)
                     + " (the defender's choice: rank and file first, characters last)")
    first_hit = next((g for g in groups if not g["character"]), groups[0])  # contract 1b: wounds_lost goes here
    if wounds_lost and wounds_lost >= first_hit["wounds"]:
        raise UserError(f"`wounds_lost` must be less than the W of {first_hit['name']} ({first_hit['wounds']}); "
                        "a model with none left is dead.", field="wounds_lost")
    situation = options
    if abilities and (effects.hit_modifier or effects.wound_modifier or effects.reroll_hits or effects.reroll_wounds
                      or effects.cover):
        situation = effects.adjust(options)
    request = build_request(volley, single_target(groups, keywords, wounds_lost, notes), situation,
                            attacker_keywords=list(attacker.keywords))
    assumptions = [
        f"{attacker.name}: {_models(attackers[0].total)}"
        + (" (the datasheet's minimum)" if models is None else "")
        + f", {phase}, loadout from {attacker.source}",
        f"{target.name}: {_models(defenders[0].total)}" + (" (the datasheet's minimum)" if target_models is None else "")
        + f", profiles from {target.source}",
    ]
    if leader:
        assumptions.append(f"{leader.name} leads {attacker.name} ({_models(attackers[1].total)})")
    if target_leader:
        assumptions.append(f"{target_leader.name} leads {target.name}")
    for unit in [attacker, target, *([leader] if leader else []), *([target_leader] if target_leader else [])]:
        assumptions.extend(unit.assumptions)
    assumptions.extend(forced)
    assumptions.extend(notes)
    return Plan(
        request=request,
        assumptions=list(dict.fromkeys(assumptions)),
        attacker_lines=[(g["models"], g["weapon"]) for g in volley],
        target_groups=[{**g, "wounds_lost": wounds_lost if g is first_hit else 0} for g in groups],
        target_name=target.name if not target_leader else f"{target.name} + {target_leader.name}",
        abilities=effects.words,
    )
