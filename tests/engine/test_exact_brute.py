"""Exact engine versus brute-force enumeration of every die, on tiny volleys, to 1e-9."""

from __future__ import annotations

import numpy as np
import pytest

from engine import exact, simulate
from tests.engine.brute import brute


def W(attacks, skill, s, ap, d, kw=(), rng=24, models=1):
    return {"models": models, "weapon": {"name": "w", "range": rng, "attacks": attacks, "skill": skill,
                                         "strength": s, "ap": ap, "damage": d, "keywords": list(kw)}}


def T(models, t, sv, w, **kw):
    return {"models": models, "toughness": t, "save": sv, "wounds": w, **kw}


CASES = [
    ("plain", [W(2, 3, 4, -1, 1)], T(2, 4, 3, 1), {}),
    ("D3 attacks, D3 damage", [W("D3", 4, 5, 0, "D3")], T(2, 4, 4, 2), {}),
    ("sustained D3 lethal", [W(2, 4, 4, 0, 1, ["SUSTAINED HITS D3", "LETHAL HITS"])], T(3, 4, 5, 1), {}),
    ("devastating, wounds carry", [W(2, 3, 4, -1, 2, ["DEVASTATING WOUNDS"])], T(2, 4, 3, 3, wounds_lost=1), {}),
    ("devastating spill vs no spill", [W(2, 3, 4, 0, 3, ["DEVASTATING WOUNDS"])], T(3, 4, 4, 2), {}),
    ("devastating + mortal FNP", [W(2, 3, 4, 0, "D3", ["DEVASTATING WOUNDS"])],
     T(2, 4, 4, 2, feel_no_pain=6, feel_no_pain_mortal=5), {}),
    ("FNP, damage reduction", [W(2, 3, 8, -2, "D6", [])], T(2, 4, 3, 3, feel_no_pain=5, damage_reduction=1), {}),
    ("rerolls fishing", [W(2, 4, 4, 0, 1, ["SUSTAINED HITS 1"])], T(2, 4, 4, 1),
     {"reroll_hits": "non_critical", "reroll_wounds": "ones", "critical_hit": 5}),
    ("reroll failed + modifiers", [W(2, 4, 4, 0, 1)], T(2, 5, 4, 1),
     {"reroll_hits": "failed", "hit_modifier": -2, "wound_modifier": 3}),
    ("cover + invuln", [W(2, 3, 4, -2, 1)], T(3, 4, 3, 1, invulnerable=5), {"cover": True}),
    ("cover Sv3 AP0", [W(2, 4, 4, 0, 1)], T(2, 4, 3, 1), {"cover": True, "save_modifier": 1}),
    ("blast 2, rapid fire, melta", [W(1, 4, 6, -1, 1, ["BLAST 2", "RAPID FIRE 1", "MELTA 1"])], T(5, 4, 4, 2),
     {"half_range": True}),
    ("anti + twin-linked + lance", [W(2, 4, 3, 0, 1, ["ANTI-INFANTRY 4+", "TWIN-LINKED", "LANCE"])],
     T(2, 6, 5, 1, keywords=["INFANTRY"]), {"charged": True}),
    ("torrent + heavy + conditional lethal", [W(2, None, 4, 0, 1, ["TORRENT", "LETHAL HITS: non-MONSTER/VEHICLE"])],
     T(2, 4, 5, 1), {}),
    ("indirect fire stationary", [W(2, 3, 5, 0, 1, ["INDIRECT FIRE"])], T(2, 4, 5, 1), {"stationary": True}),
    ("two groups carry over", [W(1, 3, 8, -2, "D3"), W(2, 3, 4, 0, 1, ["DEVASTATING WOUNDS"])], T(2, 4, 3, 3), {}),
    ("two models D3 + cleave", [W("D3", 3, 5, 0, 1, ["CLEAVE 1"], rng="melee", models=2)], T(5, 5, 5, 1), {}),
]


@pytest.mark.parametrize("path", ["renewal", "dense-steps", "block-steps"])
@pytest.mark.parametrize("edition", ["10e", "11e"])
@pytest.mark.parametrize(("name", "volley", "target", "context"), CASES, ids=[c[0] for c in CASES])
def test_exact_matches_enumeration(edition, name, volley, target, context, path, monkeypatch):
    """Every allocation path is checked: the renewal mixture, dense-matrix steps and per-block steps."""
    if path == "renewal":
        monkeypatch.setattr(exact, "STEP_MAX_ATTACKS", -1)
    else:
        monkeypatch.setattr(exact, "STEP_MAX_ATTACKS", 10**6)
    if path == "block-steps":
        monkeypatch.setattr(exact, "DENSE_MAX_STATES", 0)
    req = {"edition": edition, "volley": volley, "target": target, "context": context}
    got = simulate(req)
    ref = brute(req)
    np.testing.assert_allclose(got["models_killed"]["pmf"], ref["killed"], atol=1e-9, rtol=0)
    np.testing.assert_allclose(got["damage"]["pmf"], ref["damage"], atol=1e-9, rtol=0)
    for key in ("attacks", "hits", "wounds", "unsaved"):
        assert got["stages"][key] == pytest.approx(ref["stages"][key], abs=1e-9), key
    assert sum(ref["killed"]) == pytest.approx(1.0, abs=1e-12)
