"""Units' own abilities, applied only where the data states the effect (wh40kdc's effect DSL).

Applied (issue 11, Build 4), each only when unconditional, or conditional on the one thing /sim knows:
`is-attached` (a leader's ability while leading; the bodyguard's own "while a leader is attached") and
`attack-is-type` (ranged/melee, from the phase):
- on the target: `roll-modifier` aimed at the attacker (Stealth: -1 to hit; "-1 to wound"),
  `feel-no-pain` (threshold), `damage-reduction` (a number), `stat-modifier` +N Toughness; an attached
  leader contributes only its "while leading" (`is-attached`) abilities, and an unconditional FNP or damage
  reduction stays with the models that have it (it is in their profiles, bot/units);
- on the attacker: `roll-modifier` on its own hit or wound rolls, `re-roll` of hits or wounds
  (ones / all failures).
Everything else (abilities known by name only, conditions on the turn, the phase's timing, auras, dice
gates) is never applied; the embed lists what was.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from bot.sim.requests import SimOptions
from bot.units.model import Unit

_REROLL = {"ones": "ones", "all-failures": "failed", "failures": "failed", "all": "failed"}


@dataclass
class Effects:
    hit_modifier: int = 0
    wound_modifier: int = 0
    reroll_hits: str | None = None
    reroll_wounds: str | None = None
    feel_no_pain: int | None = None
    damage_reduction: int = 0
    toughness: int = 0
    cover: bool = False
    words: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    def adjust(self, options: SimOptions) -> SimOptions:
        """The user's options plus these effects: modifiers add; a user's re-roll choice wins."""
        return replace(
            options,
            cover=options.cover or self.cover,
            hit_modifier=options.hit_modifier + self.hit_modifier,
            wound_modifier=options.wound_modifier + self.wound_modifier,
            reroll_hits=options.reroll_hits if options.reroll_hits != "none" else (self.reroll_hits or "none"),
            reroll_wounds=(options.reroll_wounds if options.reroll_wounds != "none"
                           else (self.reroll_wounds or "none")),
        )


def _unwrap(effect: dict[str, Any] | None, *, attached: bool, attack_type: str) -> dict[str, Any] | None:
    """The effect when it applies here; None when its condition is one /sim cannot know (or is false)."""
    if not isinstance(effect, dict):
        return None
    if effect.get("type") != "conditional":
        return effect
    condition = effect.get("condition") or {}
    kind = condition.get("type")
    if kind == "is-attached" and attached:
        return _unwrap(effect.get("effect"), attached=attached, attack_type=attack_type)
    if kind == "attack-is-type" and (condition.get("parameters") or {}).get("attack_type") == attack_type:
        return _unwrap(effect.get("effect"), attached=attached, attack_type=attack_type)
    return None


def _conditional(effect: dict[str, Any] | None) -> bool:
    return isinstance(effect, dict) and effect.get("type") == "conditional"


def _value(modifier: dict[str, Any]) -> int | None:
    value = modifier.get("value")
    if not isinstance(value, int):
        return None
    return -value if modifier.get("operation") == "subtract" else value


def _kind_ok(modifier: dict[str, Any], attack_type: str) -> bool:
    wanted = modifier.get("attack_type") or modifier.get("weapon_type")
    return wanted in (None, "any", attack_type)


def _defensive(unit: Unit, effects: Effects, *, attached: bool, attack_type: str, edition: str,
               leader: bool = False, others: tuple[Unit, ...] = ()) -> None:
    """`leader`: only its abilities "while leading" reach the unit; its own ones stay in its profile.
    `others`: the rest of the unit (an attached leader), for abilities that need every model to have them."""
    for ability in unit.abilities:
        if leader and not _conditional(ability.effect):
            continue
        effect = _unwrap(ability.effect, attached=attached, attack_type=attack_type)
        if effect is None:
            continue
        kind, modifier, aim = effect.get("type"), effect.get("modifier") or {}, effect.get("target")
        if ability.name.strip().lower() == "stealth" and kind == "roll-modifier" and aim == "attacker":
            # "If every model in a unit has this ability" (10e Stealth; 11e 24.33).
            if any(all(a.name.strip().lower() != "stealth" for a in other.abilities) for other in others):
                effects.skipped.append(f"{ability.name} ({unit.name}): not every model of the unit has it")
                continue
            if attack_type != "ranged":
                continue
            if edition == "11e":  # 11e 24.33: the benefit of cover (13.08: worsen BS by 1), not a hit modifier
                effects.cover = True
                effects.words.append(f"{ability.name} ({unit.name}): benefit of cover (11e 24.33)")
                continue
        if kind == "roll-modifier" and aim == "attacker" and _kind_ok(modifier, attack_type):
            value = _value(modifier)
            if value is None or modifier.get("roll") not in ("hit", "wound"):
                continue
            if modifier["roll"] == "hit":
                effects.hit_modifier += value
            else:
                effects.wound_modifier += value
            effects.words.append(f"{ability.name} ({unit.name}): {value:+d} to {modifier['roll']} rolls against it")
        elif kind == "feel-no-pain" and aim in ("unit", "self", None) and isinstance(modifier.get("threshold"), int):
            threshold = int(modifier["threshold"])
            # An unconditional FNP is already in its own models' profiles (bot/units); only a leader's
            # "while leading" one reaches every model of the unit.
            if _conditional(ability.effect) and (effects.feel_no_pain is None or threshold < effects.feel_no_pain):
                effects.feel_no_pain = threshold
            effects.words.append(f"{ability.name} ({unit.name}): Feel No Pain {threshold}+")
        elif kind == "damage-reduction" and isinstance(modifier.get("reduction"), int):
            if _conditional(ability.effect):
                effects.damage_reduction = max(effects.damage_reduction, int(modifier["reduction"]))
            effects.words.append(f"{ability.name} ({unit.name}): -{modifier['reduction']} damage")
        elif (kind == "stat-modifier" and modifier.get("stat") == "T" and not modifier.get("incoming")
              and modifier.get("operation") == "add" and isinstance(modifier.get("value"), int)):
            effects.toughness += int(modifier["value"])
            effects.words.append(f"{ability.name} ({unit.name}): +{modifier['value']} Toughness")


def _offensive(unit: Unit, effects: Effects, *, attached: bool, attack_type: str) -> None:
    for ability in unit.abilities:
        effect = _unwrap(ability.effect, attached=attached, attack_type=attack_type)
        if effect is None or effect.get("target") not in ("unit", "self", None):
            continue
        kind, modifier = effect.get("type"), effect.get("modifier") or {}
        if not _kind_ok(modifier, attack_type) or modifier.get("roll") not in ("hit", "wound"):
            continue
        if kind == "roll-modifier" and modifier.get("operation") in ("add", "subtract"):
            value = _value(modifier)
            if value is None or modifier.get("incoming"):
                continue
            if modifier["roll"] == "hit":
                effects.hit_modifier += value
            else:
                effects.wound_modifier += value
            effects.words.append(f"{ability.name} ({unit.name}): {value:+d} to its {modifier['roll']} rolls")
        elif kind == "re-roll" and modifier.get("subset") in _REROLL and "uses" not in modifier:
            choice = _REROLL[modifier["subset"]]
            if modifier["roll"] == "hit":
                effects.reroll_hits = "failed" if "failed" in (choice, effects.reroll_hits) else choice
            else:
                effects.reroll_wounds = "failed" if "failed" in (choice, effects.reroll_wounds) else choice
            words = "1s" if choice == "ones" else "failed rolls"
            effects.words.append(f"{ability.name} ({unit.name}): re-roll {modifier['roll']} {words}")


def apply_abilities(attacker: Unit, target: Unit, leader: Unit | None, target_leader: Unit | None, *,
                    phase: str, edition: str = "11e", enabled: bool = True) -> Effects:
    """The structured abilities of both sides that apply to this attack (nothing when `enabled` is False)."""
    effects = Effects()
    if not enabled:
        return effects
    attack_type = "ranged" if phase == "shooting" else "melee"
    _defensive(target, effects, attached=target_leader is not None, attack_type=attack_type, edition=edition,
               others=(target_leader,) if target_leader is not None else ())
    if target_leader is not None:
        _defensive(target_leader, effects, attached=True, attack_type=attack_type, edition=edition, leader=True)
    _offensive(attacker, effects, attached=leader is not None, attack_type=attack_type)
    if leader is not None:
        _offensive(leader, effects, attached=True, attack_type=attack_type)
    effects.words = list(dict.fromkeys(effects.words))
    return effects
