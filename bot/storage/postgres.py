"""PostgreSQL as the state backend (psycopg 3 with a connection pool), for shards on several hosts.

- SQL is written once with `?` placeholders (as for SQLite) and translated to psycopg's `%s` here.
- A change is one transaction holding `pg_advisory_xact_lock(channel)`: writers of one channel queue up
  across every process and host, and the lock ends with the transaction, even if a client dies.
- A dropped connection fails the command cleanly (its transaction never committed: nothing half-written)
  and the pool replaces the connection (`check` on borrow, reconnect on failure).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg.rows import RowMaker
from psycopg_pool import ConnectionPool

from bot.db import SchemaTooNew
from bot.storage.base import StorageError, split_statements

POOL_MIN = 1
POOL_MAX = 8
CONNECT_TIMEOUT_S = 10
_PLACEHOLDER = re.compile(r"\?")


def _row_maker(cursor: psycopg.Cursor[Any]) -> RowMaker[Any]:
    """Rows that answer `row["name"]`, `row[0]` and tuple unpacking, like sqlite3.Row."""
    names = [c.name for c in cursor.description or []]
    index = {name: i for i, name in enumerate(names)}

    class Row(tuple):
        __slots__ = ()

        def __getitem__(self, key: Any) -> Any:
            return tuple.__getitem__(self, index[key] if isinstance(key, str) else key)

        def keys(self) -> list[str]:
            return names

    return Row


def translate(sql: str) -> str:
    """`?` placeholders -> `%s` (and a literal `%` doubled), so one SQL text serves both backends."""
    return _PLACEHOLDER.sub("%s", sql.replace("%", "%%"))


def redact(url: str) -> str:
    """The URL without its password, for messages."""
    return re.sub(r"(//[^:/@]+):[^@]*@", r"\1:***@", url)


class PgConn:
    """A borrowed connection that speaks the `?` dialect."""

    __slots__ = ("raw",)

    def __init__(self, raw: psycopg.Connection[Any]) -> None:
        self.raw = raw

    def execute(self, sql: str, params: Sequence[Any] = ()) -> psycopg.Cursor[Any]:
        return self.raw.execute(translate(sql), tuple(params))  # type: ignore[arg-type]


class PostgresStorage:
    dialect = "postgresql"

    def __init__(self, url: str, *, max_size: int = POOL_MAX) -> None:
        self.url = url
        self.where = redact(url)
        self._check(url)
        self._pool = ConnectionPool(url, min_size=POOL_MIN, max_size=max_size, open=True, timeout=30,
                                    kwargs={"autocommit": True, "row_factory": _row_maker,
                                            "connect_timeout": CONNECT_TIMEOUT_S},
                                    check=ConnectionPool.check_connection, name="cogitator")
        self._migrate_lock = threading.Lock()

    @staticmethod
    def _check(url: str) -> None:
        """Fail fast with one sentence (wrong password, no database, unreachable) instead of pool retries."""
        try:
            with psycopg.connect(url, connect_timeout=CONNECT_TIMEOUT_S) as conn:
                conn.execute("SELECT 1")
        except psycopg.OperationalError as error:
            reason = str(error).strip().splitlines()[-1] if str(error).strip() else type(error).__name__
            raise StorageError(f"cannot use the PostgreSQL database {redact(url)}: {reason}") from None

    @contextmanager
    def read(self) -> Iterator[PgConn]:
        with self._pool.connection() as raw:
            yield PgConn(raw)

    @contextmanager
    def transaction(self, key: int | None = None) -> Iterator[PgConn]:
        with self._pool.connection() as raw, raw.transaction():
            if key is not None:
                raw.execute("SELECT pg_advisory_xact_lock(%s)", (_lock_key(key),))
            yield PgConn(raw)

    def migrate(self, namespace: str, migrations: dict[str, Sequence[str]]) -> int:
        """Run the namespace's new migrations, each in its own transaction, serialised across processes."""
        steps = migrations[self.dialect]
        with self._migrate_lock, self._pool.connection() as raw:
            with raw.transaction():
                raw.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
                raw.execute("CREATE TABLE IF NOT EXISTS schema_migrations (namespace TEXT NOT NULL, "
                            "version INTEGER NOT NULL, PRIMARY KEY (namespace, version))")
            current = raw.execute("SELECT COALESCE(MAX(version), 0) FROM schema_migrations WHERE namespace = %s",
                                  (namespace,)).fetchone()[0]
            if current > len(steps):
                raise SchemaTooNew(namespace, current, len(steps))
            for version, sql in enumerate(steps, start=1):
                if version <= current:
                    continue
                with raw.transaction():
                    raw.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
                    done = raw.execute("SELECT 1 FROM schema_migrations WHERE namespace = %s AND version = %s",
                                       (namespace, version)).fetchone()
                    if done:  # another process ran it while we waited for the lock
                        continue
                    for statement in split_statements(sql, _complete):
                        raw.execute(statement)  # type: ignore[arg-type]
                    raw.execute("INSERT INTO schema_migrations (namespace, version) VALUES (%s, %s)",
                                (namespace, version))
                current = version
            return current

    def close(self) -> None:
        self._pool.close()


def _lock_key(key: int, *, salt: int = 0) -> int:
    """A signed 64-bit advisory-lock key (Discord ids fit; `salt` separates other lock families)."""
    value = (key ^ (salt << 62)) & 0xFFFF_FFFF_FFFF_FFFF
    return value - (1 << 64) if value >= 1 << 63 else value


MIGRATION_LOCK = _lock_key(0, salt=1)  # one lock for every process's migrations


def _complete(text: str) -> bool:
    """A migration statement ends at a `;` outside a $$-quoted function body."""
    return text.count("$$") % 2 == 0
