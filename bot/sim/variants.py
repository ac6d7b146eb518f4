"""/sim compare's variants: what one attacker could do differently against one target, in words.

A variant is one or more choices joined by ` + `, e.g. `re-roll hits + lethal hits` or `weapon: Plasma gun`:
- a weapon (or a weapon the unit can take as a wargear option): `weapon: NAME`, fired as `/sim unit weapon:`
  fires it (bot/sim/fielded.py: only the models that carry it, or one model for an option);
- what a stratagem or aura typically gives: +1 to hit or wound, re-roll hits, wounds or their 1s, cover
  for the target, LETHAL HITS or SUSTAINED HITS 1 on every weapon, and −1 Damage for the target (refused
  when the target already has a damage reduction: how two such effects combine is not this tool's call);
- `as listed`: nothing changed (the baseline).
`choices` lists what this attacker can take (the autocomplete offers exactly these), and anything else is
refused in words naming them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from bot.errors import UserError
from bot.sim.requests import SimOptions

MAX_VARIANTS = 4
MAX_PARTS = 4  # choices in one variant
BASELINE = "as listed"
WEAPON_PREFIX = "weapon: "
# Choice -> SimOptions fields it sets.
SITUATION = {
    "+1 to hit": {"hit_modifier": 1},
    "+1 to wound": {"wound_modifier": 1},
    "re-roll hits": {"reroll_hits": "failed"},
    "re-roll hit rolls of 1": {"reroll_hits": "ones"},
    "re-roll wounds": {"reroll_wounds": "failed"},
    "re-roll wound rolls of 1": {"reroll_wounds": "ones"},
    "cover": {"cover": True},
}
KEYWORDS = {"lethal hits": "LETHAL HITS", "sustained hits 1": "SUSTAINED HITS 1"}
MINUS_ONE_DAMAGE = "-1 damage"
MODIFIERS = [BASELINE, *SITUATION, *KEYWORDS, MINUS_ONE_DAMAGE]


@dataclass
class Variant:
    label: str
    weapon: str | None = None
    situation: dict[str, Any] = field(default_factory=dict)
    keywords: list[str] = field(default_factory=list)
    minus_one_damage: bool = False

    def options(self, base: SimOptions) -> SimOptions:
        return replace(base, **self.situation)


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("−", "-").replace("–", "-").strip().casefold())


def choices(weapons: list[str]) -> list[str]:
    """Everything a variant of this attacker may be made of: the modifiers, then its weapons."""
    return [*MODIFIERS, *[WEAPON_PREFIX + w for w in weapons]]


def parse(text: str, weapons: list[str], option: str) -> Variant:
    """A typed or picked variant, or a UserError naming what this attacker can take."""
    parts = [p for p in (part.strip() for part in (text or "").split(" + ")) if p]
    if not parts:
        raise UserError(f"`{option}` is empty: pick a variant from the list.", field=option)
    if len(parts) > MAX_PARTS:
        raise UserError(f"`{option}` combines at most {MAX_PARTS} choices.", field=option)
    variant = Variant(label=" + ".join(parts))
    known = {_norm(w): w for w in weapons}
    for part in parts:
        key = _norm(part)
        if key.startswith(_norm(WEAPON_PREFIX)):
            name = known.get(_norm(part[len(WEAPON_PREFIX):]))
            if name is None:
                listed = ", ".join(weapons[:20]) or "none"
                raise UserError(f"`{option}`: the attacker has no weapon {part[len(WEAPON_PREFIX):][:60]!r}. It can "
                                f"take: {listed}.", field=option)
            if variant.weapon is not None:
                raise UserError(f"`{option}` names two weapons; a variant fires one.", field=option)
            variant.weapon = name
        elif key in SITUATION:
            variant.situation.update(SITUATION[key])
        elif key in KEYWORDS:
            variant.keywords.append(KEYWORDS[key])
        elif key == MINUS_ONE_DAMAGE:
            variant.minus_one_damage = True
        elif key != BASELINE:
            raise UserError(f"`{option}`: {part[:60]!r} is not something this attacker can take. It can take: "
                            f"{', '.join(MODIFIERS)}, or `weapon: NAME` for one of its weapons "
                            f"({', '.join(weapons[:12]) or 'none'}).", field=option)
    return variant


def apply(request: dict[str, Any], variant: Variant, option: str) -> dict[str, Any]:
    """The planned request with the variant's weapon keywords and target change."""
    out = {**request, "volley": [{**g, "weapon": {**g["weapon"], "keywords": list(dict.fromkeys(
        [*g["weapon"].get("keywords", []), *variant.keywords]))}} for g in request["volley"]]}
    if variant.minus_one_damage:
        target = dict(request["target"])
        groups = target.get("groups")
        if any(g.get("damage_reduction") for g in (groups or [target])):
            raise UserError(f"`{option}`: the target already reduces damage; −1 Damage on top is not offered "
                            "(how the two combine is left to you). Pick another variant.", field=option)
        if groups:
            target["groups"] = [{**g, "damage_reduction": 1} for g in groups]
        else:
            target["damage_reduction"] = 1
        out["target"] = target
    return out
