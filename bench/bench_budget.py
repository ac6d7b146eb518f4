"""Budget search (issue 9, Build 2): look for requests the engine accepts that break the budget.

`.venv/bin/python bench/bench_budget.py [--examples N] [--seed S]`

Budget for one engine request on this 2-core machine: under 2 s and under 256 MB (peak RSS of the
process that computes it). Hypothesis generates contract-1 requests biased towards the cost drivers
(many attack dice, SUSTAINED HITS D6, DEVASTATING WOUNDS in 10e with large damage dice, big targets,
Feel No Pain that differs for mortal wounds, several groups, Monte Carlo with many trials). Every
request is first checked in-process (cheap); each accepted one is measured in a forked copy of a warm
interpreter under RLIMIT_AS (bench/budget.py), and hypothesis is steered (`target`) towards the
largest measured time and memory. Prints the worst accepted request found next to the budget, and
the estimate-to-measurement ratios (the cost model in engine/cost.py should over-estimate).
The machine is shared by ~9 engineers: times include their load.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, seed, settings, target
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.budget import BUDGET_BYTES, BUDGET_SECONDS, Prober, over_budget  # noqa: E402
from engine import RequestError, prepare  # noqa: E402

DICE = st.sampled_from(["1", "2", "3", "6", "10", "D3", "D6", "2D6", "3D6", "D6+2", "10D6", "10D6+200", "200",
                        "D3+3", "5D6+20", "40", "100"])


@st.composite
def keywords(draw: st.DrawFn) -> list[str]:
    pool = ["SUSTAINED HITS 1", "SUSTAINED HITS 2", "SUSTAINED HITS D3", "SUSTAINED HITS D6", "LETHAL HITS",
            "DEVASTATING WOUNDS", "TWIN-LINKED", "TORRENT", "BLAST", "RAPID FIRE 1", "RAPID FIRE D6", "MELTA 2",
            "MELTA D6", "ANTI-INFANTRY 4+", "HAZARDOUS", "HEAVY", "LANCE", "CLEAVE 2"]
    return draw(st.lists(st.sampled_from(pool), max_size=5, unique=True))


@st.composite
def requests(draw: st.DrawFn) -> dict[str, Any]:
    groups = []
    for _ in range(draw(st.integers(1, 4))):
        groups.append({"models": draw(st.sampled_from([1, 2, 5, 10, 20, 50, 100])),
                       "weapon": {"range": 24, "attacks": draw(DICE), "skill": draw(st.integers(2, 6)),
                                  "strength": draw(st.sampled_from([3, 4, 8, 12, 20, 100])),
                                  "ap": draw(st.integers(-6, 0)), "damage": draw(DICE),
                                  "keywords": draw(keywords())}})
    wounds = draw(st.sampled_from([1, 2, 3, 5, 10, 16, 40, 100, 200]))
    tgt: dict[str, Any] = {"models": draw(st.sampled_from([1, 2, 3, 5, 10, 20, 50, 100])),
                           "toughness": draw(st.sampled_from([3, 4, 8, 12])), "save": draw(st.integers(2, 7)),
                           "wounds": wounds}
    if draw(st.booleans()):
        tgt["feel_no_pain"] = draw(st.integers(2, 6))
    if draw(st.booleans()):
        tgt["feel_no_pain_mortal"] = draw(st.integers(2, 6))
    if draw(st.integers(0, 3)) == 0:  # a mixed unit (contract 1b): bodyguard groups and characters
        mixed = []
        for i in range(draw(st.integers(1, 3))):
            mixed.append({"name": f"g{i}", "models": draw(st.sampled_from([1, 2, 5, 10])),
                          "toughness": tgt["toughness"], "save": tgt["save"],
                          "wounds": draw(st.sampled_from([1, 2, 3, 5, 10, 20])), "character": i > 0 and draw(st.booleans())})
        tgt = {"groups": mixed}
    req: dict[str, Any] = {"edition": draw(st.sampled_from(["10e", "11e"])), "volley": groups, "target": tgt}
    if draw(st.integers(0, 4)) == 0:
        req["method"] = "montecarlo"
        req["trials"] = draw(st.sampled_from([1000, 10_000, 100_000, 1_000_000]))
        req["seed"] = 1
    return req


def search(examples: int, rng_seed: int, prober: Prober, *, quiet: bool = False) -> dict[str, Any]:
    """Run the search; returns the worst measurements and counts."""
    found: dict[str, Any] = {"measured": 0, "refused": 0, "over_budget": [], "worst_time": None,
                             "worst_rss": None, "ratios": []}

    @seed(rng_seed)
    @settings(max_examples=examples, deadline=None, database=None, phases=[Phase.generate, Phase.target],
              suppress_health_check=list(HealthCheck))
    @given(requests())
    def probe(request: dict[str, Any]) -> None:
        try:
            prepare(request)
        except RequestError:
            found["refused"] += 1
            return
        m = prober.measure(request)
        m["request"] = request
        found["measured"] += 1
        if not m.get("accepted"):
            return
        target(m.get("seconds", 0.0) / BUDGET_SECONDS, label="time / budget")
        target(m.get("peak_rss", 0) / BUDGET_BYTES, label="rss / budget")
        tally(found, m, quiet=quiet)

    probe()
    return found


def edge_candidates(examples: int, rng_seed: int, keep: int) -> list[dict[str, Any]]:
    """The accepted requests whose estimate is closest to the limits, out of `examples` generated
    (checked in-process only, ~1 ms each): where a wrong cost model would show first."""
    from engine import limits
    from engine.api import estimate

    best: list[tuple[float, int, dict[str, Any]]] = []

    @seed(rng_seed)
    @settings(max_examples=examples, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(requests())
    def collect(request: dict[str, Any]) -> None:
        try:
            est = estimate(*prepare(request))
        except RequestError:
            return
        score = max(est["seconds"] / limits.MAX_ESTIMATED_SECONDS, est["bytes"] / limits.MAX_ESTIMATED_BYTES)
        best.append((score, len(best), request))
        best.sort(key=lambda x: (-x[0], x[1]))
        del best[keep:]

    collect()
    return [r for _, _, r in best]


def tally(found: dict[str, Any], m: dict[str, Any], *, quiet: bool = False) -> None:
    """Record one measurement: estimate/actual ratio, worst time and RSS so far, and any over budget."""
    secs, rss = m.get("seconds", 0.0), m.get("peak_rss", 0)
    if secs > 0.05:
        found["ratios"].append(m["estimate"]["seconds"] / secs)
    if found["worst_time"] is None or secs > found["worst_time"].get("seconds", 0):
        found["worst_time"] = m
    if found["worst_rss"] is None or rss > found["worst_rss"].get("peak_rss", 0):
        found["worst_rss"] = m
    if over_budget(m):
        found["over_budget"].append(m)
        if not quiet:
            print("OVER BUDGET:", json.dumps(m)[:600], flush=True)


def measure_all(requests_: list[dict[str, Any]], prober: Prober, found: dict[str, Any]) -> None:
    for request in requests_:
        m = prober.measure(request)
        m["request"] = request
        found["measured"] += 1
        tally(found, m)


def _line(m: dict[str, Any] | None) -> str:
    if not m:
        return "none"
    est = m.get("estimate", {})
    return (f"{m.get('seconds', 0):.2f} s, peak RSS {m.get('peak_rss', 0) / 2**20:.0f} MB "
            f"(estimated {est.get('seconds', 0):.2f} s, {est.get('bytes', 0) / 2**20:.0f} MB of arrays)\n"
            f"    {json.dumps(m['request'])[:400]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=400)
    parser.add_argument("--seed", type=int, default=9)
    parser.add_argument("--edge-pool", type=int, default=3000, help="requests generated to pick the edge cases from")
    parser.add_argument("--edge", type=int, default=40, help="accepted requests closest to the limits, measured")
    args = parser.parse_args()
    started = time.perf_counter()
    with Prober() as prober:
        big = json.loads((Path(__file__).parent / "issue9_big_request.json").read_text())
        first = prober.measure(big)
        found = search(args.examples, args.seed, prober)
        edge = edge_candidates(args.edge_pool, args.seed, args.edge)
        measure_all(edge, prober, found)
    print(f"budget search: {args.examples} examples, seed {args.seed}, {time.perf_counter() - started:.0f} s "
          f"(shared 2-core machine, loaded)")
    print("issue 9 request (A=200 D=10D6+200 10e DEVASTATING vs 4x W100): "
          + ("refused: " + first.get("refusal", "")[:160] if not first.get("accepted") else _line(first | {"request": big})))
    print(f"accepted and measured: {found['measured']} (incl. the {args.edge} closest to the limits out of "
          f"{args.edge_pool}), refused before any work: {found['refused']}")
    print(f"budget per request: {BUDGET_SECONDS:.1f} s, {BUDGET_BYTES / 2**20:.0f} MB")
    wt, wr = found["worst_time"], found["worst_rss"]
    if wt:
        print(f"worst time : {_line(wt)}\n    ratio to budget: {wt.get('seconds', 0) / BUDGET_SECONDS:.2f}")
    if wr:
        print(f"worst RSS  : {_line(wr)}\n    ratio to budget: {wr.get('peak_rss', 0) / BUDGET_BYTES:.2f}")
    ratios = sorted(found["ratios"])
    if ratios:
        print(f"estimate / measured seconds (requests over 50 ms): min {ratios[0]:.2f}, "
              f"median {ratios[len(ratios) // 2]:.2f}, max {ratios[-1]:.2f} (n={len(ratios)})")
    print(f"accepted requests over budget: {len(found['over_budget'])}")
    return 1 if found["over_budget"] else 0


if __name__ == "__main__":
    sys.exit(main())
