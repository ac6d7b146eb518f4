"""Everything that differs between 10th and 11th edition, in one place, each rule citing its text.

Sources: 10e = the Leagues of Votann Grimnyr seed page (`data/seeds`, `shared/seeds/000_*.txt`),
which carries the 10e core rules for hit/wound/save rolls, re-rolls, Benefit of Cover, BLAST,
SUSTAINED HITS, LETHAL HITS, DEVASTATING WOUNDS, HAZARDOUS and PRECISION. 11e = the Orks Stompa seed
(`001_*.txt`) and the complete 11e core rules (`gdc-11e/core_rules.json`, rule numbers below).
Where the 10e seed does not print a rule (RAPID FIRE, MELTA, ANTI, TWIN-LINKED, HEAVY, LANCE, IGNORES
COVER, TORRENT, Feel No Pain) both editions share the same wording and the 11e text is cited.
Interpretations are recorded in docs/rules-notes.md under "Combat engine".
"""

from __future__ import annotations

from dataclasses import dataclass

HIT_MODIFIER_CAP = 1
"""Both: "A Hit roll can never be modified by more than -1 or +1" (10e seed, Hit Roll); 11e 02.02.01
"Hit rolls and wound rolls can never be modified by more than -1 or +1"."""

WOUND_MODIFIER_CAP = 1
"""Both: "A Wound roll can never be modified by more than -1 or +1" (10e seed; 11e 02.02.01)."""


def wound_needed(strength: int, toughness: int) -> int:
    """The wound roll table, identical in both editions (10e seed "Wound Roll"; 11e 05.02):
    S >= 2T: 2+, S > T: 3+, S == T: 4+, S < T: 5+, S <= T/2: 6+."""
    if strength >= 2 * toughness:
        return 2
    if strength > toughness:
        return 3
    if strength == toughness:
        return 4
    if 2 * strength <= toughness:
        return 6
    return 5


def clamp(value: int, cap: int) -> int:
    return max(-cap, min(cap, value))


@dataclass(frozen=True)
class Edition:
    """The rules of one edition that the engine needs. Fields are documented with their text."""

    code: str

    # --- Benefit of Cover -----------------------------------------------------------------------
    cover_improves_save: bool
    """10e seed "Benefit of Cover": "add 1 to the saving throw made for that attack (excluding
    invulnerable saving throws). Models with a Save characteristic of 3+ or better cannot have the
    Benefit of Cover against attacks with an Armour Penetration characteristic of 0"."""
    cover_worsens_bs: bool
    """11e 13.08: "Each time a ranged attack targets a unit that has the benefit of cover against it,
    worsen the BS characteristic of that attack by 1." A characteristic change, so it is not part of
    the +-1 hit-roll cap; 02.02.01: "BS cannot be 1+ (or better) or 7+ (or worse)"."""

    # --- Saves ----------------------------------------------------------------------------------
    save_improvement_cap: int | None
    """10e seed "Saving Throw": "A saving throw can never be improved by more than +1." 11e 05.04
    has no such cap (02.02.01 caps only hit and wound rolls)."""

    # --- Attack dice ----------------------------------------------------------------------------
    blast_uses_value: bool
    """10e seed BLAST: "add 1 to the result for every five models" (no BLAST X form).
    11e 24.05: "[BLAST X] ... add X additional attack dice for every five models ... (rounding down)"."""
    has_cleave: bool
    """11e 24.06 CLEAVE X: "add X additional attack dice for every five models that were in the target
    unit" (the Stompa's Mega-choppa). No CLEAVE ability exists in the 10e texts."""

    # --- INDIRECT FIRE --------------------------------------------------------------------------
    models_indirect_fire: bool
    """11e 10.07 Indirect Shooting: "The target has the benefit of cover against that attack (13.08).
    You cannot re-roll hit rolls. An unmodified hit roll of 1-5 fails, unless your unit remained
    stationary this turn and the target is visible to one or more friendly units, in which case an
    unmodified hit roll of 1-3 fails instead." The 10e seed prints no INDIRECT FIRE rule, and the 10e
    rule depends on visibility, which the request does not carry: listed as ignored in 10e."""

    # --- DEVASTATING WOUNDS ---------------------------------------------------------------------
    devastating_spills_after_volley: bool
    """10e seed: "no saving throw of any kind can be made against that attack ... Such attacks are only
    allocated to models after all other attacks made by the attacking unit have been allocated and
    resolved ... it inflicts a number of mortal wounds on the target equal to the Damage
    characteristic" - mortal wounds, which carry over from model to model.
    11e 24.10: mortal wounds equal to D, "inflicted after resolving any normal damage inflicted by
    those attacks. Mortal wounds inflicted by [DEVASTATING WOUNDS] weapons can damage a maximum of one
    model for each critical wound; any remaining mortal wounds inflicted by that attack are lost.\""""

    devastating_damage_modified: bool
    """Whether the target model's damage modifiers (`damage_set`, `halve_damage`, `damage_reduction`:
    abilities worded "each time an attack is allocated to this model ...") change the mortal wounds of a
    DEVASTATING WOUNDS critical wound. 10e seed: "After that attack is allocated and after any modifiers
    are applied, it inflicts a number of mortal wounds ... equal to the Damage characteristic of that
    attack" -> yes. 11e 24.10: "the attack sequence for that attack ends and the target unit suffers a
    number of mortal wounds equal to the D characteristic of that weapon" - the sequence ends before
    Inflict Damage (05.04), where rules triggered when an attack is allocated take effect (04.02.02), and
    each mortal wound is the loss of one wound (06.02) -> no (MELTA, a change to the weapon's D made
    when the target is selected, still counts)."""

    # --- HAZARDOUS ------------------------------------------------------------------------------
    hazard_fail_max: int
    """Highest failing roll. 10e seed: "roll one D6: on a 1, that test is failed" -> 1.
    11e 06.03: "roll one D6: on a 1-2, that roll fails" -> 2."""
    hazard_mortal_wounds: int
    """Mortal wounds per failed roll. 10e seed: "For each 1, a model equipped with a hazardous weapon
    suffers 3 mortal wounds". 11e 06.03: "1 mortal wound ... Or 3 mortal wounds instead if each model in
    that unit is a MONSTER/VEHICLE model" (that case is `hazard_mortal_wounds_monster_vehicle`)."""
    hazard_mortal_wounds_monster_vehicle: int

    def hazard(self, attacker_keywords: frozenset[str]) -> tuple[float, int]:
        """(probability one hazard roll fails, mortal wounds per failure) for this attacker."""
        p_fail = self.hazard_fail_max / 6
        monster_vehicle = bool(attacker_keywords & {"MONSTER", "VEHICLE"})
        mw = self.hazard_mortal_wounds_monster_vehicle if monster_vehicle else self.hazard_mortal_wounds
        return p_fail, mw

    def blast_dice(self, value: int | None, target_models: int) -> int:
        """Extra attack dice per BLAST weapon against `target_models` models at Select Targets."""
        per_five = target_models // 5
        if value is None or not self.blast_uses_value:
            return per_five
        return value * per_five

    def cleave_dice(self, value: int, target_models: int) -> int | None:
        """Extra attack dice per CLEAVE weapon, or None where the edition has no CLEAVE."""
        if not self.has_cleave:
            return None
        return value * (target_models // 5)

    def indirect_min_unmodified(self, stationary: bool) -> int:
        """11e 10.07: the lowest unmodified hit roll that does not fail for an INDIRECT FIRE attack.
        "Stationary" is read as "remained stationary and the target is visible to a friendly unit"."""
        return 4 if stationary else 6


TENTH = Edition(
    code="10e",
    cover_improves_save=True,
    cover_worsens_bs=False,
    save_improvement_cap=1,
    blast_uses_value=False,
    has_cleave=False,
    models_indirect_fire=False,
    devastating_spills_after_volley=True,
    devastating_damage_modified=True,
    hazard_fail_max=1,
    hazard_mortal_wounds=3,
    hazard_mortal_wounds_monster_vehicle=3,
)

ELEVENTH = Edition(
    code="11e",
    cover_improves_save=False,
    cover_worsens_bs=True,
    save_improvement_cap=None,
    blast_uses_value=True,
    has_cleave=True,
    models_indirect_fire=True,
    devastating_spills_after_volley=False,
    devastating_damage_modified=False,
    hazard_fail_max=2,
    hazard_mortal_wounds=1,
    hazard_mortal_wounds_monster_vehicle=3,
)

EDITIONS = {"10e": TENTH, "11e": ELEVENTH}

# Rules shared by both editions (cited here so every rule the engine applies has its text):
SHARED_RULES = {
    "hit roll": "10e seed Hit Roll / 11e 05.01: an unmodified 1 fails, an unmodified 6 is a critical "
    "hit and always hits; otherwise the (modified) roll must equal or beat BS/WS.",
    "critical hit threshold": "Stompa seed FAQ: 'My attack has a rule that means it results in a critical "
    "hit on a hit roll of 4+, and I would otherwise need a 5+ to hit. Does a 4+ hit? A: Yes'.",
    "re-rolls": "10e seed Re-rolls / 11e 01.05.02: re-rolls happen before modifiers; a die is re-rolled "
    "at most once; 'unmodified' means after re-rolls, before modifiers.",
    "wound roll": "10e seed Wound Roll / 11e 05.02: unmodified 1 fails, unmodified 6 is a critical wound.",
    "saves": "10e seed Saving Throw and Invulnerable Saves / 11e 05.04: an unmodified 1 fails; AP "
    "modifies only the armour save; the invulnerable save is never modified by AP; the better of the "
    "two is used.",
    "random damage": "11e 02.02.03: the damage roll is made per attack when it is allocated; "
    "'D6+1: the value after the operator is part of that D characteristic'.",
    "D minimum": "11e 02.02.01: after all modifiers 'D cannot be less than 1' (damage reduction min 1).",
    "feel no pain": "11e 24.12: 'Each time a model with this ability would lose a wound, roll one D6: "
    "on an X+, that wound is not lost.'",
    "allocation": "11e 05.03/05.04: a model that has lost wounds must be selected first; 'until all "
    "attacks are resolved or all models in the target unit are destroyed - in the latter case, any "
    "excess attacks are lost'; damage beyond a model's remaining wounds is lost (05.04 step 3).",
    "mortal wounds": "11e 06.02 / 10e: mortal wounds are inflicted one at a time, each on a model that "
    "has lost wounds first, so they carry over to the next model.",
    "automatic hits": "11e 01.05.01: 'Such a hit roll is not a critical hit'; an automatic wound is "
    "not a critical wound.",
    "TORRENT": "11e 24.37: 'that attack automatically hits the target'.",
    "SUSTAINED HITS": "10e seed / 11e 24.36: each critical hit scores X additional hits.",
    "LETHAL HITS": "10e seed: 'a Critical Hit automatically wounds the target'; 11e 24.23 (contract 1: "
    "always auto-wounds).",
    "ANTI": "11e 24.03: 'if the target unit has the keyword denoted by X, an unmodified wound roll of "
    "Y+ is a critical wound.'",
    "RAPID FIRE": "11e 24.30: 'add X additional attack dice if the target unit was within half range'.",
    "MELTA": "11e 24.25: 'if the target unit was within half range ... add X to that weapon's D'.",
    "TWIN-LINKED": "11e 24.38: 'you can re-roll the wound roll'.",
    "HEAVY": "11e 24.16: 'add 1 to the hit roll' when the unit is unengaged, was not set up this turn "
    "and moved no more than 3\" (the request's `stationary`).",
    "LANCE": "11e 24.21: 'if the attacking model's unit made a charge move this turn, add 1 to the "
    "wound roll.'",
    "IGNORES COVER": "11e 24.18: 'the target cannot have the benefit of cover against that attack'.",
    "PRECISION": "10e seed / 11e 24.28: only changes which CHARACTER group attacks are allocated to; "
    "the target here is one profile with no CHARACTER group, so it changes nothing.",
}
