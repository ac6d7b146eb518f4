"""Benchmark of the combat engine against every target of issue 4. Prints measured numbers and ratios
from one run: `.venv/bin/python bench/bench_engine.py`.

Targets:
- exact, typical volley (<= 60 attack dice, damage up to D6+2, target <= 20 models x W <= 16): median < 5 ms
- exact, the Stompa's whole ranged volley (seed 001) vs a 20-model unit, and 150 SUSTAINED HITS dice
  vs 20 x W2: < 50 ms each
- exact vs Monte Carlo at 100,000 trials on the same scenarios: exact >= 100x faster, agreement within 4 SE
- Monte Carlo: 100,000 trials of a 30-attack volley < 1 s
- side by side with the wh40kdc cruncher (means only): time ratio (aim: within 20x), every differing
  mean with its reason
"""

from __future__ import annotations

import copy
import glob
import math
import re
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine import simulate  # noqa: E402
from engine.profiles import KNOWN  # noqa: E402

SEED_GLOB = str(Path(__file__).resolve().parents[1] / "data" / "seeds" / "001_*.txt")  # the Stompa page, as shipped
REPEATS = 25


def timed(fn, repeats: int = REPEATS, best: bool = False) -> tuple[float, object]:
    """Median (or, with `best`, minimum) wall time in seconds over `repeats` calls after one warm-up
    call, and the last result. The host is shared, so the minimum is the steadier estimate of cost."""
    out = fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return (min(times) if best else statistics.median(times)), out


def W(name, attacks, skill, s, ap, d, kw=(), models=1, rng=24):
    return {"models": models, "weapon": {"name": name, "range": rng, "attacks": attacks, "skill": skill,
                                         "strength": s, "ap": ap, "damage": d, "keywords": list(kw)}}


def T(models, t, sv, w, inv=None, **kw):
    return {"models": models, "toughness": t, "save": sv, "invulnerable": inv, "wounds": w, **kw}


TYPICAL = [
    ("10 bolt rifles vs 10 MEQ", [W("bolt rifle", 2, 3, 4, -1, 1, ["ASSAULT", "HEAVY"], models=10)], T(10, 4, 3, 2), {}),
    ("5 lascannons vs 3 tanks", [W("lascannon", 1, 4, 12, -3, "D6+1", models=5)], T(3, 10, 3, 13), {}),
    ("heavy intercessors, sustained", [W("heavy bolt rifle", 2, 3, 5, -1, 2, ["SUSTAINED HITS 1"], models=5)],
     T(10, 4, 3, 2), {"half_range": True}),
    ("20 boyz melee vs 10 guardsmen", [W("choppa", 3, 3, 5, -1, 1, rng="melee", models=20)], T(10, 3, 5, 1), {}),
    ("plasma vs terminators (cover)", [W("plasma", 2, 3, 8, -3, 2, ["RAPID FIRE 1", "HAZARDOUS"], models=4)],
     T(5, 5, 2, 3, inv=4), {"cover": True, "half_range": True}),
    ("melta vs knight", [W("multi-melta", 2, 4, 9, -4, "D6", ["MELTA 2"], models=2)], T(1, 11, 3, 16, inv=5),
     {"half_range": True}),
    ("devastating vs W16 (FNP, DR)", [W("lance", 3, 3, 10, -2, "D6+2", ["DEVASTATING WOUNDS"], models=3)],
     T(2, 10, 3, 16, feel_no_pain=6, damage_reduction=1), {}),
    ("flamers vs 20 gaunts", [W("flamer", "D6", None, 4, 0, 1, ["TORRENT", "IGNORES COVER"], models=4)],
     T(20, 3, 5, 1), {"cover": True}),
    ("anti-infantry + lethal", [W("needle", 3, 3, 3, -1, "D3", ["ANTI-INFANTRY 4+", "LETHAL HITS"], models=5)],
     T(10, 4, 3, 2, keywords=["INFANTRY"]), {}),
    ("blast 2 vs 20 x W2", [W("frag", "D6", 4, 4, 0, 1, ["BLAST 2"], models=3)], T(20, 4, 4, 2), {}),
    ("mixed volley, wounded model", [W("gatling", 12, 3, 6, -1, 1, ["SUSTAINED HITS D3"]),
                                      W("missile", "D6", 3, 9, -2, "D6", ["BLAST"])],
     T(6, 6, 3, 3, wounds_lost=2), {"reroll_hits": "ones"}),
    ("crit 5+ fishing, twin-linked", [W("blade", 4, 3, 6, -2, 2, ["TWIN-LINKED", "SUSTAINED HITS 2"], rng="melee",
                                         models=5)], T(5, 5, 3, 3, inv=5), {"critical_hit": 5,
                                                                            "reroll_hits": "non_critical"}),
]


def request(volley, target, context, edition="11e", **extra):
    return {"edition": edition, "volley": volley, "target": target, "context": context, **extra}


# ---- the Stompa, read from the seed page ----------------------------------------------------------
def stompa_volley() -> tuple[list[dict], list[str]]:
    """The Stompa's ranged weapons parsed from the seed table. Counts from the 11e datasheet loadout
    (gdc-11e orks.json: "3 big shootas; deffkannon; skorcha; supa-gatler; supa-rokkits; twin big shoota";
    the seed prints "Deffkannon and Supa-rokkits" as one profile and has no twin big shoota profile).
    The supa-gatler fires its Aimed profile (one profile per weapon, 04.01.03)."""
    path = sorted(glob.glob(SEED_GLOB))[0]
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    rows = []
    in_ranged = False
    for line in lines:
        if line.startswith("RANGED WEAPONS"):
            in_ranged = True
            continue
        if line.startswith("MELEE WEAPONS"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if in_ranged and len(cells) >= 7 and cells[1].endswith('"'):
            rows.append(cells[:7])
    counts = {"Big Shoota": 3}
    volley, names = [], []
    for label, rng, a, bs, s, ap, d in rows:
        name, keywords = split_keywords(label)
        if "Point Blank" in name:
            continue
        volley.append({"models": counts.get(name, 1), "weapon": {
            "name": name, "range": int(rng.rstrip('"')), "attacks": a,
            "skill": None if bs in ("-", "N/A") else int(bs.rstrip("+")), "strength": int(s), "ap": int(ap),
            "damage": d, "keywords": keywords}})
        names.append(f"{counts.get(name, 1)}x {name} {keywords}")
    return volley, names


def split_keywords(label: str) -> tuple[str, list[str]]:
    """'Big Shoota LETHAL HITS: non-MONSTER/VEHICLE Rapid Fire 2' -> name, ['LETHAL HITS: non-...', 'Rapid Fire 2']."""
    pattern = re.compile(r"\b(" + "|".join(re.escape(k) for k in sorted(KNOWN, key=len, reverse=True)) + r")\b",
                         re.IGNORECASE)
    starts = [m.start() for m in pattern.finditer(label)]
    if not starts:
        return label.strip(), []
    name = label[: starts[0]].strip()
    parts = [label[a:b].strip() for a, b in zip(starts, starts[1:] + [len(label)], strict=True)]
    return name, parts


# ---- agreement ---------------------------------------------------------------------------------------
def sd_of(pmf) -> float:
    p = np.asarray(pmf)
    x = np.arange(p.size)
    m = float(np.dot(x, p))
    return math.sqrt(max(float(np.dot((x - m) ** 2, p)), 0.0))


def agreement(ex: dict, mc: dict, trials: int) -> tuple[float, str]:
    """Largest |difference| / SE over killed mean, damage mean and P(wipe) (SE from the exact variance)."""
    worst, what = 0.0, ""
    for key in ("models_killed", "damage"):
        se = sd_of(ex[key]["pmf"]) / math.sqrt(trials)
        z = abs(mc[key]["mean"] - ex[key]["mean"]) / se if se > 0 else (0.0 if mc[key]["mean"] == ex[key]["mean"] else math.inf)
        if z >= worst:
            worst, what = z, key
    p = ex["p_wipe"]
    se = math.sqrt(p * (1 - p) / trials)
    z = abs(mc["p_wipe"] - p) / se if se > 0 else (0.0 if mc["p_wipe"] == p else math.inf)
    if z >= worst:
        worst, what = z, "p_wipe"
    return worst, what


# ---- wh40kdc -------------------------------------------------------------------------------------------
_KW_IDS = {"SUSTAINED HITS": "sustained-hits", "LETHAL HITS": "lethal-hits", "DEVASTATING WOUNDS": "devastating-wounds",
           "TWIN-LINKED": "twin-linked", "RAPID FIRE": "rapid-fire", "HEAVY": "heavy", "TORRENT": "torrent",
           "BLAST": "blast", "MELTA": "melta", "ANTI": "anti", "IGNORES COVER": "ignores-cover", "LANCE": "lance",
           "HAZARDOUS": "hazardous", "PRECISION": "precision", "CLEAVE": "cleave", "ASSAULT": "assault"}


def cruncher_input(req: dict) -> dict:
    """The same single-group request in the wh40kdc cruncher's input schema."""
    from engine.profiles import parse_keyword

    g = req["volley"][0]
    w = g["weapon"]
    kws = []
    for raw in w["keywords"]:
        k = parse_keyword(raw)
        kid = _KW_IDS.get(k.name)
        if kid is None:
            continue
        params = {}
        if k.name == "ANTI":
            params = {"target_keyword": k.anti_keyword.lower(), "threshold": k.threshold}
        elif k.value is not None:
            params = {"value": str(k.value) if k.value.count else k.value.plus}
        kws.append({"keyword_id": kid, "parameters": params} if params else {"keyword_id": kid})
    melee = w["range"] == "melee"
    stats = {"A": w["attacks"], "S": w["strength"], "AP": w["ap"], "D": w["damage"]}
    stats["WS" if melee else "BS"] = w["skill"]
    weapon = {"id": "bench-weapon", "name": w["name"], "type": "melee" if melee else "ranged",
              "profiles": [{"name": w["name"], "range": "Melee" if melee else f'{w["range"]}"', "stats": stats,
                            "keywords": kws}]}
    t = req["target"]
    unit = {"id": "bench-target", "faction_id": "bench", "keywords": [k.lower() for k in t.get("keywords", [])],
            "faction_keywords": [], "model_count": {"min": t["models"], "max": t["models"]},
            "profiles": [{"name": "t", "T": t["toughness"], "Sv": t["save"], "W": t["wounds"],
                          "invuln_sv": t.get("invulnerable")}]}
    ctx = req.get("context", {})
    buffs = []
    if t.get("feel_no_pain"):
        buffs.append({"contribution": {"type": "feel-no-pain", "threshold": t["feel_no_pain"]},
                      "source": {"kind": "manual"}})
    if ctx.get("cover"):
        buffs.append({"contribution": {"type": "cover"}, "source": {"kind": "manual"}})
    if ctx.get("reroll_hits") in ("ones", "failed"):
        buffs.append({"contribution": {"type": "reroll", "roll": "hit",
                                       "subset": "ones" if ctx["reroll_hits"] == "ones" else "all-failures"},
                      "source": {"kind": "manual"}})
    return {"attacker": {"weapon": weapon, "profileIndex": 0},
            "target": {"unit": unit, "profileIndex": 0, "modelCount": t["models"]},
            "modelsFiring": g["models"], "buffs": buffs,
            "context": {"phase": "fight" if melee else "shooting", "withinHalfRange": bool(ctx.get("half_range"))}}


def reasons(req: dict, key: str) -> str:
    """Why a mean differs between Cogitator and the cruncher, from what the request contains."""
    w = req["volley"][0]["weapon"]
    kws = " ".join(w["keywords"]).upper()
    fishing = req.get("context", {}).get("reroll_hits") == "non_critical"
    out = []
    if fishing and key in ("hits", "wounds", "unsaved", "damage", "models_killed"):
        out.append("the cruncher has no re-roll-non-criticals option (it ignores that re-roll)")
    if key == "unsaved" and "DEVASTATING" in kws:
        out.append("contract 1 counts devastating critical wounds as unsaved; the cruncher keeps them in a "
                   "separate mortal-wound stream")
    if key == "damage":
        out.append("the cruncher multiplies unsaved wounds by D: it counts damage beyond a model's remaining "
                   "wounds and beyond the unit's total; Cogitator counts wounds actually lost (excess is lost, 05.04)")
    if key == "models_killed":
        out.append("the cruncher divides total damage by W (damage spills from model to model); Cogitator "
                   "allocates per model with no spill-over, wounded model first (05.04)")
    if "CLEAVE" in kws and key == "attacks":
        out.append("the cruncher does not add CLEAVE attack dice")
    return "; ".join(out) or "UNEXPLAINED"


def crunch_means(out: dict) -> dict[str, float]:
    st = {s["name"]: s["expected"] for s in out["stages"]}
    return {"attacks": st["attacks"], "hits": st["hits"], "wounds": st["wounds"], "unsaved": st["unsaved"],
            "damage": st["after-fnp"], "models_killed": st["models-killed"]}


# ---- main ----------------------------------------------------------------------------------------------
def main() -> None:
    verdicts = []

    def verdict(name: str, ok: bool, detail: str) -> None:
        verdicts.append((name, ok, detail))

    print("== 1. Exact, typical volleys (simulate() end to end, median of", REPEATS, "runs) ==")
    typical_times = []
    for name, volley, target, ctx in TYPICAL:
        t, r = timed(lambda v=volley, tg=target, c=ctx: simulate(request(v, tg, c)))
        typical_times.append(t)
        print(f"  {name:34s} {t * 1e3:7.3f} ms   E[killed]={r['models_killed']['mean']:.3f}  P(wipe)={r['p_wipe']:.4f}")
    med = statistics.median(typical_times)
    print(f"  median {med * 1e3:.3f} ms, slowest {max(typical_times) * 1e3:.3f} ms  (target < 5 ms: "
          f"{5e-3 / med:.0f}x margin)")
    verdict("typical median < 5 ms", med < 5e-3, f"{med * 1e3:.3f} ms")

    print("\n== 2. Exact, the largest volleys ==")
    stompa, names = stompa_volley()
    print("  Stompa ranged volley from the seed:", *names, sep="\n    ")
    big = [
        ("Stompa volley vs 20 x (T4 Sv3+ W2 INFANTRY), half range",
         request(stompa, T(20, 4, 3, 2, keywords=["INFANTRY"]), {"half_range": True})),
        ("Stompa volley vs 20 x (T5 Sv4+ W3), cover",
         request(stompa, T(20, 5, 4, 3), {"cover": True, "half_range": True})),
        ("150 dice SUSTAINED HITS 1 vs 20 x W2",
         request([W("gatling", 150, 3, 5, -1, 1, ["SUSTAINED HITS 1"])], T(20, 4, 4, 2), {})),
        ("150 dice SUSTAINED HITS D3 + LETHAL vs 20 x W2",
         request([W("gatling", 150, 4, 5, -1, 2, ["SUSTAINED HITS D3", "LETHAL HITS"])], T(20, 5, 4, 2), {})),
    ]
    for name, req in big:
        t, r = timed(lambda q=req: simulate(q), repeats=10)
        print(f"  {name:60s} {t * 1e3:7.2f} ms   attack dice {r['stages']['attacks']:.1f}  "
              f"E[killed]={r['models_killed']['mean']:.3f}  P(wipe)={r['p_wipe']:.4f}  (target < 50 ms: "
              f"{50e-3 / t:.0f}x margin)")
        verdict(f"{name} < 50 ms", t < 50e-3, f"{t * 1e3:.2f} ms")

    print("\n== 3. Exact vs Monte Carlo (100,000 trials) on the same scenarios (best of 3 interleaved rounds) ==")
    scenarios = [(n, request(v, tg, c)) for n, v, tg, c in TYPICAL] + big
    ratios, median_ratios = [], []
    worst_z = 0.0
    for i, (name, req) in enumerate(scenarios):
        mc_req = dict(copy.deepcopy(req), method="montecarlo", trials=100_000, seed=1000 + i)
        ex_times, mc_times = [], []
        for _ in range(3):  # interleaved, so both see the same load on the shared host
            te, ex = timed(lambda q=req: simulate(q), repeats=5, best=True)
            tm, mc = timed(lambda q=mc_req: simulate(q), repeats=1)
            ex_times.append(te)
            mc_times.append(tm)
        te, tm = min(ex_times), min(mc_times)
        z, what = agreement(ex, mc, 100_000)
        ratios.append(tm / te)
        median_ratios.append(statistics.median(mc_times) / statistics.median(ex_times))
        worst_z = max(worst_z, z)
        print(f"  {name[:44]:44s} exact {te * 1e3:7.2f} ms  MC {tm * 1e3:8.1f} ms  ratio {tm / te:6.0f}x "
              f"(medians {median_ratios[-1]:5.0f}x)  max |diff|/SE {z:4.2f} ({what})")
    print(f"  ratio of best times: median {statistics.median(ratios):.0f}x, smallest {min(ratios):.0f}x "
          f"(ratio of medians: smallest {min(median_ratios):.0f}x) (target >= 100x); "
          f"largest |diff|/SE {worst_z:.2f} (target <= 4)")
    verdict("exact >= 100x faster than MC (every scenario)", min(ratios) >= 100, f"min {min(ratios):.0f}x")
    verdict("MC agrees within 4 SE (every scenario)", worst_z <= 4, f"max {worst_z:.2f} SE")

    print("\n== 4. Monte Carlo, 100,000 trials of a 30-attack volley ==")
    thirty = request([W("bolt rifle", 3, 3, 4, -1, 1, ["SUSTAINED HITS 1"], models=10)], T(10, 4, 3, 2), {},
                     method="montecarlo", trials=100_000, seed=5)
    t, r = timed(lambda: simulate(thirty), repeats=3)
    print(f"  {t * 1e3:.0f} ms (target < 1 s: {1 / t:.1f}x margin); SE of E[killed] "
          f"{r['standard_error']['models_killed']:.4f}")
    verdict("MC 100k x 30 attacks < 1 s", t < 1.0, f"{t * 1e3:.0f} ms")

    print("\n== 5. Side by side with the wh40kdc 1.4.5 cruncher (11e, means only) ==")
    try:
        from wh40kdc.cruncher import crunch
        from wh40kdc.data.dataset import Dataset
    except ImportError as exc:  # pragma: no cover - the venv pins wh40kdc
        print("  wh40kdc not importable:", exc)
        return
    ds = Dataset.embedded()
    single = [(n, request(v, tg, c)) for n, v, tg, c in TYPICAL if len(v) == 1]
    ours_t, theirs_t = [], []
    for name, req in single:
        cin = cruncher_input(req)
        tc, cout = timed(lambda c=cin: crunch(c, ds), repeats=200)
        to, ours = timed(lambda q=req: simulate(q), repeats=50)
        theirs_t.append(tc)
        ours_t.append(to)
        theirs = crunch_means(cout)
        mine = {**ours["stages"], "damage": ours["damage"]["mean"], "models_killed": ours["models_killed"]["mean"]}
        print(f"  {name:34s} cruncher {tc * 1e6:6.1f} us  Cogitator {to * 1e6:7.1f} us  ratio {to / tc:5.1f}x")
        for key in ("attacks", "hits", "wounds", "unsaved", "damage", "models_killed"):
            a, b = mine[key], float(theirs[key])
            if abs(a - b) > 1e-6 * max(1.0, abs(b)):
                print(f"      {key:13s} Cogitator {a:9.4f}  cruncher {b:9.4f}  -> {reasons(req, key)}")
    ratio = statistics.median(ours_t) / statistics.median(theirs_t)
    print(f"  median: cruncher {statistics.median(theirs_t) * 1e6:.1f} us (means only), Cogitator "
          f"{statistics.median(ours_t) * 1e6:.1f} us (full distributions): {ratio:.1f}x (aim: within 20x)")
    verdict("within 20x of the cruncher", ratio <= 20, f"{ratio:.1f}x")

    print("\n== Verdicts ==")
    for name, ok, detail in verdicts:
        print(f"  {'PASS' if ok else 'MISS'}  {name}: {detail}")


if __name__ == "__main__":
    main()
