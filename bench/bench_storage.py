"""State backends side by side (issue 15): the same tracker work on SQLite and on PostgreSQL.

    .venv/bin/python bench/bench_storage.py [--games 10000] [--commands 1000] [--sample-games 10] [--move-only]

Fills an SQLite state database the way bench_games.py does (scripted battles through the console, cloned
to --games finished games), then: moves it to a throwaway PostgreSQL server with `migrate-store`'s code
(timed and verified), times the same command mix through the real CommandTree on both backends, and races
4 processes x 250 interleaved CP changes on one channel on each backend.

Targets: round trip p99 < 20 ms on SQLite and < 30 ms on PostgreSQL (loopback) with 10,000 stored games;
4 x 250 changes: 1,000 of 1,000 kept on both; the move: 10,000 games in under 60 s, 0 differences.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.tracker_load import arg_parser, bench_settings, clone_games, play_games, time_mix, tracker_only  # noqa: E402
from bot.config import Settings  # noqa: E402
from bot.console.session import ConsoleSession  # noqa: E402
from tests.pgserver import PostgresServer, start_or_skip  # noqa: E402

P99_TARGET_MS = 20.0


RACER = """
import sys, time
from bot.games import commands as gc
from bot.games.store import GameStore
target, user, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
store = GameStore(target)
print("ready", flush=True)
sys.stdin.readline()
for i in range(n):
    if i % 2 == 0:
        store.act(77, gc.cp_gain, user, 1, force=True)
    else:
        store.act(77, gc.cp_spend, user, 1)
store.close()
"""


def race(target: str, processes: int = 4, changes: int = 250) -> tuple[int, int, float]:
    """`processes` writers × `changes` interleaved CP changes on one channel: (kept, expected, changes/s)."""
    import subprocess

    from bot.games.store import GameStore

    store = GameStore(target)
    store.start(77, 1, user_id=111, user_name="A", opponent_id=222, opponent_name="B", edition="11e",
                faction="Orks", opponent_faction="Orks", starting_cp=10)
    store.close()
    procs = [subprocess.Popen([sys.executable, "-c", RACER, target, str((111, 222)[i % 2]), str(changes)],
                              cwd=Path(__file__).resolve().parents[1], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True) for i in range(processes)]
    for proc in procs:
        assert proc.stdout and proc.stdout.readline().strip() == "ready"
    t0 = time.perf_counter()
    for proc in procs:
        assert proc.stdin
        proc.stdin.write("go\n")
        proc.stdin.flush()
    for proc in procs:
        proc.wait(600)
    elapsed = time.perf_counter() - t0
    store = GameStore(target)
    data = store.export(77)
    store.close()
    kept = sum(1 for e in data["log"] if e["type"] == "cp")
    seqs = [e["seq"] for e in data["log"]]
    assert seqs == list(range(1, len(seqs) + 1)), "a gap or a duplicate in the log"
    return kept, processes * changes, kept / elapsed


PG_P99_TARGET_MS = 30.0
MOVE_TARGET_S = 60.0


def server_cpu_s(server: PostgresServer) -> float:
    """CPU seconds of the server's processes that have ended (its backends end with their connections)."""
    pid = (server.data / "postmaster.pid").read_text().split()[0]
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def children_cpu_s() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def time_move(server: PostgresServer, sqlite_path: Path, url: str, jobs: int | None) -> list[str]:
    """`python -m bot migrate-store` of the whole database, timed, with the CPU it took on each side."""
    import json
    import subprocess

    load = os.getloadavg()[0]
    server0, mover0 = server_cpu_s(server), children_cpu_s()
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "bot", "migrate-store", "--from", f"sqlite:{sqlite_path}", "--to", url,
                           *(["--jobs", str(jobs)] if jobs else [])], cwd=Path(__file__).resolve().parents[1],
                          capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - t0
    if done.returncode not in (0, 1):
        raise SystemExit(f"migrate-store failed: {done.stderr.strip()}")
    report = json.loads(done.stdout)
    time.sleep(0.5)  # let the server reap the closed connections' backends
    return [f"move SQLite -> PostgreSQL     {report['games']:,} games, {report['events']:,} events in {seconds:.1f} s "
            f"({report['jobs']} worker process{'es' if report['jobs'] != 1 else ''}), {report['verified']:,} verified game by game, "
            f"{len(report['differences'])} differences   target < {MOVE_TARGET_S:.0f} s   "
            f"ratio {seconds / MOVE_TARGET_S:.2f}",
            f"  CPU used: migrate-store and its workers {children_cpu_s() - mover0:.1f} s, PostgreSQL server "
            f"{server_cpu_s(server) - server0:.1f} s; {os.cpu_count()} cores, load average {load:.1f} at the start "
            f"(shared machine); the test server runs with fsync=off"]


async def postgres_side(sqlite_path: Path, settings: Settings, commands: int, *, jobs: int | None = None,
                        move_only: bool = False) -> list[str]:
    """The same database moved to PostgreSQL (the move is timed and verified), the same round trips on it,
    and the 4-process race on both backends."""
    import dataclasses

    server = start_or_skip()
    lines = []
    try:
        url = server.new_schema_url()
        lines += time_move(server, sqlite_path, url, jobs)
        if move_only:
            return lines
        console = await ConsoleSession.open(dataclasses.replace(settings, database_url=url))
        try:
            run = await time_mix(console, commands)
        finally:
            await console.close()
        p50, p95, p99 = run.quantiles()
        lines.append(f"PostgreSQL round trip p50 / p95 / p99  {p50:.2f} / {p95:.2f} / {p99:.2f} ms ({run.refused} refusals)   "
                     f"target p99 < {PG_P99_TARGET_MS:.0f} ms   ratio {p99 / PG_P99_TARGET_MS:.2f}")
        for name, target_db in (("SQLite", str(sqlite_path.parent / "race.db")), ("PostgreSQL", server.new_schema_url())):
            kept, expected, rate = race(target_db)
            lines.append(f"4 processes x 250 changes, {name:<10}  {kept} of {expected} kept, {rate:.0f} changes/s")
    finally:
        server.stop()
    return lines


async def main() -> int:
    parser = arg_parser()
    parser.add_argument("--move-only", action="store_true", help="only fill the database and time the move")
    parser.add_argument("--jobs", type=int, default=None, help="the move's worker processes (default: one per core)")
    args = parser.parse_args()
    tracker_only()
    with tempfile.TemporaryDirectory() as tmp:
        settings = bench_settings(Path(tmp))
        path = settings.db_path
        console = await ConsoleSession.open(settings)
        try:
            await console.send("/help")
            await play_games(console, range(5000, 5000 + args.sample_games))
            clone_games(path, args.games)
            run = None if args.move_only else await time_mix(console, args.commands)
        finally:
            await console.close()
        print(f"games in database            {args.games:,} (clones of {args.sample_games} battles played through "
              f"the console, about 156 events each)")
        if run is not None:
            p50, p95, p99 = run.quantiles()
            print(f"SQLite round trip p50 / p95 / p99  {p50:.2f} / {p95:.2f} / {p99:.2f} ms ({run.refused} refusals)   "
                  f"target p99 < {P99_TARGET_MS:.0f} ms   ratio {p99 / P99_TARGET_MS:.2f}")
        for line in await postgres_side(path, settings, args.commands, jobs=args.jobs, move_only=args.move_only):
            print(line)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("COGITATOR_LOG_LEVEL", "WARNING")
    sys.exit(asyncio.run(main()))
