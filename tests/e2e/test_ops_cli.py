"""`python -m bot backup|restore|migrate`: consistent online backups while someone writes, safe restores."""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot import db as state_db
from bot.__main__ import main


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "state.db"
    monkeypatch.setenv("COGITATOR_DB", str(path))
    monkeypatch.setenv("COGITATOR_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("COGITATOR_LOG_LEVEL", "WARNING")
    monkeypatch.delenv("DISCORD_TOKEN", raising=False)
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict]:
    code = main(list(argv))
    out = capsys.readouterr().out.strip().splitlines()
    return code, json.loads(out[-1]) if out else {}


def test_migrate_then_backup_while_a_writer_is_busy(env: Path, tmp_path: Path, capsys) -> None:
    code, out = run(capsys, "migrate")
    assert code == 0 and set(out["schema_versions"]) >= {"games", "guild_settings"}
    conn = state_db.connect(env)
    conn.execute("CREATE TABLE ledger (n INTEGER PRIMARY KEY, total INTEGER NOT NULL)")
    stop = threading.Event()

    def writer() -> None:  # every transaction keeps the invariant total == n * 10
        w = state_db.connect(env)
        n = 0
        while not stop.is_set():
            n += 1
            w.execute("BEGIN IMMEDIATE")
            w.execute("INSERT INTO ledger (n, total) VALUES (?, ?)", (n, n * 10))
            w.execute("COMMIT")
        w.close()

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        for i in range(3):
            code, out = run(capsys, "backup", str(tmp_path / f"b{i}.db"))
            assert code == 0 and out["backup"]["integrity"] == "ok", out
    finally:
        stop.set()
        thread.join()
        conn.close()
    for i in range(3):
        copy = tmp_path / f"b{i}.db"
        assert not copy.with_name(copy.name + "-wal").exists()
        with sqlite3.connect(copy) as c:
            rows = c.execute("SELECT n, total FROM ledger ORDER BY n").fetchall()
            assert all(total == n * 10 for n, total in rows)
            assert [n for n, _ in rows] == list(range(1, len(rows) + 1)), "a consistent prefix of the writes"
            assert c.execute("PRAGMA journal_mode").fetchone()[0] == "delete"


def test_restore_round_trip_keeps_the_replaced_state(env: Path, tmp_path: Path, capsys) -> None:
    conn = state_db.connect(env)
    conn.execute("CREATE TABLE t (v TEXT)")
    conn.execute("INSERT INTO t VALUES ('before')")
    assert run(capsys, "backup", str(tmp_path / "b.db"))[0] == 0
    conn.execute("UPDATE t SET v = 'after'")
    conn.close()
    code, out = run(capsys, "restore", str(tmp_path / "b.db"))
    assert code == 2 and out["field"] == "yes"
    code, out = run(capsys, "restore", str(tmp_path / "b.db"), "--yes")
    assert code == 0 and out["integrity"] == "ok"
    with sqlite3.connect(env) as c:
        assert c.execute("SELECT v FROM t").fetchone()[0] == "before"
    with sqlite3.connect(out["previous_saved_as"]) as c:
        assert c.execute("SELECT v FROM t").fetchone()[0] == "after"


def test_refusals_are_one_json_line_and_exit_2(env: Path, tmp_path: Path, capsys) -> None:
    assert run(capsys, "backup", str(tmp_path / "x.db"))[1]["field"] == "COGITATOR_DB"  # no database yet
    state_db.connect(env).close()
    assert run(capsys, "backup", str(env))[1]["error"].startswith("the backup path is the live database")
    (tmp_path / "taken.db").write_text("x")
    assert run(capsys, "backup", str(tmp_path / "taken.db"))[0] == 2
    (tmp_path / "junk.db").write_bytes(b"not sqlite at all" * 100)
    code, out = run(capsys, "restore", str(tmp_path / "junk.db"), "--yes")
    assert code == 2 and "not a SQLite database" in out["error"]
    code, out = run(capsys, "restore", str(tmp_path / "missing.db"), "--yes")
    assert code == 2 and out["field"] == "path"
    code, out = run(capsys, "backup", "/proc/forbidden/b.db")
    assert code == 2 and out["field"] == "path"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
# No "/" in names: a leading slash would make the join an absolute path outside the temp folder.
@given(name=st.text(alphabet=st.characters(blacklist_characters="/"), min_size=1, max_size=40))
def test_hostile_backup_names_never_traceback(env: Path, tmp_path: Path, capsys, name: str) -> None:
    state_db.connect(env).close()
    try:
        code = main(["backup", str(tmp_path / "hb" / name)])
    except SystemExit as exit_:  # argparse refusal (empty / NUL): exit 2 with usage
        code = exit_.code
    out = capsys.readouterr()
    assert code in (0, 2)
    assert "Traceback" not in out.out + out.err


def test_a_killed_backup_leaves_nothing_the_next_backup_keeps(env: Path, tmp_path: Path, capsys) -> None:
    """kill -9 in the middle of a real `backup` process (its copy restarts while someone writes, so it is
    still copying when killed): the hidden partial and its -journal stay behind until the next backup
    (what the nightly unit runs) removes them; a live writer's partial is left alone."""
    import os
    import signal
    import subprocess
    import sys
    import time

    conn = state_db.connect(env)
    conn.execute("CREATE TABLE filler (b BLOB)")
    conn.executemany("INSERT INTO filler VALUES (randomblob(4000))", [()] * 3000)  # ~3,000 pages: several steps
    folder = tmp_path / "backups"
    folder.mkdir()
    live = folder / f".cogitator-other.db.partial-{os.getpid()}"  # a backup still running (this process)
    live.write_bytes(b"x")
    stop = threading.Event()

    def writer() -> None:  # each commit restarts the copy at its next step
        while not stop.is_set():
            conn.execute("INSERT INTO filler VALUES (randomblob(10))")
    thread = threading.Thread(target=writer)
    thread.start()
    try:
        backup = subprocess.Popen([sys.executable, "-m", "bot", "backup", str(folder / "cogitator-1.db")],
                                  cwd=Path(__file__).resolve().parents[2], env=os.environ.copy())
        journal = folder / f".cogitator-1.db.partial-{backup.pid}-journal"
        deadline = time.monotonic() + 60
        while not journal.exists():
            assert backup.poll() is None, "the backup finished or failed before it could be killed"
            assert time.monotonic() < deadline, "the backup never started copying"
            time.sleep(0.01)
        backup.send_signal(signal.SIGKILL)
        backup.wait()
    finally:
        stop.set()
        thread.join()
        conn.close()
    left = sorted(p.name for p in folder.iterdir())
    assert left == sorted([live.name, f".cogitator-1.db.partial-{backup.pid}", journal.name]), left

    code, out = run(capsys, "backup", str(folder / "cogitator-2.db"))
    assert code == 0 and out["backup"]["stale_partials_removed"] == sorted(n for n in left if n != live.name), out
    assert sorted(p.name for p in folder.iterdir()) == sorted([live.name, "cogitator-2.db"])
