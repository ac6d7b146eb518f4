"""What the ops endpoints and /status read from the running bot: readiness, loop lag, and the figures that are
read at scrape time (gateway, /sim pools, catalog, live board) rather than counted where they happen.

The bot hands in `Sources`, a set of small callables, so this module imports neither the bot nor its services.
Nothing read here carries a secret or user content: a failed check is named, never explained with an error
text (a PostgreSQL error may quote the server address), and catalog sources are reduced to their family.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import re
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from bot.ops import metrics

STORE_TIMEOUT_S = 1.0  # a store that has not answered SELECT 1 in this long is not ready
LOOP_LAG_MAX_S = 1.0  # /healthz: the event loop must answer within this long
LOOP_TICK_S = 0.25
CATALOG_CACHE_S = 60.0  # entries per source change only on import: counted at most once a minute
CHECKS = ("discord", "store", "catalog", "sim_pool")
# Catalog dataset names are "family" or "family:detail" (an operator's import name): only the family is a label.
FAMILIES = ("seeds", "wh40kdc", "wahapedia", "gdc")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


@dataclass
class Sources:
    """The running bot, as the ops code reads it."""

    connected: Callable[[], bool]  # the gateway (or the console) is connected
    shards: Callable[[], dict[int, tuple[bool, float]]]  # shard id -> (connected, heartbeat latency in s)
    probe_store: Callable[[], None]  # blocking; raises when the state store does not answer
    store_backend: str  # sqlite or postgresql
    catalog: Callable[[], Any | None]  # the loaded catalog, None while it is not loaded
    pools: Callable[[], dict[str, tuple[Any | None, int]]]  # pool name -> (SimPool or None, workers wanted)
    sim_pending: Callable[[], int]  # simulations running or queued
    open_pages: Callable[[], int | None]  # live-board streams open; None when the board is off
    extra: dict[str, Any] = field(default_factory=dict)


def family(dataset: str) -> str:
    name = dataset.split(":", 1)[0]
    return name if name in FAMILIES else "other"


def data_ages(datasets: list[dict], now: float) -> dict[str, float]:
    """Seconds since each source family's data: the newest date its source names (a game-datacards file's
    `updated`, Wahapedia's last update), else when it was imported."""
    ages: dict[str, float] = {}
    for ds in datasets:
        dates = _DATE.findall(str(ds.get("source") or ""))
        stamp = max(dates) if dates else str(ds.get("imported_at") or "")[:19]
        try:
            when = datetime.fromisoformat(stamp).replace(tzinfo=UTC).timestamp()
        except ValueError:
            continue
        name = family(str(ds["name"]))
        ages[name] = min(ages.get(name, math.inf), max(0.0, now - when))
    return ages


class Ops:
    """Readiness, loop lag and the scrape-time metrics of one bot; its own registry for /metrics."""

    def __init__(self, sources: Sources) -> None:
        self.sources = sources
        self.started = time.time()
        self.checks: dict[str, bool] = dict.fromkeys(CHECKS, False)
        self.loop_lag = 0.0
        # One thread for the store probe (a hung database never queues more probes) and one for scrapes.
        self._probe = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ops-store")
        self._scrape = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ops-scrape")
        self._pending: Future | None = None
        self._catalog: tuple[float, list[tuple[str, str, int]], dict[str, float]] | None = None
        self._ticker: asyncio.Task | None = None
        self._building: asyncio.Future[bytes] | None = None
        self.builds = 0  # /metrics texts built (tests)
        self.registry = CollectorRegistry()
        self.registry.register(_Forward(metrics.REGISTRY))
        self.registry.register(_Live(self))

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        """Measure the event loop's lag from now on (the loop this is called in)."""
        if self._ticker is None:
            from bot.background import BACKGROUND_TASK_PREFIX

            self._ticker = asyncio.get_running_loop().create_task(self._tick(), name=f"{BACKGROUND_TASK_PREFIX}ops-loop")

    async def _tick(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            expected = loop.time() + LOOP_TICK_S
            await asyncio.sleep(LOOP_TICK_S)
            self.loop_lag = max(0.0, loop.time() - expected)

    def close(self) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
            self._ticker = None
        self._probe.shutdown(wait=False, cancel_futures=True)
        self._scrape.shutdown(wait=False, cancel_futures=True)

    # ------------------------------------------------------------------ health and readiness
    def healthy(self) -> bool:
        """The loop is answering (this runs on it) and its last measured lag is under LOOP_LAG_MAX_S."""
        return self.loop_lag < LOOP_LAG_MAX_S

    async def ready(self) -> dict[str, bool]:
        """Every readiness check by name; also kept in `checks` for the metrics."""
        checks = {
            "discord": _safe(self.sources.connected),
            "store": await self._store_answers(),
            "catalog": _safe(lambda: self.sources.catalog() is not None),
            "sim_pool": _safe(self._pool_alive),
        }
        self.checks = checks
        return checks

    async def _store_answers(self) -> bool:
        """SELECT 1 through the store, in the probe's own thread, within STORE_TIMEOUT_S. A probe still
        running from before (a database that hangs) is waited for, never doubled."""
        if self._pending is None or self._pending.done():
            try:
                self._pending = self._probe.submit(self.sources.probe_store)
            except RuntimeError:  # closed
                return False
        try:
            await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(self._pending)), STORE_TIMEOUT_S)
        except Exception:  # noqa: BLE001 - any failure or the timeout: not ready, named by the check alone
            return False
        return True

    def _pool_alive(self) -> bool:
        """The /sim pool has a live worker (simulations in threads, COGITATOR_SIM_WORKERS=0, always do)."""
        pool, wanted = self.sources.pools().get("simulation", (None, 0))
        if wanted == 0:
            return True
        return pool is not None and pool.alive() > 0

    # ------------------------------------------------------------------ metrics
    async def scrape(self) -> bytes:
        """The Prometheus text of every metric, readiness checked first; built in the scrape thread. Scrapes
        that arrive while one is being built share it: a flood of requests costs one build at a time."""
        if self._building is None or self._building.done():
            self._building = asyncio.ensure_future(self._build())
        return await asyncio.shield(self._building)

    async def _build(self) -> bytes:
        self.builds += 1
        await self.ready()
        return await asyncio.get_running_loop().run_in_executor(self._scrape, generate_latest, self.registry)

    def catalog_figures(self) -> tuple[list[tuple[str, str, int]], dict[str, float]]:
        """(entries per dataset family and edition, data age per family), read at most once a minute."""
        catalog = self.sources.catalog()
        if catalog is None:
            return [], {}
        now = time.time()
        if self._catalog is None or now - self._catalog[0] > CATALOG_CACHE_S:
            counts: dict[tuple[str, str], int] = {}
            for dataset, edition, entries in catalog.store.entry_counts():
                key = (family(dataset), edition)
                counts[key] = counts.get(key, 0) + entries
            rows = [(f, e, n) for (f, e), n in sorted(counts.items())]
            self._catalog = (now, rows, data_ages(catalog.datasets(), now))
        stamp, rows, ages = self._catalog
        return rows, {name: age + now - stamp for name, age in ages.items()}  # the ages were measured at `stamp`

    def pool_states(self) -> dict[str, tuple[int, int]]:
        """pool name -> (workers alive, workers wanted)."""
        out = {}
        for name, (pool, wanted) in self.sources.pools().items():
            out[name] = (pool.alive() if pool is not None else 0, wanted)
        return out

    # ------------------------------------------------------------------ /status
    async def status(self) -> dict[str, Any]:
        """The owner's view: the same figures as /metrics, summarised."""
        checks = await self.ready()
        latencies = sorted(self.recent_latencies())
        p99 = latencies[max(0, math.ceil(0.99 * len(latencies)) - 1)] if latencies else None
        shards = self.sources.shards()
        gateway = [lat for ok, lat in shards.values() if ok and math.isfinite(lat)]
        rows, ages = await asyncio.get_running_loop().run_in_executor(self._scrape, self.catalog_figures)
        return {
            "uptime_s": time.time() - self.started,
            "gateway_latency_s": sum(gateway) / len(gateway) if gateway else None,
            "shards": (sum(1 for ok, _ in shards.values() if ok), len(shards)),
            "commands_last_hour": len(latencies),
            "commands_capped": len(latencies) >= metrics.recent.capacity,
            "p99_s": p99,
            "pools": self.pool_states(),
            "sim_pending": self.sources.sim_pending(),
            "store": (self.sources.store_backend, checks["store"]),
            "checks": checks,
            "data_age_s": ages,
            "entries": sum(n for _, _, n in rows),
            "loop_lag_s": self.loop_lag,
        }

    @staticmethod
    def recent_latencies() -> list[float]:
        return metrics.recent.last_hour()


def _safe(check: Callable[[], bool]) -> bool:
    try:
        return bool(check())
    except Exception:  # noqa: BLE001 - a check that cannot even be asked has failed
        return False


class _Forward(Collector):
    """The process-wide metrics (bot.ops.metrics.REGISTRY) inside one bot's registry."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self._registry = registry

    def collect(self) -> Iterator[Metric]:
        yield from self._registry.collect()


class _Live(Collector):
    """The figures read when scraped: readiness, loop lag, gateway, pools, catalog, live board."""

    def __init__(self, ops: Ops) -> None:
        self._ops = ops

    def collect(self) -> Iterator[Metric]:
        ops, sources = self._ops, self._ops.sources
        ready = GaugeMetricFamily("cogitator_ready", "1 when every readiness check passes (/readyz answers 200)")
        ready.add_metric([], float(all(ops.checks.values())))
        yield ready
        check = GaugeMetricFamily("cogitator_ready_check", "Each readiness check: 1 passes, 0 fails", labels=["check"])
        for name in CHECKS:
            check.add_metric([name], float(ops.checks.get(name, False)))
        yield check
        lag = GaugeMetricFamily("cogitator_event_loop_lag_seconds", "How late the event loop last ran a 0.25 s timer")
        lag.add_metric([], ops.loop_lag)
        yield lag
        uptime = GaugeMetricFamily("cogitator_uptime_seconds", "Seconds since the bot started")
        uptime.add_metric([], time.time() - ops.started)
        yield uptime
        yield from self._gateway(sources)
        yield from self._pools(ops, sources)
        yield from self._catalog(ops)
        open_pages = GaugeMetricFamily("cogitator_web_open_pages", "Live-board pages with an open event stream "
                                       "(0 when the board is off)")
        open_pages.add_metric([], sources.open_pages() or 0)
        yield open_pages

    @staticmethod
    def _gateway(sources: Sources) -> Iterator[Metric]:
        shards = _safe_dict(sources.shards)
        connected = GaugeMetricFamily("cogitator_gateway_shards_connected", "Shards with an open gateway connection")
        connected.add_metric([], sum(1 for ok, _ in shards.values() if ok))
        yield connected
        total = GaugeMetricFamily("cogitator_gateway_shards", "Shards this process runs")
        total.add_metric([], len(shards))
        yield total
        latency = GaugeMetricFamily("cogitator_gateway_latency_seconds", "Heartbeat round trip per shard",
                                    labels=["shard"])
        for shard, (ok, seconds) in sorted(shards.items()):
            if ok and math.isfinite(seconds):
                latency.add_metric([str(shard)], seconds)
        yield latency

    @staticmethod
    def _pools(ops: Ops, sources: Sources) -> Iterator[Metric]:
        alive = GaugeMetricFamily("cogitator_sim_workers_alive", "Worker processes running, by pool", labels=["pool"])
        wanted = GaugeMetricFamily("cogitator_sim_workers", "Worker processes configured, by pool", labels=["pool"])
        with contextlib.suppress(Exception):
            for name, (running, configured) in ops.pool_states().items():
                alive.add_metric([name], running)
                wanted.add_metric([name], configured)
        yield alive
        yield wanted
        pending = _safe_int(sources.sim_pending)
        busy = ops.pool_states().get("simulation", (0, 0))[0] if pending else 0
        queue = GaugeMetricFamily("cogitator_sim_queue_length", "Simulations admitted and waiting for a worker")
        queue.add_metric([], max(0, pending - busy))
        yield queue
        running = GaugeMetricFamily("cogitator_sim_requests_pending", "Simulations admitted: running or queued")
        running.add_metric([], pending)
        yield running

    @staticmethod
    def _catalog(ops: Ops) -> Iterator[Metric]:
        try:
            rows, ages = ops.catalog_figures()
        except Exception:  # noqa: BLE001 - a damaged catalog answers its own users; the scrape goes on
            rows, ages = [], {}
        entries = GaugeMetricFamily("cogitator_catalog_entries", "Catalog entries by source family and edition",
                                    labels=["source", "edition"])
        for source, edition, count in rows:
            entries.add_metric([source, edition], count)
        yield entries
        age = GaugeMetricFamily("cogitator_catalog_data_age_seconds", "Age of each source's data: since the date "
                                "the source names (game-datacards, Wahapedia), else since its import",
                                labels=["source"])
        for source, seconds in sorted(ages.items()):
            age.add_metric([source], seconds)
        yield age


def _safe_dict(read: Callable[[], dict]) -> dict:
    try:
        return dict(read())
    except Exception:  # noqa: BLE001
        return {}


def _safe_int(read: Callable[[], int]) -> int:
    try:
        return int(read())
    except Exception:  # noqa: BLE001
        return 0
