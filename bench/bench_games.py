"""Game tracker benchmark: command round trip on a database of 10,000 finished games, and DB growth per game.

    .venv/bin/python bench/bench_games.py [--games 10000] [--commands 1000]

Round trips go through the real CommandTree (the offline console), so they include option parsing,
the per-channel lock, the `BEGIN IMMEDIATE` transaction, the event append, the snapshot rewrite and
rendering. The catalog is switched off here (strategems are given with cost:) so the numbers measure
the tracker, not the catalog build; the mission catalog (wh40kdc) is loaded once before timing, as a
running bot has it after its first mission command. The timed mix includes mission play (primary and
secondary VP with caps, the chess clock, /game score). Targets: p99 < 20 ms, growth < 100 KB per game.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot.config import Settings  # noqa: E402
from bot.console import ConsoleSession  # noqa: E402
from bot.games import missions  # noqa: E402
from bot.services import Services  # noqa: E402

P99_TARGET_MS = 20.0
READS = ("/cp show", "/game score")  # answered ephemerally by design, not refusals
GROWTH_TARGET_KB = 100.0


def _no_catalog(self: Services) -> None:
    raise RuntimeError("catalog disabled in the game benchmark")


def battle_script() -> list[str]:
    """A full five-round 11e battle with the commands players actually use, mission play included: a
    mission, a roll-off, the chess clock handed over and back each turn, primary and secondary VP (about
    200 lines)."""
    lines = [":as 111", "/game start opponent:222 edition:11e faction:Orks opponent_faction:Leagues of Votann "
             "mission:Purge and Secure deployment:Dawn of War", "/game rolloff winner:111", "/clock start minutes:90",
             "/secondary draw card:Assassination mode:fixed", ":as 222", "/secondary draw card:Assassination mode:fixed"]
    for rnd in range(1, 6):
        for me, other in ((111, 222), (222, 111)):
            # Each faction's own rules: the Votann player gives Judgement tokens, the Orks player riles units up.
            faction_rule = (f"/judgement add unit:Mob {rnd}" if me == 222
                            else f"/riled add unit:Boyz {rnd} until:end-of-this-turn")
            riled = (f"/riled add unit:Nobz {rnd} until:end-of-next-turn" if me == 111
                     else f"/judgement add unit:Nobz {rnd}")
            lines += [f":as {me}", "/cp gain amount:1", f"/strat use name:Command Re-roll unit:Boyz {rnd} cost:1",
                      faction_rule, "/game next", "/clock pass", f":as {other}", "/clock pass",
                      f":as {me}", "/game next", riled, "/game next",
                      f"/shock unit:Grots {rnd}", "/game next", "/vp add amount:1", "/vp primary amount:2",
                      "/vp secondary amount:2 card:Assassination", "/game next"]
    lines += [":as 111", "/game score", "/game end"]
    return lines


def db_bytes(path: Path) -> int:
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = conn.execute("PRAGMA page_count").fetchone()[0] * conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    return size


async def play_games(console: ConsoleSession, channels: range) -> None:
    script = battle_script()
    for channel in channels:
        await console.send(f":channel {channel}")
        for line in script:
            replies = await console.send(line)
            if line.startswith("/") and line not in READS and replies and replies[-1].ephemeral:
                raise SystemExit(f"benchmark script refused: {line!r}: {replies[-1].text()}")


def clone_games(path: Path, template_ids: list[int], total: int) -> None:
    """Fill the database with finished games by copying real ones (same rows, new ids and channels)."""
    conn = sqlite3.connect(path)
    have = conn.execute("SELECT COUNT(*) FROM games WHERE status != 'active'").fetchone()[0]
    next_id = conn.execute("SELECT MAX(id) FROM games").fetchone()[0] + 1
    conn.execute("BEGIN")
    for n in range(total - have):
        src = template_ids[n % len(template_ids)]
        new_id, channel = next_id + n, 10_000_000 + n
        conn.execute("INSERT INTO games (id, channel_id, guild_id, status, edition, created_at, ended_at, last_seq, state) "
                     "SELECT ?, ?, guild_id, status, edition, created_at, ended_at, last_seq, state FROM games WHERE id = ?",
                     (new_id, channel, src))
        conn.execute("INSERT INTO game_events (game_id, seq, ts, actor_user, type, body) "
                     "SELECT ?, seq, ts, actor_user, type, body FROM game_events WHERE game_id = ?", (new_id, src))
    conn.execute("COMMIT")
    conn.close()


async def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--games", type=int, default=10_000)
    parser.add_argument("--commands", type=int, default=1_000)
    parser.add_argument("--sample-games", type=int, default=10)
    args = parser.parse_args()
    Services.catalog = property(_no_catalog)  # type: ignore[assignment]
    missions.catalog()  # parsed once per process (about 2 s), like a running bot after its first use
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "state.db"
        settings = Settings(token=None, db_path=path, data_dir=Path(tmp) / "data", log_level="WARNING",
                            sync_commands=False)
        console = await ConsoleSession.open(settings)
        try:
            await console.send("/help")  # opens the stores
            console.bot.services.games  # noqa: B018 - create the schema before measuring
            base = db_bytes(path)
            t0 = time.perf_counter()
            await play_games(console, range(5000, 5000 + args.sample_games))
            played = time.perf_counter() - t0
            growth_kb = (db_bytes(path) - base) / args.sample_games / 1024
            n_lines = len([x for x in battle_script() if x.startswith("/")])
            conn = sqlite3.connect(path)
            events_per_game = conn.execute("SELECT COUNT(*) FROM game_events").fetchone()[0] / args.sample_games
            template_ids = [r[0] for r in conn.execute("SELECT id FROM games")]
            conn.close()
            t0 = time.perf_counter()
            clone_games(path, template_ids, args.games)
            filled = time.perf_counter() - t0
            size_mb = db_bytes(path) / 1e6

            await console.restart()  # cold caches, as after a deploy
            await console.send(":channel 4242")
            await console.send(":as 111")
            await console.send("/game start opponent:222 edition:11e faction:Orks opponent_faction:Necrons "
                               "starting_cp:5 mission:Meatgrinder")
            await console.send("/clock start")
            await console.send("/secondary draw card:Assassination mode:fixed")
            mix = ["/cp gain amount:1", "/cp spend amount:1", "/judgement add unit:Warriors force:true",
                   "/strat use name:Command Re-roll unit:Boyz cost:0 force:true", "/vp add amount:1",
                   "/vp primary amount:1 force:true", "/vp secondary amount:1 card:Assassination force:true",
                   "/clock pause", "/clock resume", "/riled add unit:Nobz until:end-of-next-turn", "/game status",
                   "/cp show", "/game undo", "/vp set amount:3", "/game score"]
            timings = []
            cpu = []
            by_line: dict[str, list[float]] = {}
            refused = 0
            for i in range(args.commands):
                line = mix[i % len(mix)]
                t, c = time.perf_counter(), time.process_time()
                replies = await console.send(line)
                timings.append((time.perf_counter() - t) * 1000)
                cpu.append((time.process_time() - c) * 1000)
                by_line.setdefault(line.split(" amount")[0].split(" unit")[0], []).append(timings[-1])
                refused += bool(replies and replies[-1].ephemeral and line not in READS)
        finally:
            await console.close()
    timings.sort()
    q = statistics.quantiles(timings, n=100)
    p50, p95, p99 = q[49], q[94], q[98]
    print(f"games in database           {args.games:>10,}  ({size_mb:.1f} MB after filling, {filled:.1f} s to clone)")
    print(f"events per game             {events_per_game:>10.0f}  ({n_lines} commands per scripted battle, "
          f"{played / args.sample_games:.2f} s per battle through the console)")
    print(f"DB growth per game          {growth_kb:>10.1f} KB   target < {GROWTH_TARGET_KB:.0f} KB   "
          f"ratio {growth_kb / GROWTH_TARGET_KB:.2f}")
    print(f"round trip p50 / p95 / p99  {p50:>6.2f} / {p95:.2f} / {p99:.2f} ms over {args.commands} commands "
          f"(max {timings[-1]:.2f} ms, {refused} refusals)")
    cq = statistics.quantiles(sorted(cpu), n=100)
    print(f"CPU time p50 / p95 / p99    {cq[49]:>6.2f} / {cq[94]:.2f} / {cq[98]:.2f} ms   (this process's CPU, all "
          "threads: what the command costs, without waiting for a core on a loaded machine)")
    slowest = sorted(((statistics.quantiles(v, n=100)[98], k) for k, v in by_line.items()), reverse=True)[:4]
    print("p99 by command              " + " · ".join(f"{k} {v:.1f}" for v, k in slowest) + " ms")
    print(f"p99 vs target               {p99:>10.2f} ms   target < {P99_TARGET_MS:.0f} ms   ratio {p99 / P99_TARGET_MS:.2f}")
    ok = p99 < P99_TARGET_MS and growth_kb < GROWTH_TARGET_KB
    print("result                      " + ("PASS" if ok else "FAIL"))
    return 0 if ok else 1


if __name__ == "__main__":
    os.environ.setdefault("COGITATOR_LOG_LEVEL", "WARNING")
    sys.exit(asyncio.run(main()))
