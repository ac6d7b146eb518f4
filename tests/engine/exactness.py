"""1,000 random valid exact requests and the pmfs the engine gave for them before issue 22 (a fixture).

Issue 22 rewrites the exact engine's plumbing (compiled plans, batch evaluation) and asks that every pmf
stays the same to 1e-12, apart from the 11e DEVASTATING WOUNDS fix. `python -m tests.engine.exactness`
regenerates `data/exactness.json.gz` from the engine in this tree (run it only on a commit whose
results are the reference); tests/engine/test_exactness.py compares the engine against it.

Requests are drawn from a fixed seed with the standard library's `random` (stable across Python
versions for `random.Random(seed).random()`-based choices), covering both editions, single-profile and
mixed targets (contract 1b), every known weapon keyword, re-rolls, modifiers and damage modifiers, and
sized so that the whole set runs in a few seconds.
"""

from __future__ import annotations

import gzip
import json
import random
import sys
from pathlib import Path
from typing import Any

FIXTURE = Path(__file__).with_name("data") / "exactness.json.gz"
COUNT = 1000
SEED = 22
TRIM = 1e-15  # trailing pmf entries below this are not stored (compared as zeros; the tolerance is 1e-12)

KEYWORDS = ["SUSTAINED HITS 1", "SUSTAINED HITS 2", "SUSTAINED HITS D3", "LETHAL HITS", "DEVASTATING WOUNDS",
            "TORRENT", "BLAST", "BLAST 2", "RAPID FIRE 1", "RAPID FIRE D3", "MELTA 2", "MELTA D3",
            "ANTI-INFANTRY 4+", "ANTI-VEHICLE 2+", "TWIN-LINKED", "HEAVY", "LANCE", "IGNORES COVER",
            "HAZARDOUS", "CLEAVE 1", "PRECISION", "INDIRECT FIRE", "ASSAULT",
            "LETHAL HITS: non-MONSTER/VEHICLE"]
ATTACKS = [1, 2, 3, 4, 6, "D3", "D6", "D3+1", "2D6", "D6+2"]
DAMAGE = [1, 1, 2, 2, 3, "D3", "D6", "D3+1", "D6+1", "D6+2", 4, "2D3"]
REROLLS = [None, None, None, "ones", "failed", "non_critical"]


def _weapon(r: random.Random) -> dict[str, Any]:
    return {"name": "w", "range": r.choice([12, 24, 36, "melee"]), "attacks": r.choice(ATTACKS),
            "skill": r.choice([None, 2, 3, 3, 4, 4, 5]), "strength": r.randint(2, 14), "ap": r.randint(-4, 0),
            "damage": r.choice(DAMAGE), "keywords": r.sample(KEYWORDS, r.choice([0, 1, 1, 2, 2, 3]))}


def _profile(r: random.Random, wounds_max: int) -> dict[str, Any]:
    out = {"toughness": r.randint(2, 12), "save": r.randint(2, 7), "wounds": r.randint(1, wounds_max)}
    if r.random() < 0.35:
        out["invulnerable"] = r.randint(3, 6)
    if r.random() < 0.2:
        out["feel_no_pain"] = r.randint(4, 6)
    if r.random() < 0.15:
        out["feel_no_pain_mortal"] = r.randint(3, 6)
    if r.random() < 0.25:
        out["damage_reduction"] = r.randint(1, 2)
    if r.random() < 0.1:
        out["damage_set"] = r.randint(1, 3)
    if r.random() < 0.15:
        out["halve_damage"] = True
    return out


def random_request(r: random.Random) -> dict[str, Any]:
    """One request; may be too large or otherwise refused (the caller keeps only accepted ones)."""
    keywords = r.choice([[], ["INFANTRY"], ["VEHICLE"], ["MONSTER", "CHARACTER"]])
    if r.random() < 0.7:
        target = {"models": r.randint(1, 12), **_profile(r, 12), "keywords": keywords}
        if target["wounds"] > 1 and r.random() < 0.2:
            target["wounds_lost"] = r.randint(0, target["wounds"] - 1)
        volley_size = r.choice([1, 1, 1, 2, 3])
    else:
        groups = []
        for i in range(r.choice([2, 2, 3])):
            g = {"name": f"g{i}", "models": r.randint(1, 5), **_profile(r, 4), "character": r.random() < 0.4}
            groups.append(g)
        target = {"groups": groups, "keywords": keywords}
        volley_size = r.choice([1, 2, 3])
    volley = [{"models": r.randint(1, 6), "weapon": _weapon(r)} for _ in range(volley_size)]
    context = {}
    for key in ("half_range", "stationary", "charged", "cover"):
        if r.random() < 0.3:
            context[key] = True
    for key in ("hit_modifier", "wound_modifier", "save_modifier"):
        if r.random() < 0.2:
            context[key] = r.choice([-2, -1, 1, 2])
    for key in ("reroll_hits", "reroll_wounds"):
        value = r.choice(REROLLS)
        if value:
            context[key] = value
    if r.random() < 0.1:
        context["critical_hit"] = r.choice([4, 5])
    if r.random() < 0.1:
        context["critical_wound"] = r.choice([4, 5])
    return {"edition": r.choice(["10e", "11e"]), "volley": volley, "target": target, "context": context,
            "attacker": {"keywords": r.choice([[], ["VEHICLE"]])}}


def requests() -> list[dict[str, Any]]:
    """The fixture's requests: the first COUNT accepted ones of the seeded sequence (small enough to be
    quick: at most 80 attack dice, an estimated cost under 50 ms)."""
    from engine import RequestError
    from engine.api import estimate, prepare

    r = random.Random(SEED)
    out: list[dict[str, Any]] = []
    while len(out) < COUNT:
        req = random_request(r)
        try:
            parsed, groups = prepare(req)
        except RequestError:
            continue
        dice = sum(g.models * (g.attacks_per_model.size - 1) for g in groups)
        if dice <= 80 and estimate(parsed, groups)["seconds"] < 0.05:
            out.append(req)
    return out


def _trim(pmf: list[float]) -> list[float]:
    n = len(pmf)
    while n > 1 and abs(pmf[n - 1]) < TRIM:
        n -= 1
    return pmf[:n]


def summary(result: dict[str, Any]) -> dict[str, Any]:
    """What the fixture keeps of a result: every pmf (trimmed), the stages and P(wipe)."""
    out = {"stages": result["stages"], "p_wipe": result["p_wipe"],
           "models_killed": _trim(result["models_killed"]["pmf"]), "damage": _trim(result["damage"]["pmf"]),
           "attacker_mortal_wounds": _trim(result["attacker_mortal_wounds"]["pmf"])}
    if "groups" in result:
        out["groups"] = [_trim(g["models_killed"]["pmf"]) for g in result["groups"]]
    return out


def build() -> None:
    from engine import simulate

    reqs = requests()
    data = [{"request": q, "result": summary(simulate(q))} for q in reqs]
    FIXTURE.parent.mkdir(exist_ok=True)
    with gzip.open(FIXTURE, "wt", encoding="utf-8") as fh:
        json.dump(data, fh, separators=(",", ":"))
    print(f"wrote {len(data)} requests to {FIXTURE} ({FIXTURE.stat().st_size:,} bytes)", file=sys.stderr)


def load() -> list[dict[str, Any]]:
    with gzip.open(FIXTURE, "rt", encoding="utf-8") as fh:
        return json.load(fh)


if __name__ == "__main__":
    build()
