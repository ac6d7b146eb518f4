"""A datasheet's unit fielded as an army list says: its model groups, what each carries, and models left.

An imported list (bot/armies, contract 6 `composition`) gives per model group the total of each weapon the
group carries ("9x Hearthkyn Warrior: 7x Ion blaster, 1x L7 missile launcher", or a flat "Boyz: 9 choppas,
1 big choppa, 10 sluggas"). The unit as fielded needs what each *model* carries, so a group's weapons are
dealt to its models in list order — every model gets `count // n`, the next `count % n` models one more,
continuing where the previous weapon stopped (an alternative weapon replaces the default on other models,
not on the same one) — and models with the same loadout become one model type. Losses come off the most
numerous non-character type first (the tracker records only how many models are left).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from bot.units.model import Carried, ModelType, Unit, norm

MAX_GROUP_MODELS = 200  # a list group larger than any datasheet allows is refused by the importer already


def _deal(weapons: list[tuple[str, int]], models: int) -> list[tuple[Carried, ...]]:
    """Each model's loadout when `models` models share these weapon totals."""
    loadouts: list[dict[str, int]] = [{} for _ in range(models)]
    start = 0
    for name, count in weapons:
        each, rest = divmod(count, models)
        for i in range(models):
            if each:
                loadouts[i][name] = loadouts[i].get(name, 0) + each
        for k in range(rest):
            i = (start + k) % models
            loadouts[i][name] = loadouts[i].get(name, 0) + 1
        start = (start + rest) % models
    return [tuple(Carried(w, n) for w, n in loadout.items()) for loadout in loadouts]


def _base(unit: Unit, group: str) -> tuple[ModelType, bool]:
    """The datasheet model type a list group is (by name), else the rank and file; True when named."""
    wanted = norm(group)
    for model in unit.models:
        if norm(model.name) == wanted:
            return model, True
    if len(unit.models) == 1:
        return unit.models[0], True
    return max(unit.models, key=lambda m: (not m.character, m.max)), False


def _profile_name(unit: Unit, weapon: str) -> str | None:
    """The datasheet's name for a listed weapon: the same name, or the one combined weapon it is part of (a
    list's "Deffkannon" and "Supa-rokkit" are the Stompa's "Deffkannon and Supa-rokkits"); None without one."""
    if unit.weapon(weapon):
        return weapon
    wanted = norm(weapon)
    combined = {str(w.get("weapon") or w.get("name")) for w in unit.weapons
                if " and " in str(w.get("weapon") or w.get("name"))
                and wanted in {norm(part) for part in str(w.get("weapon") or w.get("name")).split(" and ")}}
    return combined.pop() if len(combined) == 1 else None


def _carries(unit: Unit, model: ModelType) -> set[str]:
    """What a model type may carry: its default loadout and the options that name it."""
    names = {norm(c.weapon) for c in model.loadout}
    for option in unit.options:
        if option.model and norm(option.model) in norm(model.name):
            names |= {norm(w) for choice in option.choices for w in choice}
    return names


def _model_for(unit: Unit, rank: ModelType, loadout: tuple[Carried, ...], n: int) -> ModelType:
    """In a group the list does not split by model type ("Boyz: 9 choppas, 1 big choppa"), the models whose
    loadout only another model type carries (the Boss Nob's big choppa) are that model type."""
    mine = {norm(c.weapon) for c in loadout} - {norm(c.weapon) for c in rank.loadout}
    if not mine:
        return rank
    fits = [m for m in unit.models if m is not rank and n <= m.max and mine <= _carries(unit, m)]
    return fits[0] if len(fits) == 1 else rank


def as_listed(unit: Unit, name: str, composition: list[dict[str, Any]] | None,
              models_left: int | None) -> tuple[Unit, list[str]]:
    """`unit` (keeping its datasheet name: leader eligibility reads it) with the list's model types and
    loadouts at `models_left` models (all when None), and notes naming `name`, the unit as the game calls it.

    Wargear without a weapon profile (a banner, a beacon) is not fired. Without a composition the datasheet's
    default loadout is kept (the caller sizes it)."""
    notes: list[str] = []
    groups = [g for g in composition or [] if int(g.get("count") or 0) > 0]
    if not groups:
        return unit, [f"{name}: the list gives no loadout; the datasheet's default loadout is used"]
    types: list[list[Any]] = []  # [model type, count]
    for group in groups:
        count = min(int(group["count"]), MAX_GROUP_MODELS)
        base, named = _base(unit, str(group.get("name") or ""))
        if not named:
            notes.append(f"{name}: the list does not split {group.get('name')} by model type; models with a "
                         f"weapon only another model type takes are that type, the rest use the {base.name} profile")
        listed = [(str(w["name"]), int(w["count"])) for w in group.get("weapons") or [] if int(w.get("count") or 0) > 0]
        weapons: dict[str, int] = {}
        for weapon, n in listed:
            profile = _profile_name(unit, weapon)
            if profile is not None:  # two parts of one combined weapon are that weapon once
                weapons[profile] = max(weapons.get(profile, 0), n) if profile != weapon else weapons.get(profile, 0) + n
        unarmed = [w for w, _ in listed if _profile_name(unit, w) is None]
        if unarmed:
            notes.append(f"{name}: {', '.join(unarmed)} — no weapon profile in the datasheet; not fired")
        by_loadout: dict[tuple[Carried, ...], int] = {}
        for loadout in _deal(list(weapons.items()), count):
            by_loadout[loadout] = by_loadout.get(loadout, 0) + 1
        picked = [(base if named else _model_for(unit, base, loadout, n), loadout, n)
                  for loadout, n in by_loadout.items()]
        for model, loadout, n in picked:
            alike = sum(1 for other, _, _ in picked if other is model)
            label = model.name if alike == 1 else f"{model.name} ({', '.join(c.weapon for c in loadout)})"
            types.append([replace(model, name=label, loadout=loadout), n])
    total = sum(n for _, n in types)
    left = total if models_left is None else max(0, min(models_left, total))
    for _ in range(total - left):
        alive = [t for t in types if t[1] > 0]
        victim = max([t for t in alive if not t[0].character] or alive, key=lambda t: t[1])
        victim[1] -= 1
    if left != total:
        notes.append(f"{name}: its {total - left} lost model{'s' if total - left != 1 else ''} taken from the "
                     "most numerous non-character models")
    fielded = tuple(replace(t, min=n, max=n) for t, n in types if n > 0)
    return replace(unit, models=fielded, size_min=None, size_max=None,
                   source=f"{unit.source} and the army list"), notes
