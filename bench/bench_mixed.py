"""Benchmark of mixed targets (contract 1b, issue 11). Prints measured numbers and ratios to target
from one run: `.venv/bin/python bench/bench_mixed.py [--diviner PATH/TO/W40kDiviner/src]`.

Targets:
- exact, mixed unit (a leader and 10 bodyguards; 3 weapon groups, up to 60 attack dice, PRECISION and
  DEVASTATING WOUNDS): median < 2 ms and p99 < 10 ms
- single-profile speed no slower than before issue 11 (the engine at BASELINE, extracted with
  `git archive` and timed in a subprocess on the same scenarios, same BLAS threading)
- exact vs Monte Carlo at 100,000 trials on the mixed unit: exact >= 100x faster
- side by side with W40kDiviner (GPL; run from a separate checkout, never copied) on 10 leader +
  bodyguard scenarios: both means and the time ratio; differences explained in docs/rules-notes.md

The host is shared (2 cores, several engineers' test suites): medians and p99 are of wall time and
move with the load; the load average is printed with the numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_engine import TYPICAL, request  # noqa: E402

from engine import simulate  # noqa: E402

BASELINE = "c0d5916"  # main just before issue 11's engine work (single-profile engine as it was)
REPEATS = 200


def W(name, attacks, skill, s, ap, d, kw=(), models=1, rng=24):
    return {"models": models, "weapon": {"name": name, "range": rng, "attacks": attacks, "skill": skill,
                                         "strength": s, "ap": ap, "damage": d, "keywords": list(kw)}}


def G(name, models, t, sv, w, character=False, **kw):
    return {"name": name, "models": models, "toughness": t, "save": sv, "wounds": w, "character": character, **kw}


CAPTAIN = G("Captain", 1, 4, 3, 5, True, invulnerable=4)
INTERCESSORS = G("Intercessor", 10, 4, 3, 2)
# 3 weapon groups, 60 attack dice at most: 20 bolt rifles (PRECISION), 10 x D6 flamer dice, 20 x 1 lance
MIXED_VOLLEY = [
    W("bolt rifle", 2, 3, 4, -1, 1, ["PRECISION"], models=10),
    W("heavy flamer", "D6", None, 5, -1, 1, ["TORRENT", "IGNORES COVER"], models=3),
    W("lance", 2, 3, 9, -3, "D3+1", ["DEVASTATING WOUNDS", "PRECISION"], models=6),
]


def timings(fn, repeats: int = REPEATS, clock=time.perf_counter) -> list[float]:
    fn()
    out = []
    for _ in range(repeats):
        t = clock()
        fn()
        out.append(clock() - t)
    return out


def cpu_timings(fn, repeats: int = REPEATS) -> list[float]:
    """CPU time of this process per call (BLAS is single-threaded, see engine/__init__.py): what the
    call costs, without the time the shared host keeps us waiting for a core."""
    return timings(fn, repeats, time.process_time)


def p99(xs: list[float]) -> float:
    return sorted(xs)[min(len(xs) - 1, int(0.99 * len(xs)))]


def verdict(name: str, ok: bool, detail: str) -> None:
    print(f"  [{'PASS' if ok else 'MISS'}] {name}: {detail}")


def bench_mixed() -> None:
    print("Exact, mixed unit: Captain + 10 Intercessors; 3 weapon groups, <= 60 attack dice, PRECISION, DEVASTATING")
    for ed in ("11e", "10e"):
        req = {"edition": ed, "volley": MIXED_VOLLEY, "target": {"groups": [INTERCESSORS, CAPTAIN]}}
        ts = timings(lambda req=req: simulate(req))
        cs = cpu_timings(lambda req=req: simulate(req))
        med, tail = statistics.median(cs), p99(cs)
        r = simulate(req)
        kills = " · ".join(f"{g['name']} {g['models_killed']['mean']:.2f}" for g in r["groups"])
        print(f"    {ed} wall time on the loaded host: min {min(ts) * 1e3:.2f} ms, median "
              f"{statistics.median(ts) * 1e3:.2f} ms, p99 {p99(ts) * 1e3:.2f} ms; {kills}")
        verdict(f"{ed} median (CPU time)", med < 0.002, f"{med * 1e3:.2f} ms (target < 2 ms, ratio {med / 0.002:.2f})")
        verdict(f"{ed} p99 (CPU time)", tail < 0.010, f"{tail * 1e3:.2f} ms (target < 10 ms, ratio {tail / 0.010:.2f})")
        mc = dict(req, method="montecarlo", trials=100_000, seed=1)
        mts = cpu_timings(lambda mc=mc: simulate(mc), repeats=3)
        ratio = statistics.median(mts) / med
        verdict(f"{ed} exact vs Monte Carlo 100k (CPU time)", ratio >= 100,
                f"{statistics.median(mts) * 1e3:.0f} ms vs {med * 1e3:.2f} ms = {ratio:.0f}x (target >= 100x)")


_BASELINE_TIMER = r"""
import json, statistics, sys, time
from engine import simulate
out = []
for req in json.load(sys.stdin):
    simulate(req)
    ts = []
    for _ in range(int(sys.argv[1])):
        t = time.perf_counter(); simulate(req); ts.append(time.perf_counter() - t)
    out.append(statistics.median(ts))
print(json.dumps(out))
"""


def _median_times(reqs: list[dict], repeats: int, cwd: Path) -> list[float]:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", PYTHONPATH=str(cwd))
    p = subprocess.run([sys.executable, "-c", _BASELINE_TIMER, str(repeats)], input=json.dumps(reqs), text=True,
                       capture_output=True, cwd=cwd, env=env, timeout=600, check=True)
    return json.loads(p.stdout)


def bench_single_profile() -> None:
    print(f"Single-profile speed: this engine vs the engine at {BASELINE} (subprocesses, interleaved, medians)")
    reqs = [request(v, t, c, ed) for _, v, t, c in TYPICAL for ed in ("10e", "11e")]
    names = [f"{n} {ed}" for n, *_ in TYPICAL for ed in ("10e", "11e")]
    try:
        blob = subprocess.run(["git", "archive", BASELINE, "engine"], cwd=ROOT, capture_output=True, check=True,
                              timeout=60).stdout
    except (subprocess.SubprocessError, OSError) as exc:
        print(f"  not run: the baseline commit {BASELINE} is not in this clone's history ({exc})")
        return
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(fileobj=BytesIO(blob)) as tar:
            tar.extractall(tmp, filter="data")
        old, new = [], []
        for _ in range(3):  # interleaved rounds, so a load spike hits both sides
            old.append(_median_times(reqs, 30, Path(tmp)))
            new.append(_median_times(reqs, 30, ROOT))
    ratios = []
    for i, name in enumerate(names):
        o = statistics.median(r[i] for r in old)
        n = statistics.median(r[i] for r in new)
        ratios.append(n / o)
        print(f"    {name:38s} before {o * 1e3:6.2f} ms  now {n * 1e3:6.2f} ms  ratio {n / o:4.2f}")
    geo = statistics.geometric_mean(ratios)
    verdict("single-profile no slower", geo <= 1.05,
            f"geometric mean ratio now/before {geo:.2f} over {len(ratios)} scenarios (target <= 1, 5% noise band)")


# ---- W40kDiviner, side by side ------------------------------------------------------------------
# Each scenario: a leader + bodyguard target (11e: W40kDiviner models 11th edition only).
SCENARIOS = [
    ("bolt rifles vs Captain + 5 Intercessors", [W("bolt rifle", 2, 3, 4, -1, 1, models=10)],
     [G("Intercessor", 5, 4, 3, 2), CAPTAIN], {}),
    ("plasma vs Captain + 5 Intercessors", [W("plasma", 2, 3, 8, -3, 2, ["RAPID FIRE 1"], models=5)],
     [G("Intercessor", 5, 4, 3, 2), CAPTAIN], {"half_range": True}),
    ("snipers (PRECISION) vs Captain + 5 Intercessors", [W("sniper", 1, 2, 5, -2, 3, ["PRECISION", "HEAVY"], models=5)],
     [G("Intercessor", 5, 4, 3, 2), CAPTAIN], {}),
    ("lascannons vs Librarian + 5 Terminators", [W("lascannon", 1, 3, 12, -3, "D6+1", models=4)],
     [G("Terminator", 5, 5, 2, 3, invulnerable=4), G("Librarian", 1, 4, 2, 4, True, invulnerable=4)], {}),
    ("shootas vs Warboss + 10 Boyz", [W("shoota", 2, 5, 4, 0, 1, models=20)],
     [G("Boy", 10, 5, 5, 1), G("Warboss", 1, 5, 4, 6, True, invulnerable=5)], {}),
    ("devastating vs Captain + 10 Intercessors", [W("devastator", 2, 3, 5, -1, 2, ["DEVASTATING WOUNDS"], models=6)],
     [INTERCESSORS, CAPTAIN], {}),
    ("bolters vs Chaplain + 10 Death Company (FNP 6+)", [W("boltgun", 2, 3, 4, 0, 1, models=15)],
     [G("Death Company", 10, 4, 3, 2, feel_no_pain=6), G("Chaplain", 1, 4, 3, 4, True, invulnerable=4,
                                                           feel_no_pain=6)], {}),
    ("melta vs Shield-Captain + 4 Custodian Guard (-1 D)", [W("melta", 1, 3, 9, -4, "D6", ["MELTA 2"], models=4)],
     [G("Custodian Guard", 4, 6, 2, 3, invulnerable=4, damage_reduction=1),
      G("Shield-Captain", 1, 6, 2, 6, True, invulnerable=4, damage_reduction=1)], {"half_range": True}),
    ("battle cannon vs Lieutenant + 5 halved-damage bodyguard",
     [W("battle cannon", "D6+3", 4, 10, -1, 3, ["BLAST"], models=1)],
     [G("Bodyguard", 5, 4, 3, 3, halve_damage=True), G("Lieutenant", 1, 4, 3, 4, True, invulnerable=5)], {}),
    ("3 weapons (lethal, sustained, PRECISION) vs Captain + 10 Intercessors",
     [W("bolt rifle", 2, 3, 4, -1, 1, ["LETHAL HITS"], models=8), W("heavy bolter", 3, 4, 5, -1, 2,
                                                                     ["SUSTAINED HITS 1"], models=2),
      W("sniper", 1, 2, 5, -2, 3, ["PRECISION"], models=2)],
     [INTERCESSORS, CAPTAIN], {}),
]


def _diviner_scenario(volley, groups, context) -> dict:
    """The W40kDiviner form: its analyzer's suggested reference profile (the bodyguard: the highest T
    among non-CHARACTER models) for the whole unit, all models counted, weapons in volley order."""
    body = max((g for g in groups if not g["character"]), key=lambda g: g["toughness"])
    ref = {"T": body["toughness"], "Sv": body["save"], "W": body["wounds"], "invuln": body.get("invulnerable"),
           "fnp": body.get("feel_no_pain"), "models": sum(g["models"] for g in groups), "keywords": ["INFANTRY"]}
    weapons = [{"name": v["weapon"]["name"], "type": "Melee" if v["weapon"]["range"] == "melee" else "Ranged",
                "A": v["weapon"]["attacks"], "skill": v["weapon"]["skill"], "S": v["weapon"]["strength"],
                "AP": v["weapon"]["ap"], "D": v["weapon"]["damage"], "count": v["models"],
                "keywords": v["weapon"]["keywords"]} for v in volley]
    damage = {"set": body.get("damage_set"), "mult": 0.5 if body.get("halve_damage") else 1.0,
              "add": -body.get("damage_reduction", 0)}
    ctx = {"half_range": context.get("half_range", False), "stationary": context.get("stationary", False)}
    return {"ref": ref, "weapons": weapons, "ctx": ctx, "damage": damage, "repeats": 30}


def bench_diviner(path: str | None) -> None:
    print("Side by side with W40kDiviner (11e; means of models destroyed and wounds removed; CPU time per run)")
    src = Path(path) if path else None
    if src is None or not (src / "attack_math.py").exists():
        print("  not run: pass --diviner PATH (a checkout's src/ folder, e.g. from "
              "`git clone https://github.com/aturchi/W40kDiviner`); it is GPL and is never vendored here")
        return
    scen = [_diviner_scenario(v, g, c) for _, v, g, c in SCENARIOS]
    p = subprocess.run([sys.executable, str(ROOT / "bench" / "diviner_runner.py"), str(src)], input=json.dumps(scen),
                       text=True, capture_output=True, timeout=600)
    if p.returncode:
        print(f"  not run: W40kDiviner failed: {p.stderr.strip().splitlines()[-1:]}")
        return
    theirs = json.loads(p.stdout)
    print(f"  {'scenario':62s} {'Diviner':>13s} {'ours (ref)':>13s} {'ours (1b)':>13s} {'time ratio':>10s}")
    for (name, volley, groups, context), sc, th in zip(SCENARIOS, scen, theirs, strict=True):
        mixed_req = {"edition": "11e", "volley": volley, "target": {"groups": groups, "keywords": ["INFANTRY"]},
                     "context": context}
        r = sc["ref"]
        body = max((g for g in groups if not g["character"]), key=lambda g: g["toughness"])
        ref_req = {"edition": "11e", "volley": volley, "context": context,
                   "target": {"models": r["models"], "toughness": r["T"], "save": r["Sv"], "wounds": r["W"],
                              "invulnerable": r["invuln"], "feel_no_pain": r["fnp"], "keywords": ["INFANTRY"],
                              "damage_reduction": body.get("damage_reduction", 0),
                              "halve_damage": body.get("halve_damage", False)}}
        ours_ref = simulate(ref_req)
        ours = simulate(mixed_req)
        ts = cpu_timings(lambda q=mixed_req: simulate(q), repeats=30)
        ratio = statistics.median(th["seconds"]) / statistics.median(ts)
        print(f"  {name:62s} {th['kills_mean']:5.2f}/{th['removed_mean']:6.2f} "
              f"{ours_ref['models_killed']['mean']:5.2f}/{ours_ref['damage']['mean']:6.2f} "
              f"{ours['models_killed']['mean']:5.2f}/{ours['damage']['mean']:6.2f} {ratio:9.1f}x")
    print("  (kills/wounds removed. 'ours (ref)': our engine on W40kDiviner's input, the bodyguard profile for "
          "every model;\n   'ours (1b)': the unit as contract 1b defines it. Time ratio = W40kDiviner / ours (1b), CPU time medians.)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--diviner", help="path to W40kDiviner's src/ folder (a separate checkout)",
                    default=os.environ.get("W40KDIVINER_SRC"))
    ap.add_argument("--skip-baseline", action="store_true")
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; OPENBLAS_NUM_THREADS="
          f"{os.environ.get('OPENBLAS_NUM_THREADS')}")
    bench_mixed()
    if not args.skip_baseline:
        bench_single_profile()
    bench_diviner(args.diviner)


if __name__ == "__main__":
    main()
