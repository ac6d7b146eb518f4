"""Many requests at once (issue 22): every attacker x target cell of a matchup, the variants of a compare.

The whole batch is compiled (engine.plan) and its estimated cost summed before any of it is evaluated, so
a batch too large for the budget is refused up front, naming the request where the sum crossed the limit.
Requests that share a weapon-and-target profile share their compiled plans (cached by value).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from engine import limits, plan
from engine.errors import RequestError
from engine.plan import Checked, Plan


@dataclass(frozen=True)
class BatchResult:
    """Results in request order: the numbers a matrix needs as arrays (leading batch axis), and each full
    contract-1 result."""

    killed_mean: np.ndarray  # (B,) expected models destroyed
    p_wipe: np.ndarray  # (B,) probability the target unit is destroyed
    damage_mean: np.ndarray  # (B,) expected wounds lost
    models: np.ndarray  # (B,) models in the target unit before the volley
    results: list[dict[str, Any]]


def check_batch(requests: list[Any], max_seconds: float | None = None) -> list[tuple[bytes | None, Plan | Checked]]:
    """Check every request and the summed cost estimate (validation, keywords, size limits: no
    distribution or operator is built); RequestError (field "[i]" or "[i].<field>")."""
    if not isinstance(requests, list) or not requests:
        raise RequestError("expected at least one request in the list", "")
    if len(requests) > limits.MAX_BATCH_REQUESTS:
        raise RequestError(f"{len(requests):,} requests is more than the limit of {limits.MAX_BATCH_REQUESTS:,} "
                           "in one batch", "")
    budget = limits.MAX_BATCH_ESTIMATED_SECONDS if max_seconds is None else max_seconds
    checked: list[tuple[bytes | None, Plan | Checked]] = []
    total = 0.0
    for i, item in enumerate(requests):
        key, done = plan.cached(item)
        try:
            entry = done if done is not None else plan.check(item)
        except RequestError as exc:
            raise RequestError(exc.message, f"[{i}]" + (f".{exc.field}" if exc.field else "")) from None
        total += entry.cost["seconds"]
        if total > budget:
            raise RequestError(
                f"the first {i + 1} requests are estimated at {total:.1f} s together, more than the batch "
                f"limit of {budget:g} s; send fewer or smaller requests", f"[{i}]")
        checked.append((key, entry))
    return checked


def compile_batch(requests: list[Any], max_seconds: float | None = None) -> list[Plan]:
    """The plans of a batch, compiled only once the whole batch has passed `check_batch`."""
    return [entry if isinstance(entry, Plan) else plan.compile_checked(key, entry)
            for key, entry in check_batch(requests, max_seconds)]


def estimate_batch(requests: list[Any], max_seconds: float | None = None) -> dict[str, float]:
    """The summed cost estimate of a batch ({"seconds", "bytes": the largest single request}), or the
    RequestError the batch would be refused with."""
    costs = [entry.cost for _, entry in check_batch(requests, max_seconds)]
    return {"seconds": sum(c["seconds"] for c in costs), "bytes": max(c["bytes"] for c in costs)}


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
