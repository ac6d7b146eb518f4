"""The process's Prometheus metrics (prometheus-client), recorded where things happen.

Everything lives in one registry of its own (`REGISTRY`), so the ops listener serves exactly these and never
another library's. Every name starts with `cogitator_`; the process collector (RSS, open files, CPU) is the
library's standard one under the same prefix.

Cardinality is bounded by construction: labels are command names (from the bot's own command tree; a name the
tree does not know is `unknown`), backends, operations, pool names and catalog source families. Never a user,
guild, channel or any text a user typed.

`recent` keeps the last commands' latencies (a bounded deque) for `/status`: commands per hour and p99.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager

from prometheus_client import CollectorRegistry, Counter, Histogram, ProcessCollector, disable_created_metrics

disable_created_metrics()  # no `_created` twin of every counter and histogram: half the series, none of them read
REGISTRY = CollectorRegistry(auto_describe=True)
ProcessCollector(namespace="cogitator", registry=REGISTRY)

OUTCOMES = ("ok", "refused", "error")
UNKNOWN_COMMAND = "unknown"

COMMANDS = Counter("cogitator_commands", "Slash commands answered, by command name and outcome (ok, refused: "
                   "the user was told why, error: an unexpected failure)", ["command", "outcome"], registry=REGISTRY)
COMMAND_SECONDS = Histogram("cogitator_command_duration_seconds", "Time from a command's arrival to the end of its "
                            "callback (deferred work included)", ["command"], registry=REGISTRY,
                            # 3 s: Discord's deadline for a first answer. Few buckets: 12 series per command.
                            buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 3, 10))
RECONNECTS = Counter("cogitator_gateway_reconnects", "Gateway connections of a shard that closed and were "
                     "reconnected (or resumed)", registry=REGISTRY)
WORKER_DEATHS = Counter("cogitator_sim_worker_deaths", "Worker processes that died or were killed, by pool "
                        "(simulation, army-list)", ["pool"], registry=REGISTRY)
COST_REFUSALS = Counter("cogitator_sim_cost_refusals", "Simulations refused before any work by the engine's size "
                        "and cost limits", registry=REGISTRY)
STORE_SECONDS = Histogram("cogitator_store_query_duration_seconds", "Time of one state-store block: a read or a "
                          "transaction", ["backend", "op"], registry=REGISTRY,
                          buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5))
STORE_ERRORS = Counter("cogitator_store_errors", "State-store reads and transactions that failed", ["backend", "op"],
                       registry=REGISTRY)
EVENTS_WRITTEN = Counter("cogitator_store_events_written", "Game events appended to the event log",
                         registry=REGISTRY)
WEB_REFUSED = Counter("cogitator_web_refused", "Connections or requests refused by the connection limits, by "
                      "listener (board, ops) and reason", ["listener", "reason"], registry=REGISTRY)

# Every label value known in advance is present from the start, at 0: rate() and increase() then see the first
# event, and an absent series never hides a failure.
for _pool in ("simulation", "army-list"):
    WORKER_DEATHS.labels(_pool)
for _backend in ("sqlite", "postgresql"):
    for _op in ("read", "write"):
        STORE_ERRORS.labels(_backend, _op)
for _listener in ("board", "ops"):
    for _reason in ("connections", "requests", "slow", "large"):
        WEB_REFUSED.labels(_listener, _reason)


class Recent:
    """The last `size` commands as (monotonic time, seconds): commands per hour and p99 for /status."""

    def __init__(self, size: int = 10_000) -> None:
        self._items: deque[tuple[float, float]] = deque(maxlen=size)

    def add(self, seconds: float) -> None:
        self._items.append((time.monotonic(), seconds))

    def last_hour(self) -> list[float]:
        since = time.monotonic() - 3600.0
        return [s for t, s in list(self._items) if t >= since]

    @property
    def capacity(self) -> int:
        return self._items.maxlen or 0


recent = Recent()


def command_done(command: str, outcome: str, seconds: float | None) -> None:
    """One answered command. `command` must be a name from the bot's tree (or UNKNOWN_COMMAND)."""
    COMMANDS.labels(command, outcome).inc()
    if seconds is not None:
        COMMAND_SECONDS.labels(command).observe(seconds)
        recent.add(seconds)


@contextmanager
def store_block(backend: str, op: str, errors: tuple[type[BaseException], ...]) -> Iterator[None]:
    """Times one store block (`op`: read or write); counts it as an error when it raises one of `errors` (the
    database's own: a store's "no game here" raised inside a transaction is an answer, not a store error)."""
    started = time.perf_counter()
    try:
        yield
    except errors:
        STORE_ERRORS.labels(backend, op).inc()
        raise
    finally:
        STORE_SECONDS.labels(backend, op).observe(time.perf_counter() - started)
