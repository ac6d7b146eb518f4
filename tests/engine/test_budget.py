"""Bounded work (issue 9, Build 2): the cost model refuses what would break the budget, and a small,
derandomised version of the budget search (bench/bench_budget.py) runs here. Each candidate runs in a
forked child under RLIMIT_AS, so a wrong estimate fails that child, never this test run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench.bench_budget import edge_candidates, measure_all, search
from bench.budget import BUDGET_BYTES, Prober
from engine import RequestError, limits, prepare
from engine.api import estimate

ROOT = Path(__file__).resolve().parents[2]
BIG = json.loads((ROOT / "bench" / "issue9_big_request.json").read_text())


def test_the_issue_request_is_refused_before_any_work_with_a_clear_message() -> None:
    with pytest.raises(RequestError) as info:
        prepare(BIG)
    assert info.value.field == "method"
    assert "too large to compute exactly" in info.value.message and "montecarlo" in info.value.message
    assert "MB" in info.value.message  # says what it would have cost


@pytest.mark.parametrize(("damage", "grows"), [("D6", False), ("10D6", True), ("10D6+200", True)])
def test_the_estimate_grows_with_the_damage_dice(damage: str, grows: bool) -> None:
    """Regression: the old work estimate ignored the damage dice size (10e pending mortal-wound rows)."""
    def cost(d: str) -> float:
        req = {"edition": "10e", "volley": [
            {"models": 5, "weapon": {"attacks": 4, "skill": 3, "strength": 5, "damage": d,
                                     "keywords": ["DEVASTATING WOUNDS"]}},
            {"models": 5, "weapon": {"attacks": 4, "skill": 3, "strength": 5, "damage": d,
                                     "keywords": ["DEVASTATING WOUNDS"]}}],
            "target": {"models": 10, "toughness": 4, "save": 4, "wounds": 10}}
        from engine.request import validate
        from engine.rules import resolve
        r = validate(req)
        return estimate(r, [resolve(g, r.target, r.context, r.attacker, r.edition) for g in r.groups])["bytes"]
    assert (cost(damage) > cost("1")) is grows or damage == "D6"


def test_montecarlo_trials_are_bounded_by_time_and_memory() -> None:
    req = {"method": "montecarlo", "trials": limits.MAX_TRIALS, "seed": 1,
           "volley": [{"models": 10, "weapon": {"attacks": 10, "skill": 3, "strength": 4, "damage": 1,
                                                "keywords": ["SUSTAINED HITS D6"]}}],
           "target": {"models": 10, "toughness": 4, "save": 4, "wounds": 2}}
    with pytest.raises(RequestError) as info:
        prepare(req)
    assert info.value.field == "trials" and "fewer trials" in info.value.message


def test_a_batch_has_an_overall_limit() -> None:
    one = {"volley": [{"models": 40, "weapon": {"attacks": "2D6", "skill": 3, "strength": 5, "damage": "D6",
                                                "keywords": ["SUSTAINED HITS D3"]}}],
           "target": {"models": 20, "toughness": 4, "save": 4, "wounds": 40}}
    each = estimate(*prepare(one))["seconds"]
    count = min(limits.MAX_BATCH, int(limits.MAX_BATCH_ESTIMATED_SECONDS / each) + 2)
    assert count * each > limits.MAX_BATCH_ESTIMATED_SECONDS, "pick a costlier request for this test"
    p = subprocess.run([sys.executable, "-m", "engine", "-"], input=json.dumps([one] * count), capture_output=True,
                       text=True, cwd=ROOT, timeout=120)
    assert p.returncode == 2, p.stderr
    err = json.loads(p.stdout)
    assert "batch limit" in err["error"] and err["field"].startswith("[")


def test_bounded_budget_search_finds_no_accepted_request_beyond_memory() -> None:
    """A few generated requests plus the accepted ones closest to the limits, measured for real.
    Memory is asserted (peak RSS, no MemoryError under RLIMIT_AS); the times are printed, not asserted
    (shared machine): bench/bench_budget.py reports them against the 2 s budget."""
    with Prober() as prober:
        found = search(4, 9, prober, quiet=True)
        measure_all(edge_candidates(200, 9, 2), prober, found)
    assert found["measured"] >= 3
    for m in [found["worst_rss"], found["worst_time"], *found["over_budget"]]:
        if m is None:
            continue
        assert not m.get("killed") and not m.get("memory_error"), m
        assert m["peak_rss"] <= BUDGET_BYTES, m
    print(f"worst time {found['worst_time'].get('seconds', 0):.2f} s (budget 2 s)")
