"""Simulations in separate worker processes, each under an address-space limit (issue 9).

Why processes: the engine refuses oversized requests before any work (engine.cost), but an estimate
can be wrong, and one wrong estimate in the bot's own process would grow it until the kernel's OOM
killer ends the bot for every server (the service runs under MemoryMax=832M). In a worker capped with
RLIMIT_AS the same mistake is a MemoryError in that worker only: the request is answered "too large to
compute exactly" and the worker takes the next one.

What can still go wrong, and what happens:
- a worker dies (SIGKILL from the OOM killer or an operator, a crash): `ProcessPoolExecutor` then fails
  every job it holds and stops its other workers. The pool replaces the executor; the request whose
  worker died is answered "too large", the others (stopped only because a sibling died, or not yet
  started) run once more on the new workers. Each job writes its worker's pid into a shared slot, so
  the pool knows which request was on the worker that died;
- a request runs past its time: the worker's own alarm stops it (`worker.compute`); if the worker does
  not answer `GRACE_S` later (stuck inside C code) its process is killed, as above.

Warm-pool overhead: a forkserver (not fork from the bot's threaded event loop) imports numpy and the
engine and draws one chart before it forks any worker (bot.sim.forkserver_warm), so a
worker starts in milliseconds, already warm, sharing those pages copy-on-write. Only the request dict
and the result (dict + PNG bytes) cross the process boundary.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import os
import signal
import threading
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from bot.ops.metrics import WORKER_DEATHS
from bot.sim import worker

log = logging.getLogger("cogitator.sim.pool")

GRACE_S = 5.0  # after a job's own time limit, how long the pool waits before killing its worker
SLOTS = 64  # job slots shared with the workers; more than the service ever admits at once
_PRELOAD = ["bot.sim.forkserver_warm"]


class SimPool:
    """A warm ProcessPoolExecutor of `workers` processes capped at `limit_bytes` each, which replaces
    itself when a worker dies. `run` returns the worker's outcome tuple (bot.sim.worker.compute), or
    ("died",) for the request whose worker died, ("timeout",) for one that had to be killed.

    The army-list reader (bot.armies.reader) runs a pool of its own through `call`: `name` says whose
    workers a log line is about, `warm` (a module-level function) runs once in each new worker."""

    def __init__(self, workers: int, limit_bytes: int, *, name: str = "simulation",
                 warm: Callable[[], None] | None = None) -> None:
        self._workers = workers
        self._limit = limit_bytes
        self.name = name
        self._warm = warm
        self._ctx = multiprocessing.get_context("forkserver")
        self._ctx.set_forkserver_preload(_PRELOAD)
        self._slots = self._ctx.Array("i", SLOTS, lock=False)
        self._free = list(range(SLOTS))
        self._lock = threading.Lock()
        self._closed = False
        self._executor: ProcessPoolExecutor | None = None
        self.replacements = 0  # executors replaced after a worker died (tests, logs)
        self._limit_error_logged = False

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        """Start every worker now and wait until they answer (blocking: call it from a thread). Logs an
        error when the workers could not cap their address space (they still answer, without the cap)."""
        with self._lock:
            executor = self._current_locked()
        for future in [executor.submit(worker.ping) for _ in range(self._workers)]:
            try:
                _pid, limit_error = future.result(timeout=120)
            except Exception:  # noqa: BLE001 - a broken start shows on the first request, which replaces it
                continue
            if limit_error and not self._limit_error_logged:
                self._limit_error_logged = True
                log.error(f"{self.name} workers run without their address-space limit (allow the setrlimit and "
                          "prlimit64 system calls)", extra={"error": limit_error})

    def _started_locked(self) -> bool:
        """The executor exists and has all its workers, so `submit` forks none (a worker only ever leaves
        by the executor breaking, which `_submit` then reports)."""
        executor = self._executor
        return executor is not None and len(getattr(executor, "_processes", None) or {}) >= self._workers

    def _current_locked(self) -> ProcessPoolExecutor:
        if self._closed:
            raise RuntimeError("the simulation pool is closed")
        if self._executor is None:
            self._executor = ProcessPoolExecutor(max_workers=self._workers, mp_context=self._ctx,
                                                 initializer=worker.initialise,
                                                 initargs=(self._limit, self._slots, self._warm, os.getpid()))
        return self._executor

    def _replace(self, broken: ProcessPoolExecutor) -> None:
        """Drop `broken` (its workers are stopped by the executor itself); the next submit starts a new one."""
        with self._lock:
            if self._executor is not broken:
                return  # another request replaced it already
            self._executor = None
            self.replacements += 1
        WORKER_DEATHS.labels(self.name).inc()
        log.warning(f"{self.name} worker died; its pool was replaced", extra={"replacements": self.replacements})
        _shutdown(broken)

    def close(self) -> None:
        """Stop every worker; running requests fail. Safe to call twice."""
        with self._lock:
            self._closed = True
            executor, self._executor = self._executor, None
        if executor is not None:
            _shutdown(executor, kill=True)

    def pids(self) -> list[int]:
        """Worker process ids (tests, the benchmark's memory report)."""
        executor = self._executor
        return [p.pid for p in list((getattr(executor, "_processes", None) or {}).values()) if p.pid]

    def alive(self) -> int:
        """How many worker processes are running now (readiness, metrics; read from any thread)."""
        executor = self._executor
        try:
            processes = list((getattr(executor, "_processes", None) or {}).values())
        except RuntimeError:  # the executor changed its table while we copied it: ask again next time
            return 0
        return sum(1 for p in processes if p.is_alive())

    def running_pids(self) -> list[int]:
        """Pids of the workers running a request right now (tests)."""
        return [pid for pid in self._slots if pid]

    # ------------------------------------------------------------------ requests
    async def _submit_soon(self, slot: int, timeout: float, job: Callable[..., tuple],
                           args: tuple) -> tuple[ProcessPoolExecutor, Future, dict[int, Any]]:
        """Submit on the event loop when the executor has all its workers: that only queues the job and
        wakes the executor's thread (a hop to a thread and back cost ~1 ms, more under load, of a /sim
        that computes in ~3 ms). A new or broken executor forks workers while submitting, which blocks:
        that happens in a thread."""
        try:
            return self._submit(slot, timeout, job, args, inline=True)
        except _NotStarted:
            return await asyncio.to_thread(self._submit, slot, timeout, job, args)

    def _submit(self, slot: int, timeout: float, job: Callable[..., tuple], args: tuple, *,
                inline: bool = False) -> tuple[ProcessPoolExecutor, Future, dict[int, Any]]:
        """Submit the job to the current executor (replaced first if it broke). `inline`: raise _NotStarted
        instead of anything that would fork a worker."""
        self._slots[slot] = 0
        with self._lock:
            if inline and not self._started_locked():
                raise _NotStarted
            executor = self._current_locked()
        try:
            future = executor.submit(job, slot, timeout, *args)
        except BrokenProcessPool:  # broke since the last request: replace it and submit again, once
            if inline:
                raise _NotStarted from None
            self._replace(executor)
            with self._lock:
                executor = self._current_locked()
            future = executor.submit(job, slot, timeout, *args)
        # The executor keeps no public list of its workers; a copy now tells later which one died.
        return executor, future, dict(getattr(executor, "_processes", None) or {})

    async def run(self, args: tuple, *, timeout: float, job: Callable[..., tuple] = worker.compute) -> tuple:
        """Run job(slot, timeout, *args) in a worker: worker.compute (a simulation) or worker.run (any
        function, e.g. reading an army list); see the class docstring for the result."""
        with self._lock:
            if self._closed:
                raise RuntimeError("the simulation pool is closed")
            slot = self._free.pop()  # never empty: the service admits far fewer requests than SLOTS
        try:
            for attempt in (1, 2):
                executor, future, processes = await self._submit_soon(slot, timeout, job, args)
                try:
                    return await asyncio.wait_for(asyncio.wrap_future(future), timeout + GRACE_S)
                except TimeoutError:
                    return self._stop_overdue(future, slot)
                except BrokenProcessPool:
                    if self._closed:
                        raise RuntimeError("the simulation pool is closed") from None
                    culprit = self._died_running(slot, {**processes, **(getattr(executor, "_processes", None) or {})})
                    self._replace(executor)
                    if culprit or attempt == 2:
                        return ("died",)
                    log.info(f"{self.name} rerun: its worker was stopped because another one died")
            return ("died",)
        finally:
            with self._lock:
                # Reused last: a job abandoned by a cancelled caller may still clear its slot when it ends.
                self._free.insert(0, slot)

    async def call(self, function: Callable[..., Any], args: tuple, *, timeout: float,
                   background: bool = False) -> tuple:
        """function(*args) in a worker (bot.sim.worker.run): ("ok", its result), or the outcomes of `run`.
        `background`: in a thread of the worker at lower priority (worker.run_background)."""
        return await self.run((function, *args), timeout=timeout,
                              job=worker.run_background if background else worker.run)

    def _died_running(self, slot: int, processes: dict[int, Any]) -> bool:
        """True when the worker that ran this job is the one that died: it started the job (its pid is in
        the slot) and it ended by itself, not by the executor's SIGTERM to its surviving siblings."""
        pid = self._slots[slot]
        process = processes.get(pid) if pid else None
        if process is None:
            return False
        code = process.exitcode
        return code is not None and code != -signal.SIGTERM

    def _stop_overdue(self, future: Future, slot: int) -> tuple:
        """The job's own alarm did not stop it: kill its worker (the pool is replaced on the next request)."""
        if future.cancel():  # still queued behind other jobs: it never started
            return ("timeout",)
        pid = self._slots[slot]
        if pid:
            log.warning(f"{self.name} worker killed after its time limit", extra={"pid": pid})
            WORKER_DEATHS.labels(self.name).inc()
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        return ("timeout",)


class _NotStarted(Exception):
    """Submitting now would fork workers (a new or broken executor): submit from a thread instead."""


def _shutdown(executor: ProcessPoolExecutor, *, kill: bool = False) -> None:
    processes = list((getattr(executor, "_processes", None) or {}).values()) if kill else []
    with contextlib.suppress(Exception):
        executor.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        with contextlib.suppress(Exception):
            process.kill()
