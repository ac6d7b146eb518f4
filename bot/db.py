"""SQLite connections for the state database: WAL, a busy timeout, and versioned migrations.

Each feature (games, guild settings, ...) owns a *namespace* of numbered migrations, so features
evolve their tables independently inside one file.
"""

from __future__ import annotations

import contextlib
import errno
import importlib
import os
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path

from bot.storage.base import split_statements
from bot.storage.partials import partial_path

BUSY_TIMEOUT_MS = 10_000

# Every namespace of the state database and where its migrations live ("module:attribute"). The
# start-up check (bot.storage.check) applies them all and `restore` compares a backup against them.
STATE_SCHEMAS = {
    "games": "bot.games.store:MIGRATIONS",
    "guild_settings": "bot.guild_settings:_MIGRATIONS",
    "guild_aliases": "bot.catalog.guild_aliases:MIGRATIONS",
    "lookup_misses": "bot.catalog.misses:MIGRATIONS",
    "web": "bot.web.tokens:MIGRATIONS",
    "leagues": "bot.leagues.schema:MIGRATIONS",
}


class SchemaTooNew(Exception):
    """The database was written by a newer version of the bot (more migrations than this code knows)."""

    def __init__(self, namespace: str, found: int, known: int) -> None:
        super().__init__(f"it was written by a newer version of Cogitator ({namespace} schema version {found}; "
                         f"this version knows up to {known}); upgrade the bot or restore an older backup")
        self.namespace, self.found, self.known = namespace, found, known


def state_schemas(dialect: str = "sqlite") -> dict[str, Sequence[str]]:
    """{namespace: migrations} of `dialect` for every feature that keeps tables in the state database
    (a feature's migrations are one list per dialect: {"sqlite": [...], "postgresql": [...]})."""
    out = {}
    for namespace, where in STATE_SCHEMAS.items():
        module, attr = where.split(":")
        migrations = getattr(importlib.import_module(module), attr)
        out[namespace] = migrations[dialect] if isinstance(migrations, dict) else migrations
    return out


def connect(path: Path | str, *, check_same_thread: bool = False) -> sqlite3.Connection:
    """Open a connection in WAL mode with autocommit off-by-default semantics made explicit.

    `isolation_level=None` lets callers issue `BEGIN IMMEDIATE` themselves, which is how writers
    across processes are serialised.
    """
    if str(path) != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        if not os.path.lexists(path):
            _create(Path(path))
    conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=check_same_thread,
                           timeout=BUSY_TIMEOUT_MS / 1000)
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    _enable_wal(conn)
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


def _create(path: Path) -> None:
    """Make a new, empty WAL database at `path` that appears there complete or not at all.

    SQLite creates a file empty and writes its header later, so a second process starting on the same
    new path could see a 0-byte file, which the start-up check refuses (an empty state database can only
    be a truncated one). Here the file is made under a partial name and hard-linked into place; if another
    process linked its own first, that one is used. A file system without hard links gets the plain way."""
    partial = partial_path(path)
    _remove_with_side_files(partial)  # a leftover of a killed process that had our PID
    try:
        with contextlib.closing(sqlite3.connect(partial)) as conn:
            conn.execute("PRAGMA journal_mode = WAL")  # writes the header: the file is no longer empty
        try:
            os.link(partial, path)
        except FileExistsError:
            pass  # another process made it first, the same way
        except OSError as error:
            if error.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK):
                raise
    finally:
        _remove_with_side_files(partial)


def _remove_with_side_files(path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(f"{path}{suffix}")


def _enable_wal(conn: sqlite3.Connection) -> None:
    """Switch to WAL; two processes creating the same new file can briefly see SQLITE_BUSY here."""
    for attempt in range(50):
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or attempt == 49:
                raise
            time.sleep(0.05)


def apply_migrations(conn: sqlite3.Connection, namespace: str, migrations: Sequence[str]) -> int:
    """Run the migrations of `namespace` that have not run yet, each in its own transaction.

    `migrations[i]` is version i + 1; never edit a released one, append a new one. Returns the version.
    A database already beyond `len(migrations)` was written by a newer version: SchemaTooNew.
    """
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        " namespace TEXT NOT NULL, version INTEGER NOT NULL, PRIMARY KEY (namespace, version))"
    )
    conn.execute("BEGIN IMMEDIATE")
    try:
        row = conn.execute(
            "SELECT COALESCE(MAX(version), 0) FROM schema_migrations WHERE namespace = ?", (namespace,)
        ).fetchone()
        current = int(row[0])
        if current > len(migrations):
            raise SchemaTooNew(namespace, current, len(migrations))
        for version, sql in enumerate(migrations, start=1):
            if version <= current:
                continue
            for statement in split_statements(sql, sqlite3.complete_statement):
                conn.execute(statement)
            conn.execute("INSERT INTO schema_migrations (namespace, version) VALUES (?, ?)", (namespace, version))
            current = version
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:  # SQLite already rolled back after SQLITE_FULL and similar
            conn.execute("ROLLBACK")
        raise
    return current
