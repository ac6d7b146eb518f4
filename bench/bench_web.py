"""Live-board benchmark: change-to-page latency, memory per open page, and Discord latency under load.

    .venv/bin/python bench/bench_web.py [--pages 50] [--changes 100] [--streams 1000] [--flood 10000]
                                        [--huge 1500] [--huge-only] [--n 200] [--no-import]

A real `python -m bot run` process (fake Discord over sockets, live board on a loopback port) serves
one game. This process plays the other shard: it commits changes to the same database with its own
GameStore, and its event-stream clients time how long each committed change takes to reach them.

Targets (issue 14): change-to-page p99 < 500 ms with 50 pages open on one game; memory per open page
< 50 KB in the bot; with 1,000 pages open /rule p99 still < 50 ms through the fake Discord; 10,000
connection attempts from one address end in 429s and the bot keeps answering, whether they request
streams or hold connections open sending nothing (or headers a byte at a time). Also printed: the time
of a wrong and of a revoked token's 404 (the issue: no difference worth measuring).

Target (issue 19): 1,500 event-stream requests with 100 KB of headers, each sent in one piece, are all
refused, and the bot's RSS grows by at most 20 MB (while they are open and after they close).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import resource
import shutil
import socket
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import aiohttp  # noqa: E402

from bench.bench_e2e import DATASETS, RULE_QUERIES, cli, rss_mb, summary  # noqa: E402
from bot.games import commands  # noqa: E402
from bot.games.store import GameStore  # noqa: E402
from bot.web.tokens import OverlayTokens  # noqa: E402
from tests.e2e.botproc import BotProcess  # noqa: E402
from tests.fakediscord import FakeDiscord  # noqa: E402

LATENCY_P99_MS = 500.0
PAGE_KB = 50.0
RULE_P99_MS = 50.0
HUGE_RSS_MB = 20.0
CHANNEL = 9001


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def read_stream(response: aiohttp.ClientResponse, arrivals: dict[int, float]) -> None:
    event = None
    async for raw in response.content:
        line = raw.decode().rstrip("\n")
        if line.startswith("event: "):
            event = line[7:]
        elif line.startswith("data: ") and event == "state":
            seq = json.loads(line[6:])["state"]["seq"]
            arrivals.setdefault(seq, time.perf_counter())


async def open_streams(url: str, count: int, addresses: int) -> tuple[list, list[aiohttp.ClientSession], int]:
    """`count` event streams spread over `addresses` loopback source addresses (127.0.0.2, ...)."""
    sessions = [aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0, local_addr=(f"127.0.0.{i + 2}", 0)),
                                      timeout=aiohttp.ClientTimeout(total=None, sock_read=None))
                for i in range(addresses)]
    responses, refused = [], 0
    for i in range(count):
        response = await sessions[i % addresses].get(url)
        if response.status == 200:
            responses.append(response)
        else:
            refused += 1
            response.release()
    return responses, sessions, refused


async def close_all(responses: list, sessions: list[aiohttp.ClientSession]) -> None:
    for r in responses:
        r.close()
    for s in sessions:
        await s.close()


async def latency_run(store: GameStore, url: str, pages: int, changes: int) -> list[float]:
    responses, sessions, refused = await open_streams(url, pages, addresses=1)
    assert not refused, "pages refused"
    arrivals: list[dict[int, float]] = [{} for _ in responses]
    readers = [asyncio.create_task(read_stream(r, a)) for r, a in zip(responses, arrivals, strict=True)]
    await asyncio.sleep(0.5)
    committed: dict[int, float] = {}
    for i in range(changes):
        result = await asyncio.to_thread(store.act, CHANNEL, commands.vp_set, 111, i + 1)
        committed[result.state.seq] = time.perf_counter()
        await asyncio.sleep(0.05)
    await asyncio.sleep(1.0)
    # A page shows a change once it has that update or a newer one (updates between two polls coalesce).
    latencies, missing = [], 0
    for page in arrivals:
        for seq, at in committed.items():
            seen = [t for s, t in page.items() if s >= seq]
            if seen:
                latencies.append(min(seen) - at)
            else:
                missing += 1
    for task in readers:
        task.cancel()
    await close_all(responses, sessions)
    print(f"  {len(committed)} changes x {len(arrivals)} pages; never shown: {missing}")
    return latencies


async def main_async(args: argparse.Namespace) -> int:
    resource.setrlimit(resource.RLIMIT_NOFILE, (resource.getrlimit(resource.RLIMIT_NOFILE)[1],) * 2)
    work = Path(tempfile.mkdtemp(prefix="bench-web-"))
    data, db = work / "data", work / "state.db"
    cli(data, db, "catalog", "build")
    if not args.no_import:
        for fmt, path in (("wahapedia", DATASETS / "wahapedia-10e"), ("gdc", DATASETS / "gdc-11e")):
            if path.exists():
                cli(data, db, "import", fmt, str(path))
    store = GameStore(db)
    store.start(CHANNEL, 501, user_id=111, user_name="Alice", opponent_id=222, opponent_name="Bob", edition="11e",
                faction="Leagues of Votann", opponent_faction="Orks")
    game_id = store.active(CHANNEL)[0]  # type: ignore[index]
    tokens = OverlayTokens(db)
    token = tokens.issue(game_id, CHANNEL, 111)
    # A revoked link (of another channel's game, as revoking covers a whole channel) for the 404 timing.
    store.start(CHANNEL + 1, 501, user_id=111, user_name="Alice", opponent_id=222, opponent_name="Bob",
                edition="11e", faction="Orks", opponent_faction="Necrons")
    revoked = tokens.issue(store.active(CHANNEL + 1)[0], CHANNEL + 1, 111)  # type: ignore[index]
    tokens.revoke(CHANNEL + 1)
    port = free_port()
    fake = FakeDiscord().start()
    bot = BotProcess(fake, work, data=data, db=db, env={"COGITATOR_WEB_PORT": str(port), "COGITATOR_LOG_LEVEL": "WARNING"})
    bot.start()
    url = f"http://127.0.0.1:{port}/o/{token}/events"
    try:
        await asyncio.to_thread(fake.wait_for_commands)
        await asyncio.to_thread(fake.wait_for_sessions, [(0, 1)])
        for q in RULE_QUERIES[:3]:
            await asyncio.to_thread(fake.slash, "rule", {"query": q})

        if args.huge:
            await huge_headers_run(bot, url, args.huge)
        if args.huge_only:
            return 0
        await not_found_timing(f"http://127.0.0.1:{port}", revoked, args.n * 2)

        latencies = await latency_run(store, url, args.pages, args.changes)
        print(summary(f"change -> page, {args.pages} pages", latencies, LATENCY_P99_MS))

        rss_before = rss_mb(bot.pid)[0]
        responses, sessions, refused = await open_streams(url, args.streams, addresses=max(1, args.streams // 100))
        await asyncio.sleep(2.0)
        rss_after = rss_mb(bot.pid)[0]
        per_page_kb = (rss_after - rss_before) * 1024 / max(1, len(responses))
        print(f"{'memory per open page':<34} {len(responses)} streams open ({refused} refused)  "
              f"RSS {rss_before:.1f} -> {rss_after:.1f} MB  = {per_page_kb:.1f} KB/page  target<{PAGE_KB:.0f} KB  "
              f"ratio={per_page_kb / PAGE_KB:4.2f}  {'OK' if per_page_kb < PAGE_KB else 'MISS'}")
        rule_lat = []
        for i in range(args.n):
            rec = await asyncio.to_thread(fake.slash, "rule", {"query": RULE_QUERIES[i % len(RULE_QUERIES)]})
            rule_lat.append(rec.answer_latency or 0.0)
        print(summary(f"/rule with {len(responses)} pages open", rule_lat, RULE_P99_MS))
        await close_all(responses, sessions)

        if args.flood:
            # The flood comes from another process, so it competes with the bot, not with the fake Discord.
            flood = await asyncio.create_subprocess_exec(
                sys.executable, __file__, "--flood-client", url, str(args.flood), stdout=asyncio.subprocess.PIPE)
            await asyncio.sleep(1.0)
            during = await rules_while(fake, flood)
            out, _ = await flood.communicate()
            print(f"{'flood from one address':<34} {out.decode().strip()}; bot alive: {bot.alive()}")
            print(summary("/rule during the flood", during, RULE_P99_MS))

            # Connections that send nothing, or their headers a byte at a time, from one address.
            idle = await asyncio.create_subprocess_exec(
                sys.executable, __file__, "--idle-client", str(port), str(args.flood), stdout=asyncio.subprocess.PIPE)
            await asyncio.sleep(2.0)
            during = await rules_while(fake, idle)
            out, _ = await idle.communicate()
            print(f"{'idle/slow connections, one address':<34} {out.decode().strip()}; bot alive: {bot.alive()}")
            print(summary("/rule during idle connections", during, RULE_P99_MS))
        code, _ = bot.terminate()
        print(f"bot exit code after SIGTERM: {code}")
    finally:
        bot.stop()
        fake.stop()
        store.close()
        tokens.close()
        shutil.rmtree(work, ignore_errors=True)
    return 0


async def huge_headers_run(bot: BotProcess, url: str, count: int) -> None:
    """`count` event-stream requests with 100 KB headers in one send, from another process; the bot's RSS
    is sampled while they run and after they have closed."""
    before = rss_mb(bot.pid)[0]
    client = await asyncio.create_subprocess_exec(
        sys.executable, __file__, "--huge-client", url, str(count), stdout=asyncio.subprocess.PIPE)
    peak = before
    while client.returncode is None:
        peak = max(peak, rss_mb(bot.pid)[0])
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(client.wait(), 0.05)
    out = (await client.stdout.read()).decode().strip()  # type: ignore[union-attr]
    await asyncio.sleep(2.0)
    after = rss_mb(bot.pid)[0]
    growth = max(peak, after) - before
    print(f"{'100 KB headers in one send':<34} {out}; bot alive: {bot.alive()}")
    print(f"{'  bot RSS':<34} {before:.1f} -> peak {peak:.1f} -> {after:.1f} MB after they closed: growth "
          f"{growth:+.1f} MB  target<={HUGE_RSS_MB:.0f} MB  {'OK' if growth <= HUGE_RSS_MB else 'MISS'}")


async def huge_client(url: str, count: int) -> None:
    """`count` connections (100 per source address), all open at once, each sending a 100 KB header block
    in one write; prints what each got back."""
    resource.setrlimit(resource.RLIMIT_NOFILE, (resource.getrlimit(resource.RLIMIT_NOFILE)[1],) * 2)
    parts = url.split("/", 3)
    host, port = parts[2].split(":")
    head = (f"GET /{parts[3]} HTTP/1.1\r\nHost: {host}\r\n".encode()
            + b"".join(b"X-%d: %s\r\n" % (i, b"a" * 7800) for i in range(13)) + b"\r\n")
    started = time.perf_counter()

    async def one(i: int) -> str:
        try:
            reader, writer = await asyncio.open_connection(host, int(port), local_addr=(f"127.0.1.{i // 100 + 1}", 0))
        except OSError:
            return "connect error"
        try:
            writer.write(head)
            await writer.drain()
        except ConnectionError:
            pass
        try:
            answer = await asyncio.wait_for(reader.read(), 20)
        except ConnectionError:
            return "reset (refused)"
        except TimeoutError:
            return "still open"
        finally:
            writer.close()
        return answer.split(b"\r\n", 1)[0].decode(errors="replace") or "closed (refused)"
    results = await asyncio.gather(*(one(i) for i in range(count)))
    counts = {k: results.count(k) for k in sorted(set(results))}
    print(f"{count} requests of {len(head) // 1024} KB in {time.perf_counter() - started:.1f} s: {counts}")


async def rules_while(fake: FakeDiscord, load: asyncio.subprocess.Process, least: int = 20) -> list[float]:
    """/rule round trips, one after another, for as long as the load process runs (at least `least`), so the
    p99 under load rests on every sample the load allowed rather than on a fixed 20."""
    latencies: list[float] = []
    while load.returncode is None or len(latencies) < least:
        rec = await asyncio.to_thread(fake.slash, "rule", {"query": RULE_QUERIES[len(latencies) % len(RULE_QUERIES)]})
        latencies.append(rec.answer_latency or 0.0)
    return latencies


async def flood_client(url: str, count: int) -> None:
    """`count` concurrent requests for the event stream from one address; prints the status counts."""
    resource.setrlimit(resource.RLIMIT_NOFILE, (resource.getrlimit(resource.RLIMIT_NOFILE)[1],) * 2)
    statuses: dict[int, int] = {}
    started = time.perf_counter()
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as client:
        async def one() -> None:
            try:
                async with client.get(url, timeout=aiohttp.ClientTimeout(total=20)) as response:
                    statuses[response.status] = statuses.get(response.status, 0) + 1
                    if response.status == 200:
                        await asyncio.sleep(5)  # hold the stream open a while
            except (aiohttp.ClientError, TimeoutError, OSError):
                statuses[0] = statuses.get(0, 0) + 1
        await asyncio.gather(*(one() for _ in range(count)))
    print(f"{count} requests in {time.perf_counter() - started:.1f} s, status counts "
          f"{dict(sorted(statuses.items()))} (0 = connection error or timeout)")


async def not_found_timing(base: str, revoked: str, n: int) -> None:
    """A wrong and a revoked token, alternately: both must be the same 404, in the same time."""
    wrong = "W" * 43
    times: dict[str, list[float]] = {"wrong": [], "revoked": []}
    bodies = set()
    async with aiohttp.ClientSession() as client:
        for i in range(n):
            kind, tok = ("wrong", wrong) if i % 2 == 0 else ("revoked", revoked)
            started = time.perf_counter()
            async with client.get(f"{base}/o/{tok}/state") as response:
                bodies.add((response.status, await response.read()))
            times[kind].append(time.perf_counter() - started)
    q = {k: sorted(v) for k, v in times.items()}

    def pct(values: list[float], p: float) -> float:
        return values[min(len(values) - 1, int(p * len(values)))] * 1000

    spread = pct(q["wrong"], 0.9) - pct(q["wrong"], 0.1)
    diff = pct(q["revoked"], 0.5) - pct(q["wrong"], 0.5)
    print(f"{'404: wrong vs revoked token':<34} n={n // 2} each  wrong p50={pct(q['wrong'], 0.5):.2f} ms "
          f"p99={pct(q['wrong'], 0.99):.2f}  revoked p50={pct(q['revoked'], 0.5):.2f} ms "
          f"p99={pct(q['revoked'], 0.99):.2f}  median difference {diff:+.3f} ms (p10-p90 spread {spread:.3f} ms); "
          f"distinct answers: {len(bodies)} {sorted(s for s, _ in bodies)}")


async def idle_client(port: int, count: int, hold_s: float = 12.0) -> None:
    """`count` connections from one address: every tenth sends its headers a byte at a time, the rest nothing.
    Prints how many the bot refused at once (429) and how many it closed by its header deadline."""
    resource.setrlimit(resource.RLIMIT_NOFILE, (resource.getrlimit(resource.RLIMIT_NOFILE)[1],) * 2)
    started = time.perf_counter()
    conns, errors = [], 0
    for _ in range(count):
        try:
            conns.append(await asyncio.open_connection("127.0.0.1", port))
        except OSError:
            errors += 1

    async def trickle(writer: asyncio.StreamWriter) -> None:
        try:
            for byte in b"GET / HTTP/1.1\r\nHost: a\r\n" * 10:
                if writer.is_closing():
                    return
                writer.write(bytes([byte]))
                await asyncio.sleep(0.5)
        except (ConnectionError, RuntimeError):
            pass
    tasks = [asyncio.create_task(trickle(w)) for i, (_, w) in enumerate(conns) if i % 10 == 0]

    async def outcome(reader: asyncio.StreamReader) -> str:
        try:
            data = await asyncio.wait_for(reader.read(), hold_s)
        except TimeoutError:
            return "still open"
        except ConnectionError:
            return "reset"
        return "refused 429" if data.startswith(b"HTTP/1.1 429") else "closed by the bot"
    results = await asyncio.gather(*(outcome(r) for r, _ in conns))
    for task in tasks:
        task.cancel()
    for _, w in conns:
        w.close()
    counts = {k: results.count(k) for k in sorted(set(results))}
    print(f"{count} connections in {time.perf_counter() - started:.1f} s: {counts}, connect errors {errors}")


def main() -> int:
    if len(sys.argv) == 4 and sys.argv[1] == "--flood-client":
        asyncio.run(flood_client(sys.argv[2], int(sys.argv[3])))
        return 0
    if len(sys.argv) == 4 and sys.argv[1] == "--huge-client":
        asyncio.run(huge_client(sys.argv[2], int(sys.argv[3])))
        return 0
    if len(sys.argv) == 4 and sys.argv[1] == "--idle-client":
        asyncio.run(idle_client(int(sys.argv[2]), int(sys.argv[3])))
        return 0
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=50)
    parser.add_argument("--changes", type=int, default=100)
    parser.add_argument("--streams", type=int, default=1000)
    parser.add_argument("--flood", type=int, default=10000)
    parser.add_argument("--huge", type=int, default=1500, help="requests with 100 KB headers (0: none)")
    parser.add_argument("--huge-only", action="store_true", help="run only the 100 KB headers part")
    parser.add_argument("--n", type=int, default=200, help="/rule round trips with the streams open")
    parser.add_argument("--no-import", action="store_true")
    return asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    sys.exit(main())
