"""Simulations in separate worker processes, each under an address-space limit (issue 9), each reached
through a socket pair of its own and driven straight from the event loop (issue 22).

Why processes: the engine refuses oversized requests before any work (engine.cost), but an estimate
can be wrong, and one wrong estimate in the bot's own process would grow it until the kernel's OOM
killer ends the bot for every server (the service runs under MemoryMax=832M). In a worker capped with
RLIMIT_AS the same mistake is a MemoryError in that worker only: the request is answered "too large to
compute exactly" and the worker takes the next one.

How a job travels: the event loop writes the pickled job on an idle worker's socket, watches that socket
(`loop.add_reader`), and reads the answer in pieces as they arrive (bot.sim.wire: length-prefixed, read
without blocking, decoded once whole, so a big PNG or a worker stopped mid-answer never holds the loop).
No thread of the bot is on the way: two wake-ups per job (the worker's, then the loop's), where
concurrent.futures.ProcessPoolExecutor took five (its manager thread, its queue feeder, the result queue)
and cost ~1.3 ms per /sim. When every worker is busy, requests wait in the loop, first come first served.

What can still go wrong, and what happens:
- a worker dies (SIGKILL from the OOM killer or an operator, a crash): its socket closes, so only the
  request it held is answered ("died",); the other workers never notice. The dead worker is dropped
  (`replacements`, WORKER_DEATHS) and the next request that finds a free place starts a new one. A worker
  that died idle is found when a job is written to it, and the job goes to another worker;
- a request runs past its time: the worker's own alarm stops it (`worker.run`); if the worker does not
  answer `GRACE_S` later (stuck inside C code) it is killed and replaced, and the request answers
  ("timeout",);
- the pool closes (`close`, from any thread): the workers are killed; requests running or waiting raise
  RuntimeError("... closed") instead of waiting for ever.

Warm-pool overhead: a forkserver (not fork from the bot's threaded event loop) imports numpy and the
engine and draws one chart before it forks any worker (bot.sim.forkserver_warm), so a worker starts in
milliseconds, already warm, sharing those pages copy-on-write. Starting one blocks (the forkserver's
handshake, the worker's first message), so it happens in a thread, never on the loop. Only the job
(function by name, arguments) and its answer (dict + PNG bytes) cross the process boundary.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import os
import threading
from collections import deque
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

from bot.ops.metrics import WORKER_DEATHS
from bot.sim import wire, worker

log = logging.getLogger("cogitator.sim.pool")

GRACE_S = 5.0  # after a job's own time limit, how long the pool waits before killing its worker
START_S = 120.0  # how long a new worker may take to start and warm up
_PRELOAD = ["bot.sim.forkserver_warm"]


class WorkerTraceback(Exception):
    """The worker's traceback of an exception its job raised (the re-raised exception's __cause__, for logs)."""


class _Job:
    """A request on a worker: where its answer goes, the loop watching the socket, bytes still to write."""

    __slots__ = ("answer", "loop", "unsent", "overdue")

    def __init__(self, loop: asyncio.AbstractEventLoop, unsent: memoryview) -> None:
        self.answer: asyncio.Future[tuple] = loop.create_future()
        self.loop = loop
        self.unsent = unsent
        self.overdue: asyncio.TimerHandle | None = None


class _Worker:
    """One worker process and the bot's end of its socket (non-blocking); `job` is None while it is idle."""

    def __init__(self, process: multiprocessing.process.BaseProcess, conn: Connection) -> None:
        self.process = process
        self.pid = process.pid or 0
        self.conn = conn  # holds the fd open
        self.fd = conn.fileno()
        self.inbox = wire.Inbox(self.fd)
        self.job: _Job | None = None

    def stop(self) -> None:
        """Kill the process (a no-op if it is gone) and close the bot's end of the socket."""
        with contextlib.suppress(Exception):
            self.process.kill()
        self.conn.close()


class SimPool:
    """A warm pool of `workers` processes capped at `limit_bytes` each, which replaces a worker that dies.
    `run` returns the worker's outcome tuple (bot.sim.worker.compute), or ("died",) for the request whose
    worker died, ("timeout",) for one whose worker had to be killed; an exception the job raised is raised.

    The army-list reader (bot.armies.reader) runs a pool of its own through `call`: `name` says whose
    workers a log line is about, `warm` (a module-level function) runs once in each new worker.

    Threads: `run`/`call` and everything they schedule run on the caller's event loop; `start` blocks (call
    it from a thread); `close`, `pids`, `alive` and `running_pids` may be called from any thread. `_lock`
    guards the tables they share."""

    def __init__(self, workers: int, limit_bytes: int, *, name: str = "simulation",
                 warm: Callable[[], None] | None = None) -> None:
        self._size = workers
        self._limit = limit_bytes
        self.name = name
        self._warm = warm
        self._ctx = multiprocessing.get_context("forkserver")
        self._ctx.set_forkserver_preload(_PRELOAD)
        self._lock = threading.Lock()
        self._start_lock = threading.Lock()
        self._workers: list[_Worker] = []  # every live worker, idle or busy
        self._idle: list[_Worker] = []
        self._waiting: deque[asyncio.Future[_Worker | None]] = deque()  # requests waiting for a worker
        self._starting = 0  # workers being started in a thread for a request
        self._started = False
        self._closed = False
        self.replacements = 0  # workers replaced after they died or were killed (tests, logs)
        self._limit_error_logged = False

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        """Start every worker now and wait until they answer (blocking: call it from a thread). Logs an
        error when the workers could not cap their address space (they still answer, without the cap)."""
        with self._start_lock:
            if self._started or self._closed:
                return
            for _ in range(self._size):
                try:
                    self._adopt(self._spawn())
                except Exception:  # noqa: BLE001 - logged; the first request starts the missing worker
                    if self._closed:
                        return
                    log.exception(f"a {self.name} worker did not start")
            self._started = True

    def close(self) -> None:
        """Kill every worker and wait for them to end; running and waiting requests raise RuntimeError.
        Safe to call twice, from any thread."""
        with self._lock:
            self._closed = True
            workers, self._workers = self._workers, []
            idle, self._idle = self._idle, []
            waiting, self._waiting = list(self._waiting), deque()
        for each in workers:
            with contextlib.suppress(Exception):
                each.process.kill()
        for each in idle:  # a busy worker's socket is closed on its loop, which is watching it
            each.conn.close()
        for each in workers:
            with contextlib.suppress(Exception):
                each.process.join(timeout=5)
        for waiter in waiting:
            with contextlib.suppress(RuntimeError):  # its loop is closed: nobody waits any more
                waiter.get_loop().call_soon_threadsafe(self._refuse, waiter)

    def pids(self) -> list[int]:
        """Worker process ids (tests, the benchmark's memory report)."""
        return [each.pid for each in list(self._workers)]

    def alive(self) -> int:
        """How many worker processes are running now (readiness, metrics; read from any thread)."""
        alive = 0
        for each in list(self._workers):
            with contextlib.suppress(ValueError, OSError):
                alive += each.process.is_alive()
        return alive

    def running_pids(self) -> list[int]:
        """Pids of the workers holding a request right now (tests)."""
        return [each.pid for each in list(self._workers) if each.job is not None]

    # ------------------------------------------------------------------ requests
    async def run(self, args: tuple, *, timeout: float, job: Callable[..., tuple] = worker.compute) -> tuple:
        """Run job(timeout, *args) in a worker: worker.compute (a simulation) or worker.run (any function,
        e.g. reading an army list); see the class docstring for the result."""
        data = wire.encode((job, timeout, args))  # before taking a worker: a job that cannot be pickled fails here
        if not self._started:
            await asyncio.to_thread(self.start)
        while True:
            taken = await self._acquire()
            answer = self._send(taken, data, timeout)
            if answer is not None:
                break
        outcome = await answer
        if outcome[0] == "raise":
            raise outcome[1] from WorkerTraceback(outcome[2])
        return outcome

    async def call(self, function: Callable[..., Any], args: tuple, *, timeout: float,
                   background: bool = False) -> tuple:
        """function(*args) in a worker (bot.sim.worker.run): ("ok", its result), or the outcomes of `run`.
        `background`: in a thread of the worker at lower priority (worker.run_background)."""
        return await self.run((function, *args), timeout=timeout,
                              job=worker.run_background if background else worker.run)

    async def _acquire(self) -> _Worker:
        """An idle worker; a new one if the pool has a free place (a worker died); else wait for one."""
        while True:
            with self._lock:
                if self._closed:
                    raise RuntimeError(f"the {self.name} pool is closed")
                if self._idle:
                    return self._idle.pop()  # the last one used: its caches are the warmest
                vacant = len(self._workers) + self._starting < self._size
                if vacant:
                    self._starting += 1
                else:
                    waiter: asyncio.Future[_Worker | None] = asyncio.get_running_loop().create_future()
                    self._waiting.append(waiter)
            if vacant:
                return await self._replace()
            try:
                given = await waiter
            except asyncio.CancelledError:
                if waiter.done() and not waiter.cancelled() and waiter.exception() is None:
                    self._hand_over(waiter.result())  # given just as its caller gave up: pass it on
                raise
            if given is not None:
                return given
            # None: a place became free (a worker died); start its replacement

    async def _replace(self) -> _Worker:
        """A new worker in a free place, started in a thread (it blocks). It joins the pool even when the
        request that started it is cancelled meanwhile."""
        task = asyncio.ensure_future(asyncio.to_thread(self._spawn_adopted))
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            task.add_done_callback(self._adopt_late)
            raise
        except BaseException:
            self._hand_over(None)  # the place is still free: a waiting request may try in its turn
            raise

    def _adopt_late(self, task: asyncio.Future[_Worker]) -> None:
        if task.cancelled() or task.exception() is not None:
            self._hand_over(None)
        else:
            self._hand_over(task.result())

    def _spawn_adopted(self) -> _Worker:
        try:
            started = self._spawn()
        finally:
            with self._lock:
                self._starting -= 1
        return self._adopt(started, idle=False)

    def _adopt(self, started: _Worker, *, idle: bool = True) -> _Worker:
        """Add a new worker to the tables (idle, or taken by the request that started it); one started while
        the pool closed is stopped at once."""
        with self._lock:
            if not self._closed:
                self._workers.append(started)
                if idle:
                    self._idle.append(started)
                return started
        started.stop()
        raise RuntimeError(f"the {self.name} pool is closed")

    def _spawn(self) -> _Worker:
        """Start one worker and wait for its first message (blocking; in a thread)."""
        ours, theirs = self._ctx.Pipe(duplex=True)
        process = self._ctx.Process(target=worker.serve, args=(theirs, self._limit, self._warm, os.getpid()),
                                    name=f"cogitator-{self.name}-worker", daemon=True)
        try:
            process.start()
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()  # the worker's copy is the only one: its death closes the socket
        os.set_blocking(ours.fileno(), False)
        started = _Worker(process, ours)
        try:
            _pid, limit_error = started.inbox.wait(START_S)
        except (EOFError, TimeoutError) as error:
            started.stop()
            raise RuntimeError(f"a {self.name} worker did not start: {error}") from None
        if limit_error and not self._limit_error_logged:
            self._limit_error_logged = True
            log.error(f"{self.name} workers run without their address-space limit (allow the setrlimit and "
                      "prlimit64 system calls)", extra={"error": limit_error})
        return started

    def _hand_over(self, free: _Worker | None) -> None:
        """A worker is free (or, None, a place for a new one): to the first request still waiting, else
        back to the idle list. On the loop."""
        with self._lock:
            waiter = None
            while self._waiting and waiter is None:
                candidate = self._waiting.popleft()
                waiter = None if candidate.done() else candidate  # done: its caller gave up
            if waiter is None and free is not None and not self._closed:
                self._idle.append(free)
                return
        if waiter is not None:
            waiter.set_result(free)
        elif free is not None:
            free.conn.close()  # the pool closed meanwhile (close() killed its process)

    def _refuse(self, waiter: asyncio.Future[_Worker | None]) -> None:
        if not waiter.done():
            waiter.set_exception(RuntimeError(f"the {self.name} pool is closed"))

    # ------------------------------------------------------------------ one job on one worker (on the loop)
    def _send(self, taken: _Worker, data: bytes, timeout: float) -> asyncio.Future[tuple] | None:
        """Write the job on the worker's socket and watch for its answer; None when the worker turned out
        to have died while idle (it is dropped, the job never reached it)."""
        loop = asyncio.get_running_loop()
        try:
            sent = os.write(taken.fd, data)
        except BlockingIOError:
            sent = 0
        except OSError:  # EPIPE, ECONNRESET: its process has ended
            self._lose(taken, None, "died")
            return None
        job = _Job(loop, memoryview(data)[sent:])
        taken.job = job
        loop.add_reader(taken.fd, self._on_readable, taken)
        if job.unsent:  # a big job (an army list's bytes): the rest as the worker reads
            loop.add_writer(taken.fd, self._on_writable, taken)
        job.overdue = loop.call_later(timeout + GRACE_S, self._on_overdue, taken)
        return job.answer

    def _on_writable(self, busy: _Worker) -> None:
        job = busy.job
        assert job is not None
        try:
            job.unsent = job.unsent[os.write(busy.fd, job.unsent):]
        except BlockingIOError:
            return
        except OSError:
            self._lose(busy, ("died",), "died")
            return
        if not job.unsent:
            job.loop.remove_writer(busy.fd)

    def _on_readable(self, busy: _Worker) -> None:
        try:
            complete, outcome = busy.inbox.read()
        except EOFError:
            self._lose(busy, ("died",), "died")
            return
        except Exception as error:  # noqa: BLE001 - a whole answer that cannot be unpickled here
            complete, outcome = True, ("raise", error, "")
        if complete:
            job = self._detach(busy)
            _answer(job, outcome)
            self._hand_over(busy)

    def _on_overdue(self, busy: _Worker) -> None:
        """The job's own alarm did not stop it: kill its worker."""
        self._lose(busy, ("timeout",), "killed after its time limit")

    def _detach(self, busy: _Worker) -> _Job:
        job = busy.job
        assert job is not None
        busy.job = None
        job.loop.remove_reader(busy.fd)
        job.loop.remove_writer(busy.fd)
        if job.overdue is not None:
            job.overdue.cancel()
        return job

    def _lose(self, gone: _Worker, outcome: tuple | None, why: str) -> None:
        """Drop a worker that died or must die: its request (if any) gets `outcome`, or RuntimeError when the
        pool is closing; its place is free for a new worker."""
        job = self._detach(gone) if gone.job is not None else None
        with self._lock:
            replaced = not self._closed
            if gone in self._workers:
                self._workers.remove(gone)
            if replaced:
                self.replacements += 1
        gone.stop()
        if replaced:
            WORKER_DEATHS.labels(self.name).inc()
            log.warning(f"{self.name} worker {why}; a new one takes its place",
                        extra={"pid": gone.pid, "replacements": self.replacements})
        if job is not None:
            _answer(job, outcome if replaced else RuntimeError(f"the {self.name} pool is closed"))
        if replaced:
            self._hand_over(None)


def _answer(job: _Job, outcome: tuple | BaseException) -> None:
    if job.answer.done():  # the caller gave up (cancelled); the worker is free again all the same
        return
    if isinstance(outcome, BaseException):
        job.answer.set_exception(outcome)
    else:
        job.answer.set_result(outcome)
