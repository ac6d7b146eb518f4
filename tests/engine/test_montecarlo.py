"""Exact engine versus Monte Carlo on hypothesis-generated scenarios, within 4 standard errors.

The standard error used for models killed, damage and P(wipe) is the true sampling error computed
from the exact distribution's variance (so a rare event the sample happened to miss cannot produce a
zero SE); the stage means use the sample's own SE. Both the hypothesis examples and the Monte Carlo
seeds are fixed, so the test is deterministic.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import simulate

TRIALS = 3000
Z = 4.0

KEYWORDS = ["SUSTAINED HITS 1", "SUSTAINED HITS D3", "LETHAL HITS", "DEVASTATING WOUNDS", "TORRENT", "BLAST",
            "BLAST 2", "RAPID FIRE 1", "MELTA 2", "ANTI-INFANTRY 4+", "TWIN-LINKED", "HEAVY", "LANCE",
            "IGNORES COVER", "HAZARDOUS", "CLEAVE 1", "INDIRECT FIRE", "LETHAL HITS: non-MONSTER/VEHICLE"]

weapon = st.fixed_dictionaries({
    "name": st.just("w"),
    "range": st.sampled_from([24, "melee"]),
    "attacks": st.sampled_from([1, 2, 3, "D3", "D6", "D6+1", "2D6"]),
    "skill": st.sampled_from([None, 2, 3, 4, 5]),
    "strength": st.integers(2, 12),
    "ap": st.integers(-4, 0),
    "damage": st.sampled_from([1, 2, 3, "D3", "D6", "D3+1"]),
    "keywords": st.lists(st.sampled_from(KEYWORDS), max_size=3, unique=True),
})
group = st.fixed_dictionaries({"models": st.integers(1, 4), "weapon": weapon})
target = st.integers(1, 10).flatmap(lambda w: st.fixed_dictionaries({
    "models": st.integers(1, 8),
    "toughness": st.integers(2, 10),
    "save": st.integers(2, 7),
    "invulnerable": st.sampled_from([None, 4, 5]),
    "wounds": st.just(w),
    "feel_no_pain": st.sampled_from([None, None, 5, 6]),
    "feel_no_pain_mortal": st.sampled_from([None, None, 4]),
    "damage_reduction": st.sampled_from([0, 0, 1]),
    "keywords": st.sampled_from([[], ["INFANTRY"], ["VEHICLE"]]),
    "wounds_lost": st.integers(0, w - 1),
}))
context = st.fixed_dictionaries({}, optional={
    "half_range": st.booleans(), "stationary": st.booleans(), "charged": st.booleans(), "cover": st.booleans(),
    "hit_modifier": st.integers(-1, 1), "wound_modifier": st.integers(-1, 1), "save_modifier": st.integers(-1, 1),
    "reroll_hits": st.sampled_from([None, "ones", "failed", "non_critical"]),
    "reroll_wounds": st.sampled_from([None, "ones", "failed", "non_critical"]),
    "critical_hit": st.sampled_from([5, 6]), "critical_wound": st.sampled_from([4, 6]),
})
request = st.fixed_dictionaries({
    "edition": st.sampled_from(["10e", "11e"]),
    "volley": st.lists(group, min_size=1, max_size=3),
    "attacker": st.fixed_dictionaries({"keywords": st.sampled_from([[], ["VEHICLE"]])}),
    "target": target,
    "context": context,
    "seed": st.integers(0, 2**31),
})


def _sd_of(pmf: list[float]) -> float:
    p = np.asarray(pmf)
    x = np.arange(p.size)
    mean = float(np.dot(x, p))
    return math.sqrt(max(float(np.dot((x - mean) ** 2, p)), 0.0))


def _close(a: float, b: float, se: float) -> bool:
    return abs(a - b) <= Z * se + 1e-9


@given(request)
@settings(max_examples=45, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
def test_exact_agrees_with_montecarlo(req):
    ex = simulate(dict(req, method="exact"))
    mc = simulate(dict(req, method="montecarlo", trials=TRIALS))
    n = TRIALS
    for key in ("models_killed", "damage"):
        se = _sd_of(ex[key]["pmf"]) / math.sqrt(n)
        assert _close(mc[key]["mean"], ex[key]["mean"], se), (key, mc[key]["mean"], ex[key]["mean"], se)
    pw = ex["p_wipe"]
    assert _close(mc["p_wipe"], pw, math.sqrt(pw * (1 - pw) / n)), ("p_wipe", mc["p_wipe"], pw)
    for key, value in ex["stages"].items():
        se = mc["standard_error"]["stages"][key]
        assert _close(mc["stages"][key], value, se), (key, mc["stages"][key], value, se)
    haz_se = _sd_of(ex["attacker_mortal_wounds"]["pmf"]) / math.sqrt(n)
    assert _close(mc["attacker_mortal_wounds"]["mean"], ex["attacker_mortal_wounds"]["mean"], haz_se)
    # whole distributions: every probability within 4 binomial standard errors
    for key in ("models_killed", "damage"):
        for pe, pm in zip(ex[key]["pmf"], mc[key]["pmf"], strict=True):
            assert _close(pm, pe, math.sqrt(pe * (1 - pe) / n)) or pe < 1e-3, (key, pe, pm)
    assert ex["ignored_keywords"] == mc["ignored_keywords"]


def test_montecarlo_standard_error_is_honest():
    """The reported SE matches the exact distribution's sd / sqrt(trials) within 10%."""
    req = {"edition": "11e", "seed": 7, "method": "montecarlo", "trials": 20000,
           "volley": [{"models": 5, "weapon": {"name": "w", "range": 24, "attacks": "D6", "skill": 3, "strength": 5,
                                               "ap": -1, "damage": "D3", "keywords": ["SUSTAINED HITS 1"]}}],
           "target": {"models": 6, "toughness": 4, "save": 4, "wounds": 2}}
    mc = simulate(req)
    ex = simulate(dict(req, method="exact"))
    for key in ("models_killed", "damage"):
        true_se = _sd_of(ex[key]["pmf"]) / math.sqrt(20000)
        assert mc["standard_error"][key] == pytest.approx(true_se, rel=0.1)


def test_montecarlo_is_seeded():
    req = {"method": "montecarlo", "trials": 500, "seed": 3,
           "volley": [{"weapon": {"attacks": "2D6", "skill": 4, "strength": 4, "damage": 1}}],
           "target": {"models": 5, "toughness": 4, "save": 5, "wounds": 1}}
    assert simulate(req) == simulate(req)
    assert simulate(dict(req, seed=4)) != simulate(req)


def test_single_trial_has_null_standard_error():
    import json

    req = {"method": "montecarlo", "trials": 1, "seed": 1,
           "volley": [{"weapon": {"attacks": 2, "skill": 4, "strength": 4, "damage": 1}}],
           "target": {"models": 2, "toughness": 4, "save": 5, "wounds": 1}}
    out = simulate(req)
    assert out["standard_error"]["models_killed"] is None
    json.dumps(out, allow_nan=False)
