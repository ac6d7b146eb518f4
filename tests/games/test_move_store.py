"""`python -m bot migrate-store`: SQLite -> PostgreSQL, verified, idempotent, refusing a non-empty target."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.games import commands as gc
from bot.games.store import GameStore
from bot.guild_settings import GuildSettings
from bot.web.tokens import OverlayTokens

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COGITATOR_", "DISCORD_"))}
    return subprocess.run([sys.executable, "-m", "bot", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)


def seed_sqlite(path: Path, games: int = 12) -> dict[int, dict]:
    store = GameStore(path)
    exports = {}
    for channel in range(1, games + 1):
        store.start(channel, 7, user_id=111, user_name="Alice", opponent_id=222, opponent_name=f"Bob {channel}",
                    edition="11e" if channel % 2 else "10e", faction="Orks", opponent_faction="Leagues of Votann")
        for i in range(channel * 3):
            store.act(channel, gc.next_phase, 111)
            if i % 5 == 0:
                store.act(channel, gc.cp_gain, 222, 1, force=True)
            if i % 7 == 0:
                store.undo(channel, 111)
        if channel % 3 == 0:
            store.end(channel, 111)
    tokens = OverlayTokens(store.storage)
    tokens.issue(1, 1, 111)
    GuildSettings(store.storage).set_edition(7, "10e")
    for channel in range(1, games + 1):
        exports[channel] = store.export(channel)
    store.close()
    return exports


def test_move_to_postgres_is_verified_and_idempotent(tmp_path: Path, pg_server) -> None:  # noqa: ANN001
    source = tmp_path / "state.db"
    seed_sqlite(source)
    url = pg_server.new_schema_url()
    done = cli("migrate-store", "--from", f"sqlite:{source}", "--to", url)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["games"], report["verified"], report["differences"]) == (12, 12, [])
    assert report["guild_settings"] == 1 and report["overlay_links"] == 1 and report["events"] > 12
    again = cli("migrate-store", "--from", f"sqlite:{source}", "--to", url)
    assert again.returncode == 2 and "already holds data" in again.stderr and "Traceback" not in again.stderr
    resumed = cli("migrate-store", "--from", f"sqlite:{source}", "--to", url, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["skipped_games"] == 12
    target = GameStore(url)
    try:
        assert target.export(3)["status"] == "finished"
        target.start(99, 7, user_id=1, user_name="A", opponent_id=2, opponent_name="B", edition="11e",
                     faction="Orks", opponent_faction="Orks")  # new ids continue after the copied ones
        assert target.export(99)["game_id"] == 13
        assert GuildSettings(target.storage).edition(7) == "10e"
    finally:
        target.close()


@pytest.mark.parametrize("bad", ["sqlite:", "mysql://x", "sqlite:/nonexistent/state.db"])
def test_bad_endpoints_are_one_line(bad: str, tmp_path: Path) -> None:
    done = cli("migrate-store", "--from", bad, "--to", f"sqlite:{tmp_path / 'x.db'}")
    assert done.returncode == 2 and "Traceback" not in done.stderr and done.stderr.strip()


def test_unreachable_or_misconfigured_database_url_at_start_up(tmp_path: Path, pg_server) -> None:  # noqa: ANN001
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COGITATOR_", "DISCORD_"))}
    env["COGITATOR_DATA"] = str(tmp_path / "data")
    wrong_db = pg_server.url("no_such_database")
    wrong_password = pg_server.url().replace("cogitator@", "nobody:secret@")
    closed_port = "postgresql://cogitator@127.0.0.1:1/postgres"
    for url in (wrong_db, wrong_password, closed_port):
        done = subprocess.run([sys.executable, "-m", "bot", "console"], cwd=ROOT, env=env | {"COGITATOR_DATABASE_URL": url},
                              input="", capture_output=True, text=True, timeout=120)
        assert done.returncode == 2, (url, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and "PostgreSQL database" in lines[0] and "Traceback" not in done.stderr, done.stderr
        assert "secret" not in done.stderr  # the password is never printed


def test_a_dropped_connection_fails_the_command_cleanly(pg_server) -> None:  # noqa: ANN001
    """The server ends the session in the middle of a command: nothing is half-written, the pool recovers."""
    import psycopg

    url = pg_server.new_schema_url()
    store = GameStore(url)
    try:
        store.start(5, 1, user_id=111, user_name="A", opponent_id=222, opponent_name="B", edition="11e",
                    faction="Orks", opponent_faction="Orks")
        before = store.export(5)

        def drop_mid_command(state, user_id):  # noqa: ANN001, ANN202 - a command that loses its connection
            with psycopg.connect(pg_server.url(), autocommit=True) as admin:
                admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid() "
                              "AND backend_type = 'client backend' AND xact_start IS NOT NULL")  # the command's
            return gc.cp_gain(state, user_id, 3)

        with pytest.raises(psycopg.OperationalError):
            store.act(5, drop_mid_command, 111)
        assert store.export(5) == before  # nothing half-written
        store.act(5, gc.cp_gain, 111, 1)  # the pool hands out a working connection again
        assert store.export(5)["players"][0]["cp"] == before["players"][0]["cp"] + 1
        assert store.verify(5)
    finally:
        store.close()
