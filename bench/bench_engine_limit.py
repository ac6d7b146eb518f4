"""Issue 22, the engine at the limit: prints measured numbers and ratios from one run.
`.venv/bin/python bench/bench_engine_limit.py [--diviner PATH/TO/W40kDiviner/src] [--repeats N]`

Targets (engines alternating call by call in this one process, CPU time per call):
- 20 single-profile 11e cases: Cogitator >= 10x faster than W40kDiviner (geometric mean of the per-case
  ratios of medians) and <= 2x the wh40kdc cruncher's time per case (the cruncher gives means only);
- a mixed unit with a leader (Captain + 10 Intercessors, 3 weapon groups, <= 60 attack dice): median <= 0.3 ms.
The garbage collector is paused while timing and run between rounds (`rounds`). Cogitator is timed three
ways, each call a `engine.simulate(request)`:
- warm: a request seen before reuses its compiled plan (the engine's cache by value);
- seen stages: the plan cache emptied before every call, the stage caches kept (per-die kernels, dice
  pmfs, the chain's powers by damage stage: engine.powers) - a new request made of stages seen before,
  such as the same weapon and target under another modifier;
- cold: every engine cache emptied before every call (`clear_engine_caches`; only the Pascal table that a
  process builds once stays) - a request of which nothing was ever seen.
Then the matchup order (`bench_pairs`): every case's weapon against every case's target (400 pairs, each
new to the plan cache), timed once each in a row as a bot meets them (stage caches filling as they go),
and from cold, alternating with W40kDiviner on the same pair.
Also printed: the engine part of a 20 x 20 matchup through `engine.evaluate_batch`, cold and warm.

W40kDiviner (GPL) is imported from a separate checkout's `src/` (bench/diviner_runner.py), the cruncher
from the installed wh40kdc package; none of their code is copied. The host is shared: the load average is
printed with the numbers.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_engine import TYPICAL, T, W, crunch_means, cruncher_input, request  # noqa: E402
from bench_mixed import CAPTAIN, INTERCESSORS, MIXED_VOLLEY, _diviner_scenario  # noqa: E402

import engine  # noqa: E402
from engine.plan import CACHE, clear_caches  # noqa: E402

# Nine more single-profile cases next to bench_engine's eleven single-group ones: 20 in all.
MORE = [
    ("guardsmen lasguns vs 10 guardsmen", [W("lasgun", 1, 4, 3, 0, 1, ["RAPID FIRE 1"], models=20)], T(10, 3, 5, 1),
     {"half_range": True}),
    ("autocannons vs 5 terminators", [W("autocannon", 2, 3, 9, -1, 3, models=3)], T(5, 5, 2, 3, inv=4), {}),
    ("storm bolters vs 20 boyz", [W("storm bolter", 2, 3, 4, 0, 1, ["RAPID FIRE 2"], models=5)], T(20, 5, 5, 1),
     {"half_range": True}),
    ("battle cannon vs 3 bikes", [W("battle cannon", "D6+3", 4, 10, -1, 3, ["BLAST"])], T(3, 6, 3, 4), {}),
    ("thunder hammers vs dreadnought", [W("thunder hammer", 3, 4, 8, -2, 2, ["DEVASTATING WOUNDS"], rng="melee",
                                          models=5)], T(1, 10, 2, 12, feel_no_pain=6), {}),
    ("hellblasters vs 10 MEQ", [W("plasma incinerator", 2, 3, 8, -3, 2, ["RAPID FIRE 1"], models=10)],
     T(10, 4, 3, 2), {"half_range": True}),
    ("scatter lasers vs 6 bikes", [W("scatter laser", 6, 3, 5, 0, 1, ["SUSTAINED HITS 1"], models=3)],
     T(6, 5, 4, 2), {}),
    ("haywire vs tank", [W("haywire", 2, 3, 4, -1, "D3", ["ANTI-VEHICLE 4+", "DEVASTATING WOUNDS"], models=4)],
     T(1, 11, 3, 14, keywords=["VEHICLE"]), {}),
    ("lascannons vs wraithknight", [W("lascannon", 1, 3, 12, -3, "D6+1", models=4)],
     T(1, 13, 2, 22, inv=5, damage_reduction=1), {}),
]


def cases() -> list[tuple[str, dict]]:
    out = [(n, request(v, t, c)) for n, v, t, c in TYPICAL if len(v) == 1]
    out += [(n, request(v, t, c)) for n, v, t, c in MORE]
    assert len(out) == 20
    return out


def diviner_form(req: dict) -> dict:
    """The request in W40kDiviner's scenario form (bench_mixed's mapping, the target as one group)."""
    t = req["target"]
    group = {"name": "t", "models": t["models"], "toughness": t["toughness"], "save": t["save"],
             "wounds": t["wounds"], "character": False, "invulnerable": t.get("invulnerable"),
             "feel_no_pain": t.get("feel_no_pain"), "damage_reduction": t.get("damage_reduction", 0)}
    sc = _diviner_scenario(req["volley"], [group], req.get("context", {}))
    sc["ref"]["keywords"] = list(t.get("keywords", [])) or ["INFANTRY"]
    return sc


def cpu(fn) -> float:
    t = time.process_time()
    fn()
    return time.process_time() - t


def timed(fn) -> float:
    """CPU time of `fn`, or of `fn[1]` after an untimed `fn[0]()` (emptying caches is not the call's cost)."""
    if isinstance(fn, tuple):
        fn[0]()
        fn = fn[1]
    return cpu(fn)


def rounds(fns: dict, repeats: int) -> dict[str, list[float]]:
    """CPU time per call, the engines alternating call by call. The garbage collector is paused while
    timing (as `timeit` does) and run between every 10 rounds, untimed: otherwise a collection that one
    engine's garbage made due is charged to whichever call allocates next."""
    times: dict[str, list[float]] = {k: [] for k in fns}
    gc.disable()
    try:
        for i in range(repeats):
            if i % 10 == 0:
                gc.collect()
            for key, fn in fns.items():
                times[key].append(timed(fn))
    finally:
        gc.enable()
    return times


def clear_engine_caches() -> None:
    """Empty every cache of the engine: plans, stages and request parts (plan.clear_caches) and every
    functools cache of an engine module (kernels, dice pmfs, keyword parsing, index tables), except the Pascal table a process
    builds once (exact._pascal)."""
    clear_caches()
    for name, mod in list(sys.modules.items()):
        if name == "engine" or name.startswith("engine."):
            for obj in vars(mod).values():
                if callable(getattr(obj, "cache_clear", None)) and getattr(obj, "__name__", "") != "_pascal":
                    obj.cache_clear()


def seen_stages(req: dict):
    """The request with the plan cache emptied first (untimed): a new request whose stages are cached."""
    return CACHE.clear, lambda: engine.simulate(req)


def cold(req: dict):
    """The request with every engine cache emptied first (untimed): nothing seen before."""
    return clear_engine_caches, lambda: engine.simulate(req)


def diviner(path: str | None):
    """W40kDiviner's runner (bench/diviner_runner.py) from a separate checkout, or None."""
    if path and (Path(path) / "attack_math.py").exists():
        from diviner_runner import runner

        return runner(path)
    print("  W40kDiviner not run: pass --diviner PATH (a checkout's src/ folder; GPL, never vendored here)")
    return None


def bench_single(prepare, repeats: int) -> None:
    print(f"== 20 single-profile 11e cases: CPU time per call, medians of {repeats} calls, engines alternating ==")
    from wh40kdc.cruncher import crunch
    from wh40kdc.data.dataset import Dataset

    ds = Dataset.embedded()
    rows = []
    print(f"  {'case':34s} {'Cogitator':>9s} {'seen':>6s} {'cold':>6s} {'Diviner':>8s} {'cruncher':>8s} "
          f"{'Div/Cog':>7s} {'Div/seen':>8s} {'Div/cold':>8s} {'Cog/crunch':>10s} {'E[killed] Cog / Div':>19s}")
    for name, req in cases():
        cin = cruncher_input(req)
        fns = {"cog": lambda q=req: engine.simulate(q), "seen": seen_stages(req), "cold": cold(req),
               "crunch": lambda c=cin: crunch(c, ds)}
        if prepare is not None:
            fns["div"] = prepare(diviner_form(req))
        for fn in fns.values():  # warm-up (and the first compile)
            timed(fn)
        engine.simulate(req)
        times = rounds(fns, repeats)
        med = {k: statistics.median(v) for k, v in times.items()}
        ours = engine.simulate(req)["models_killed"]["mean"]
        div_mean = ""
        if prepare is not None:
            res = fns["div"]()
            div_mean = f"{sum(i * p for i, p in enumerate(res['kills'])):.3f}"
        crunch_mean = float(crunch_means(crunch(cin, ds))["models_killed"])
        rows.append(med)
        div = f"{med['div'] * 1e6:6.0f}us" if "div" in med else "       -"
        ratios = [f"{med['div'] / med[k]:6.1f}x" if "div" in med else "      -" for k in ("cog", "seen", "cold")]
        print(f"  {name:34s} {med['cog'] * 1e6:7.1f}us {med['seen'] * 1e6:4.0f}us {med['cold'] * 1e6:4.0f}us "
              f"{div:>8s} {med['crunch'] * 1e6:6.1f}us {ratios[0]:>7s} {ratios[1]:>8s} {ratios[2]:>8s} "
              f"{med['cog'] / med['crunch']:9.2f}x {ours:8.3f} / {div_mean or '-':>6s}  (cruncher {crunch_mean:.3f})")
    crunch_ratios = [m["cog"] / m["crunch"] for m in rows]
    print(f"  Cogitator / cruncher per case: median {statistics.median(crunch_ratios):.2f}x, worst "
          f"{max(crunch_ratios):.2f}x (target <= 2x); seen stages: median "
          f"{statistics.median(m['seen'] / m['crunch'] for m in rows):.1f}x; cold: median "
          f"{statistics.median(m['cold'] / m['crunch'] for m in rows):.1f}x")
    verdict("<= 2x the cruncher's time, every case", max(crunch_ratios) <= 2.0, f"worst {max(crunch_ratios):.2f}x")
    if prepare is not None:
        geo = {k: statistics.geometric_mean([m["div"] / m[k] for m in rows]) for k in ("cog", "seen", "cold")}
        span = {k: (min(m["div"] / m[k] for m in rows), max(m["div"] / m[k] for m in rows)) for k in geo}
        print(f"  W40kDiviner / Cogitator, geometric mean (range): warm plan {geo['cog']:.1f}x; seen stages "
              f"{geo['seen']:.1f}x ({span['seen'][0]:.1f}x..{span['seen'][1]:.1f}x); cold {geo['cold']:.1f}x "
              f"({span['cold'][0]:.1f}x..{span['cold'][1]:.1f}x)")
        for key, label in (("cog", "warm plan"), ("seen", "seen stages: new request, known stages"),
                           ("cold", "cold: nothing seen")):
            verdict(f">= 10x faster than W40kDiviner (geometric mean, {label})", geo[key] >= 10, f"{geo[key]:.1f}x")


def bench_pairs(prepare, passes: int = 3) -> None:
    """Every case's weapon against every case's target (the matchup order), each pair new to the plan
    cache: once with the stage caches filling as a bot meets the pairs in a row, once with every cache
    emptied before each call; W40kDiviner runs the same pair between the two."""
    print(f"\n== Matchup order: 20 weapons x 20 targets = 400 new requests, {passes} passes, "
          "CPU time per request ==")
    reqs = [(request(a["volley"], b["target"], a.get("context", {})), diviner_form(
        request(a["volley"], b["target"], a.get("context", {})))) for _, a in cases() for _, b in cases()]
    times: dict[str, list[float]] = {"row": [], "cold": [], "div": []}
    fns = [(req, prepare(sc) if prepare is not None else None) for req, sc in reqs]
    gc.disable()
    try:
        for _ in range(passes):
            clear_engine_caches()
            engine.simulate(reqs[0][0])  # the process-wide tables of the first shape
            clear_engine_caches()
            row = []
            for i, (req, div) in enumerate(fns):
                if i % 20 == 0:
                    gc.collect()
                CACHE.clear()
                row.append(cpu(lambda q=req: engine.simulate(q)))
                if div is not None:
                    times["div"].append(cpu(div))
            times["row"] += row
            for req, _ in fns:
                times["cold"].append(timed(cold(req)))
    finally:
        gc.enable()
    mean = {k: statistics.fmean(v) for k, v in times.items() if v}
    print(f"  Cogitator, caches filling in matchup order: mean {mean['row'] * 1e6:.0f} us, median "
          f"{statistics.median(times['row']) * 1e6:.0f} us; cold: mean {mean['cold'] * 1e6:.0f} us, median "
          f"{statistics.median(times['cold']) * 1e6:.0f} us")
    if "div" in mean:
        n = len(times["row"])
        geo_row = statistics.geometric_mean([times["div"][i] / times["row"][i] for i in range(n)])
        geo_cold = statistics.geometric_mean([times["div"][i] / times["cold"][i] for i in range(n)])
        print(f"  W40kDiviner mean {mean['div'] * 1e6:.0f} us: total time / Cogitator's "
              f"{mean['div'] / mean['row']:.1f}x (matchup order), {mean['div'] / mean['cold']:.1f}x (cold); "
              f"geometric mean of per-pair ratios {geo_row:.1f}x / {geo_cold:.1f}x")


def bench_mixed_unit(prepare, repeats: int) -> None:
    print("\n== Mixed unit with a leader: Captain + 10 Intercessors, 3 weapon groups, <= 60 attack dice ==")
    for ed in ("11e", "10e"):
        req = {"edition": ed, "volley": MIXED_VOLLEY, "target": {"groups": [INTERCESSORS, CAPTAIN]}}
        engine.simulate(req)
        warm = rounds({"warm": lambda q=req: engine.simulate(q)}, repeats)["warm"]  # the target: the engine alone
        fresh = rounds({"cold": seen_stages(req)}, max(20, repeats // 2))["cold"]
        med, med_cold = statistics.median(warm), statistics.median(fresh)
        print(f"  {ed}: median {med * 1e3:.3f} ms, p99 {sorted(warm)[int(0.99 * (len(warm) - 1))] * 1e3:.3f} ms; "
              f"new plan (stage caches kept) median {med_cold * 1e3:.3f} ms")
        verdict(f"{ed} mixed unit median <= 0.3 ms", med <= 0.3e-3, f"{med * 1e3:.3f} ms")
        if prepare is not None and ed == "11e":  # W40kDiviner models 11e only (its reference-profile form)
            div = prepare(_diviner_scenario(MIXED_VOLLEY, [INTERCESSORS, CAPTAIN], {}))
            div()
            both = rounds({"warm": lambda q=req: engine.simulate(q), "cold": seen_stages(req), "div": div},
                          max(20, repeats // 2))
            m = {k: statistics.median(v) for k, v in both.items()}
            print(f"  11e alternating with W40kDiviner ({m['div'] * 1e3:.3f} ms, every model as the bodyguard): "
                  f"warm {m['warm'] * 1e3:.3f} ms = {m['div'] / m['warm']:.1f}x faster, new plan {m['cold'] * 1e3:.3f} ms "
                  f"= {m['div'] / m['cold']:.1f}x faster")


def bench_matrix() -> None:
    print("\n== Engine part of a 20 x 20 matchup (engine.evaluate_batch, 400 requests) ==")
    reqs = []
    for _i, (_, a) in enumerate(cases()):
        for _j, (_, b) in enumerate(cases()):
            reqs.append({"edition": "11e", "volley": a["volley"], "target": b["target"], "context": {}})
    est = engine.estimate_batch(reqs, max_seconds=1e9)
    CACHE.clear()
    t0 = time.perf_counter()
    engine.evaluate_batch(reqs, max_seconds=1e9)
    t_cold = time.perf_counter() - t0
    t0 = time.perf_counter()
    out = engine.evaluate_batch(reqs, max_seconds=1e9)
    t_warm = time.perf_counter() - t0
    print(f"  estimate {est['seconds']:.2f} s; cold {t_cold * 1e3:.0f} ms, warm {t_warm * 1e3:.0f} ms "
          f"(wall time); mean share destroyed {float((out.killed_mean / out.models).mean()):.3f}")


def verdict(name: str, ok: bool, detail: str) -> None:
    print(f"  [{'PASS' if ok else 'MISS'}] {name}: {detail}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--diviner", default=os.environ.get("W40KDIVINER_SRC"),
                    help="path to W40kDiviner's src/ folder (a separate checkout)")
    ap.add_argument("--repeats", type=int, default=200)
    args = ap.parse_args()
    load = os.getloadavg()
    print(f"load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} on {os.cpu_count()} cores; "
          f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}")
    prepare = diviner(args.diviner)
    bench_single(prepare, args.repeats)
    bench_pairs(prepare)
    bench_mixed_unit(prepare, args.repeats)
    bench_matrix()
    print(f"load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
