"""The state database helper: WAL, per-namespace migrations that run once, trigger bodies kept whole."""

from __future__ import annotations

import sqlite3

import pytest

from bot import db

MIGRATIONS = [
    "CREATE TABLE log (id INTEGER PRIMARY KEY, text TEXT);"
    "CREATE TRIGGER log_append_only BEFORE UPDATE ON log BEGIN SELECT RAISE(ABORT, 'append-only'); END;",
    "ALTER TABLE log ADD COLUMN at TEXT",
]


def test_wal_and_migrations_run_once(tmp_path):
    path = tmp_path / "state.db"
    conn = db.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.apply_migrations(conn, "probe", MIGRATIONS) == 2
    assert db.apply_migrations(conn, "probe", MIGRATIONS) == 2
    assert db.apply_migrations(conn, "other", ["CREATE TABLE other (x INTEGER)"]) == 1
    conn.execute("INSERT INTO log (text, at) VALUES ('a', 'now')")
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        conn.execute("UPDATE log SET text = 'b'")
    conn.close()


def test_a_failing_migration_changes_nothing(tmp_path):
    conn = db.connect(tmp_path / "state.db")
    with pytest.raises(sqlite3.OperationalError):
        db.apply_migrations(conn, "bad", ["CREATE TABLE t (x INTEGER)", "CREATE TABLE t (x INTEGER)"])
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "t" not in tables
    assert conn.execute("SELECT COUNT(*) FROM schema_migrations WHERE namespace = 'bad'").fetchone()[0] == 0
