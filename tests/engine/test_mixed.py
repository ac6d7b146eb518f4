"""Mixed targets (contract 1b): exact engine versus per-model brute-force enumeration to 1e-9, and the
one-group form against the single-profile engine."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import RequestError, limits, mixed, simulate
from engine.plan import clear_caches
from engine.plan import compile as compile_plan
from tests.engine.brute import brute_mixed
from tests.engine.test_exact_brute import CASES


def W(attacks, skill, s, ap, d, kw=(), rng=24, models=1):
    return {"models": models, "weapon": {"name": "w", "range": rng, "attacks": attacks, "skill": skill,
                                         "strength": s, "ap": ap, "damage": d, "keywords": list(kw)}}


def G(name, models, t, sv, w, character=False, **kw):
    return {"name": name, "models": models, "toughness": t, "save": sv, "wounds": w, "character": character, **kw}


LEADER = [G("body", 2, 4, 3, 2), G("leader", 1, 4, 3, 3, True, invulnerable=4)]

MIXED = [
    ("leader + bodyguard", [W(3, 3, 4, -1, 1)], {"groups": LEADER}),
    ("precision", [W(3, 3, 4, -1, 2, ["PRECISION"])], {"groups": LEADER}),
    ("precision then normal", [W(2, 3, 5, -1, 2, ["PRECISION"]), W(2, 3, 4, 0, 1)], {"groups": LEADER}),
    ("toughness of the bodyguard", [W(3, 3, 5, 0, 1)], {"groups": [G("b", 2, 4, 4, 1), G("c", 1, 6, 3, 2, True)]}),
    ("character toughness when alone", [W(2, 3, 5, 0, 1)], {"groups": [G("c1", 1, 6, 3, 2, True),
                                                                        G("c2", 1, 5, 4, 1, True)]}),
    ("differing saves, FNP, DR", [W(3, 3, 6, -1, "D3")],
     {"groups": [G("a", 1, 5, 3, 2, feel_no_pain=5), G("b", 1, 5, 6, 2, damage_reduction=1),
                 G("c", 1, 5, 2, 3, True, invulnerable=4, feel_no_pain=6)]}),
    ("set, halve, reduce", [W(2, 3, 8, -2, "D6")],
     {"groups": [G("a", 1, 6, 3, 3, halve_damage=True), G("b", 1, 6, 3, 3, damage_set=2, damage_reduction=1),
                 G("c", 1, 6, 3, 4, True, halve_damage=True, damage_reduction=1)]}),
    ("devastating + precision", [W(2, 3, 4, 0, 2, ["DEVASTATING WOUNDS", "PRECISION"])],
     {"groups": [G("b", 2, 4, 3, 2), G("c", 1, 4, 3, 3, True, feel_no_pain_mortal=5)]}),
    ("devastating, two weapons", [W(2, 3, 4, 0, "D3", ["DEVASTATING WOUNDS"]),
                                   W(1, 3, 4, 0, 2, ["DEVASTATING WOUNDS", "PRECISION"])],
     {"groups": [G("b", 1, 4, 3, 2, feel_no_pain=6), G("c", 1, 4, 4, 3, True, feel_no_pain_mortal=4)]}),
    ("devastating, uniform mortal FNP", [W(2, 3, 4, 0, 2, ["DEVASTATING WOUNDS"])],
     {"groups": [G("b", 2, 4, 3, 1, feel_no_pain_mortal=5), G("c", 1, 4, 3, 2, True, feel_no_pain_mortal=5)]}),
    ("lethal + sustained, wounded", [W(2, 3, 4, -1, 1, ["LETHAL HITS", "SUSTAINED HITS 1"])],
     {"groups": LEADER, "wounds_lost": 1}),
    ("cover per model (10e Sv3 vs AP0)", [W(3, 3, 4, 0, 1)],
     {"groups": [G("b", 1, 4, 4, 2), G("c", 1, 4, 3, 2), G("d", 1, 4, 3, 2, True)]}, {"cover": True}),
    ("blast counts every model", [W(1, 3, 4, 0, 1, ["BLAST"])],
     {"groups": [G("b", 4, 4, 5, 1), G("c", 1, 4, 3, 2, True)]}),
    ("two character groups", [W(3, 3, 5, -1, 1, ["PRECISION"])],
     {"groups": [G("b", 1, 4, 3, 1), G("c1", 1, 4, 3, 2, True), G("c2", 1, 4, 4, 1, True)]}),
    ("anti + twin-linked, keywords", [W(2, 4, 3, 0, 1, ["ANTI-INFANTRY 4+", "TWIN-LINKED"])],
     {"groups": LEADER, "keywords": ["INFANTRY"]}),
]


@pytest.mark.parametrize("edition", ["10e", "11e"])
def test_a_group_step_seen_in_another_volley_is_reused_with_the_same_bits(edition):
    """A weapon group's compiled step is kept by value (mixed._step_key): the same weapons under another
    name, or one of them alone, reuse theirs (a 10e DEVASTATING group's only with the same pending
    axis); results are those of a compile from empty caches."""
    target = {"groups": [G("b", 1, 4, 3, 2, feel_no_pain=6), G("c", 1, 4, 4, 3, True, feel_no_pain_mortal=4)]}
    dev, plain = W(2, 3, 4, 0, "D3", ["DEVASTATING WOUNDS"]), W(3, 3, 4, -1, 1)
    renamed = dict(plain, weapon=dict(plain["weapon"], name="renamed"))
    base = {"edition": edition, "volley": [dev, plain], "target": target}
    others = [dict(base, volley=[dev, renamed]), dict(base, volley=[renamed])]
    want = []
    for req in others:
        clear_caches()
        want.append(simulate(req))
    clear_caches()
    first = compile_plan(base)
    both, alone = (compile_plan(req) for req in others)
    assert both.volley.steps[0] is first.volley.steps[0] and both.volley.steps[1] is first.volley.steps[1]
    assert alone.volley.steps[0] is first.volley.steps[1]
    assert [both.run(), alone.run()] == want
    # each model's save is part of a step's key (not in the die's kernel here); wounds already lost are
    # not (they only move the starting state), so a wounded unit reuses the steps
    for req, reused in ((dict(base, context={"save_modifier": -1}), False),
                        (dict(base, target=dict(target, wounds_lost=1)), True)):
        clear_caches()
        fresh = simulate(req)
        clear_caches()
        seen = compile_plan(base)
        assert (compile_plan(req).volley.steps[1] is seen.volley.steps[1]) is reused
        assert simulate(req) == fresh


@pytest.mark.parametrize("edition", ["10e", "11e"])
@pytest.mark.parametrize("case", MIXED, ids=[c[0] for c in MIXED])
def test_mixed_matches_enumeration(edition, case):
    name, volley, target = case[:3]
    context = case[3] if len(case) > 3 else {}
    req = {"edition": edition, "volley": volley, "target": target, "context": context}
    got = simulate(req)
    ref = brute_mixed(req)
    np.testing.assert_allclose(got["models_killed"]["pmf"], ref["killed"], atol=1e-9, rtol=0)
    np.testing.assert_allclose(got["damage"]["pmf"], ref["damage"], atol=1e-9, rtol=0)
    assert [g["name"] for g in got["groups"]] == [g["name"] for g in target["groups"]]
    for g, ref_g in zip(got["groups"], ref["groups"], strict=True):
        np.testing.assert_allclose(g["models_killed"]["pmf"], ref_g, atol=1e-9, rtol=0)
    for key in ("attacks", "hits", "wounds", "unsaved"):
        assert got["stages"][key] == pytest.approx(ref["stages"][key], abs=1e-9), key
    assert sum(ref["killed"]) == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("phases", [True, False], ids=["two phases", "stepped"])
@pytest.mark.parametrize("edition", ["10e", "11e"])
@pytest.mark.parametrize("case", MIXED, ids=[c[0] for c in MIXED])
def test_both_mixture_paths_match_enumeration(edition, case, phases, monkeypatch):
    """A weapon's wounds mixed in two phases (engine.phases) and stepped wound by wound (the path for
    large units) each agree with the brute-force enumeration, whichever engine.mixed would pick."""
    monkeypatch.setattr(mixed, "worth_it", (lambda *a: a[3] >= 1) if phases else (lambda *a: False))
    clear_caches()
    test_mixed_matches_enumeration(edition, case)


def test_a_leader_unit_uses_the_two_phases():
    """The issue's mixed unit (Captain + 10 Intercessors, 3 weapon groups) compiles every group to the
    two phases, so its evaluation has no per-wound step (the stepped path stays for large units)."""
    rifles = W(2, 3, 4, -1, 1, ["PRECISION"], models=10)
    flamer = W("D6", None, 5, -1, 1, ["TORRENT"], models=3)
    lance = W(2, 3, 9, -3, "D3+1", ["DEVASTATING WOUNDS", "PRECISION"], models=6)
    target = {"groups": [G("Intercessor", 10, 4, 3, 2), G("Captain", 1, 4, 3, 5, True, invulnerable=4)]}
    for edition in ("10e", "11e"):
        volley = compile_plan({"edition": edition, "volley": [rifles, flamer, lance], "target": target}).volley
        assert [st.phases is not None and st.t is None for st in volley.steps] == [True, True, True]


def test_mixed_fixture_matches_through_the_two_phases(monkeypatch):
    """The 1,000-request exactness fixture's mixed targets (tests/engine/exactness.py), every group forced
    through the two phases, still match the engine's earlier pmfs to 1e-12."""
    from tests.engine import exactness
    from tests.engine.test_exactness import TOLERANCE, _same, devastating_fix_applies

    monkeypatch.setattr(mixed, "worth_it", lambda *a: a[3] >= 1)
    clear_caches()
    checked = 0
    for item in exactness.load():
        req, ref = item["request"], item["result"]
        if "groups" not in req["target"] or req.get("method", "exact") != "exact" or devastating_fix_applies(req):
            continue
        got = exactness.summary(simulate(req))
        for key in ("models_killed", "damage"):
            assert _same(got[key], ref[key]) <= TOLERANCE, (key, req)
        for a, b in zip(got["groups"], ref["groups"], strict=True):
            assert _same(a, b) <= TOLERANCE, req
        for key, value in ref["stages"].items():
            assert got["stages"][key] == pytest.approx(value, rel=TOLERANCE, abs=TOLERANCE), (key, req)
        checked += 1
    assert checked > 200


def _as_group(target: dict) -> dict:
    profile = {k: v for k, v in target.items() if k not in ("keywords", "wounds_lost")}
    out = {"groups": [{"name": "only", **profile}]}
    out.update({k: v for k, v in target.items() if k in ("keywords", "wounds_lost")})
    return out


@pytest.mark.parametrize("edition", ["10e", "11e"])
@pytest.mark.parametrize(("name", "volley", "target", "context"), CASES, ids=[c[0] for c in CASES])
def test_one_group_is_the_single_profile(edition, name, volley, target, context):
    """A one-group target gives exactly the single-profile result (every brute-force case)."""
    single = simulate({"edition": edition, "volley": volley, "target": target, "context": context})
    grouped = simulate({"edition": edition, "volley": volley, "target": _as_group(target), "context": context})
    assert grouped["models_killed"] == single["models_killed"]
    assert grouped["damage"] == single["damage"]
    assert grouped["stages"] == single["stages"]
    assert grouped["groups"] == [{"name": "only", "models_killed": single["models_killed"]}]


@pytest.mark.parametrize("edition", ["10e", "11e"])
@pytest.mark.parametrize(("name", "volley", "target", "context"), CASES, ids=[c[0] for c in CASES])
def test_identical_groups_split_agree_with_one_profile(edition, name, volley, target, context):
    """Splitting a unit into two identical non-character groups runs the mixed engine and must agree
    with the single-profile engine to 1e-9."""
    if target["models"] < 2:
        pytest.skip("needs two models")
    grouped = _as_group(target)
    g = grouped["groups"][0]
    grouped["groups"] = [{**g, "name": "a", "models": 1}, {**g, "name": "b", "models": target["models"] - 1}]
    single = simulate({"edition": edition, "volley": volley, "target": target, "context": context})
    mixed = simulate({"edition": edition, "volley": volley, "target": grouped, "context": context})
    np.testing.assert_allclose(mixed["models_killed"]["pmf"], single["models_killed"]["pmf"], atol=1e-9, rtol=0)
    np.testing.assert_allclose(mixed["damage"]["pmf"], single["damage"]["pmf"], atol=1e-9, rtol=0)
    for key in single["stages"]:
        assert mixed["stages"][key] == pytest.approx(single["stages"][key], abs=1e-9), key


# ------------------------------------------------------------------------------------------------
# Exact versus Monte Carlo on hypothesis-generated mixed units (PRECISION and DEVASTATING WOUNDS in
# both editions are drawn often), within 4 standard errors.
# ------------------------------------------------------------------------------------------------

MC_TRIALS = 4000
MIXED_KEYWORDS = ["PRECISION", "DEVASTATING WOUNDS", "SUSTAINED HITS 1", "LETHAL HITS", "BLAST", "TWIN-LINKED",
                  "MELTA 1", "ANTI-INFANTRY 4+", "IGNORES COVER"]
mixed_weapon = st.fixed_dictionaries({
    "name": st.just("w"),
    "range": st.sampled_from([24, "melee"]),
    "attacks": st.sampled_from([1, 2, 3, "D3", "D6"]),
    "skill": st.sampled_from([2, 3, 4]),
    "strength": st.integers(3, 10),
    "ap": st.integers(-3, 0),
    "damage": st.sampled_from([1, 2, "D3", "D6", 3]),
    "keywords": st.lists(st.sampled_from(MIXED_KEYWORDS), max_size=3, unique=True).map(
        lambda k: k if k else ["PRECISION"]),
})
model_group = st.integers(1, 4).flatmap(lambda w: st.fixed_dictionaries({
    "name": st.just("g"),
    "models": st.integers(1, 3),
    "toughness": st.integers(3, 8),
    "save": st.integers(2, 6),
    "wounds": st.just(w),
    "character": st.booleans(),
}, optional={
    "invulnerable": st.sampled_from([None, 4, 5]),
    "feel_no_pain": st.sampled_from([None, 5, 6]),
    "feel_no_pain_mortal": st.sampled_from([None, 4]),
    "damage_reduction": st.sampled_from([0, 1]),
    "damage_set": st.sampled_from([None, 1, 2]),
    "halve_damage": st.booleans(),
}))
mixed_request = st.fixed_dictionaries({
    "edition": st.sampled_from(["10e", "11e"]),
    "volley": st.lists(st.fixed_dictionaries({"models": st.integers(1, 3), "weapon": mixed_weapon}),
                       min_size=1, max_size=3),
    "target": st.fixed_dictionaries({
        "groups": st.lists(model_group, min_size=2, max_size=3).map(
            lambda gs: [dict(g, name=f"g{i}") for i, g in enumerate(gs)]),
        "keywords": st.sampled_from([[], ["INFANTRY"]]),
    }),
    "context": st.fixed_dictionaries({}, optional={"cover": st.booleans(), "half_range": st.booleans()}),
    "seed": st.integers(0, 2**31),
})


COMPARED: list[str] = []


def _sd(pmf) -> float:
    p = np.asarray(pmf)
    x = np.arange(p.size)
    mean = float(np.dot(x, p))
    return math.sqrt(max(float(np.dot((x - mean) ** 2, p)), 0.0))


@given(mixed_request)
@settings(max_examples=45, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
def test_mixed_exact_agrees_with_montecarlo(req):
    ex = simulate(dict(req, method="exact"))  # small enough to be within every exact budget
    COMPARED.append(req["edition"])
    mc = simulate(dict(req, method="montecarlo", trials=MC_TRIALS))
    n = MC_TRIALS
    for key in ("models_killed", "damage"):
        se = _sd(ex[key]["pmf"]) / math.sqrt(n)
        assert abs(mc[key]["mean"] - ex[key]["mean"]) <= 4 * se + 1e-9, (key, mc[key]["mean"], ex[key]["mean"])
    for key, value in ex["stages"].items():
        se = mc["standard_error"]["stages"][key]
        assert abs(mc["stages"][key] - value) <= 4 * se + 1e-9, (key, mc["stages"][key], value)
    for ge, gm in zip(ex["groups"], mc["groups"], strict=True):
        se = _sd(ge["models_killed"]["pmf"]) / math.sqrt(n)
        assert abs(gm["models_killed"]["mean"] - ge["models_killed"]["mean"]) <= 4 * se + 1e-9, ge["name"]
        assert len(gm["models_killed"]["pmf"]) == len(ge["models_killed"]["pmf"])
    assert math.fsum(ex["models_killed"]["pmf"]) == pytest.approx(1.0, abs=1e-9)


# ------------------------------------------------------------------------------------------------
# Hostile input
# ------------------------------------------------------------------------------------------------

def _req(target: dict) -> dict:
    return {"volley": [W(2, 3, 4, 0, 1)], "target": target}


@pytest.mark.parametrize(("target", "field"), [
    ({"groups": []}, "target.groups"),
    ({"groups": "Captain"}, "target.groups"),
    ({"groups": [G(f"g{i}", 1, 4, 3, 1) for i in range(21)]}, "target.groups"),
    ({"groups": [G("a", 0, 4, 3, 1), G("b", 1, 4, 3, 1)]}, "target.groups[0].models"),
    ({"groups": [G("a", 60, 4, 3, 1), G("b", 41, 4, 3, 1)]}, "target.groups"),
    ({"groups": [G("a", 1, 4, 3, 1), {"name": "b", "models": 1}]}, "target.groups[1].toughness"),
    ({"groups": [G("a", 1, 4, 3, 1), G("b", 1, 4, 3, 1, colour="red")]}, "target.groups[1].colour"),
    ({"groups": [G("a", 1, 4, 3, 1), G("", 1, 4, 3, 1)]}, "target.groups[1].name"),
    ({"groups": [G("a", 1, 4, 3, 1), G("b", 1, 4, 3, 1, character="yes")]}, "target.groups[1].character"),
    ({"groups": [G("a", 1, 4, 3, 2), G("b", 1, 4, 3, 1)], "wounds_lost": 2}, "target.wounds_lost"),
    ({"groups": [G("a", 1, 4, 3, 2)], "toughness": 4}, "target.toughness"),
    ({"groups": [G("a", 1, 4, 3, 2, damage_set=0)]}, "target.groups[0].damage_set"),
    ({"models": 1, "toughness": 4, "save": 3, "wounds": 2, "halve_damage": 1}, "target.halve_damage"),
])
def test_bad_groups_name_the_field(target, field):
    with pytest.raises(RequestError) as info:
        simulate(_req(target))
    assert info.value.field == field


def test_bad_groups_exit_2_with_the_field(tmp_path):
    """Through the real CLI: no models, and more than 20 groups, exit 2 with the field named."""
    for target in ({"groups": []}, {"groups": [G(f"g{i}", 1, 4, 3, 1) for i in range(limits.MAX_TARGET_GROUPS + 1)]}):
        p = subprocess.run([sys.executable, "-m", "engine", "-"], input=json.dumps(_req(target)), text=True,
                           capture_output=True, cwd=Path(__file__).resolve().parents[2], timeout=60)
        assert p.returncode == 2, p.stdout
        out = json.loads(p.stdout or p.stderr)
        assert out["field"] == "target.groups" and "limit" in out["error"] or "models" in out["error"]


def test_wounds_lost_goes_to_the_first_non_character():
    out = simulate({"volley": [W(1, 2, 8, -3, 1, ["TORRENT"])],
                    "target": {"groups": [G("c", 1, 4, 7, 2, True), G("b", 1, 4, 7, 2)], "wounds_lost": 1}})
    # the one automatic wound (S8 vs T4 wounds on 2+, no save) finishes the wounded bodyguard
    assert out["groups"][1]["models_killed"]["pmf"][1] == pytest.approx(5 / 6)
    assert out["groups"][0]["models_killed"]["mean"] == 0.0


def test_huge_mixed_unit_is_refused_not_run():
    groups = [G("b", 90, 4, 3, 10), G("c", 10, 4, 3, 10, True)]
    with pytest.raises(RequestError) as info:
        simulate(_req({"groups": groups}))
    assert info.value.field == "target.groups"
    mc = simulate(dict(_req({"groups": groups}), method="montecarlo", trials=200, seed=1))
    assert [g["name"] for g in mc["groups"]] == ["b", "c"]


def test_mixed_agreement_covered_enough_units():
    """The property test above compared at least 40 mixed units (it runs first in this module)."""
    if not COMPARED:
        pytest.skip("the property test did not run in this session (selected alone)")
    assert len(COMPARED) >= 40 and {"10e", "11e"} <= set(COMPARED)


group_values = {
    "models": st.integers(-1, 120) | st.text(max_size=3),
    "toughness": st.integers(-1, 30) | st.none(),
    "save": st.integers(0, 9),
    "wounds": st.integers(-1, 250),
    "invulnerable": st.none() | st.integers(0, 8),
    "feel_no_pain": st.none() | st.integers(0, 8),
    "feel_no_pain_mortal": st.none() | st.integers(0, 8) | st.booleans(),
    "damage_reduction": st.integers(-1, 12),
    "damage_set": st.none() | st.integers(-1, 300),
    "halve_damage": st.booleans() | st.integers(0, 1),
    "character": st.booleans() | st.none(),
    "name": st.text(max_size=130) | st.integers(),
}


@given(st.lists(st.fixed_dictionaries({}, optional=group_values), max_size=22), st.sampled_from(["10e", "11e"]),
       st.sampled_from(["exact", "montecarlo"]), st.integers(-1, 4))
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_hostile_groups_give_a_result_or_a_named_error(groups, edition, method, wounds_lost):
    """Random, mostly broken model groups: a valid result (groups in order, probabilities summing to 1)
    or a RequestError whose field starts with target."""
    req = {"edition": edition, "method": method, "trials": 300, "seed": 1,
           "volley": [W(3, 3, 5, -1, "D3", ["PRECISION", "DEVASTATING WOUNDS"], models=2)],
           "target": {"groups": groups, "wounds_lost": wounds_lost}}
    try:
        out = simulate(req)
    except RequestError as exc:
        assert exc.field.startswith(("target", "method")), exc.field
        return
    assert len(out["groups"]) == len(groups)
    assert math.fsum(out["models_killed"]["pmf"]) == pytest.approx(1.0, abs=1e-9)
    for g in out["groups"]:
        assert math.fsum(g["models_killed"]["pmf"]) == pytest.approx(1.0, abs=1e-9)
    json.dumps(out, allow_nan=False)


def test_10e_pending_cap_with_differing_mortal_fnp_is_exact_below_1e12(monkeypatch):
    """With different mortal Feel No Pain values, 10e pending mortal wounds are kept up to the count the
    unit survives with probability < 1e-17; keeping the whole support instead changes nothing visible."""
    from engine import mixed, prepare

    req = {"edition": "10e",
           "volley": [W(6, 2, 10, -2, "D6+2", ["DEVASTATING WOUNDS"], models=3),
                      W(4, 2, 10, -2, "D6", ["DEVASTATING WOUNDS", "PRECISION"], models=2)],
           "target": {"groups": [G("b", 2, 4, 3, 2, feel_no_pain_mortal=6), G("c", 1, 4, 3, 3, True, feel_no_pain=4)]}}
    parsed, groups = prepare(req)
    cap = mixed._pending_cap(groups, parsed.target, False)
    cut = simulate(req)
    monkeypatch.setattr(mixed, "_fnp_cap", lambda wounds, keep: 10**6)
    support = mixed._pending_cap(groups, parsed.target, False)
    assert cap < support  # the cut is really exercised
    whole = simulate(req)
    np.testing.assert_allclose(cut["models_killed"]["pmf"], whole["models_killed"]["pmf"], atol=1e-12, rtol=0)
    np.testing.assert_allclose(cut["damage"]["pmf"], whole["damage"]["pmf"], atol=1e-12, rtol=0)
