"""Drives a SimulationService in its own process with the engine's cost limits off (tests/sim/estimate_off),
for tests/sim/test_pool.py: `python -m tests.sim.pooldriver memory|kill` prints one JSON object.

A process of its own because the limits must be off in the workers too, and workers are forked from
a forkserver that keeps the environment of the process that started it first.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
from typing import Any

from bot.sim.service import SimulationService

# The request of issue 9: 2.6 GB and 60 s in one process before the estimate refused it.
ISSUE = {"edition": "10e", "volley": [{"models": 1, "weapon": {
    "attacks": 200, "skill": 2, "strength": 8, "ap": -3, "damage": "10D6+200",
    "keywords": ["TWIN-LINKED", "DEVASTATING WOUNDS", "SUSTAINED HITS D3"]}}],
    "target": {"models": 4, "toughness": 4, "save": 4, "wounds": 100, "feel_no_pain": 5}}
SMALL = {"volley": [{"models": 5, "weapon": {"attacks": 2, "skill": 3, "strength": 4, "damage": 1}}],
         "target": {"models": 5, "toughness": 4, "save": 3, "wounds": 2}}


def montecarlo(trials: int) -> dict[str, Any]:
    """17 models with 10D6 attacks: about 2 s per 50,000 trials here."""
    return {"method": "montecarlo", "trials": trials, "seed": 1, "target": SMALL["target"],
            "volley": [{"models": 17, "weapon": {"attacks": "10D6", "skill": 3, "strength": 4, "damage": 1}}]}


def outcome(value: Any) -> dict[str, Any]:
    if isinstance(value, BaseException):
        return {"error": type(value).__name__, "message": str(value)}
    result, _png = value
    return {"ok": result["method"]}


async def running(service: SimulationService, count: int) -> list[int]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        pids = service.pool.running_pids() if service.pool else []
        if len(pids) >= count:
            return pids
        await asyncio.sleep(0.005)
    raise SystemExit("the requests never started")


async def memory(service: SimulationService) -> dict[str, Any]:
    """The issue's request twice at once, then a small one."""
    pids = sorted(service.pool.pids())
    both = await asyncio.gather(service.run(ISSUE, with_plot=False), service.run(ISSUE, with_plot=False),
                                return_exceptions=True)
    after = await asyncio.gather(service.run(SMALL), return_exceptions=True)
    return {"both": [outcome(o) for o in both], "after": outcome(after[0]), "same_workers": sorted(service.pool.pids()) == pids,
            "replacements": service.pool.replacements}


async def kill(service: SimulationService) -> dict[str, Any]:
    """A long request, then a second one; SIGKILL the first one's worker while both run."""
    long = asyncio.create_task(service.run(montecarlo(1_000_000), with_plot=False))
    (victim,) = await running(service, 1)
    short = asyncio.create_task(service.run(montecarlo(50_000), with_plot=False))
    await running(service, 2)
    os.kill(victim, signal.SIGKILL)
    outcomes = await asyncio.gather(long, short, return_exceptions=True)
    after = await asyncio.gather(service.run(SMALL), return_exceptions=True)
    return {"long": outcome(outcomes[0]), "short": outcome(outcomes[1]), "after": outcome(after[0]),
            "replacements": service.pool.replacements, "victim_gone": victim not in service.pool.pids()}


async def main(scenario: str) -> None:
    service = SimulationService(workers=2)
    try:
        await asyncio.to_thread(service.start)
        report = await {"memory": memory, "kill": kill}[scenario](service)
        report["admitted"] = service.admitted
    finally:
        service.close()
    print(json.dumps(report))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
