"""Reads army lists for the bot outside its own process, a few at a time (issue 19).

Why: a list is user input of up to 5 MB, and reading one runs wh40kdc's adapters and resolver. In a thread of
the bot, four 4.8 MB lists grew the bot from 101 to 627 MB and held the GIL long enough that `/rule` took
10 s. Here:

- the cost limits refuse an oversized list while it is read, before any full parse (bot.armies.limits);
- the reading runs in a worker process under an address-space cap (`WORKER_MB`) and a time limit
  (`TIMEOUT_S`): whatever a list that passes the limits still costs, it costs there, and a list that
  outgrows it fails alone with a clear answer (the worker is replaced if it dies);
- at most `PER_USER` lists per user, `PER_GUILD` per server and `MAX_PENDING` in all are read at a
  time; the next one is told to wait, never queued without bound.

The worker loads wh40kdc's dataset once (~80 MB) when it starts, so the bot's own process never does.
Only the list's bytes go in and the `Army` comes back; a 10e game's catalog lookups then run in the bot
(`for_edition`: the catalog lives here, not in the worker). `workers=0` reads in threads of the bot's
process instead (COGITATOR_SIM_WORKERS=0), with every limit but the address-space cap.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any, Protocol

from bot.admission import CallerLimits, Words
from bot.armies.errors import ListError
from bot.armies.model import Army
from bot.armies.parse import dataset, for_edition, read_army

WORKERS = 1  # real lists take milliseconds; the cap and the admission below bound the rest
# Address space of the list worker: a warm worker maps ~205 MB (Python and numpy from the shared forkserver,
# ~80 MB of dataset); the costliest lists within the limits (bench/bench_hostile_lists.py and the notes in
# docs/operations.md) add ~40 MB and 1-2 s, so 384 MB leaves room to spare.
WORKER_MB = 384
TIMEOUT_S = 10.0
PER_USER = 1
PER_GUILD = 2
MAX_PENDING = 8


class WorkerPool(Protocol):
    """What the reader needs of bot.sim.pool.SimPool (injected by bot.services: armies never import sim)."""

    async def call(self, function: Callable[..., Any], args: tuple, *, timeout: float) -> tuple: ...

    def start(self) -> None: ...

    def close(self) -> None: ...


def warm_worker() -> None:
    """Runs once in each list worker as it starts: wh40kdc's dataset, loaded before the first list."""
    dataset()


def read_in_worker(data: bytes, filename: str | None, edition: str) -> Army:
    """The job a list worker runs (module-level, so the pool can pickle it by name)."""
    return read_army(data, filename=filename, edition=edition)


class ArmyReader:
    """`await reader.read(data, ...)` -> the `Army`, or a ListError in words. `pool_factory` builds the
    worker pool (None: read in threads of this process)."""

    def __init__(self, pool_factory: Callable[[], WorkerPool] | None) -> None:
        self._factory = pool_factory
        self._pool: WorkerPool | None = None
        self._lock = threading.Lock()
        self._start_lock = threading.Lock()
        self.limits = CallerLimits(per_user=PER_USER, per_guild=PER_GUILD, total=MAX_PENDING, words=Words(
            user="Your previous army list is still being read: wait for its answer, then import again.",
            guild=f"{PER_GUILD} army lists are being read in this server right now: wait a few seconds, then "
                  "import again.",
            total=f"The bot is reading {MAX_PENDING} army lists right now: wait a few seconds, then import again."))
        self._closed = False

    @property
    def pool(self) -> WorkerPool | None:
        return self._pool

    def start(self) -> None:
        """Start the worker and load its dataset now (blocking, ~1 s: call it in a thread)."""
        if self._factory is None:
            return
        with self._start_lock:
            if self._pool is None:
                pool = self._factory()
                with self._lock:
                    if self._closed:
                        return
                    self._pool = pool
                pool.start()

    async def read(self, data: bytes, *, filename: str | None, edition: str, catalog: Any = None,
                   user: int | None = None, guild: int | None = None) -> Army:
        """The army in `data` for a game of `edition`, read in the worker; ListError when it cannot be read or
        is over a limit, UserError when this user, server or the bot already has as many lists in reading as
        allowed (bot.admission)."""
        if self._closed:
            raise ListError("The bot is shutting down; import the list again in a moment.")
        with self.limits.admit(user, guild):
            army = await self._read(data, filename, edition)
        return await asyncio.to_thread(for_edition, army, catalog)

    async def _read(self, data: bytes, filename: str | None, edition: str) -> Army:
        if self._factory is None:
            try:
                return await asyncio.wait_for(asyncio.to_thread(read_in_worker, data, filename, edition), TIMEOUT_S)
            except TimeoutError:
                raise _timed_out() from None
        if self._pool is None:
            await asyncio.to_thread(self.start)
        pool = self._pool
        if pool is None:
            raise ListError("The bot is shutting down; import the list again in a moment.")
        try:
            outcome = await pool.call(read_in_worker, (data, filename, edition), timeout=TIMEOUT_S)
        except RuntimeError:  # the pool closed while this list waited
            raise ListError("The bot is shutting down; import the list again in a moment.") from None
        kind = outcome[0]
        if kind == "ok":
            return outcome[1]
        if kind == "user":
            raise ListError(outcome[1])
        if kind == "timeout":
            raise _timed_out()
        raise ListError(f"Reading this list needed more than the {WORKER_MB} MB a list may use, so it was stopped: "
                        "is it really one army list?")  # "memory" or "died"

    def close(self) -> None:
        """Refuse new lists and stop the worker; safe to call twice."""
        with self._lock:
            self._closed = True
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()


def _timed_out() -> ListError:
    return ListError(f"Reading this list took longer than {TIMEOUT_S:.0f} s, so it was stopped: is it really one "
                     "army list?")
