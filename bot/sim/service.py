"""Runs the combat engine and draws its plot outside the event loop, in a bounded pool of worker processes.

Why processes (issue 9): the engine refuses oversized requests before any work (engine.cost), but if
its estimate is ever wrong, a thread would grow the bot's own process until the OOM killer ends it for
every server (the service runs under MemoryMax=832M). In a worker process under an address-space
limit (bot.sim.pool) the same request fails alone with "too large to compute exactly, try
`method: montecarlo`", a worker that dies is replaced, and a runaway job can be stopped. The pool is
warm (forkserver with numpy and the engine loaded), so a typical /sim costs only the
pickling of its request and its result more than in a thread.

The limits:
- `COGITATOR_SIM_WORKERS` processes (default 2: the host has 2 cores) compute at once, each capped
  at `COGITATOR_SIM_WORKER_MB` of address space (default 384 MB; docs/operations.md sizes it);
  `COGITATOR_SIM_WORKERS=0` computes in threads of the bot's own process instead, without that cap;
- at most `MAX_PENDING` requests are admitted (running plus queued), at most `PER_USER` of one user and
  `PER_GUILD` of one server (bot.admission); the next one gets a "busy, wait" UserError straight away
  instead of waiting in an unbounded queue;
- a request still unfinished after `TIMEOUT_S` is answered with a UserError; in a worker process it is
  stopped (its worker killed if need be), in a thread it finishes in the background and still counts
  against `MAX_PENDING` until it does;
- Monte Carlo requests from chat get at most `MONTECARLO_ROLL_BUDGET` (bot.sim.compute) dice rolls (fewer trials for
  huge volleys, never fewer than `MIN_TRIALS`), so they finish in seconds, not minutes.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from bot.admission import CallerLimits, Words
from bot.errors import UserError
from bot.sim.compute import compute, prepare

if TYPE_CHECKING:
    from bot.sim.pool import SimPool

WORKERS = 2
# Address space per worker process (RLIMIT_AS). A warm worker maps ~130 MB (Python, numpy, the engine;
# ~30 MB of it resident), so 384 MB lets a request grow it by ~250 MB: room for the 128 MB of arrays the
# engine's estimate admits (engine.limits) and the plot. Filled to its limit a worker is ~265 MB resident,
# so two of them, the forkserver (~70 MB) and the bot (~150 MB with the full catalog) fit in the unit's
# MemoryMax=832M (docs/operations.md, "Simulation workers").
WORKER_MB = 384
MAX_PENDING = 8
PER_USER = 2  # simulations one user may have running at once (bot.admission)
PER_GUILD = 4  # and one server
TIMEOUT_S = 30.0
SHUTTING_DOWN = "The simulator is shutting down; try again in a moment."

def _too_large(request: dict[str, Any]) -> UserError:
    """The answer when a request outgrew its worker (MemoryError at the address-space limit, or the worker
    died): only this request fails, and the words say what to try instead."""
    if request.get("method", "exact") == "montecarlo":
        return UserError("This simulation is too large to compute: it ran out of the memory a simulation may "
                         "use. Try fewer trials or fewer attacks.")
    return UserError("This simulation is too large to compute exactly: it ran out of the memory a simulation "
                     "may use. Try `method: montecarlo`.")


def _timed_out() -> UserError:
    return UserError(f"The simulation took longer than {TIMEOUT_S:.0f} s and was stopped; "
                     "try fewer attacks or `method: montecarlo`.")


class SimulationService:
    """The one way cogs run the engine: `await service.run(request)` -> (result dict, PNG bytes).

    `workers` processes (None: `WORKERS`; 0: threads in this process) capped at `worker_mb` MB of
    address space each (None: `WORKER_MB`). The pool starts on the first request, or ahead of it with
    `start()`, which `python -m bot run` calls before connecting."""

    def __init__(self, workers: int | None = None, worker_mb: int | None = None) -> None:
        self.workers = WORKERS if workers is None else workers
        self.worker_mb = WORKER_MB if worker_mb is None else worker_mb
        self._threads: ThreadPoolExecutor | None = None
        self._pool: SimPool | None = None
        if self.workers == 0:
            self._threads = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="cogitator-sim")
        self._lock = threading.Lock()
        self._start_lock = threading.Lock()
        self._admitted = 0
        self.callers = CallerLimits(per_user=PER_USER, per_guild=PER_GUILD, total=MAX_PENDING, words=Words(
            user=f"You have {PER_USER} simulations running: wait for their answers, then try again.",
            guild=f"{PER_GUILD} simulations are running in this server right now: wait a few seconds, then try "
                  "again.",
            total=f"The simulator is busy ({MAX_PENDING} simulations in progress); try again in a few seconds."))
        self._closed = False

    @property
    def admitted(self) -> int:
        """Requests running or queued right now (for tests and the benchmark)."""
        return self._admitted

    @property
    def pool(self) -> SimPool | None:
        """The worker processes (None in thread mode or before the first request; tests, benchmark)."""
        return self._pool

    def start(self) -> None:
        """Start and warm the worker processes now (blocking, ~1-3 s the first time: call it in a thread)."""
        if self.workers == 0:
            return
        with self._start_lock:
            if self._pool is None:
                from bot.sim.pool import SimPool

                pool = SimPool(self.workers, self.worker_mb * 2**20)
                with self._lock:
                    if self._closed:
                        return
                    self._pool = pool
                pool.start()

    def _admit(self) -> None:
        with self._lock:
            if self._closed:
                raise UserError(SHUTTING_DOWN)
            if self._admitted >= MAX_PENDING:
                raise UserError(
                    f"The simulator is busy ({MAX_PENDING} simulations in progress); try again in a few seconds."
                )
            self._admitted += 1

    def _release(self, _future: object = None) -> None:
        with self._lock:
            self._admitted -= 1

    async def run(
        self, request: dict[str, Any], *, plot_title: str | None = None, with_plot: bool = True,
        user: int | None = None, guild: int | None = None,
    ) -> tuple[dict[str, Any], bytes]:
        """Simulate `request` (contract 1) and draw its models-killed chart, without blocking the loop.
        `user` and `guild` (the caller) may have at most PER_USER and PER_GUILD simulations running."""
        with self.callers.admit(user, guild):
            return await self._run(request, plot_title, with_plot)

    async def _run(self, request: dict[str, Any], plot_title: str | None,
                   with_plot: bool) -> tuple[dict[str, Any], bytes]:
        self._admit()
        if self._threads is not None:
            return await self._run_in_thread(request, plot_title, with_plot)
        outcome = await self._in_pool(lambda pool: pool.run((request, plot_title, with_plot), timeout=TIMEOUT_S),
                                      request)
        return outcome[1], outcome[2]

    async def _in_pool(self, submit: Callable[[SimPool], Awaitable[tuple]], request: dict[str, Any]) -> tuple:
        """submit(pool) in the worker pool (started on first use), the admission released when it ends. An
        ("ok", ...) outcome is returned; the others are raised: the user's error, a time-out, too large."""
        try:
            if self._pool is None:
                await asyncio.to_thread(self.start)
            pool = self._pool
            if pool is None:
                raise RuntimeError("closed")
            outcome = await submit(pool)
        except RuntimeError:  # closed while this request waited
            raise UserError(SHUTTING_DOWN) from None
        finally:
            self._release()
        kind = outcome[0]
        if kind == "ok":
            return outcome
        if kind == "user":
            raise UserError(outcome[1], field=outcome[2])
        if kind == "timeout":
            raise _timed_out()
        raise _too_large(request)  # "memory" or "died"

    async def _run_in_thread(
        self, request: dict[str, Any], plot_title: str | None, with_plot: bool
    ) -> tuple[dict[str, Any], bytes]:
        return await self._in_thread(compute, (request, plot_title, with_plot), request)

    async def _in_thread(self, function: Callable[..., Any], args: tuple, request: dict[str, Any]) -> Any:
        """function(*args) in a thread of the bot (no worker processes); the admission is released when it ends."""
        assert self._threads is not None
        try:
            future = self._threads.submit(function, *args)
        except RuntimeError:  # executor shut down between _admit and submit
            self._release()
            raise UserError(SHUTTING_DOWN) from None
        future.add_done_callback(self._release)
        try:
            return await asyncio.wait_for(asyncio.wrap_future(future), timeout=TIMEOUT_S)
        except TimeoutError:
            raise _timed_out() from None
        except MemoryError:
            raise _too_large(request) from None

    async def run_jobs(self, jobs: list[tuple[Callable[..., Any], tuple]], *,
                       on_done: Callable[[int, Any], Awaitable[None]] | None = None,
                       background: bool = False) -> list[Any]:
        """Many jobs (module-level function, arguments), e.g. the rows of a /sim matchup, each in a worker
        (or a thread), at most one per worker at a time, so a big matrix shares the pool with other /sim
        requests job by job instead of filling its queue. The caller holds its own admission
        (`self.callers.admit`: the whole matrix is one simulation of its caller). `on_done(i, result)` runs
        as each job finishes (progress). The first failure ends the others and is raised. `background`
        (a /sim matchup): each job runs below the bot's priority (bot.sim.worker.run_background), so a
        long matrix never takes the CPU from the event loop or from another player's /sim."""
        results: list[Any] = [None] * len(jobs)
        gate = asyncio.Semaphore(max(1, self.workers or WORKERS))

        async def one(i: int) -> None:
            async with gate:
                results[i] = await self._run_job(*jobs[i], background=background)
            if on_done is not None:
                await on_done(i, results[i])

        tasks = [asyncio.create_task(one(i)) for i in range(len(jobs))]
        try:
            await asyncio.gather(*tasks)
        except BaseException:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        return results

    async def _run_job(self, function: Callable[..., Any], args: tuple, *, background: bool = False) -> Any:
        """function(*args) in a worker (or a thread, always at the bot's priority), under the service's
        pending cap and time limit."""
        self._admit()
        if self._threads is not None:
            return await self._in_thread(function, args, {})
        return (await self._in_pool(lambda pool: pool.call(function, args, timeout=TIMEOUT_S,
                                                           background=background), {}))[1]

    def prepare(self, request: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
        """Check `request` as `run` would (UserError if invalid or too large) without running it, and
        set the Monte Carlo trial count for chat. Returns (request to run, notes for the embed)."""
        return prepare(request)

    async def simulate(self, request: dict[str, Any]) -> dict[str, Any]:
        """The result only, no plot (for callers that render their own)."""
        result, _ = await self.run(request, with_plot=False)
        return result

    def close(self) -> None:
        """Refuse new work and stop the workers (threads finish in the background); safe to call twice."""
        with self._lock:
            self._closed = True
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()
        if self._threads is not None:
            self._threads.shutdown(wait=False, cancel_futures=True)
