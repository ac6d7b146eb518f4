"""The tracker workload shared by bench_games.py and bench_storage.py.

One place for: the scripted five-round battle played through the console, the cloning of real games up to
N stored games, and the timed command mix (round trips through the real CommandTree on a new game after a
cold restart). Each benchmark adds only what it measures beyond that.
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path

from bot.config import Settings
from bot.console.session import ConsoleSession
from bot.games import missions
from bot.services import Services

READS = ("/cp show", "/game score")  # answered ephemerally by design, not refusals

MIX = ["/cp gain amount:1", "/cp spend amount:1", "/judgement add unit:Warriors force:true",
       "/strat use name:Command Re-roll unit:Boyz cost:0 force:true", "/vp add amount:1",
       "/vp primary amount:1 force:true", "/vp secondary amount:1 card:Assassination force:true",
       "/clock pause", "/clock resume", "/riled add unit:Nobz until:end-of-next-turn", "/game status",
       "/cp show", "/game undo", "/vp set amount:3", "/game score"]


def arg_parser() -> argparse.ArgumentParser:
    """The workload's size: stored games, timed commands, battles played through the console."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--games", type=int, default=10_000, help="finished games in the database")
    parser.add_argument("--commands", type=int, default=1_000, help="timed round trips of the command mix")
    parser.add_argument("--sample-games", type=int, default=10, help="battles played through the console")
    return parser


def bench_settings(folder: Path) -> Settings:
    """A bot on an SQLite state database in `folder` (the catalog folder stays empty: it is switched off)."""
    return Settings(token=None, db_path=folder / "state.db", data_dir=folder / "data", log_level="WARNING",
                    sync_commands=False)


def _no_catalog(self: Services) -> None:
    raise RuntimeError("catalog disabled in the game benchmark")


def tracker_only() -> None:
    """Switch the catalog off (stratagems are given with cost:) so the numbers measure the tracker, and load
    the mission catalog (wh40kdc, about 2 s) once, as a running bot has it after its first mission command."""
    Services.catalog = property(_no_catalog)  # type: ignore[assignment]
    missions.catalog()


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


async def play_games(console: ConsoleSession, channels: range) -> None:
    """The scripted battle in each channel, through the console; a refused line stops the benchmark."""
    script = battle_script()
    for channel in channels:
        await console.send(f":channel {channel}")
        for line in script:
            replies = await console.send(line)
            if line.startswith("/") and line not in READS and replies and replies[-1].ephemeral:
                raise SystemExit(f"benchmark script refused: {line!r}: {replies[-1].text()}")


def clone_games(path: Path, total: int) -> None:
    """Fill the SQLite database with finished games by copying the real ones in it (same rows, new ids and
    channels) until it holds `total`."""
    conn = sqlite3.connect(path)
    template_ids = [r[0] for r in conn.execute("SELECT id FROM games")]
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


@dataclass
class MixRun:
    """Round trips of the command mix: wall time and this process's CPU time (ms), per command kind."""

    timings: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    by_line: dict[str, list[float]] = field(default_factory=dict)
    refused: int = 0

    def quantiles(self, cpu: bool = False) -> tuple[float, float, float]:
        """p50, p95, p99."""
        q = statistics.quantiles(sorted(self.cpu if cpu else self.timings), n=100)
        return q[49], q[94], q[98]


async def time_mix(console: ConsoleSession, commands: int) -> MixRun:
    """Round trips of the command mix on a new game in channel 4242, after a cold restart (as after a deploy)."""
    await console.restart()
    await console.send(":channel 4242")
    await console.send(":as 111")
    await console.send("/game start opponent:222 edition:11e faction:Orks opponent_faction:Necrons "
                       "starting_cp:5 mission:Meatgrinder")
    await console.send("/clock start")
    await console.send("/secondary draw card:Assassination mode:fixed")
    run = MixRun()
    for i in range(commands):
        line = MIX[i % len(MIX)]
        t, c = time.perf_counter(), time.process_time()
        replies = await console.send(line)
        run.timings.append((time.perf_counter() - t) * 1000)
        run.cpu.append((time.process_time() - c) * 1000)
        run.by_line.setdefault(line.split(" amount")[0].split(" unit")[0], []).append(run.timings[-1])
        run.refused += bool(replies and replies[-1].ephemeral and line not in READS)
    return run
