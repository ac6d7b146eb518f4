"""One test per rule, each citing the text it checks (10e: Grimnyr seed; 11e: Stompa seed and core rules)."""

from __future__ import annotations

import pytest

from engine import simulate
from engine.editions import wound_needed


def run(edition="11e", *, attacks=1, skill=3, strength=4, ap=0, damage=1, kw=(), models=1, rng=24,
        t_models=1, toughness=4, save=7, inv=None, wounds=1, context=None, target_kw=(), attacker_kw=(), **target):
    req = {
        "edition": edition,
        "volley": [{"models": models, "weapon": {"name": "w", "range": rng, "attacks": attacks, "skill": skill,
                                                 "strength": strength, "ap": ap, "damage": damage,
                                                 "keywords": list(kw)}}],
        "attacker": {"keywords": list(attacker_kw)},
        "target": {"models": t_models, "toughness": toughness, "save": save, "invulnerable": inv,
                   "wounds": wounds, "keywords": list(target_kw), **target},
        "context": context or {},
    }
    return simulate(req)


def hits(**kw) -> float:
    return run(**kw)["stages"]["hits"]


def wounds(**kw) -> float:
    return run(**kw)["stages"]["wounds"]


def unsaved(**kw) -> float:
    return run(**kw)["stages"]["unsaved"]


BOTH = pytest.mark.parametrize("edition", ["10e", "11e"])


# ---- Hit roll ------------------------------------------------------------------------------------
@BOTH
def test_unmodified_one_always_fails(edition):
    """10e seed: "An unmodified Hit roll of 1 always fails."; 11e 05.01 "Unmodified 1 FAILS"."""
    assert hits(edition=edition, skill=2, context={"hit_modifier": 1}) == pytest.approx(5 / 6)


@BOTH
def test_unmodified_six_always_hits(edition):
    """10e seed: "An unmodified Hit roll of 6 is called a Critical Hit and is always successful"."""
    assert hits(edition=edition, skill=6, context={"hit_modifier": -1}) == pytest.approx(1 / 6)


@BOTH
def test_hit_modifier_capped_at_one(edition):
    """10e seed: "A Hit roll can never be modified by more than -1 or +1"; 11e 02.02.01."""
    assert hits(edition=edition, skill=4, context={"hit_modifier": 3}) == pytest.approx(4 / 6)
    assert hits(edition=edition, skill=4, context={"hit_modifier": -3}) == pytest.approx(2 / 6)


def test_critical_hit_threshold_always_hits():
    """Stompa seed FAQ: critical hit on 4+ when a 5+ is needed - "Does a 4+ hit? A: Yes"."""
    r = run(skill=5, context={"critical_hit": 4}, kw=["SUSTAINED HITS 1"])
    assert r["stages"]["hits"] == pytest.approx(3 / 6 + 3 / 6)  # 4,5,6 hit; each also +1 sustained


@pytest.mark.parametrize(("policy", "expected"), [
    ("ones", 3 / 6 + 1 / 6 * 3 / 6),
    ("failed", 3 / 6 + 3 / 6 * 3 / 6),
    ("non_critical", 3 / 6 + 5 / 6 * 3 / 6 - 2 / 6 * 1),  # re-rolling the hits on 4,5 can lose them
])
def test_hit_rerolls(policy, expected):
    """10e seed Re-rolls / 11e 01.05.02: re-rolls happen before modifiers; a die is re-rolled once."""
    assert hits(skill=4, context={"reroll_hits": policy}) == pytest.approx(expected)


def test_reroll_ones_is_on_the_unmodified_roll():
    """Re-rolls happen before modifiers: with -1, a natural 2 (modified to 1) is not re-rolled by 'ones'."""
    base = hits(skill=3, context={"hit_modifier": -1})
    with_ones = hits(skill=3, context={"hit_modifier": -1, "reroll_hits": "ones"})
    assert with_ones == pytest.approx(base + base / 6)


def test_non_critical_fishing_for_criticals():
    """`non_critical` re-rolls everything that is not a critical: P(crit) = 1/6 + 5/6 * 1/6."""
    r = run(skill=2, kw=["SUSTAINED HITS 1"], context={"reroll_hits": "non_critical"})
    p_crit = 1 / 6 + 5 / 6 * 1 / 6
    p_hit = 5 / 6 * 4 / 6  # first roll 1-5 re-rolled; the re-roll hits without a critical on 2-5
    assert r["stages"]["hits"] == pytest.approx(p_hit + 2 * p_crit)  # a critical also scores 1 sustained hit


# ---- Wound roll ----------------------------------------------------------------------------------
@pytest.mark.parametrize(("s", "t", "needed"), [(8, 4, 2), (5, 4, 3), (4, 4, 4), (3, 4, 5), (2, 4, 6), (4, 9, 6), (4, 7, 5)])
def test_wound_table(s, t, needed):
    """10e seed Wound Roll table / 11e 05.02: TWICE 2+, GREATER 3+, EQUAL 4+, LESS 5+, HALF 6+."""
    assert wound_needed(s, t) == needed
    assert wounds(skill=None, strength=s, toughness=t) == pytest.approx((7 - needed) / 6)


@BOTH
def test_wound_modifier_cap_and_natural_one(edition):
    """10e seed: "An unmodified Wound roll of 1 always fails. A Wound roll can never be modified by more
    than -1 or +1"; 11e 02.02.01."""
    assert wounds(edition=edition, skill=None, strength=8, toughness=4, context={"wound_modifier": 2}) == pytest.approx(5 / 6)
    assert wounds(edition=edition, skill=None, strength=2, toughness=4, context={"wound_modifier": -2}) == pytest.approx(1 / 6)


# ---- Saves ---------------------------------------------------------------------------------------
@BOTH
def test_ap_modifies_armour_not_invulnerable(edition):
    """10e seed: invulnerable saves "are never modified by an attack's Armour Penetration"; 11e 05.04."""
    p_wound = 3 / 6
    assert unsaved(edition=edition, skill=None, ap=-3, save=3) == pytest.approx(p_wound * 5 / 6)  # 3+ at AP-3 saves on 6
    assert unsaved(edition=edition, skill=None, ap=-3, save=3, inv=4) == pytest.approx(p_wound * 3 / 6)
    assert unsaved(edition=edition, skill=None, ap=-1, save=3, inv=5) == pytest.approx(p_wound * 3 / 6)  # armour 4+ is best


@BOTH
def test_unmodified_save_of_one_fails(edition):
    """10e seed: "An unmodified saving throw of 1 always fails"; 11e 05.04 "Unmodified 1 INFLICTS DAMAGE"."""
    assert unsaved(edition=edition, skill=None, save=2, context={"save_modifier": 1}) == pytest.approx(3 / 6 * 1 / 6)


def test_10e_save_improvement_capped():
    """10e seed: "A saving throw can never be improved by more than +1"."""
    assert unsaved(edition="10e", skill=None, save=5, context={"save_modifier": 3}) == pytest.approx(0.5 * 3 / 6)
    assert unsaved(edition="11e", skill=None, save=5, context={"save_modifier": 3}) == pytest.approx(0.5 * 1 / 6)


# ---- Cover ---------------------------------------------------------------------------------------
def test_10e_cover_adds_one_to_armour_save():
    """10e seed Benefit of Cover: "add 1 to the saving throw made for that attack (excluding invulnerable
    saving throws)"."""
    assert unsaved(edition="10e", skill=None, save=4, ap=-1, context={"cover": True}) == pytest.approx(0.5 * 3 / 6)
    assert unsaved(edition="10e", skill=None, save=6, inv=5, ap=-3, context={"cover": True}) == pytest.approx(0.5 * 4 / 6)


def test_10e_no_cover_for_3plus_against_ap0():
    """10e seed: "Models with a Save characteristic of 3+ or better cannot have the Benefit of Cover against
    attacks with an Armour Penetration characteristic of 0"."""
    r = run(edition="10e", skill=None, save=3, ap=0, context={"cover": True})
    assert r["stages"]["unsaved"] == pytest.approx(0.5 * 2 / 6)
    assert any("3+" in n for n in r["notes"])


def test_11e_cover_worsens_bs():
    """11e 13.08: "worsen the BS characteristic of that attack by 1"; not the save."""
    assert hits(edition="11e", skill=3, context={"cover": True}) == pytest.approx(3 / 6)
    assert unsaved(edition="11e", skill=None, save=4, context={"cover": True}) == pytest.approx(0.5 * 3 / 6)


def test_11e_cover_bs_never_worse_than_6_and_not_capped_with_hit_modifier():
    """11e 02.02.01: "BS cannot be ... 7+ (or worse)"; cover is a characteristic change, so a -1 hit
    modifier still applies on top (the +-1 cap is on the hit roll only)."""
    assert hits(edition="11e", skill=6, context={"cover": True}) == pytest.approx(1 / 6)
    assert hits(edition="11e", skill=3, context={"cover": True, "hit_modifier": -1}) == pytest.approx(2 / 6)


@BOTH
def test_cover_never_applies_to_melee(edition):
    """Benefit of cover is against ranged attacks only (10e seed; 11e 13.08)."""
    assert hits(edition=edition, skill=3, rng="melee", context={"cover": True}) == pytest.approx(4 / 6)


@BOTH
def test_ignores_cover(edition):
    """11e 24.18: "the target cannot have the benefit of cover against that attack"."""
    r = run(edition=edition, skill=3, save=4, kw=["IGNORES COVER"], context={"cover": True})
    assert r["stages"]["hits"] == pytest.approx(4 / 6)
    assert r["stages"]["unsaved"] == pytest.approx(4 / 6 * 0.5 * 3 / 6)


# ---- Damage, FNP, allocation ---------------------------------------------------------------------
def test_damage_reduction_minimum_one():
    """11e 02.02.01: after modifiers "D cannot be less than 1": D3 with reduction 2 deals 1 every time."""
    r = run(skill=None, strength=8, damage="D3", wounds=10, damage_reduction=2)
    assert r["damage"]["mean"] == pytest.approx(5 / 6)


def test_feel_no_pain_per_wound_lost():
    """11e 24.12: "Each time a model with this ability would lose a wound, roll one D6"."""
    r = run(skill=None, strength=8, damage=3, wounds=10, feel_no_pain=5)
    assert r["damage"]["mean"] == pytest.approx(5 / 6 * 3 * 4 / 6)


def test_mortal_feel_no_pain_only_against_mortal_wounds():
    """A separate Feel No Pain against mortal wounds applies to DEVASTATING WOUNDS, not to normal damage."""
    base = run(skill=None, strength=8, damage=2, wounds=10, feel_no_pain_mortal=4)
    assert base["damage"]["mean"] == pytest.approx(5 / 6 * 2)
    dev = run(skill=None, strength=8, damage=2, wounds=10, feel_no_pain_mortal=4, kw=["DEVASTATING WOUNDS"])
    assert dev["damage"]["mean"] == pytest.approx(4 / 6 * 2 + 1 / 6 * 2 * 3 / 6)


@BOTH
def test_excess_damage_is_lost(edition):
    """11e 05.04: damage beyond the model's wounds is lost; one attack kills at most one model."""
    r = run(edition=edition, skill=None, strength=8, damage=6, t_models=3, wounds=1)
    assert r["models_killed"]["pmf"] == pytest.approx([1 / 6, 5 / 6, 0, 0])


def test_wounded_model_is_finished_first():
    """11e 05.04 step 1: "this must be a model that has lost one or more wounds if possible"."""
    r = run(skill=None, strength=8, damage=1, t_models=2, wounds=2, wounds_lost=1)
    assert r["models_killed"]["pmf"] == pytest.approx([1 / 6, 5 / 6, 0])
    assert r["damage"]["pmf"] == pytest.approx([1 / 6, 5 / 6, 0, 0])


# ---- Keywords ------------------------------------------------------------------------------------
@pytest.mark.parametrize(("value", "extra"), [("SUSTAINED HITS 2", 2), ("SUSTAINED HITS D3", 2)])
def test_sustained_hits(value, extra):
    """10e seed / 11e 24.36: each critical hit scores X additional hits (D3: mean 2)."""
    assert hits(skill=4, kw=[value]) == pytest.approx(3 / 6 + 1 / 6 * extra)


@BOTH
def test_lethal_hits_auto_wound_and_are_not_critical_wounds(edition):
    """10e seed: "a Critical Hit automatically wounds the target"; 11e 01.05.01: an automatic wound "is
    not a critical wound" - so LETHAL HITS never trigger DEVASTATING WOUNDS."""
    r = run(edition=edition, skill=4, strength=1, toughness=10, kw=["LETHAL HITS", "DEVASTATING WOUNDS"], save=2,
            wounds=5)
    p_crit, p_hit = 1 / 6, 2 / 6
    assert r["stages"]["wounds"] == pytest.approx(p_crit + p_hit * 1 / 6)
    assert r["stages"]["unsaved"] == pytest.approx(p_crit * 1 / 6 + p_hit * 1 / 6)


def test_conditional_lethal_hits_non_monster_vehicle():
    """11e 24.01 and the Stompa seed's "LETHAL HITS: non-MONSTER/VEHICLE": only against targets lacking both."""
    kw = ["LETHAL HITS: non-MONSTER/VEHICLE"]
    infantry = run(skill=5, strength=1, toughness=10, kw=kw, target_kw=["INFANTRY"])
    vehicle = run(skill=5, strength=1, toughness=10, kw=kw, target_kw=["VEHICLE"])
    assert infantry["stages"]["wounds"] == pytest.approx(1 / 6 + 1 / 6 * 1 / 6)
    assert vehicle["stages"]["wounds"] == pytest.approx(2 / 6 * 1 / 6)
    assert any("does not apply" in n for n in vehicle["notes"])


@BOTH
def test_torrent_auto_hits_never_critical(edition):
    """11e 24.37 "automatically hits"; 11e 01.05.01 "Such a hit roll is not a critical hit"."""
    r = run(edition=edition, attacks=6, skill=None, kw=["TORRENT", "SUSTAINED HITS 2", "LETHAL HITS"])
    assert r["stages"]["hits"] == pytest.approx(6)
    assert r["stages"]["wounds"] == pytest.approx(3)


def test_devastating_wounds_10e_spill_11e_one_model():
    """10e seed: devastating wounds are mortal wounds allocated after all other attacks (they carry over).
    11e 24.10: "can damage a maximum of one model for each critical wound"."""
    common = dict(skill=None, strength=1, toughness=10, damage=3, kw=["DEVASTATING WOUNDS"], t_models=3,
                  wounds=2, context={"critical_wound": 2}, save=2)
    ten = run(edition="10e", **common)
    eleven = run(edition="11e", **common)
    # one attack: critical wound on 2+ (5/6), else fails. 10e: 3 mortal wounds = 1 model + 1 wound.
    assert ten["models_killed"]["pmf"] == pytest.approx([1 / 6, 5 / 6, 0, 0])
    assert ten["damage"]["pmf"][3] == pytest.approx(5 / 6)
    assert eleven["damage"]["pmf"][2] == pytest.approx(5 / 6)
    two = dict(common, attacks=2)
    assert run(edition="10e", **two)["models_killed"]["pmf"][3] == pytest.approx(25 / 36)  # 6 MW kill 3
    assert run(edition="11e", **two)["models_killed"]["pmf"][3] == pytest.approx(0)


@pytest.mark.parametrize("modifier", [{"damage_reduction": 1}, {"halve_damage": True}, {"damage_set": 1}])
@pytest.mark.parametrize("method", ["exact", "montecarlo"])
def test_devastating_mortal_wounds_and_damage_modifiers(modifier, method):
    """10e seed: "After that attack is allocated and after any modifiers are applied, it inflicts a number
    of mortal wounds ... equal to the Damage characteristic" - a "-1 Damage" model takes 2 from D3.
    11e 24.10: "the attack sequence for that attack ends and the target unit suffers a number of mortal
    wounds equal to the D characteristic of that weapon" - before allocation (05.04), so the model's
    damage modifiers do not apply: 3. Normal damage (a failed save) is modified in both editions."""
    extra = {"method": method, "trials": 20_000, "seed": 3} if method == "montecarlo" else {}
    dev = dict(skill=None, strength=1, toughness=10, damage=3, kw=["DEVASTATING WOUNDS"], wounds=6,
               context={"critical_wound": 2}, save=7, **modifier)
    modified = {"damage_reduction": 2, "halve_damage": 2, "damage_set": 1}[next(iter(modifier))]

    def pmf(edition, **kw):
        req = {"edition": edition, "volley": [{"models": 1, "weapon": {
            "name": "w", "attacks": 1, "skill": None, "strength": kw["strength"], "ap": 0, "damage": 3,
            "keywords": kw.get("kw", [])}}], "target": {"models": 1, "toughness": 10, "save": 7, "wounds": 6,
            **modifier}, "context": kw.get("context", {}), **extra}
        return simulate(req)["damage"]["pmf"]

    tol = 0.02 if method == "montecarlo" else 1e-12
    ten, eleven = pmf("10e", **dev), pmf("11e", **dev)
    assert ten[modified] == pytest.approx(5 / 6, abs=tol)
    assert eleven[3] == pytest.approx(5 / 6, abs=tol)
    for edition in ("10e", "11e"):  # a normal wound (S 20 vs T10 wounds on 2+, no save): modified
        assert pmf(edition, strength=20)[modified] == pytest.approx(5 / 6, abs=tol)


@pytest.mark.parametrize("edition", ["10e", "11e"])
def test_devastating_mortal_wounds_per_model_modifiers_in_a_mixed_unit(edition):
    """The same reading against a mixed unit (contract 1b): the bodyguard's "-1 Damage" reduces the
    mortal wounds of a critical wound in 10e only; with the leader's own modifier the same holds for
    PRECISION attacks (10e seed / 11e 24.28.01: they are applied to the CHARACTER group first)."""
    groups = [{"name": "body", "models": 2, "toughness": 10, "save": 7, "wounds": 6, "damage_reduction": 1},
              {"name": "lead", "models": 1, "toughness": 10, "save": 7, "wounds": 6, "damage_reduction": 2,
               "character": True}]
    for keywords, expected_10e in ((["DEVASTATING WOUNDS"], 2), (["DEVASTATING WOUNDS", "PRECISION"], 1)):
        r = simulate({"edition": edition, "context": {"critical_wound": 2}, "target": {"groups": groups},
                      "volley": [{"models": 1, "weapon": {"name": "w", "attacks": 1, "skill": None, "strength": 1,
                                                          "ap": 0, "damage": 3, "keywords": keywords}}]})
        assert r["damage"]["pmf"][expected_10e if edition == "10e" else 3] == pytest.approx(5 / 6, abs=1e-12)


def test_devastating_wounds_10e_after_whole_volley():
    """10e seed: devastating attacks "are only allocated to models after all other attacks made by the
    attacking unit have been allocated and resolved" - a later group's normal damage lands first."""
    req = {"edition": "10e", "target": {"models": 2, "toughness": 10, "save": 2, "wounds": 3},
           "context": {"critical_wound": 2},
           "volley": [
               {"models": 1, "weapon": {"name": "dev", "attacks": 1, "skill": None, "strength": 1, "ap": 0,
                                        "damage": 2, "keywords": ["DEVASTATING WOUNDS"]}},
               {"models": 1, "weapon": {"name": "big", "attacks": 1, "skill": None, "strength": 20, "ap": -6,
                                        "damage": 2, "keywords": []}}]}
    r = simulate(req)
    # both succeed (5/6 * 5/6): normal 2 on model 1 first, then 2 MW: kill model 1 and 1 on model 2.
    assert r["models_killed"]["pmf"][1] == pytest.approx(25 / 36 + 5 / 36 * 0)
    r11 = simulate(dict(req, edition="11e"))
    # 11e: dev 2 lands first on model 1 (its group resolves first), then big 2 kills it.
    assert r11["models_killed"]["pmf"][1] == pytest.approx(25 / 36)
    assert r["damage"]["pmf"][4] == pytest.approx(25 / 36)


@pytest.mark.parametrize(("edition", "keyword", "expected"), [
    ("10e", "BLAST", 1 + 2), ("11e", "BLAST", 1 + 2), ("10e", "BLAST 2", 1 + 2), ("11e", "BLAST 2", 1 + 4)])
def test_blast(edition, keyword, expected):
    """10e seed BLAST: "add 1 to the result for every five models"; 11e 24.05 BLAST X: X dice per five."""
    assert run(edition=edition, kw=[keyword], t_models=11)["stages"]["attacks"] == expected


def test_cleave_11e_only():
    """11e 24.06 CLEAVE X: "add X additional attack dice for every five models" (rounding down)."""
    assert run(edition="11e", rng="melee", attacks=3, kw=["CLEAVE 1"], t_models=16)["stages"]["attacks"] == 6
    ten = run(edition="10e", rng="melee", attacks=3, kw=["CLEAVE 1"], t_models=16)
    assert ten["stages"]["attacks"] == 3
    assert "CLEAVE 1" in ten["ignored_keywords"]


@BOTH
def test_rapid_fire_and_melta_at_half_range(edition):
    """11e 24.30 RAPID FIRE X adds X attack dice, 24.25 MELTA X adds X to D, both within half range."""
    kw = ["RAPID FIRE 1", "MELTA 2"]
    near = run(edition=edition, skill=None, strength=8, damage=1, wounds=10, kw=kw, context={"half_range": True})
    far = run(edition=edition, skill=None, strength=8, damage=1, wounds=10, kw=kw)
    assert near["stages"]["attacks"] == 2 and far["stages"]["attacks"] == 1
    assert near["damage"]["mean"] == pytest.approx(2 * 5 / 6 * 3)
    assert far["damage"]["mean"] == pytest.approx(5 / 6)


def test_anti_keyword():
    """11e 24.03: "if the target unit has the keyword denoted by X, an unmodified wound roll of Y+ is a
    critical wound" - a critical wound always wounds."""
    kw = ["ANTI-INFANTRY 4+", "DEVASTATING WOUNDS"]
    inf = run(skill=None, strength=1, toughness=10, save=2, kw=kw, target_kw=["INFANTRY"], wounds=5)
    veh = run(skill=None, strength=1, toughness=10, save=2, kw=kw, target_kw=["VEHICLE"], wounds=5)
    assert inf["stages"]["wounds"] == pytest.approx(3 / 6)
    assert inf["stages"]["unsaved"] == pytest.approx(3 / 6)  # all are devastating criticals
    assert veh["stages"]["wounds"] == pytest.approx(1 / 6)


def test_twin_linked_heavy_lance():
    """11e 24.38 TWIN-LINKED re-rolls the wound roll; 24.16 HEAVY +1 to hit when stationary; 24.21 LANCE
    +1 to wound after a charge."""
    assert wounds(skill=None, kw=["TWIN-LINKED"]) == pytest.approx(0.5 + 0.5 * 0.5)
    assert hits(skill=4, kw=["HEAVY"], context={"stationary": True}) == pytest.approx(4 / 6)
    assert hits(skill=4, kw=["HEAVY"]) == pytest.approx(3 / 6)
    assert wounds(skill=None, kw=["LANCE"], context={"charged": True}) == pytest.approx(4 / 6)


def test_indirect_fire_11e_thresholds():
    """11e 10.07: "An unmodified hit roll of 1-5 fails, unless your unit remained stationary ... 1-3
    fails instead"; the target has the benefit of cover; hit rolls cannot be re-rolled."""
    assert hits(edition="11e", skill=2, kw=["INDIRECT FIRE"]) == pytest.approx(1 / 6)
    assert hits(edition="11e", skill=2, kw=["INDIRECT FIRE"], context={"stationary": True}) == pytest.approx(3 / 6)
    # cover from indirect: BS 4+ becomes 5+, on top of the 4+ unmodified floor
    assert hits(edition="11e", skill=4, kw=["INDIRECT FIRE"], context={"stationary": True}) == pytest.approx(2 / 6)
    assert hits(edition="11e", skill=2, kw=["INDIRECT FIRE"], context={"reroll_hits": "failed"}) == pytest.approx(1 / 6)
    ten = run(edition="10e", skill=2, kw=["INDIRECT FIRE"])
    assert "INDIRECT FIRE" in ten["ignored_keywords"]


@pytest.mark.parametrize(("edition", "attacker_kw", "p_fail", "mw"), [
    ("10e", [], 1 / 6, 3), ("11e", [], 2 / 6, 1), ("11e", ["VEHICLE"], 2 / 6, 3)])
def test_hazardous(edition, attacker_kw, p_fail, mw):
    """10e seed: "on a 1, that test is failed ... 3 mortal wounds"; 11e 06.03: "on a 1-2, that roll fails
    ... 1 mortal wound ... Or 3 mortal wounds instead if each model in that unit is a MONSTER/VEHICLE"."""
    r = run(edition=edition, models=2, kw=["HAZARDOUS"], attacker_kw=attacker_kw)
    pmf = r["attacker_mortal_wounds"]["pmf"]
    assert r["attacker_mortal_wounds"]["mean"] == pytest.approx(2 * p_fail * mw)
    assert pmf[2 * mw] == pytest.approx(p_fail**2)


def test_precision_documented_no_change():
    """10e seed / 11e 24.28: PRECISION only redirects attacks to CHARACTER groups; one profile here."""
    a = run(skill=3, kw=["PRECISION"])
    b = run(skill=3)
    assert a["models_killed"] == b["models_killed"]
    assert "PRECISION" in a["applied_keywords"] and any("PRECISION" in n for n in a["notes"])


def test_unknown_keywords_are_listed_not_dropped():
    r = run(kw=["ASSAULT", "PISTOL", "WEIRD THING 3"])
    assert r["ignored_keywords"] == ["ASSAULT", "PISTOL", "WEIRD THING 3"]
