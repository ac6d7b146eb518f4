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
