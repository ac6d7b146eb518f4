"""Cogitator's combat engine: exact damage distributions for 10th and 11th edition (pure numpy).

Public API (contract 1 of shared/DESIGN.md):
    simulate(request: dict) -> dict     # raises RequestError(message, field) for invalid input
    validate(request: dict) -> Request  # the checks alone, without the size limits
    prepare(request: dict)              # validation + size limits, before any heavy work
    limits                              # the documented size limits
"""

from engine import limits
from engine.api import prepare, simulate
from engine.errors import RequestError
from engine.request import validate

__all__ = ["RequestError", "limits", "prepare", "simulate", "validate"]
