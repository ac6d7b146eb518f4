"""Cogitator's combat engine: exact damage distributions for 10th and 11th edition (pure numpy).

Public API (contract 1 of shared/DESIGN.md):
    simulate(request: dict) -> dict     # raises RequestError(message, field) for invalid input
    compile(request: dict) -> Plan      # the compiled request (engine.plan), cached by value; .run(), .cost
    evaluate_batch(requests) -> BatchResult, estimate_batch(requests)   # many requests (engine.batch)
    validate(request: dict) -> Request  # the checks alone, without the size limits
    prepare(request: dict)              # validation + size limits, before any heavy work
    limits                              # the documented size limits
"""

import os

# The engine multiplies small matrices (tens to hundreds of states): OpenBLAS threads only contend
# for the cores the bot shares (measured: 68x127 @ 127x127 takes 0.3 ms on one thread, 6-34 ms with
# threads on a loaded 2-core host). Must be set before numpy loads; an explicit setting wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from engine import limits  # noqa: E402
from engine.api import prepare  # noqa: E402
from engine.batch import BatchResult, estimate_batch, evaluate_batch  # noqa: E402
from engine.errors import RequestError  # noqa: E402
from engine.plan import Plan, compile, simulate  # noqa: E402,A004
from engine.request import validate  # noqa: E402

__all__ = ["BatchResult", "Plan", "RequestError", "compile", "estimate_batch", "evaluate_batch", "limits", "prepare",
           "simulate", "validate"]
