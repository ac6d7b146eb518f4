"""Operator rows from the allocation chain's powers, cached by value (engine.powers; issue 22, cold path)."""

from __future__ import annotations

import numpy as np
import pytest

import engine
from engine import exact, plan, powers
from engine.lru import STAGES
from tests.engine import exactness


def _bolters(**context):
    weapon = {"name": "w", "range": 24, "attacks": 2, "skill": 3, "strength": 4, "ap": -1, "damage": 2,
              "keywords": []}
    return {"edition": "11e", "volley": [{"models": 10, "weapon": weapon}], "context": context,
            "target": {"models": 5, "toughness": 4, "save": 3, "wounds": 3}}


@pytest.mark.parametrize(("models", "wounds", "loss"), [(1, 1, [0.0, 1.0]), (10, 2, [0.2, 0.5, 0.3]),
                                                        (3, 13, [0.1] + [0.15] * 6), (2, 16, [0.0, 0.0, 1.0])])
def test_transition_is_the_chain_model_by_model(models, wounds, loss):
    """exact.dense_matrix (two index assignments) against the matrix written out block by block."""
    m = exact.step_matrix(np.array(loss), wounds)
    size = models * wounds + 1
    want = np.zeros((size, size))
    for k in range(models):
        block = slice(k * wounds, (k + 1) * wounds)
        want[block, block] = m[:, :wounds]
        want[block, (k + 1) * wounds] += m[:, wounds]
    want[-1, -1] = 1.0
    np.testing.assert_array_equal(powers.transition(np.array(loss), wounds, models), want)


def test_rows_from_powers_are_the_renewal_chain():
    """Every single-profile group of the fixture's first 300 requests that fits the powers path gives the
    rows the allocation chain gives from the W unit states, to 1e-12 - devastating (two-axis) groups too."""
    seen = {"one axis": 0, "two axes": 0}
    devastating = []  # 11e DEVASTATING WOUNDS against damage modifiers: mortal wounds inflict something else
    for fnp, dr in ((None, 1), (5, 1), (6, 0)):
        req = _bolters()
        req["volley"][0]["weapon"].update(damage="D3", keywords=["DEVASTATING WOUNDS"])
        req["target"].update(damage_reduction=dr, feel_no_pain=fnp, feel_no_pain_mortal=4 if dr == 0 else None)
        devastating.append({"request": req})
    for item in exactness.load()[:300] + devastating:
        p = engine.compile(item["request"])
        if p.ops is None:
            continue
        t = p.request.target
        unit = np.zeros((t.wounds, t.models * t.wounds + 1))
        unit[np.arange(t.wounds), np.arange(t.wounds)] = 1.0
        for g in p.groups:
            gd = exact.group_distribution(g, g.fnp_mortal == g.fnp and exact.same_damage(g))
            rows = powers.group_rows(gd, g, t)
            if rows is None:
                continue
            seen["one axis" if gd.collapsed or gd.joint.shape[1] == 1 else "two axes"] += 1
            np.testing.assert_allclose(rows, exact.allocate_group(unit, gd, g, t, False), rtol=0, atol=1e-12)
    assert seen["one axis"] > 100 and seen["two axes"] >= 4, seen


def test_a_seen_damage_stage_is_reused_and_results_do_not_depend_on_the_cache():
    """Another hit modifier or re-rolls meet the same damage stage: no new powers are built. A request gives
    the same bits whether its powers were built for it or by another request before it."""
    plan.CACHE.clear()
    STAGES.clear()
    first = engine.simulate(_bolters())
    built = len(STAGES)
    assert built >= 1
    plan.CACHE.clear()
    other = _bolters(hit_modifier=1, reroll_wounds="ones")
    engine.simulate(other)
    assert len(STAGES) == built + 1  # the new group's rows; no new powers or one-attack matrix
    plan.CACHE.clear()
    STAGES.clear()
    engine.simulate(other)
    plan.CACHE.clear()
    assert engine.simulate(_bolters()) == first


def test_a_large_target_keeps_the_renewal_mixture():
    req = _bolters()
    req["target"] = dict(req["target"], models=30, wounds=3)
    p = engine.compile(req)
    assert not powers.fits(p.request.target, 1)
    assert isinstance(p.ops[0], plan._Rows)  # built by exact.renewal_mixture


def test_a_group_seen_in_another_request_reuses_its_rows():
    """Rows are kept by what they depend on: another weapon name, wounds already lost, target keywords
    that change nothing or a second weapon group next to it reuse them; the bits are those of a compile
    from empty caches."""
    base = _bolters()
    variants = [dict(base, target=dict(base["target"], wounds_lost=1, keywords=["INFANTRY"])),
                dict(base, volley=[dict(base["volley"][0], weapon=dict(base["volley"][0]["weapon"], name="other"))]),
                dict(base, volley=base["volley"] + [{"models": 1, "weapon": dict(base["volley"][0]["weapon"], damage=3)}])]
    fresh = []
    for req in variants:
        plan.clear_caches()
        fresh.append(engine.simulate(req))
    plan.clear_caches()
    first = engine.compile(base)
    for req, want in zip(variants, fresh, strict=True):
        p = engine.compile(req)
        assert p.ops[0] is first.ops[0]
        assert p.run() == want


def test_request_parts_are_reused_and_an_invalid_part_is_refused_every_time():
    from engine import request

    plan.clear_caches()
    a = request.validate(_bolters())
    b = request.validate(_bolters(cover=True))
    assert b.groups[0].weapon is a.groups[0].weapon and b.target is a.target and b.context != a.context
    bad = _bolters()
    bad["volley"][0]["weapon"]["skill"] = 7
    for _ in range(2):
        with pytest.raises(engine.RequestError) as err:
            engine.compile(bad)
        assert err.value.field == "volley[0].weapon.skill"
