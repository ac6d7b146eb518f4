"""Ops benchmark (issue 25): what the metrics cost, how fast /metrics answers, and how fast /readyz sees the store.

    .venv/bin/python bench/bench_ops.py [--rounds 40] [--block 50] [--guilds 1000] [--scrapes 300]
                                        [--distinct 10000] [--no-postgres]
    (--rounds 0 --distinct 0 --no-postgres: the scrape alone)

Targets, one run:
- `/rule` p99 with metrics on <= 1.05 x p99 with metrics off. Both run in one console bot (the real tree and
  error handler), in alternating blocks of `--block` distinct queries, so the machine's load falls on both alike.
  "Off" replaces the recording calls (command counts and histograms, store block timing) with no-ops.
- `/metrics` scrape p99 <= 20 ms over HTTP with 1,000 guilds' worth of commands recorded (real commands from
  `--guilds` guild ids, and every command of the tree with all three outcomes, the most series there can be).
- `--distinct` distinct queries add no series.
- `/readyz` turns 503 within 2 s of a real PostgreSQL server stopping, and 200 within 2 s of its return.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import aiohttp  # noqa: E402
from discord import app_commands  # noqa: E402
from prometheus_client.parser import text_string_to_metric_families  # noqa: E402

import bot.storage.postgres as pg_backend  # noqa: E402
import bot.storage.sqlite as sqlite_backend  # noqa: E402
from bench.bench_catalog import machine_line, settings_for  # noqa: E402
from bench.bench_e2e import RULE_QUERIES, percentile  # noqa: E402
from bot.console.session import ConsoleSession  # noqa: E402
from bot.ops import metrics  # noqa: E402

RATIO_TARGET = 1.05
SCRAPE_P99_MS = 20.0
READY_S = 2.0


@contextlib.contextmanager
def metrics_off():
    """The recording calls as no-ops: what the bot would cost without metrics."""
    saved = (metrics.command_done, sqlite_backend.store_block, pg_backend.store_block)

    def nothing(*_args: object) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()
    metrics.command_done = lambda *_args: None  # type: ignore[assignment]
    sqlite_backend.store_block = nothing  # type: ignore[assignment]
    pg_backend.store_block = nothing  # type: ignore[assignment]
    try:
        yield
    finally:
        metrics.command_done, sqlite_backend.store_block, pg_backend.store_block = saved


def series(text: str) -> set[tuple[str, tuple]]:
    return {(s.name, tuple(sorted(s.labels.items()))) for f in text_string_to_metric_families(text) for s in f.samples}


async def timed(console: ConsoleSession, line: str) -> float:
    started = time.perf_counter()
    replies = await console.send(line)
    elapsed = time.perf_counter() - started
    assert replies and "Something went wrong" not in replies[0].text(), replies
    return elapsed


async def metrics_cost(console: ConsoleSession, rounds: int, block: int) -> tuple[list[float], list[float]]:
    on: list[float] = []
    off: list[float] = []
    n = 0
    for _ in range(3 * block):  # warm: caches, first-use imports
        await timed(console, f"/rule query:{RULE_QUERIES[n % len(RULE_QUERIES)]}")
        n += 1
    for round_ in range(rounds):
        for mode in ((True, False) if round_ % 2 == 0 else (False, True)):
            context = contextlib.nullcontext() if mode else metrics_off()
            with context:
                for _ in range(block):
                    query = f"{RULE_QUERIES[n % len(RULE_QUERIES)]} {n // len(RULE_QUERIES)}"
                    (on if mode else off).append(await timed(console, f"/rule query:{query}"))
                    n += 1
    return on, off


# Prometheus scrapes from a process of its own: so does this client (one kept-alive connection, like Prometheus),
# so the bot's process does only the server's work and its CPU time is what a scrape costs the bot.
CLIENT = """
import http.client, json, sys, time
conn = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=60)
times, body = [], b""
for _ in range(int(sys.argv[2])):
    started = time.perf_counter()
    conn.request("GET", "/metrics")
    response = conn.getresponse()
    body = response.read()
    assert response.status == 200, response.status
    times.append(time.perf_counter() - started)
print(json.dumps({"times": times, "text": body.decode()}))
"""


async def scrape_times(url: str, scrapes: int) -> tuple[list[float], str, float]:
    """Wall time of each scrape, seen by a client in another process; the last text; the bot process's CPU
    seconds per scrape."""
    port = url.split(":")[2].split("/")[0]
    cpu = time.process_time()
    client = await asyncio.create_subprocess_exec(sys.executable, "-c", CLIENT, port, str(scrapes),
                                                  stdout=asyncio.subprocess.PIPE)
    out, _ = await client.communicate()
    cpu = time.process_time() - cpu
    result = json.loads(out)
    return result["times"], result["text"], cpu / max(1, scrapes)


async def record_guilds(console: ConsoleSession, guilds: int) -> int:
    """Real commands from `guilds` guild ids, then every command of the tree with every outcome."""
    sent = 0
    for g in range(guilds):
        await console.send(f":guild {10_000 + g}")
        await console.send(f"/rule query:{RULE_QUERIES[g % len(RULE_QUERIES)]}")
        await console.send("/help" if g % 2 else f"/sim custom attacker:A{g} target:T4")
        sent += 2
    for command in console.tree.walk_commands():
        if isinstance(command, app_commands.Group):
            continue  # a group is never invoked itself
        for outcome in metrics.OUTCOMES:
            metrics.command_done(command.qualified_name, outcome, 0.01)
    return sent


async def distinct_queries(console: ConsoleSession, url: str, count: int) -> tuple[int, int]:
    _, before, _ = await scrape_times(url, 1)
    for i in range(count):
        await console.send(f"/rule query:distinct {i} words {i * 7919 % 100_003}")
    _, after, _ = await scrape_times(url, 1)
    return len(series(before)), len(series(after) ^ series(before))


async def readiness(settings, pg_url: str, server) -> tuple[float, float]:  # noqa: ANN001
    console = await ConsoleSession.open(dataclasses.replace(settings, database_url=pg_url, sim_workers=0, ops_port=0))
    try:
        await asyncio.to_thread(lambda: console.bot.services.catalog)
        url = f"http://127.0.0.1:{console.bot.ops_server.port}/readyz"

        async def status(http: aiohttp.ClientSession) -> int:
            async with http.get(url) as response:
                return response.status

        async with aiohttp.ClientSession() as http:
            assert await status(http) == 200
            await asyncio.to_thread(server.pause)
            stopped = time.perf_counter()
            while await status(http) != 503:
                await asyncio.sleep(0.02)
            down = time.perf_counter() - stopped
            await asyncio.to_thread(server.resume)
            back = time.perf_counter()
            while await status(http) != 200:
                await asyncio.sleep(0.02)
            up = time.perf_counter() - back
        return down, up
    finally:
        await console.close()


async def main(args: argparse.Namespace) -> None:
    folder = Path(tempfile.mkdtemp(prefix="bench-ops-"))
    settings = dataclasses.replace(settings_for(folder), sim_workers=0, ops_port=0)
    console = await ConsoleSession.open(settings)
    await asyncio.to_thread(lambda: console.bot.services.catalog)
    url = f"http://127.0.0.1:{console.bot.ops_server.port}/metrics"
    print(machine_line())
    if args.rounds:
        on, off = await metrics_cost(console, args.rounds, args.block)
        p99_on, p99_off = percentile(on, 0.99) * 1000, percentile(off, 0.99) * 1000
        ratio = p99_on / p99_off
        print(f"/rule, metrics on : n={len(on)} p50={percentile(on, 0.5) * 1000:.2f} ms p99={p99_on:.2f} ms")
        print(f"/rule, metrics off: n={len(off)} p50={percentile(off, 0.5) * 1000:.2f} ms p99={p99_off:.2f} ms")
        print(f"p99 on/off = {ratio:.3f} (target <= {RATIO_TARGET}) {'OK' if ratio <= RATIO_TARGET else 'MISS'}")
        print(machine_line())

    sent = await record_guilds(console, args.guilds)
    times, text, cpu = await scrape_times(url, args.scrapes)
    p99 = percentile(times, 0.99) * 1000
    print(f"/metrics after {sent:,} commands from {args.guilds:,} guilds: {len(series(text)):,} series, "
          f"{len(text.encode()):,} bytes; scrape n={len(times)} p50={percentile(times, 0.5) * 1000:.2f} ms "
          f"p99={p99:.2f} ms (target <= {SCRAPE_P99_MS:.0f}) {'OK' if p99 <= SCRAPE_P99_MS else 'MISS'}; "
          f"bot CPU {cpu * 1000:.2f} ms per scrape")
    print(machine_line())

    if args.distinct:
        started = time.perf_counter()
        total, changed = await distinct_queries(console, url, args.distinct)
        print(f"{args.distinct:,} distinct /rule queries in {time.perf_counter() - started:.0f} s: {total:,} series "
              f"before, {changed} added or removed {'OK' if changed == 0 else 'MISS'}")
    await console.close()

    if not args.no_postgres:
        from tests.pgserver import start_or_skip

        server = start_or_skip()
        try:
            url_pw = server.url().replace("cogitator@", "cogitator:bench-pw@")
            down, up = await readiness(settings, url_pw, server)
            print(f"/readyz with PostgreSQL stopped: 503 after {down:.2f} s; restarted: 200 after {up:.2f} s "
                  f"(target <= {READY_S:.0f} s each) {'OK' if max(down, up) <= READY_S else 'MISS'}")
        finally:
            server.stop()
    print(machine_line())


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--block", type=int, default=50)
    parser.add_argument("--guilds", type=int, default=1000)
    parser.add_argument("--scrapes", type=int, default=300)
    parser.add_argument("--distinct", type=int, default=10_000)
    parser.add_argument("--no-postgres", action="store_true")
    asyncio.run(main(parser.parse_args()))
