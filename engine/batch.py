"""Many requests at once (issue 22): every attacker x target cell of a matchup, the variants of a compare.

The whole batch is compiled (engine.plan) and its estimated cost summed before any of it is evaluated, so
a batch too large for the budget is refused up front, naming the request where the sum crossed the limit.
Requests that share a weapon-and-target profile share their compiled plans (cached by value).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from engine import limits
from engine.errors import RequestError
from engine.plan import Plan, compile


@dataclass(frozen=True)
class BatchResult:
    """Results in request order: the numbers a matrix needs as arrays (leading batch axis), and each full
    contract-1 result."""

    killed_mean: np.ndarray  # (B,) expected models destroyed
    p_wipe: np.ndarray  # (B,) probability the target unit is destroyed
    damage_mean: np.ndarray  # (B,) expected wounds lost
    models: np.ndarray  # (B,) models in the target unit before the volley
    results: list[dict[str, Any]]


def compile_batch(requests: list[Any], max_seconds: float | None = None) -> list[Plan]:
    """Compile every request and check the summed cost estimate; RequestError (field "[i]" or
    "[i].<field>") before anything is evaluated."""
    if not isinstance(requests, list) or not requests:
        raise RequestError("expected at least one request in the list", "")
    budget = limits.MAX_BATCH_ESTIMATED_SECONDS if max_seconds is None else max_seconds
    plans, total = [], 0.0
    for i, item in enumerate(requests):
        try:
            plan = compile(item)
        except RequestError as exc:
            raise RequestError(exc.message, f"[{i}]" + (f".{exc.field}" if exc.field else "")) from None
        total += plan.cost["seconds"]
        if total > budget:
            raise RequestError(
                f"the first {i + 1} requests are estimated at {total:.1f} s together, more than the batch "
                f"limit of {budget:g} s; send fewer or smaller requests", f"[{i}]")
        plans.append(plan)
    return plans


def estimate_batch(requests: list[Any], max_seconds: float | None = None) -> dict[str, float]:
    """The summed cost estimate of a batch ({"seconds", "bytes": the largest single request}), or the
    RequestError the batch would be refused with."""
    plans = compile_batch(requests, max_seconds)
    return {"seconds": sum(p.cost["seconds"] for p in plans), "bytes": max(p.cost["bytes"] for p in plans)}


def evaluate_batch(requests: list[Any], max_seconds: float | None = None) -> BatchResult:
    """Evaluate a batch of contract-1 requests (refused as a whole when its estimate is over budget)."""
    results = [plan.run() for plan in compile_batch(requests, max_seconds)]
    return BatchResult(
        killed_mean=np.array([r["models_killed"]["mean"] for r in results]),
        p_wipe=np.array([r["p_wipe"] for r in results]),
        damage_mean=np.array([r["damage"]["mean"] for r in results]),
        models=np.array([len(r["models_killed"]["pmf"]) - 1 for r in results]),
        results=results,
    )
