"""Contract-1 request validation: a JSON dict becomes typed profiles, or a RequestError naming the field.

Strict on purpose: unknown fields, strings where numbers go, booleans where numbers go, impossible
characteristics (T=0, Sv 1+, A=-1, "D7", "999D6") and sizes beyond engine.limits are all refused here,
before any computation. Defaults follow contract 1 in shared/DESIGN.md.
"""

from __future__ import annotations

import marshal
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from engine import dice, limits
from engine.editions import EDITIONS, Edition
from engine.errors import RequestError
from engine.lru import Cache
from engine.numbers import HugeNumber, show_number
from engine.profiles import (
    Attacker,
    Context,
    Group,
    Keyword,
    KeywordError,
    ModelGroup,
    Target,
    Weapon,
    normalise_word,
    parse_keyword,
)

REROLLS = (None, "ones", "failed", "non_critical")
_TOP = {"edition", "method", "trials", "seed", "volley", "attacker", "target", "context"}
_GROUP = {"models", "weapon"}
_WEAPON = {"name", "range", "attacks", "skill", "strength", "ap", "damage", "keywords"}
_ATTACKER = {"keywords"}
_PROFILE = {
    "models", "toughness", "save", "invulnerable", "wounds", "feel_no_pain", "feel_no_pain_mortal",
    "damage_reduction", "damage_set", "halve_damage",
}
_TARGET = _PROFILE | {"keywords", "wounds_lost", "groups"}
_TARGET_GROUP = _PROFILE | {"name", "character"}
_CONTEXT = {
    "half_range", "stationary", "charged", "cover", "hit_modifier", "wound_modifier", "save_modifier",
    "reroll_hits", "reroll_wounds", "critical_hit", "critical_wound",
}


_T = TypeVar("_T")
PARTS = Cache(4096)  # validated weapons, targets and contexts, by content (small records: bounded by count)


def _part(kind: str, raw: Any, build: Callable[[], _T]) -> _T:
    """A validated request part by its content (marshal, as engine.plan keys plans): a new request made
    of a weapon, target or context seen before skips their checks. Only valid parts are kept (an invalid
    one raises, naming its field, every time); a part that is not plain data is never kept."""
    try:
        key = (kind, marshal.dumps(raw, 2))
    except ValueError:
        return build()
    value = PARTS.get(key)
    if value is None:
        value = build()
        PARTS.put(key, value)
    return value


@dataclass(frozen=True)
class Request:
    edition: Edition
    method: str
    trials: int
    seed: int | None
    groups: tuple[Group, ...]
    attacker: Attacker
    target: Target
    context: Context


def _obj(value: Any, path: str, allowed: set[str], *, required: bool = True) -> dict[str, Any]:
    if value is None and not required:
        return {}
    if not isinstance(value, dict):
        raise RequestError("expected an object", path)
    for key in value:
        if key not in allowed:
            where = f"{path}.{key}" if path else str(key)
            raise RequestError(f"unknown field {key!r}; expected one of {', '.join(sorted(allowed))}", where)
    return value


def _int(obj: dict[str, Any], key: str, path: str, *, lo: int, hi: int, default: Any = ..., nullable: bool = False) -> Any:
    if key not in obj:
        if default is ...:
            raise RequestError("is required", f"{path}.{key}" if path else key)
        return default
    value = obj[key]
    if type(value) is int and lo <= value <= hi:  # the common case, before any message is built
        return value
    where = f"{path}.{key}" if path else key
    if value is None and nullable:
        return None
    if isinstance(value, HugeNumber):
        raise RequestError(f"{value} is out of range; expected {lo} to {hi}", where)
    if isinstance(value, bool) or not isinstance(value, int):
        kind = "true/false" if isinstance(value, bool) else type(value).__name__
        raise RequestError(f"expected a whole number{' or null' if nullable else ''}, got {kind} {value!r}"[:200], where)
    if not lo <= value <= hi:
        raise RequestError(f"{show_number(value)} is out of range; expected {lo} to {hi}", where)
    return value


def _bool(obj: dict[str, Any], key: str, path: str) -> bool:
    value = obj.get(key, False)
    if not isinstance(value, bool):
        raise RequestError(f"expected true or false, got {value!r}"[:200], f"{path}.{key}")
    return value


def _dice(obj: dict[str, Any], key: str, path: str, *, minimum: int) -> dice.Dice:
    where = f"{path}.{key}"
    if key not in obj:
        raise RequestError("is required", where)
    try:
        d = dice.parse(obj[key])
    except dice.DiceError as exc:
        raise RequestError(str(exc), where) from None
    if d.minimum < minimum:
        raise RequestError(f"{d} can be less than {minimum}; the characteristic cannot be below {minimum}", where)
    return d


def _keywords(value: Any, path: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise RequestError("expected a list of strings", path)
    if len(value) > limits.MAX_KEYWORDS:
        raise RequestError(f"{len(value)} keywords is more than the limit of {limits.MAX_KEYWORDS}", path)
    for i, kw in enumerate(value):
        if not isinstance(kw, str) or not kw.strip():
            raise RequestError("expected a non-empty string", f"{path}[{i}]")
        if len(kw) > limits.MAX_KEYWORD_CHARS:
            raise RequestError(f"longer than {limits.MAX_KEYWORD_CHARS} characters", f"{path}[{i}]")
    return value


def _weapon(raw: Any, path: str) -> Weapon:
    w = _obj(raw, path, _WEAPON)
    name = w.get("name", "weapon")
    if not isinstance(name, str) or len(name) > limits.MAX_NAME_CHARS:
        raise RequestError(f"expected a string of at most {limits.MAX_NAME_CHARS} characters", f"{path}.name")
    rng = w.get("range", "melee")
    if isinstance(rng, str):
        if rng.strip().lower() != "melee":
            raise RequestError(f"expected a whole number of inches or \"melee\", got {rng!r}"[:200], f"{path}.range")
        rng = "melee"
    else:
        rng = _int(w, "range", path, lo=1, hi=1000, default=1)
    attacks = _dice(w, "attacks", path, minimum=1)
    skill = _int(w, "skill", path, lo=2, hi=6, nullable=True)
    strength = _int(w, "strength", path, lo=1, hi=limits.MAX_STRENGTH)
    ap = _int(w, "ap", path, lo=limits.MIN_AP, hi=0, default=0)
    damage = _dice(w, "damage", path, minimum=1)
    kws: list[Keyword] = []
    for i, text in enumerate(_keywords(w.get("keywords"), f"{path}.keywords")):
        try:
            kws.append(parse_keyword(text))
        except KeywordError as exc:
            raise RequestError(str(exc), f"{path}.keywords[{i}]") from None
    return Weapon(name=name, range=rng, attacks=attacks, skill=skill, strength=strength, ap=ap,
                  damage=damage, keywords=tuple(kws))


def _profile(t: dict[str, Any], path: str, name: str, character: bool) -> ModelGroup:
    """The characteristics shared by a single-profile target and one model group of contract 1b."""
    return ModelGroup(
        name=name,
        models=_int(t, "models", path, lo=1, hi=limits.MAX_TARGET_MODELS),
        toughness=_int(t, "toughness", path, lo=1, hi=limits.MAX_STRENGTH),
        save=_int(t, "save", path, lo=2, hi=7),
        invulnerable=_int(t, "invulnerable", path, lo=2, hi=6, default=None, nullable=True),
        wounds=_int(t, "wounds", path, lo=1, hi=limits.MAX_WOUNDS),
        feel_no_pain=_int(t, "feel_no_pain", path, lo=2, hi=6, default=None, nullable=True),
        feel_no_pain_mortal=_int(t, "feel_no_pain_mortal", path, lo=2, hi=6, default=None, nullable=True),
        damage_reduction=_int(t, "damage_reduction", path, lo=0, hi=limits.MAX_DAMAGE_REDUCTION, default=0),
        damage_set=_int(t, "damage_set", path, lo=1, hi=limits.MAX_FLAT, default=None, nullable=True),
        halve_damage=_bool(t, "halve_damage", path),
        character=character,
    )


def unit_toughness(groups: tuple[ModelGroup, ...]) -> int:
    """The T every wound roll of the volley uses (contract 1b; 10e Attached Units, 11e 05.02.01): the
    highest T among the non-CHARACTER groups, or among all groups when every group is a CHARACTER."""
    bodyguard = [g.toughness for g in groups if not g.character]
    return max(bodyguard or [g.toughness for g in groups])


def first_allocated(groups: tuple[ModelGroup, ...]) -> int:
    """Index of the group whose first model receives the first wound: the first non-CHARACTER group,
    or the first group when every group is a CHARACTER (where `wounds_lost` applies)."""
    return next((i for i, g in enumerate(groups) if not g.character), 0)


def _target(t: dict[str, Any]) -> Target:
    keywords = frozenset(normalise_word(k) for k in _keywords(t.get("keywords"), "target.keywords"))
    if "groups" not in t:
        p = _profile(t, "target", "target", False)
        wounds_lost = _int(t, "wounds_lost", "target", lo=0, hi=p.wounds - 1, default=0)
        return Target(p.models, p.toughness, p.save, p.invulnerable, p.wounds, p.feel_no_pain,
                      p.feel_no_pain_mortal, p.damage_reduction, keywords, wounds_lost, p.damage_set,
                      p.halve_damage)
    extra = sorted(set(t) & _PROFILE)
    if extra:
        raise RequestError("a target with \"groups\" keeps each model's profile in its group", f"target.{extra[0]}")
    raw = t["groups"]
    if not isinstance(raw, list) or not raw:
        raise RequestError("expected a non-empty list of model groups (a unit needs models)", "target.groups")
    if len(raw) > limits.MAX_TARGET_GROUPS:
        raise RequestError(f"{len(raw)} model groups is more than the limit of {limits.MAX_TARGET_GROUPS}",
                           "target.groups")
    groups = []
    for i, g in enumerate(raw):
        path = f"target.groups[{i}]"
        gd = _obj(g, path, _TARGET_GROUP)
        name = gd.get("name", f"group {i + 1}")
        if not isinstance(name, str) or not name.strip() or len(name) > limits.MAX_NAME_CHARS:
            raise RequestError(f"expected a non-empty string of at most {limits.MAX_NAME_CHARS} characters",
                               f"{path}.name")
        groups.append(_profile(gd, path, name, _bool(gd, "character", path)))
    groups = tuple(groups)
    total = sum(g.models for g in groups)
    if total > limits.MAX_TARGET_MODELS:
        raise RequestError(f"{total} models in all is more than the limit of {limits.MAX_TARGET_MODELS}",
                           "target.groups")
    first = groups[first_allocated(groups)]
    wounds_lost = _int(t, "wounds_lost", "target", lo=0, hi=first.wounds - 1, default=0)
    return Target(total, unit_toughness(groups), first.save, first.invulnerable, first.wounds,
                  first.feel_no_pain, first.feel_no_pain_mortal, first.damage_reduction, keywords,
                  wounds_lost, first.damage_set, first.halve_damage, groups)


def _reroll(obj: dict[str, Any], key: str, path: str) -> str | None:
    value = obj.get(key)
    if value not in REROLLS or isinstance(value, bool):
        raise RequestError(f"expected null, \"ones\", \"failed\" or \"non_critical\", got {value!r}"[:200], f"{path}.{key}")
    return value


def validate(raw: Any) -> Request:
    """Validate and normalise one contract-1 request (defaults applied)."""
    top = _obj(raw, "", _TOP)
    edition_code = top.get("edition", "11e")
    if edition_code not in EDITIONS:
        raise RequestError(f"expected \"10e\" or \"11e\", got {edition_code!r}"[:200], "edition")
    method = top.get("method", "exact")
    if method not in ("exact", "montecarlo"):
        raise RequestError(f"expected \"exact\" or \"montecarlo\", got {method!r}"[:200], "method")
    trials = _int(top, "trials", "", lo=1, hi=limits.MAX_TRIALS, default=limits.DEFAULT_TRIALS)
    seed = _int(top, "seed", "", lo=0, hi=2**63 - 1, default=None, nullable=True)

    volley = top.get("volley")
    if not isinstance(volley, list) or not volley:
        raise RequestError("expected a non-empty list of weapon groups", "volley")
    if len(volley) > limits.MAX_GROUPS:
        raise RequestError(f"{len(volley)} weapon groups is more than the limit of {limits.MAX_GROUPS}", "volley")
    groups = []
    for i, g in enumerate(volley):
        path = f"volley[{i}]"
        gd = _obj(g, path, _GROUP)
        models = _int(gd, "models", path, lo=1, hi=limits.MAX_MODELS_PER_GROUP, default=1)
        raw_weapon = gd.get("weapon")
        groups.append(Group(models, _part("weapon", raw_weapon, lambda w=raw_weapon, p=path: _weapon(w, f"{p}.weapon"))))

    a = _obj(top.get("attacker"), "attacker", _ATTACKER, required=False)
    attacker = Attacker(frozenset(normalise_word(k) for k in _keywords(a.get("keywords"), "attacker.keywords")))

    raw_target = top.get("target")
    target = _part("target", raw_target, lambda: _target(_obj(raw_target, "target", _TARGET)))
    raw_context = top.get("context")
    context = _part("context", raw_context, lambda: _context(_obj(raw_context, "context", _CONTEXT, required=False)))
    return Request(EDITIONS[edition_code], method, trials, seed, tuple(groups), attacker, target, context)


def _context(c: dict[str, Any]) -> Context:
    return Context(
        half_range=_bool(c, "half_range", "context"),
        stationary=_bool(c, "stationary", "context"),
        charged=_bool(c, "charged", "context"),
        cover=_bool(c, "cover", "context"),
        hit_modifier=_int(c, "hit_modifier", "context", lo=-6, hi=6, default=0),
        wound_modifier=_int(c, "wound_modifier", "context", lo=-6, hi=6, default=0),
        save_modifier=_int(c, "save_modifier", "context", lo=-6, hi=6, default=0),
        reroll_hits=_reroll(c, "reroll_hits", "context"),
        reroll_wounds=_reroll(c, "reroll_wounds", "context"),
        critical_hit=_int(c, "critical_hit", "context", lo=2, hi=6, default=6),
        critical_wound=_int(c, "critical_wound", "context", lo=2, hi=6, default=6),
    )
