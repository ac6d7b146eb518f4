"""Two bot processes, one shard each, on one PostgreSQL server: no lost update, and kill -9 loses nothing.

Both processes write the same channel's game: the test routes half of the `/cp gain` interactions through
each shard's gateway (the second guild's interactions carry the first guild's channel), so the two
processes really interleave their writes to one game. Every acknowledged change must be in the log
exactly once, numbered 1..n. Then one process is killed with SIGKILL mid-stream and restarted.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.botproc import REPO, BotProcess
from tests.e2e.conftest import dump_on_failure, start_bots
from tests.fakediscord import FakeDiscord, InteractionRecord
from tests.fakediscord.payloads import shard_of
from tests.fakediscord.server import FakeDiscordError

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process attribution reads /proc")

CHANGES = 500
WINDOW = 8  # interactions in flight at once, as from a busy channel


def export(url: str, data: Path, channel_id: int) -> dict[str, Any]:
    env = {"COGITATOR_DATABASE_URL": url, "COGITATOR_DATA": str(data), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-m", "bot", "game", "export", "--channel", str(channel_id)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def change(fake: FakeDiscord, guild_id: int, channel_id: int, up: bool) -> InteractionRecord:
    """+1 or -1 CP (alternating keeps CP inside 0..99 however many changes are made)."""
    command, options = ("cp gain", {"amount": 1, "force": True}) if up else ("cp spend", {"amount": 1})
    data = fake.build_command_data(command, options, guild_id=guild_id)
    return fake.send_interaction(fake.interaction_payload(2, data, user_id=111, guild_id=guild_id,
                                                          channel_id=channel_id))


def acknowledged(record: InteractionRecord) -> bool:
    cb = record.callback
    return cb is not None and cb.type == 4 and not (cb.data or {}).get("flags", 0) & 64  # public, not refused


def test_two_shards_on_postgres_keep_every_change(tmp_path: Path, e2e_data_dir: Path, pg_server) -> None:  # noqa: ANN001
    url = pg_server.new_schema_url()
    fake = FakeDiscord().start()
    env = {"COGITATOR_DATABASE_URL": url}
    bots = [BotProcess(fake, tmp_path, name=f"shard{i}", data=e2e_data_dir, env=env if i == 0 else
                       env | {"COGITATOR_SYNC": "false"}, args=["--shard-ids", str(i), "--shard-count", "2"])
            for i in (0, 1)]
    try:
        start_bots(fake, bots)
        fake.wait_for_commands()
        fake.wait_for_sessions([(0, 2), (1, 2)])
        guilds = {shard_of(g.id, 2): g for g in fake.guilds.values()}
        channel = guilds[0].channel_id
        start = fake.slash("game start", {"opponent": 222, "faction": "Orks", "opponent_faction": "Necrons",
                                          "starting_cp": 20},
                           guild_id=guilds[0].id)
        assert "Battle round 1" in json.dumps(start.callback.data if start.callback else None), dump_on_failure(bots[0])
        cp0 = next(p["cp"] for p in export(url, e2e_data_dir, channel)["players"] if p["user_id"] == 111)

        def burst(count: int, *, kill: bool = False) -> list[InteractionRecord]:
            records: list[InteractionRecord] = []
            for i in range(0, count, WINDOW):
                window = [change(fake, guilds[(i + j) % 2].id, channel, up=(i + j) % 4 < 2)
                          for j in range(min(WINDOW, count - i))]
                if kill:
                    os.kill(bots[1].pid, signal.SIGKILL)  # mid-stream: part of this window is never answered
                for record in window:
                    with contextlib.suppress(FakeDiscordError):  # the killed shard's interactions go unanswered
                        fake.wait_answered(record, timeout=3 if kill else 20)
                records += window
            return records

        first = burst(CHANGES)
        acked = sum(acknowledged(r) for r in first)
        refused = [r.text()[:200] for r in first if not acknowledged(r)][:3]
        assert acked == CHANGES, (f"{CHANGES - acked} changes were not acknowledged: {refused}",
                                  dump_on_failure(bots[0]), dump_on_failure(bots[1]))
        assert {r.shard for r in first} == {0, 1}, "both processes took part"
        data = export(url, e2e_data_dir, channel)
        cp_events = [e for e in data["log"] if e["type"] == "cp"]
        assert len(cp_events) == CHANGES
        assert [e["seq"] for e in data["log"]] == list(range(1, CHANGES + 2))
        assert next(p["cp"] for p in data["players"] if p["user_id"] == 111) == cp0  # as many +1 as -1

        # kill -9 one process in the middle of a stream of changes, restart it, carry on.
        fake.watchdog = lambda: None  # type: ignore[method-assign] - the kill is on purpose
        second = burst(40) + burst(WINDOW, kill=True)
        bots[1].stop()
        bots[1] = BotProcess(fake, tmp_path, name="shard1b", data=e2e_data_dir, env=env | {"COGITATOR_SYNC": "false"},
                             args=["--shard-ids", "1", "--shard-count", "2"])
        bots[1].start()
        fake.wait_for_sessions([(1, 2)])
        third = burst(20)
        assert all(acknowledged(r) for r in third), dump_on_failure(bots[1])
        data = export(url, e2e_data_dir, channel)
        acked_total = CHANGES + sum(acknowledged(r) for r in second) + len(third)
        cp_events = [e for e in data["log"] if e["type"] == "cp"]
        # Every acknowledged change is there; a change the killed process committed but could not
        # acknowledge may be there too, but nothing twice and no gap.
        assert acked_total <= len(cp_events) <= CHANGES + len(second) + len(third)
        assert [e["seq"] for e in data["log"]] == list(range(1, len(data["log"]) + 1))
        ups = sum("gains" in e["summary"] for e in cp_events)
        assert next(p["cp"] for p in data["players"] if p["user_id"] == 111) == cp0 + ups - (len(cp_events) - ups)
        verify = subprocess.run([sys.executable, "-m", "bot", "game", "verify", "--channel", str(channel)], cwd=REPO,
                                env={"COGITATOR_DATABASE_URL": url, "COGITATOR_DATA": str(e2e_data_dir),
                                     "PATH": "/usr/bin:/bin"}, capture_output=True, text=True, timeout=60)
        assert verify.returncode == 0, verify.stdout + verify.stderr
        for bot in bots:
            code, _ = bot.terminate()
            assert code == 0, dump_on_failure(bot)
    finally:
        for bot in bots:
            bot.stop()
        fake.stop()
