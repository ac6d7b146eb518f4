"""wh40kdc -> `Unit`: composition (`unit_compositions` with `default_weapon_ids`), wargear options,
leader attachments and abilities with structured effects.

wh40kdc is the only bundled source that states per model type what it carries, so it is the default
loadout source. Where it is silent or inconsistent the loader says what it assumed (`Unit.assumptions`),
and `data/unit_overrides.json` corrects it with a cited source (like the weapon overrides).

`load_units()` builds every unit once (about 2-3 s: wh40kdc's own loading); the catalog importer calls
`unit_from_wh40kdc` per datasheet and stores the result in the entry, so /sim never pays that at run time.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from bot.units.model import Ability, Carried, ModelType, Profile, Unit, WargearOption, norm

SOURCE = "wh40kdc"
OVERRIDES = Path(__file__).resolve().parents[2] / "data" / "unit_overrides.json"
# The effect types /sim knows how to apply (bot/sim/abilities.py); others are kept by name only.
_FNP = "feel-no-pain"


def _raw(item: Any) -> dict[str, Any]:
    return item.raw if hasattr(item, "raw") else item


def _match_profile(name: str, profiles: list[dict[str, Any]]) -> tuple[dict[str, Any] | None, bool]:
    """The profile for a model type: same name, else a name containing the other ("Nob" ~ "Boss Nob",
    "Intercessor Sergeant" ~ "Intercessor"); (profile, exact?)."""
    key = norm(name)
    for p in profiles:
        if norm(p.get("name", "")) == key:
            return p, True
    for p in profiles:
        other = norm(p.get("name", ""))
        if other and (other in key or key in other):
            return p, False
    return (profiles[0] if profiles else None), False


def _profile(p: dict[str, Any] | None, name: str, fnp: int | None, reduction: int) -> Profile:
    p = p or {}
    move = p.get("M")
    return Profile(
        name=str(p.get("name") or name),
        movement=f'{move}"' if isinstance(move, int) else (str(move) if move is not None else None),
        toughness=p.get("T"), save=p.get("Sv"), wounds=p.get("W"), leadership=p.get("Ld"), oc=p.get("OC"),
        invulnerable=p.get("invuln_sv"), feel_no_pain=fnp, damage_reduction=reduction,
    )


def _unconditional(effect: dict[str, Any] | None, kind: str) -> dict[str, Any] | None:
    if effect and effect.get("type") == kind and effect.get("target") in ("unit", "self", None):
        return effect.get("modifier") or {}
    return None


def _tier_bounds(composition: dict[str, Any]) -> dict[str, tuple[int, int]]:
    """min/max per model name over the composition's tiers (the tiers carry the real unit sizes)."""
    bounds: dict[str, tuple[int, int]] = {}
    for tier in composition.get("tiers") or ():
        for m in tier.get("models") or ():
            key = norm(m.get("name", ""))
            low, high = int(m.get("min") or 0), int(m.get("max") or 0)
            old = bounds.get(key)
            bounds[key] = (min(old[0], low), max(old[1], high)) if old else (low, high)
    return bounds


def _bounds_for(name: str, tiers: dict[str, tuple[int, int]]) -> tuple[int, int] | None:
    key = norm(name)
    if key in tiers:
        return tiers[key]
    hits = [v for k, v in tiers.items() if k and (k in key or key in k)]
    return hits[0] if len(hits) == 1 else None


def unit_from_wh40kdc(
    unit: dict[str, Any],
    *,
    composition: dict[str, Any] | None,
    options: list[dict[str, Any]],
    weapons: list[dict[str, Any]],
    weapon_names: dict[str, str],
    abilities: list[dict[str, Any]],
    leads: list[str],
    led_by: list[str],
    overrides: list[dict[str, Any]] | None = None,
) -> Unit:
    """One wh40kdc unit as fielded. `weapons` are its catalog weapon profiles (overrides applied),
    `weapon_names` maps wh40kdc weapon ids to names, `abilities` are its raw ability records."""
    assumptions: list[str] = []
    profiles = list(unit.get("profiles") or [])
    keywords = [str(k) for k in unit.get("keywords") or []]
    is_character = any(norm(k) == "character" for k in keywords)
    fnp = reduction = None
    kept: list[Ability] = []
    for a in abilities:
        effect = a.get("effect")
        kept.append(Ability(str(a.get("name", "")), effect if isinstance(effect, dict) else None))
        if (mod := _unconditional(effect, _FNP)) is not None and isinstance(mod.get("threshold"), int):
            fnp = min(fnp or 7, int(mod["threshold"]))
        mod = _unconditional(effect, "damage-reduction")
        if mod is not None and isinstance(mod.get("reduction"), int):  # "half" etc. are not a -N
            reduction = max(reduction or 0, int(mod["reduction"]))
    count = unit.get("model_count") or {}
    models: list[ModelType] = []
    comp_models = list((composition or {}).get("models") or [])
    tiers = _tier_bounds(composition or {})
    leader_models = [m for m in comp_models if m.get("is_leader_model")]
    if not comp_models:
        assumptions.append(f"{unit['name']}: no composition in wh40kdc; one model type, loadout unknown")
        comp_models = [{"name": (profiles[0].get("name") if profiles else unit["name"]),
                        "min": count.get("min") or 1, "max": count.get("max") or count.get("min") or 1}]
    for m in comp_models:
        name = str(m.get("name") or unit["name"])
        profile, exact = _match_profile(name, profiles)
        if profile is not None and not exact and len(profiles) > 1:
            assumptions.append(f"{name}: uses the {profile.get('name')} profile (closest name)")
        low, high = int(m.get("min") or 0), int(m.get("max") or m.get("min") or 0)
        if (tier := _bounds_for(name, tiers)) is not None:
            low, high = tier
        # CHARACTER is a unit keyword in wh40kdc: in a mixed unit it belongs to the leader model (the
        # Grimnyr, not his CORVs); a unit of one model type is all characters.
        character = is_character and (m.get("is_leader_model") or not leader_models or len(comp_models) == 1)
        ids = [str(i) for i in m.get("default_weapon_ids") or []]
        loadout = tuple(Carried(weapon_names.get(i, i), n) for i, n in Counter(ids).items())
        if not ids:
            assumptions.append(f"{name}: wh40kdc lists no default weapons")
        models.append(ModelType(name, low, high, _profile(profile, name, fnp, reduction or 0), bool(character),
                                loadout))
    notes: list[WargearOption] = []
    for o in options:
        constraint = o.get("model_constraint") or {}
        choices = o.get("replacement_choice") or ([o["replacement"]] if o.get("replacement") else [])
        names = tuple(tuple(weapon_names.get(i, i) for i in c) for c in choices)
        replaces = tuple(weapon_names.get(i, i) for i in o.get("replaces") or ())
        words = " or ".join(" + ".join(c) for c in names)
        who = constraint.get("model_name") or "a model"
        text = f"{who}: {' + '.join(replaces)} -> {words}" if replaces else f"{who}: add {words}"
        notes.append(WargearOption(text, constraint.get("model_name"), replaces, names,
                                   constraint.get("per_n_models"), (o.get("game_version") or {}).get("dataslate")))
    built = Unit(
        name=str(unit["name"]), edition="11e" if (unit.get("game_version") or {}).get("edition") != "10th" else "10e",
        source=SOURCE, models=tuple(models), weapons=tuple(weapons), options=tuple(notes),
        leads=tuple(leads), led_by=tuple(led_by), keywords=tuple(keywords), abilities=tuple(kept),
        assumptions=tuple(assumptions),
        size_min=count.get("min"), size_max=count.get("max"),
    )
    return apply_overrides(built, overrides or [], faction_id=str(unit.get("faction_id")), unit_id=str(unit["id"]))


def load_overrides(path: Path = OVERRIDES) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return list(json.loads(path.read_text(encoding="utf-8")).get("units") or [])


def apply_overrides(unit: Unit, overrides: list[dict[str, Any]], *, faction_id: str, unit_id: str) -> Unit:
    """Loadout corrections from `data/unit_overrides.json`: each sets the count of named weapons on one
    model type, with the reason; the correction is stated among the unit's assumptions."""
    from dataclasses import replace

    for item in overrides:
        if item.get("faction_id") != faction_id or item.get("unit_id") != unit_id:
            continue
        if "ability" in item:  # an ability whose structured effect contradicts the datasheet
            abilities = tuple(Ability(a.name, item.get("effect")) if norm(a.name) == norm(item["ability"]) else a
                              for a in unit.abilities)
            unit = replace(unit, abilities=abilities,
                           assumptions=(*unit.assumptions, f"corrected: {item.get('note') or item.get('reason', '')}"))
            continue
        models = []
        for m in unit.models:
            if norm(m.name) != norm(item.get("model", m.name)):
                models.append(m)
                continue
            loadout = {c.weapon: c.count for c in m.loadout}
            for weapon, n in (item.get("loadout") or {}).items():
                key = next((k for k in loadout if norm(k) == norm(weapon)), weapon)
                if n:
                    loadout[key] = int(n)
                else:
                    loadout.pop(key, None)
            models.append(replace(m, loadout=tuple(Carried(w, n) for w, n in loadout.items())))
        unit = replace(unit, models=tuple(models),
                       assumptions=(*unit.assumptions, f"corrected: {item.get('note') or item.get('reason', '')}"))
    return unit


def load_units() -> dict[tuple[str, str], Unit]:
    """Every wh40kdc unit as fielded, keyed by (faction id, unit id). For army lists and tools; /sim reads
    the same units from the catalog entries instead (built once at import time)."""
    from wh40kdc import Dataset

    from bot.units.wh40kdc_weapons import apply_overrides as weapon_overrides
    from bot.units.wh40kdc_weapons import convert_weapon
    from bot.units.wh40kdc_weapons import load_overrides as load_weapon_overrides

    ds = Dataset.embedded()
    kw_names = {k["id"]: k["name"] for k in (_raw(k) for k in ds.weapon_keywords)}
    weapons: dict[tuple[str, str], list[dict[str, Any]]] = {}
    names: dict[str, str] = {}
    for w in (_raw(w) for w in ds.weapons):
        weapons.setdefault((w.get("faction_id", ""), w["id"]), convert_weapon(w, kw_names))
        names.setdefault(w["id"], w["name"])
    weapon_path = Path(__file__).resolve().parents[2] / "data" / "wh40kdc_overrides.json"
    weapon_overrides(weapons, load_weapon_overrides(weapon_path), weapon_path)
    return build_all(ds, weapons, names, load_overrides())


def build_all(ds: Any, weapons: dict[tuple[str, str], list[dict[str, Any]]], names: dict[str, str],
              overrides: list[dict[str, Any]]) -> dict[tuple[str, str], Unit]:
    """All units of a loaded wh40kdc Dataset; shared by `load_units` and the catalog importer."""
    raw_units = [_raw(u) for u in ds.units]
    unit_names = {u["id"]: u["name"] for u in raw_units}
    leads: dict[str, list[str]] = {}
    led_by: dict[str, list[str]] = {}
    for la in ds.leader_attachments:
        for body in la.get("eligible_bodyguard_ids") or []:
            leads.setdefault(la["leader_id"], []).append(unit_names.get(body, body))
            led_by.setdefault(body, []).append(unit_names.get(la["leader_id"], la["leader_id"]))
    compositions = {(c.get("faction_id"), c.get("unit_id")): c for c in ds.unit_compositions}
    abilities: dict[tuple[str, str], dict[str, Any]] = {}
    for a in (_raw(a) for a in ds.abilities):
        abilities.setdefault((a.get("faction_id") or "", a["ability_id"]), a)
        abilities.setdefault(("", a["ability_id"]), a)
    out: dict[tuple[str, str], Unit] = {}
    for u in raw_units:
        faction = u["faction_id"]
        sheet: list[dict[str, Any]] = []
        for wid in u.get("weapon_ids") or []:
            found = weapons.get((faction, wid)) or next((v for (_, i), v in weapons.items() if i == wid), None)
            sheet.extend(found or [])
        unit_abilities = [a for aid in u.get("ability_ids") or []
                          if (a := abilities.get((faction, aid)) or abilities.get(("", aid)))]
        out[(faction, u["id"])] = unit_from_wh40kdc(
            u, composition=compositions.get((faction, u["id"])), options=ds.wargear_options_of(u),
            weapons=sheet, weapon_names=names, abilities=unit_abilities,
            leads=sorted(set(leads.get(u["id"], []))), led_by=sorted(set(led_by.get(u["id"], []))),
            overrides=overrides,
        )
    return out
