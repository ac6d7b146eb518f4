"""Compiled plans and batches (engine.plan, engine.batch; issue 22)."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

import engine
from engine import RequestError, exact, plan, powers
from engine.numbers import parse_json_int
from tests.engine import exactness


def W(attacks, skill, s, ap, d, kw=(), models=1, rng=24):
    return {"models": models, "weapon": {"name": "w", "range": rng, "attacks": attacks, "skill": skill,
                                         "strength": s, "ap": ap, "damage": d, "keywords": list(kw)}}


BOLTERS = {"edition": "11e", "volley": [W(2, 3, 4, -1, 1, models=10)],
           "target": {"models": 10, "toughness": 4, "save": 3, "wounds": 2}}


def test_cached_by_value_and_immutable():
    a = engine.compile(BOLTERS)
    assert engine.compile(json.loads(json.dumps(BOLTERS))) is a  # equal content, other objects
    assert engine.compile(json.loads(json.dumps(BOLTERS, sort_keys=True))).run() == a.run()  # other key order
    assert engine.compile(dict(BOLTERS, edition="10e")) is not a
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.cost = {}
    with pytest.raises(TypeError):
        a.cost["seconds"] = 0.0
    for op in a.ops:
        with pytest.raises(ValueError):
            op.rows[0, 0] = 1.0
    assert a.cost["seconds"] > 0 and a.run() == engine.simulate(BOLTERS)


def test_an_uncacheable_request_is_still_checked():
    """Integers too long to convert stay HugeNumber (not JSON): compiled without the cache, and refused."""
    raw = json.loads(json.dumps(BOLTERS).replace('"models": 10,', '"models": ' + "9" * 40 + ",", 1),
                     parse_int=parse_json_int)
    with pytest.raises(RequestError) as err:
        engine.compile(raw)
    assert err.value.field == "volley[0].models"


def _random_states(size: int, count: int, rng: np.random.Generator) -> np.ndarray:
    x = rng.random((count, size)) ** 4  # uneven, like real state distributions
    return x / x.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("index", range(0, 1000, 37))
def test_operator_rows_are_the_chain_from_any_state(index):
    """The compiled rows, shifted per model destroyed (plan.apply_rows), equal the allocation chain run
    on any state distribution, one at a time or as a batch, to 1e-12 (the fixture's single-profile
    requests, weapon group by weapon group)."""
    req = exactness.load()[index]["request"]
    p = engine.compile(req)
    if p.ops is None:
        pytest.skip("mixed target (engine.mixed) or 10e DEVASTATING WOUNDS (exact.run): no operator rows")
    t = p.request.target
    states = _random_states(t.models * t.wounds + 1, 4, np.random.default_rng(index))
    for op, g in zip(p.ops, p.groups, strict=True):
        batch = op.apply(states, t)
        collapse_ok = g.fnp_mortal == g.fnp and exact.same_damage(g)
        gd = exact.group_distribution(g, collapse_ok)
        for s, got in zip(states, batch, strict=True):
            want = exact.allocate_group(s, gd, g, t, False)
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
            np.testing.assert_allclose(op.apply(s, t), got, rtol=0, atol=1e-15)


def test_direct_groups_give_the_same_results(monkeypatch):
    """A group whose rows would cost too much is evaluated on the state directly: same pmfs."""
    fixture = [item for item in exactness.load()[:200] if "groups" not in item["request"]["target"]][:40]
    rows = [engine.simulate(item["request"]) for item in fixture]
    monkeypatch.setattr(plan, "ROW_OPERATOR_MAX_SECONDS", -1.0)
    monkeypatch.setattr(powers, "MAX_STATES", 0)
    plan.clear_caches()
    try:
        for item, want in zip(fixture, rows, strict=True):
            p = engine.compile(item["request"])
            assert p.ops is None or all(isinstance(op, plan._Direct) for op in p.ops)
            got = p.run()
            for key in ("models_killed", "damage"):
                np.testing.assert_allclose(got[key]["pmf"], want[key]["pmf"], rtol=0, atol=1e-12)
    finally:
        plan.clear_caches()


def test_plan_final_takes_a_batch_of_starting_states():
    """One weapon against many states of the same target profile (wounds already lost) in one call."""
    p = engine.compile(BOLTERS)
    starts = np.zeros((2, 21))
    starts[0, 0] = starts[1, 1] = 1.0
    both = p.final(starts)
    np.testing.assert_allclose(both[0], p.final(), atol=1e-15)
    wounded = engine.compile(dict(BOLTERS, target=dict(BOLTERS["target"], wounds_lost=1)))
    np.testing.assert_allclose(both[1], wounded.final(), atol=1e-12)


def test_evaluate_batch_matches_one_by_one():
    reqs = [item["request"] for item in exactness.load()[:30]]
    batch = engine.evaluate_batch(reqs)
    for i, req in enumerate(reqs):
        r = engine.simulate(req)
        assert batch.results[i] == r
        assert batch.killed_mean[i] == r["models_killed"]["mean"]
        assert batch.p_wipe[i] == r["p_wipe"]
        assert batch.damage_mean[i] == r["damage"]["mean"]
        assert batch.models[i] == len(r["models_killed"]["pmf"]) - 1


def test_a_batch_is_refused_before_any_work():
    """The summed estimate is checked over the whole list first; an invalid request names its index."""
    bad = dict(BOLTERS, volley=[W("10D6+10", 3, 4, -1, 1, models=100)])
    with pytest.raises(RequestError) as err:
        engine.evaluate_batch([BOLTERS, bad])
    assert err.value.field.startswith("[1]")
    with pytest.raises(RequestError) as err:
        engine.evaluate_batch([BOLTERS] * 3, max_seconds=engine.compile(BOLTERS).cost["seconds"] * 2.5)
    assert err.value.field == "[2]" and "batch limit" in err.value.message
    est = engine.estimate_batch([BOLTERS] * 3)
    assert est["seconds"] == pytest.approx(3 * engine.compile(BOLTERS).cost["seconds"])
    with pytest.raises(RequestError):
        engine.evaluate_batch([])


def test_cache_is_bounded_by_count_and_bytes():
    cache = plan.Cache(max_entries=2, max_bytes=10**9)
    plans = [engine.compile(dict(BOLTERS, target=dict(BOLTERS["target"], models=m))) for m in (3, 4, 5)]
    for i, p in enumerate(plans):
        cache.put(b"%d" % i, p)
    assert len(cache) == 2 and cache.get(b"0") is None and cache.get(b"2") is plans[2]
    small = plan.Cache(max_entries=10, max_bytes=plans[0].nbytes + plans[1].nbytes)
    for i, p in enumerate(plans):
        small.put(b"%d" % i, p)
    assert small.get(b"0") is None and small.get(b"2") is plans[2]
    by_count = plan.Cache(max_entries=2)  # values without nbytes: bounded by count only
    for i in range(3):
        by_count.put(i, ("part", i))
    assert len(by_count) == 2 and by_count.get(0) is None and by_count.get(2) == ("part", 2)


def test_a_refused_batch_builds_nothing():
    """Checks first, builds after: a batch refused on its summed estimate leaves no plan behind, and a
    list longer than the limit is refused before any request is read."""
    plan.CACHE.clear()
    reqs = [dict(BOLTERS, target=dict(BOLTERS["target"], models=m)) for m in (2, 3, 4)]
    one = plan.check(reqs[0]).cost["seconds"]
    with pytest.raises(RequestError) as err:
        engine.evaluate_batch(reqs, max_seconds=one * 2.2)
    assert err.value.field == "[2]"
    assert len(plan.CACHE) == 0 and all(plan.cached(r)[1] is None for r in reqs)
    with pytest.raises(RequestError) as err:
        engine.evaluate_batch([None] * (engine.limits.MAX_BATCH_REQUESTS + 1))
    assert err.value.field == "" and f"{engine.limits.MAX_BATCH_REQUESTS:,}" in err.value.message
    heavy = dict(BOLTERS, volley=[W("10D6+10", 3, 4, -1, "10D6+10", models=10)] * 5)
    with pytest.raises(RequestError) as err:  # every weapon at 10D6+10: over a limit, named
        engine.evaluate_batch([heavy] * 30)
    assert err.value.field.startswith("[0]") and "limit" in err.value.message


def test_a_plan_keeps_a_bounded_amount_of_rows(monkeypatch):
    """Operator rows take W x S floats per group: past the plan's budget the remaining groups run on the
    state directly, with the same results."""
    req = {"edition": "11e", "target": {"models": 20, "toughness": 8, "save": 3, "wounds": 10},
           "volley": [W(2, 3, 10, -2, "D6+2", models=2) for _ in range(5)]}
    want = engine.simulate(req)
    monkeypatch.setattr(plan, "ROW_OPERATOR_MAX_BYTES", 20_000)  # rows here: 10 x 201 x 8 = 16,080 bytes
    plan.CACHE.clear()
    try:
        p = engine.compile(req)
        assert [type(op).__name__ for op in p.ops] == ["_Rows", "_Rows", "_Direct", "_Direct", "_Direct"]
        got = p.run()
    finally:
        plan.CACHE.clear()
    np.testing.assert_allclose(got["models_killed"]["pmf"], want["models_killed"]["pmf"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(got["damage"]["pmf"], want["damage"]["pmf"], rtol=0, atol=1e-12)


def test_a_10e_devastating_volley_keeps_its_distributions():
    """A single-profile 10e DEVASTATING WOUNDS volley (its pending axis spills over: no operator rows)
    builds its groups' distributions once, read-only; each run allocates on them and gives what
    engine.exact.run builds from scratch."""
    req = {"edition": "10e", "volley": [W(3, 3, 5, -1, 2, ["DEVASTATING WOUNDS"], models=5), W(2, 3, 4, 0, 1, models=5)],
           "target": {"models": 5, "toughness": 5, "save": 3, "wounds": 3, "feel_no_pain": 6}}
    p = engine.compile(req)
    assert p.ops is None and p.volley is None and len(p.distributions) == 2
    assert all(not gd.joint.flags.writeable for gd in p.distributions)
    fresh = exact.run(list(p.groups), p.request.target, True)
    got = p.run()
    np.testing.assert_allclose(got["models_killed"]["pmf"], fresh["killed"], atol=1e-15, rtol=0)
    np.testing.assert_allclose(got["damage"]["pmf"], fresh["damage"], atol=1e-15, rtol=0)
    assert p.run() == got
