"""Mixed targets (contract 1b): exact engine versus per-model brute-force enumeration to 1e-9, and the
one-group form against the single-profile engine."""

from __future__ import annotations

import numpy as np
import pytest

from engine import simulate
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
