"""The engine against the pmfs it gave before issue 22 (tests/engine/exactness.py), to 1e-12.

Excluded, and only those: 11e requests with a DEVASTATING WOUNDS weapon against a model with a damage
modifier, whose mortal wounds issue 22 changed (docs/rules-notes.md, "DEVASTATING WOUNDS"; tested in
tests/engine/test_rules.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from engine import simulate
from tests.engine import exactness

TOLERANCE = 1e-12
_MODIFIERS = ("damage_reduction", "damage_set", "halve_damage")


def devastating_fix_applies(req: dict[str, Any]) -> bool:
    """11e, a DEVASTATING WOUNDS weapon, and a target model whose damage modifiers it used to apply."""
    if req["edition"] != "11e":
        return False
    if not any(any("DEVASTATING" in k.upper() for k in g["weapon"]["keywords"]) for g in req["volley"]):
        return False
    profiles = req["target"].get("groups") or [req["target"]]
    return any(p.get(m) for p in profiles for m in _MODIFIERS)


def _same(a: list[float], b: list[float]) -> float:
    n = max(len(a), len(b))
    x, y = np.zeros(n), np.zeros(n)
    x[: len(a)], y[: len(b)] = a, b
    return float(np.max(np.abs(x - y)))


@pytest.fixture(scope="module")
def fixture() -> list[dict[str, Any]]:
    return exactness.load()


def test_fixture_is_the_seeded_sequence(fixture):
    """The stored requests are what the generator draws (so the fixture can be rebuilt from a reference
    commit), and they are all different."""
    assert len(fixture) == exactness.COUNT
    keys = {repr(item["request"]) for item in fixture}
    assert len(keys) == exactness.COUNT


def test_every_pmf_matches_the_reference(fixture):
    worst, excluded, compared = 0.0, 0, 0
    for i, item in enumerate(fixture):
        req, ref = item["request"], item["result"]
        if devastating_fix_applies(req):
            excluded += 1
            continue
        got = exactness.summary(simulate(req))
        for key in ("models_killed", "damage", "attacker_mortal_wounds"):
            diff = _same(got[key], ref[key])
            assert diff <= TOLERANCE, (i, key, diff, req)
            worst = max(worst, diff)
        for gi, (a, b) in enumerate(zip(got.get("groups", []), ref.get("groups", []), strict=True)):
            assert _same(a, b) <= TOLERANCE, (i, f"groups[{gi}]", req)
        assert got["p_wipe"] == pytest.approx(ref["p_wipe"], abs=TOLERANCE), (i, req)
        for key, value in ref["stages"].items():
            assert got["stages"][key] == pytest.approx(value, rel=TOLERANCE, abs=TOLERANCE), (i, key, req)
        compared += 1
    assert excluded < 40 and compared + excluded == exactness.COUNT
