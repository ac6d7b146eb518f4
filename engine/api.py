"""`simulate(request) -> result`: contract 1 of shared/DESIGN.md.

Order of work: validate (engine.request) -> resolve each weapon group under the edition
(engine.rules) -> refuse anything beyond engine.limits (before any heavy computation) -> run the exact
or Monte Carlo engine -> assemble the result dict.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from engine import cost, exact, limits, mixed, montecarlo
from engine.errors import RequestError
from engine.request import Request, validate
from engine.rules import ResolvedGroup, resolve


def prepare(raw: Any) -> tuple[Request, list[ResolvedGroup]]:
    """Validate a request and resolve its weapon groups; raises RequestError, including for size."""
    req = validate(raw)
    groups = [resolve(g, req.target, req.context, req.attacker, req.edition) for g in req.groups]
    check_size(req, groups)
    return req, groups


def _max_hits_per_die(g: ResolvedGroup) -> int:
    return 1 + (g.sustained.size - 1 if g.sustained is not None and not g.auto_hit else 0)


def estimate(req: Request, groups: list[ResolvedGroup]) -> dict[str, float]:
    """Estimated cost of a validated request (engine.cost): {"seconds": ..., "bytes": ...}."""
    if req.method == "exact" and req.target.mixed:
        states, work = mixed.work_estimate(groups, req.target, req.edition.devastating_spills_after_volley)
        return cost.mixed_cost(states, work)
    if req.method == "exact":
        c = cost.exact_cost(groups, req.target, req.edition.devastating_spills_after_volley)
        return {"seconds": c.seconds, "bytes": c.peak_bytes}
    per_trial = sum(g.models * (g.attacks_per_model.size - 1) * _max_hits_per_die(g) for g in groups)
    chunk = min(req.trials, cost.montecarlo_chunk(groups))
    return {"seconds": cost.montecarlo_seconds(groups, req.target, req.trials),
            "bytes": cost.BYTES_MC_TRIAL * req.trials + cost.BYTES_MC_SLOT * chunk * max(per_trial, 1)}


def check_size(req: Request, groups: list[ResolvedGroup]) -> None:
    """Refuse requests whose work would exceed the documented limits (engine.limits): hard caps on
    attack dice and wounds, then the cost model's estimate of seconds and peak memory (engine.cost)."""
    dice_max = sum(g.models * (g.attacks_per_model.size - 1) for g in groups)
    t = req.target
    if req.method == "exact":
        if dice_max > limits.MAX_ATTACK_DICE_EXACT:
            raise RequestError(
                f"up to {dice_max} attack dice is more than the exact engine's limit of "
                f"{limits.MAX_ATTACK_DICE_EXACT}; use \"method\": \"montecarlo\"", "volley")
        if t.mixed:  # contract 1b: dense states over both allocation queues (engine.mixed)
            states, work = mixed.work_estimate(groups, t, req.edition.devastating_spills_after_volley)
            if states > limits.MAX_MIXED_STATES_EXACT:
                raise RequestError(
                    f"a mixed unit of {t.models} models has {states} allocation states, more than the exact "
                    f"engine's limit of {limits.MAX_MIXED_STATES_EXACT}; use \"method\": \"montecarlo\"",
                    "target.groups")
            est = cost.mixed_cost(states, work)
            if work > limits.MAX_EXACT_WORK or est["bytes"] > limits.MAX_ESTIMATED_BYTES:
                raise RequestError(
                    f"this volley is too large to compute exactly against a mixed unit (estimated work "
                    f"{work:.2g} > {limits.MAX_EXACT_WORK:.2g}, {est['bytes'] / 2**20:,.0f} MB); "
                    f"use \"method\": \"montecarlo\"", "method")
            return
        pending = req.edition.devastating_spills_after_volley and any(g.devastating for g in groups)
        if pending and t.total_wounds > limits.MAX_TOTAL_WOUNDS_EXACT_10E_DEVASTATING:
            raise RequestError(
                f"10e DEVASTATING WOUNDS against {t.total_wounds} wounds is more than the exact engine's "
                f"limit of {limits.MAX_TOTAL_WOUNDS_EXACT_10E_DEVASTATING}; use \"method\": \"montecarlo\"",
                "target")
        est = estimate(req, groups)
        if est["seconds"] > limits.MAX_ESTIMATED_SECONDS or est["bytes"] > limits.MAX_ESTIMATED_BYTES:
            raise RequestError(
                f"this volley is too large to compute exactly (estimated {est['seconds']:.1f} s and "
                f"{est['bytes'] / 2**20:,.0f} MB; the limits are {limits.MAX_ESTIMATED_SECONDS:g} s and "
                f"{limits.MAX_ESTIMATED_BYTES / 2**20:,.0f} MB); use \"method\": \"montecarlo\"", "method")
    else:
        if dice_max > limits.MAX_ATTACK_DICE_MONTECARLO:
            raise RequestError(
                f"up to {dice_max} attack dice is more than the limit of {limits.MAX_ATTACK_DICE_MONTECARLO}",
                "volley")
        per_trial = sum(g.models * (g.attacks_per_model.size - 1) * _max_hits_per_die(g) for g in groups)
        if per_trial * req.trials > limits.MAX_MONTECARLO_WORK:
            raise RequestError(
                f"{req.trials} trials of up to {per_trial} rolls each is more than the limit of "
                f"{limits.MAX_MONTECARLO_WORK:.2g} rolls; use fewer trials", "trials")
        est = estimate(req, groups)
        if est["seconds"] > limits.MAX_ESTIMATED_SECONDS_MONTECARLO or est["bytes"] > limits.MAX_ESTIMATED_BYTES:
            raise RequestError(
                f"{req.trials} trials of this volley would take about {est['seconds']:.1f} s and "
                f"{est['bytes'] / 2**20:,.0f} MB, more than the limits of "
                f"{limits.MAX_ESTIMATED_SECONDS_MONTECARLO:g} s and "
                f"{limits.MAX_ESTIMATED_BYTES / 2**20:,.0f} MB; use fewer trials", "trials")


def hazard_pmf(req: Request, groups: list[ResolvedGroup]) -> np.ndarray:
    """Mortal wounds the attacker suffers from hazard rolls: one roll per HAZARDOUS weapon, i.e. per
    model of a HAZARDOUS group (10e seed Hazardous; 11e 24.15 and 06.03)."""
    rolls = sum(g.models for g in groups if g.hazardous)
    p_fail, mw = req.edition.hazard(req.attacker.keywords)
    fails = exact._binom(rolls, p_fail)
    out = np.zeros((fails.size - 1) * mw + 1)
    out[::mw] = fails
    return out


def _pmf_list(p: np.ndarray) -> list[float]:
    return np.maximum(np.asarray(p, dtype=float), 0.0).tolist()


def _mean(p: np.ndarray) -> float:
    return float(np.dot(np.arange(p.size), p))


def _collect(groups: list[ResolvedGroup]) -> tuple[list[str], list[str], list[str]]:
    applied, ignored, notes = [], [], []
    for g in groups:
        for src, dst in ((g.applied, applied), (g.ignored, ignored), (g.notes, notes)):
            for item in src:
                if item not in dst:
                    dst.append(item)
    return applied, ignored, notes


def simulate(request: Any) -> dict[str, Any]:
    """Run one contract-1 request (defaults applied here) and return the contract-1 result."""
    req, groups = prepare(request)
    applied, ignored, notes = _collect(groups)
    hazard = hazard_pmf(req, groups)
    k = req.target.models
    groups_killed = None
    if req.method == "exact":
        if req.target.mixed:
            r = mixed.run(groups, req.target, req.edition.devastating_spills_after_volley)
            groups_killed = r["groups"]
        else:
            r = exact.run(groups, req.target, req.edition.devastating_spills_after_volley)
        killed, damage = r["killed"], r["damage"]
        result = {
            "edition": req.edition.code,
            "method": "exact",
            "stages": {key: float(v) for key, v in r["stages"].items()},
            "models_killed": {"mean": _mean(killed), "pmf": _pmf_list(killed)},
            "damage": {"mean": _mean(damage), "pmf": _pmf_list(damage)},
            "p_wipe": float(killed[k]),
        }
    else:
        rng = np.random.default_rng(req.seed)
        trials = req.trials
        if req.target.mixed:
            r = montecarlo.run_mixed(groups, req.target, req.edition.devastating_spills_after_volley, trials, rng)
            groups_killed = [np.bincount(row, minlength=mg.models + 1) / trials
                             for mg, row in zip(req.target.groups, r["groups"], strict=True)]
        else:
            r = montecarlo.run(groups, req.target, req.edition.devastating_spills_after_volley, trials, rng)
        killed_pmf = np.bincount(r["killed"], minlength=k + 1) / trials
        damage_pmf = np.bincount(r["damage"], minlength=req.target.total_wounds + 1) / trials
        wiped = (r["killed"] == k).astype(float)
        # The attacker's hazard rolls (independent of the target) are rolled too.
        rolls = sum(g.models for g in groups if g.hazardous)
        fail_max = req.edition.hazard_fail_max
        _, mw = req.edition.hazard(req.attacker.keywords)
        haz = (rng.integers(1, 7, (trials, rolls)) <= fail_max).sum(axis=1) * mw

        def se(x: np.ndarray) -> float | None:
            """Standard error of the mean; None (JSON null) when one trial cannot estimate it."""
            return float(np.std(x, ddof=1) / math.sqrt(trials)) if trials > 1 else None

        result = {
            "edition": req.edition.code,
            "method": "montecarlo",
            "stages": {key: float(v.mean()) for key, v in r["stages"].items()},
            "models_killed": {"mean": float(r["killed"].mean()), "pmf": _pmf_list(killed_pmf)},
            "damage": {"mean": float(r["damage"].mean()), "pmf": _pmf_list(damage_pmf)},
            "p_wipe": float(wiped.mean()),
            "standard_error": {
                "stages": {key: se(v) for key, v in r["stages"].items()},
                "models_killed": se(r["killed"].astype(float)),
                "damage": se(r["damage"].astype(float)),
                "p_wipe": se(wiped),
                "attacker_mortal_wounds": se(haz.astype(float)),
                "trials": trials,
            },
        }
        hazard = np.bincount(haz.astype(np.int64), minlength=hazard.size) / trials
    result["attacker_mortal_wounds"] = {"mean": _mean(hazard), "pmf": _pmf_list(hazard)}
    if req.target.groups:  # contract 1b: kills per model group, in request order
        if groups_killed is None:
            groups_killed = [np.asarray(result["models_killed"]["pmf"])]
        result["groups"] = [{"name": mg.name, "models_killed": {"mean": _mean(p), "pmf": _pmf_list(p)}}
                            for mg, p in zip(req.target.groups, groups_killed, strict=True)]
    result["ignored_keywords"] = ignored
    result["applied_keywords"] = applied
    result["notes"] = notes
    return result
