"""Measure one engine request in a fresh subprocess: wall time of `simulate`, peak RSS, estimate.

Shared by `bench/bench_budget.py` (the budget search) and `tests/engine/test_budget.py` (its bounded
version). The child gets an address-space limit (RLIMIT_AS, set by `bot.sim.worker.limit_address_space`
as in the bot's simulation workers) so a request that would need gigabytes fails with MemoryError
inside the child instead of taking the machine (or the test run) down.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

# Budget of issue 9 (Build 2) for one engine request on this 2-core machine.
BUDGET_SECONDS = 2.0
BUDGET_BYTES = 256 * 2**20
CHILD_AS_LIMIT = 1536 * 2**20  # numpy and BLAS threads reserve address space well beyond their RSS

_SERVER = r"""
import json, os, resource, sys, time
limit = int(sys.argv[1])
from engine import prepare, simulate
from engine.api import estimate
from engine.errors import RequestError
from engine.request import validate
from engine.rules import resolve
from bot.sim.worker import WARM_REQUEST, limit_address_space  # as the bot's simulation workers run
simulate(WARM_REQUEST)  # warm imports and caches
simulate({**WARM_REQUEST, "method": "montecarlo", "trials": 100, "seed": 1})


def probe(request):
    out = {}
    try:
        req, groups = prepare(request)
        out["accepted"] = True
    except RequestError as e:
        out["accepted"] = False
        out["refusal"] = e.message
        try:
            r = validate(request)
            out["estimate"] = estimate(r, [resolve(g, r.target, r.context, r.attacker, r.edition) for g in r.groups])
        except Exception:
            pass
        return out
    out["estimate"] = estimate(req, groups)
    limit_address_space(limit)
    out["idle_rss"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    start = time.perf_counter()
    try:
        simulate(request)
    except MemoryError:
        out["memory_error"] = True
    out["seconds"] = time.perf_counter() - start
    out["peak_rss"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return out


for line in sys.stdin:
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # a fresh copy of the warm interpreter per request: its own RSS peak and RLIMIT_AS
        os.close(r)
        try:
            data = json.dumps(probe(json.loads(line)))
        except BaseException as e:
            data = json.dumps({"accepted": True, "killed": f"{type(e).__name__}: {e}"[:300]})
        os.write(w, data.encode())
        os._exit(0)
    os.close(w)
    chunks = []
    while (chunk := os.read(r, 65536)):
        chunks.append(chunk)
    os.close(r)
    _, status = os.waitpid(pid, 0)
    text = b"".join(chunks).decode() or json.dumps({"accepted": True, "killed": f"status {status}"})
    print(text, flush=True)
"""


class Prober:
    """A warm interpreter that forks one child per request (fast: no import per measurement).

    A forked child's peak RSS starts from the warm parent's (~40 MB: Python, numpy, the engine),
    which is what a pool worker holds too, so `peak_rss` is comparable to the budget as is."""

    def __init__(self, as_limit: int = CHILD_AS_LIMIT) -> None:
        env = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
               "PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
        self._p = subprocess.Popen([sys.executable, "-c", _SERVER, str(as_limit)], stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, text=True, cwd=ROOT, env=env)

    def measure(self, request: dict[str, Any]) -> dict[str, Any]:
        assert self._p.stdin and self._p.stdout
        self._p.stdin.write(json.dumps(request) + "\n")
        self._p.stdin.flush()
        return json.loads(self._p.stdout.readline())

    def close(self) -> None:
        if self._p.stdin:
            self._p.stdin.close()
        self._p.wait(timeout=30)

    def __enter__(self) -> Prober:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_CHILD = r"""
import json, resource, sys, time
limit = int(sys.argv[1])
from bot.sim.worker import WARM_REQUEST, limit_address_space  # as the bot's simulation workers run
limit_address_space(limit)
from engine import prepare, simulate
from engine.api import estimate
from engine.errors import RequestError
request = json.loads(sys.stdin.read())
simulate(WARM_REQUEST)  # warm imports and caches
idle = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
out = {"idle_rss": idle}
try:
    req, groups = prepare(request)
    out["accepted"] = True
except RequestError as e:
    out["accepted"] = False
    out["refusal"] = e.message
    try:
        from engine.request import validate
        from engine.rules import resolve
        r = validate(request)
        gs = [resolve(g, r.target, r.context, r.attacker, r.edition) for g in r.groups]
        out["estimate"] = estimate(r, gs)
    except Exception:
        pass
    print(json.dumps(out)); sys.exit(0)
out["estimate"] = estimate(req, groups)
start = time.perf_counter()
try:
    simulate(request)
    out["seconds"] = time.perf_counter() - start
except MemoryError:
    out["seconds"] = time.perf_counter() - start
    out["memory_error"] = True
out["peak_rss"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps(out))
"""


def measure(request: dict[str, Any], *, as_limit: int = CHILD_AS_LIMIT, timeout: float = 120) -> dict[str, Any]:
    """Run `request` in a fresh interpreter; returns accepted, estimate, seconds, peak_rss, idle_rss
    (and memory_error / refusal / killed when they apply)."""
    env = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
           "PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    try:
        p = subprocess.run([sys.executable, "-c", _CHILD, str(as_limit)], input=json.dumps(request),
                           capture_output=True, text=True, cwd=ROOT, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return {"accepted": True, "killed": "timeout", "seconds": timeout}
    if p.returncode != 0 or not p.stdout.strip():
        return {"accepted": True, "killed": f"exit {p.returncode}: {p.stderr.strip()[-300:]}"}
    return json.loads(p.stdout.strip().splitlines()[-1])


def over_budget(m: dict[str, Any]) -> bool:
    """An accepted request that broke the budget (time, memory, or died trying)."""
    if not m.get("accepted"):
        return False
    return bool(m.get("killed") or m.get("memory_error") or m.get("seconds", 0) > BUDGET_SECONDS
                or m.get("peak_rss", 0) > BUDGET_BYTES)
