"""The checks before any work (contract 1 of shared/DESIGN.md): validate (engine.request) -> resolve each
weapon group under the edition (engine.rules) -> refuse anything beyond engine.limits, with the cost
model's estimate (engine.cost). engine.plan compiles on top of these and runs the engines.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from engine import cost, exact, limits, mixed
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


def check_size(req: Request, groups: list[ResolvedGroup]) -> dict[str, float]:
    """Refuse requests whose work would exceed the documented limits (engine.limits): hard caps on
    attack dice and wounds, then the cost model's estimate of seconds and peak memory (engine.cost),
    which is returned."""
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
            return est
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
        return est
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
    return est


def hazard_pmf(req: Request, groups: list[ResolvedGroup]) -> np.ndarray:
    """Mortal wounds the attacker suffers from hazard rolls: one roll per HAZARDOUS weapon, i.e. per
    model of a HAZARDOUS group (10e seed Hazardous; 11e 24.15 and 06.03)."""
    rolls = sum(g.models for g in groups if g.hazardous)
    p_fail, mw = req.edition.hazard(req.attacker.keywords)
    fails = exact._binom(rolls, p_fail)
    out = np.zeros((fails.size - 1) * mw + 1)
    out[::mw] = fails
    return out
