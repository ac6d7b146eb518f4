"""Start-up and shutdown of the real process: dev-guild sync through a 429, clean SIGTERM with the DB closed."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tests.e2e.botproc import BotProcess
from tests.e2e.conftest import dump_on_failure, export_game, start_bots
from tests.fakediscord import FakeDiscord


def test_dev_guild_sync_survives_429_and_sigterm_stops_cleanly(tmp_path: Path, e2e_data_dir: Path) -> None:
    fake = FakeDiscord().start()
    guild_id = fake.default_guild_id
    # The first sync attempt is rate limited: discord.py's HTTP client must wait and retry.
    fake.rate_limit("PUT", r"/guilds/\d+/commands$", count=1, retry_after=0.3)
    bot = BotProcess(fake, tmp_path, data=e2e_data_dir, env={"COGITATOR_DEV_GUILD": str(guild_id)})
    try:
        start_bots(fake, [bot])
        commands = fake.wait_for_commands(guild_id=guild_id)
        fake.wait_for_sessions([(0, 1)])
        puts = [r for r in fake.requests if r.method == "PUT"]
        assert [p.status for p in puts] == [429, 200], dump_on_failure(bot)
        assert puts[1].at - puts[0].at >= 0.29
        assert fake.global_commands == [], "a dev guild gets the commands instead of the global scope"
        assert {"help", "about"} <= {c["name"] for c in commands}

        # Leave state behind: a game in the database, written by the bot.
        channel = fake.guilds[guild_id].channel_id
        start = fake.slash("game start", {"opponent": 222, "faction": "Orks", "opponent_faction": "Necrons"})
        assert start.callback is not None and start.callback.type == 4, dump_on_failure(bot)
        fake.slash("cp gain", {"amount": 2})

        code, elapsed = bot.terminate(timeout=10)
        assert code == 0, dump_on_failure(bot)
        assert elapsed < 5.0, f"SIGTERM took {elapsed:.2f} s"
        logs = bot.logs()
        assert any(line.get("msg") == "stopped" for line in logs)
        assert not [line for line in logs if line.get("level") in ("error", "critical")], dump_on_failure(bot)
        # The bot closed the gateway itself with a normal close (1000), not a dropped socket.
        fake.wait_until(lambda: any(code == 1000 for _, code in fake.gateway_closes), 5, "the gateway close")
    finally:
        bot.stop()
        fake.stop()

    # Database closed: the last connection checkpointed and removed the WAL; the file opens cleanly.
    db = bot.db
    wal = db.with_name(db.name + "-wal")
    assert not wal.exists() or wal.stat().st_size == 0, "WAL left behind: a connection was not closed"
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        conn.close()
    exported = export_game(db, e2e_data_dir, channel)
    assert exported["players"][0]["user_id"] == 111 and exported["players"][0]["cp"] >= 2
