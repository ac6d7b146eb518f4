"""Test-only (tests/sim/pooldriver.py, tests/e2e/test_sim_memory.py): switch off the engine's up-front
cost limits in every Python process started with this folder on PYTHONPATH, the bot and its simulation
workers alike, so a request the estimate would refuse reaches a worker. That stands for an estimate
that is wrong, which is what the worker pool's address-space limit is for. Validation (dice, models,
wounds) stays on."""

import engine.limits as _limits

for _name in ("MAX_ESTIMATED_SECONDS", "MAX_ESTIMATED_SECONDS_MONTECARLO", "MAX_ESTIMATED_BYTES", "MAX_EXACT_WORK",
              "MAX_TOTAL_WOUNDS_EXACT_10E_DEVASTATING", "MAX_MIXED_STATES_EXACT", "MAX_MONTECARLO_WORK"):
    setattr(_limits, _name, float("inf"))
