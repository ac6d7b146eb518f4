"""`python -m bot migrate-store`: SQLite -> PostgreSQL, verified, idempotent, refusing a non-empty target."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import bot.catalog.misses  # noqa: F401 - registers its table, which the least-privilege test needs created
from bot.catalog.guild_aliases import GuildAliases
from bot.games import commands as gc
from bot.games.schema import MIGRATIONS
from bot.games.store import GameStore
from bot.guild_settings import GuildSettings
from bot.leagues.store import LeagueStore
from bot.storage.base import StorageUnavailable
from bot.web.tokens import OverlayTokens
from tests.leagues.test_rebuild import body as league_body

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
    GuildAliases(store.storage)  # its table; a row written as /alias add would (the catalog's checks aside)
    with store.storage.transaction() as conn:
        conn.execute("INSERT INTO guild_aliases VALUES ('7:da boss', 7, 'Da Boss', 'Ghazghkull Thraka', 1.0)")
    leagues = LeagueStore(store.storage)
    leagues.create(7, 111, "Autumn")
    for user in (111, 222):
        leagues.join(7, user, f"p{user}", "Orks", "Autumn", None)
    leagues.bind(7, 111, 1, "Autumn")
    leagues.propose(7, 111, "Autumn", league_body(1, 111, 222, 0, 60, 20))
    leagues.confirm(7, 222, 1)
    leagues.propose(7, 111, "Autumn", league_body(2, 111, 222, None, 30, 30))
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
    assert report["guild_aliases"] == 1
    assert (report["leagues"], report["league_members"], report["league_channels"], report["league_results"],
            report["league_events"]) == (1, 2, 1, 2, 7)
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
        assert GuildAliases(target.storage).find(7, "da boss").target == "Ghazghkull Thraka"
        leagues = LeagueStore(target.storage)
        rows = leagues.standing(7, "Autumn", None).rows
        assert [(line.user_id, line.games, line.wins) for line in rows] == [(111, 1, 1), (222, 1, 0)]
        assert leagues.bound_league(7, 1) == "Autumn"
        assert leagues.create(7, 1, "Winter").id == 2  # new ids continue after the copied ones
        assert leagues.propose(7, 222, "Autumn", league_body(3, 222, 111, 0, 1, 0))[1] == 3
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

        with pytest.raises(StorageUnavailable):
            store.act(5, drop_mid_command, 111)
        assert store.export(5) == before  # nothing half-written
        store.act(5, gc.cp_gain, 111, 1)  # the pool hands out a working connection again
        assert store.export(5)["players"][0]["cp"] == before["players"][0]["cp"] + 1
        assert store.verify(5)
    finally:
        store.close()


def _corrupt(target: Path | str, sql: str, params: tuple = ()) -> None:
    """Change the target behind the store's back, the append-only triggers switched off (as a faulty disk,
    driver or hand edit could)."""
    if isinstance(target, str):
        import psycopg

        with psycopg.connect(target, autocommit=True) as conn, conn.transaction():
            conn.execute("SET LOCAL session_replication_role = replica")  # the test server's user is a superuser
            conn.execute(sql.replace("?", "%s"), params)
    else:
        import sqlite3

        conn = sqlite3.connect(target)
        conn.execute("DROP TRIGGER IF EXISTS game_events_no_update")
        conn.execute("DROP TRIGGER IF EXISTS game_events_no_delete")
        conn.execute(sql, params)
        conn.commit()
        conn.close()


CORRUPTIONS = {
    "event body": ("UPDATE game_events SET body = replace(body, '\"delta\":1', '\"delta\":2') "
                   "WHERE game_id = 3 AND type = 'cp'", ()),
    "event time by one ulp": ("UPDATE game_events SET ts = ? WHERE game_id = 4 AND seq = 2", None),
    "event actor dropped": ("UPDATE game_events SET actor_user = NULL WHERE game_id = 5 AND seq = 3", ()),
    "event missing": ("DELETE FROM game_events WHERE game_id = 6 AND seq = (SELECT MAX(seq) FROM game_events "
                      "WHERE game_id = 6)", ()),
    "snapshot": ("UPDATE games SET state = replace(state, '\"cp\":', '\"cp\": ') WHERE id = 7", ()),
    "game status": ("UPDATE games SET status = 'abandoned' WHERE id = 9", ()),
}


@pytest.mark.parametrize("kind", sorted(CORRUPTIONS))
def test_a_corrupted_row_on_the_target_is_a_difference(tmp_path: Path, db_target: Path | str, kind: str) -> None:
    """The verification reads what the target stored: any changed, missing or extra value is found."""
    from bot.storage import open_storage
    from bot.storage.move import move

    source_path = tmp_path / "source.db"
    seed_sqlite(source_path, games=10)
    source, target = open_storage(source_path), open_storage(db_target)
    try:
        first = move(source, target)
        assert (first.verified, first.differences) == (10, [])
        sql, params = CORRUPTIONS[kind]
        if params is None:  # the next double after the stored time: equal to 15 digits, not to the bit
            import math

            with source.read() as conn:
                ts = conn.execute("SELECT ts FROM game_events WHERE game_id = 4 AND seq = 2").fetchone()[0]
            params = (math.nextafter(ts, math.inf),)
        _corrupt(db_target, sql, params)
        again = move(source, target, resume=True)
    finally:
        source.close()
        target.close()
    assert again.skipped_games == 10 and again.games == 0
    assert again.verified == 9 and len(again.differences) == 1, again.differences
    assert "the target's rows differ from the source's" in again.differences[0]


def test_a_snapshot_that_does_not_refold_is_a_difference(tmp_path: Path, pg_server) -> None:  # noqa: ANN001
    """Equal rows are not enough: each game's log, re-folded, must equal its snapshot."""
    import sqlite3

    from bot.storage import open_storage
    from bot.storage.move import move

    source_path = tmp_path / "source.db"
    seed_sqlite(source_path, games=4)
    conn = sqlite3.connect(source_path)
    conn.execute("UPDATE games SET state = replace(state, '\"round\":', '\"round\":1') WHERE id = 2")
    conn.commit()
    conn.close()
    source, target = open_storage(source_path), open_storage(pg_server.new_schema_url())
    try:
        report = move(source, target)
    finally:
        source.close()
        target.close()
    assert report.verified == 3
    assert report.differences == ["game 2: the target's snapshot differs from its re-folded log"]


def _clone(path: Path, total: int) -> None:
    """Grow an SQLite state database to `total` games by copying its real ones (new ids and channels)."""
    import sqlite3

    conn = sqlite3.connect(path)
    have = conn.execute("SELECT MAX(id) FROM games").fetchone()[0]
    with conn:
        for new_id in range(have + 1, total + 1):
            src = 1 + (new_id - 1) % have
            conn.execute("INSERT INTO games (id, channel_id, guild_id, status, edition, created_at, ended_at, "
                         "last_seq, state, depth) SELECT ?, ?, guild_id, status, edition, created_at, ended_at, last_seq, "
                         "state, depth FROM games WHERE id = ?", (new_id, 100_000 + new_id, src))
            conn.execute("INSERT INTO game_events SELECT ?, seq, ts, actor_user, type, body FROM game_events "
                         "WHERE game_id = ?", (new_id, src))
            conn.execute("INSERT INTO game_checkpoints SELECT ?, depth, seq, state FROM game_checkpoints "
                         "WHERE game_id = ?", (new_id, src))
    conn.close()


def test_a_move_killed_midway_resumes_to_a_complete_verified_copy(tmp_path: Path, pg_server) -> None:  # noqa: ANN001
    """SIGKILL the mover in the middle (2 worker processes, a game per transaction): only whole games are on
    the target, the workers go too, the bot refuses the half-moved database, and --resume completes it."""
    import signal
    import time

    import psycopg

    from bot.storage.move import missing_foreign_keys
    from bot.storage.postgres import PgConn

    source = tmp_path / "state.db"
    seed_sqlite(source, games=6)
    _clone(source, 240)
    plain = pg_server.new_schema_url()
    url = plain + "&application_name=move-under-test"  # the mover's and its workers' connections
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COGITATOR_", "DISCORD_"))}
    mover = subprocess.Popen([sys.executable, "-m", "bot", "migrate-store", "--from", f"sqlite:{source}", "--to", url,
                              "--jobs", "2", "--batch", "1"], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    admin = psycopg.connect(plain, autocommit=True)
    try:
        deadline = time.monotonic() + 120
        copied = 0
        while copied < 20:
            assert mover.poll() is None and time.monotonic() < deadline, mover.communicate()
            time.sleep(0.01)
            with contextlib.suppress(psycopg.errors.UndefinedTable):
                copied = admin.execute("SELECT COUNT(*) FROM games").fetchone()[0]
        mover.send_signal(signal.SIGKILL)
        mover.communicate(timeout=60)
        while admin.execute("SELECT COUNT(*) FROM pg_stat_activity WHERE application_name = 'move-under-test'"
                            ).fetchone()[0]:  # the workers notice and exit; their open transactions roll back
            assert time.monotonic() < deadline, "the move's worker processes outlived it"
            time.sleep(0.1)
        copied = admin.execute("SELECT COUNT(*) FROM games").fetchone()[0]
        assert 20 <= copied < 240
        incomplete = admin.execute("SELECT COUNT(*) FROM games g WHERE last_seq <> (SELECT COUNT(*) FROM game_events e "
                                   "WHERE e.game_id = g.id)").fetchone()[0]
        assert incomplete == 0  # only whole games: a batch is one transaction
        assert missing_foreign_keys(PgConn(admin)) == ["game_events", "game_checkpoints"]
        bot = subprocess.run([sys.executable, "-m", "bot", "console"], cwd=ROOT, input="", capture_output=True, text=True,
                             env=env | {"COGITATOR_DATABASE_URL": url, "COGITATOR_DATA": str(tmp_path / "data")},
                             timeout=120)
        assert bot.returncode == 2 and "migrate-store into it was interrupted" in bot.stderr, bot.stderr

        resumed = cli("migrate-store", "--from", f"sqlite:{source}", "--to", url, "--resume", "--batch", "16")
        assert resumed.returncode == 0, resumed.stderr
        report = json.loads(resumed.stdout)
        assert (report["skipped_games"], report["games"]) == (copied, 240 - copied)
        assert (report["verified"], report["differences"]) == (240, [])
        assert admin.execute("SELECT COUNT(*) FROM games").fetchone()[0] == 240
        assert missing_foreign_keys(PgConn(admin)) == []
    finally:
        if mover.poll() is None:
            mover.kill()
        admin.close()


def test_least_privilege_role_starts_and_moves(tmp_path: Path, pg_server) -> None:  # noqa: ANN001
    """operations.md's least-privilege set-up: an admin role owns the tables, the bot's role has only
    SELECT/INSERT/UPDATE/DELETE and the sequence. The start-up check passes, and a move as that role keeps
    the foreign keys on (it may not drop them) and is verified all the same."""
    import uuid
    from urllib.parse import quote

    import psycopg

    from bot.storage import open_storage
    from bot.storage.check import check_postgres
    from bot.storage.move import _open_stores, missing_foreign_keys, move
    from bot.storage.postgres import PgConn

    admin_url = pg_server.new_schema_url()
    schema = admin_url.rsplit("search_path%3D", 1)[1]
    role = f"bot_{uuid.uuid4().hex[:8]}"
    admin = open_storage(admin_url)
    _open_stores(admin)  # the admin role migrates once
    admin.close()
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN")
        conn.execute(f"GRANT USAGE ON SCHEMA {schema} TO {role}")
        conn.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA {schema} TO {role}")
        conn.execute(f"GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA {schema} TO {role}")
    url = pg_server.url(schema=schema).replace(f"{quote('cogitator')}@", f"{role}@")
    assert check_postgres(url)["games"] == len(MIGRATIONS["postgresql"])
    source_path = tmp_path / "source.db"
    seed_sqlite(source_path, games=5)
    source, target = open_storage(source_path), open_storage(url)
    try:
        report = move(source, target, batch_games=2)
    finally:
        source.close()
        target.close()
    assert (report.games, report.verified, report.differences) == (5, 5, [])
    with psycopg.connect(admin_url, autocommit=True) as conn:
        assert missing_foreign_keys(PgConn(conn)) == []


@given(st.one_of(st.text(max_size=30), st.integers(-10**9, 10**9).map(str)))
def test_jobs_and_batch_take_a_bounded_whole_number(text: str) -> None:
    import argparse

    from bot.storage.cli import _bounded
    from bot.storage.move import MAX_BATCH_GAMES, MAX_JOBS

    for option, high in (("--jobs", MAX_JOBS), ("--batch", MAX_BATCH_GAMES)):
        try:
            value = _bounded(option, 1, high)(text)
        except argparse.ArgumentTypeError as error:
            assert option in str(error)
        else:
            assert 1 <= value <= high and value == int(text)


@pytest.mark.parametrize("option", [["--jobs", "0"], ["--batch", "5001"], ["--jobs", "many"]])
def test_out_of_range_jobs_or_batch_exit_2(option: list[str], tmp_path: Path) -> None:
    done = cli("migrate-store", "--from", f"sqlite:{tmp_path / 'a.db'}", "--to", f"sqlite:{tmp_path / 'b.db'}", *option)
    assert done.returncode == 2 and "Traceback" not in done.stderr and option[0] in done.stderr
