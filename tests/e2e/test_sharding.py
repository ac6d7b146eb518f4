"""Two bot processes, one shard each, against one fake Discord and one SQLite database.

Discord routes a guild's events to shard (guild_id >> 22) % shard_count. Each process must identify
as its own shard, receive only its guilds, answer their interactions itself (checked by matching the
TCP port of each callback to the process that owns the socket), and both must write safely to the
shared state database at the same time.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from tests.e2e.botproc import BotProcess
from tests.e2e.conftest import dump_on_failure, export_game, start_bots
from tests.fakediscord import FakeDiscord, InteractionRecord
from tests.fakediscord.payloads import shard_of

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process attribution reads /proc")


def test_two_shard_processes_share_the_work_and_the_database(tmp_path: Path, e2e_data_dir: Path) -> None:
    fake = FakeDiscord().start()
    db = tmp_path / "shared.db"
    bots = [
        BotProcess(fake, tmp_path, name="shard0", db=db, data=e2e_data_dir, args=["--shard-ids", "0", "--shard-count", "2"]),
        # Only one process publishes commands; the other skips the sync (what docs/operations.md says to do).
        BotProcess(fake, tmp_path, name="shard1", db=db, data=e2e_data_dir, args=["--shard-ids", "1", "--shard-count", "2"],
                   env={"COGITATOR_SYNC": "false"}),
    ]
    try:
        start_bots(fake, bots)
        fake.wait_for_commands()
        fake.wait_for_sessions([(0, 2), (1, 2)])
        assert sorted(tuple(i["shard"]) for i in fake.identifies) == [(0, 2), (1, 2)]
        assert len(fake.command_puts) == 1
        guilds = {shard_of(g.id, 2): g for g in fake.guilds.values()}
        assert set(guilds) == {0, 1}, "the fake has one guild per shard"
        # Each process's own view: it became ready knowing exactly one guild (its shard's).
        for bot in bots:
            deadline = time.monotonic() + 15
            while not (ready := [line for line in bot.logs() if line.get("msg") == "ready"]):
                assert time.monotonic() < deadline, dump_on_failure(bot)
                time.sleep(0.1)
            assert ready[0]["guilds"] == 1, ready

        # Start a game in each guild at the same moment, then hammer both with CP changes.
        records: list[tuple[int, InteractionRecord]] = []
        for shard, guild in guilds.items():
            data = fake.build_command_data("game start", {"opponent": 222, "faction": "Orks",
                                                          "opponent_faction": "Necrons"}, guild_id=guild.id)
            records.append((shard, fake.send_interaction(fake.interaction_payload(2, data, user_id=111, guild_id=guild.id))))
        for shard, record in records:
            fake.wait_answered(record)
            answer = json.dumps(record.callback.data if record.callback else None)
            assert "Battle round 1" in answer, (f"shard {shard} could not start its game: {answer}",
                                                dump_on_failure(bots[shard]))

        def alice_cp(channel_id: int) -> int:
            exported = export_game(db, e2e_data_dir, channel_id)
            return next(p["cp"] for p in exported["players"] if p["user_id"] == 111)

        before = {shard: alice_cp(guild.channel_id) for shard, guild in guilds.items()}
        rounds = 6
        gains: list[tuple[int, InteractionRecord]] = []
        for _ in range(rounds):
            for shard, guild in guilds.items():
                data = fake.build_command_data("cp gain", {"amount": 1, "force": True}, guild_id=guild.id)
                gains.append((shard, fake.send_interaction(fake.interaction_payload(2, data, user_id=111, guild_id=guild.id))))
        for _, record in gains:
            fake.wait_answered(record)

        ports = {shard: bots[shard].local_ports() for shard in (0, 1)}
        for shard, record in records + gains:
            cb = record.callback
            assert cb is not None and cb.type == 4, (record.text(), dump_on_failure(bots[shard]))
            assert record.shard == shard
            port = record.attempts[-1].peer_port
            assert port in ports[shard] and port not in ports[1 - shard], \
                f"shard {shard}'s interaction was answered by the other process"

        for shard, guild in guilds.items():
            assert alice_cp(guild.channel_id) == before[shard] + rounds, f"lost CP changes on shard {shard}"

        for bot in bots:
            code, elapsed = bot.terminate()
            assert code == 0 and elapsed < 5.0, dump_on_failure(bot)
            errors = [line for line in bot.logs() if line.get("level") in ("error", "critical")]
            assert errors == [], dump_on_failure(bot)
        assert [r for r in fake.requests if r.status >= 400] == []
    finally:
        for bot in bots:
            bot.stop()
        fake.stop()
