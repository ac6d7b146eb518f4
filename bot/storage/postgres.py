"""PostgreSQL as the state backend (psycopg 3), for shards on several hosts.

- SQL is written once with `?` placeholders (as for SQLite) and translated to psycopg's `%s` here.
- A change is one transaction holding `pg_advisory_xact_lock(channel)`: writers of one channel queue up
  across every process and host, and the lock ends with the transaction, even if a client dies.
- The pool is one connection per worker thread, like the SQLite backend: the bot runs store calls in a
  bounded thread pool, so connections are bounded too (at most `POOL_MAX`), and a borrow costs nothing.
  (psycopg-pool's hand-off between threads was measured at +2.4 ms per borrow on a loaded 2-core host,
  more than the query itself.)
- A dropped connection fails the command cleanly (its transaction never committed: nothing half-written);
  the broken connection is discarded and the next command on that thread connects afresh.
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg.rows import RowMaker

from bot.db import SchemaTooNew
from bot.masking import mask_text, mask_url
from bot.ops.metrics import store_block
from bot.storage.base import StorageError, StorageUnavailable, split_statements

POOL_MAX = 32  # connections per process at most (one per worker thread)
CONNECT_TIMEOUT_S = 10
_PLACEHOLDER = re.compile(r"\?")
_ERRORS = (psycopg.Error, StorageError)  # what counts as a store error in the metrics


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


def _lost(raw: psycopg.Connection[Any], error: psycopg.OperationalError) -> bool:
    """Whether `error` means the server connection is gone: libpq saw it closed (`broken`), or its socket failed
    first. psycopg then raises "connection socket closed" from the OSError while libpq still reports the
    connection as fine (a CI run under load met it at BEGIN right after pg_terminate_backend)."""
    return raw.broken or raw.closed or isinstance(error.__cause__, OSError)


class PgConn:
    """A borrowed connection that speaks the `?` dialect. A read block's first statement that finds its
    connection dropped (server restart, pg_terminate_backend) runs once more on a new connection; any other
    statement on a dropped connection raises StorageUnavailable (a transaction's work never committed)."""

    __slots__ = ("raw", "_reconnect")

    def __init__(self, raw: psycopg.Connection[Any], reconnect: Callable[[], psycopg.Connection[Any]] | None = None
                 ) -> None:
        self.raw = raw
        self._reconnect = reconnect  # only until the first statement has run

    def execute(self, sql: str, params: Sequence[Any] = ()) -> psycopg.Cursor[Any]:
        try:
            cursor = self.raw.execute(translate(sql), tuple(params))  # type: ignore[arg-type]
        except psycopg.OperationalError as error:
            if not _lost(self.raw, error):
                raise
            if self._reconnect is None:
                raise _unavailable(error) from error
            self.raw, self._reconnect = self._reconnect(), None
            try:
                cursor = self.raw.execute(translate(sql), tuple(params))  # type: ignore[arg-type]
            except psycopg.OperationalError as again:
                if not _lost(self.raw, again):
                    raise
                raise _unavailable(again) from again
        self._reconnect = None
        return cursor

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """Many rows in one pipelined round trip (psycopg batches executemany)."""
        self._reconnect = None
        try:
            with self.raw.cursor() as cur:
                cur.executemany(translate(sql), [tuple(r) for r in rows])  # type: ignore[arg-type]
        except psycopg.OperationalError as error:
            if not _lost(self.raw, error):
                raise
            raise _unavailable(error) from error


def _unavailable(error: psycopg.OperationalError) -> StorageUnavailable:
    """A dropped connection, in words for users; the server's words are kept for the log."""
    return StorageUnavailable(str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__)


class PostgresStorage:
    dialect = "postgresql"

    def __init__(self, url: str, *, max_size: int = POOL_MAX) -> None:
        self.url = url
        self.where = mask_url(url)
        self._max = max_size
        self._local = threading.local()
        self._conns: list[psycopg.Connection[Any]] = []
        self._guard = threading.Lock()
        self._closed = False
        self._migrate_lock = threading.Lock()
        self._opened = False
        self._raw()  # fail fast with one sentence (wrong password, no database, unreachable)
        self._opened = True

    def _connect(self) -> psycopg.Connection[Any]:
        try:
            return psycopg.connect(self.url, autocommit=True, row_factory=_row_maker,
                                   connect_timeout=CONNECT_TIMEOUT_S)
        except psycopg.Error as error:  # unreachable, refused, or a URL libpq cannot parse (ProgrammingError)
            reason = str(error).strip().splitlines()[-1] if str(error).strip() else type(error).__name__
            raise StorageError(f"cannot use the PostgreSQL database {self.where}: "
                               f"{mask_text(reason, self.url)}") from None

    def _raw(self) -> psycopg.Connection[Any]:
        """This thread's connection; a broken or closed one is replaced."""
        if self._closed:
            raise RuntimeError("storage is closed")
        conn = getattr(self._local, "conn", None)
        if conn is not None and (conn.closed or conn.broken):
            with self._guard:
                self._conns.remove(conn)
            conn = None
        if conn is None:
            with self._guard:
                if len(self._conns) >= self._max:
                    raise StorageError(f"more than {self._max} threads use the PostgreSQL database at once")
            try:
                conn = self._connect()
            except StorageError as error:
                if not self._opened:
                    raise  # at start: the one-line reason (wrong password, no database, unreachable)
                raise StorageUnavailable(str(error)) from error  # while running: words for the user
            self._local.conn = conn
            with self._guard:
                self._conns.append(conn)
        return conn

    def _fresh(self) -> psycopg.Connection[Any]:
        """This thread's connection, after dropping the one the server closed: the one reconnect."""
        raw = getattr(self._local, "conn", None)
        if raw is not None:
            self._local.conn = None
            with self._guard, contextlib.suppress(ValueError):
                self._conns.remove(raw)
            with contextlib.suppress(Exception):
                raw.close()
        return self._raw()

    @contextmanager
    def read(self) -> Iterator[PgConn]:
        with store_block("postgresql", "read", _ERRORS):
            yield PgConn(self._raw(), self._fresh)

    @contextmanager
    def transaction(self, key: int | None = None) -> Iterator[PgConn]:
        with contextlib.ExitStack() as stack:
            stack.enter_context(store_block("postgresql", "write", _ERRORS))
            raw = self._raw()
            try:
                stack.enter_context(raw.transaction())
            except psycopg.OperationalError as error:  # dropped while idle: nothing has run yet, so reconnect once
                if not _lost(raw, error):
                    raise
                raw = self._fresh()
                try:
                    stack.enter_context(raw.transaction())
                except psycopg.OperationalError as again:
                    if not _lost(raw, again):
                        raise
                    raise _unavailable(again) from again
            conn = PgConn(raw)
            if key is not None:
                conn.execute("SELECT pg_advisory_xact_lock(?)", (_lock_key(key),))
            yield conn

    def migrate(self, namespace: str, migrations: dict[str, Sequence[str]]) -> int:
        """Run the namespace's new migrations, each in its own transaction, serialised across processes."""
        steps = migrations[self.dialect]
        with self._migrate_lock:
            raw = self._raw()
            with raw.transaction():
                raw.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
                # Only when missing: CREATE ... IF NOT EXISTS still needs CREATE on the schema, which a
                # least-privilege role (tables owned by an admin role) does not have.
                if raw.execute("SELECT to_regclass('schema_migrations')").fetchone()[0] is None:
                    raw.execute("CREATE TABLE schema_migrations (namespace TEXT NOT NULL, "
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
        with self._guard:
            conns, self._conns = self._conns, []
            self._closed = True
        for conn in conns:
            with contextlib.suppress(Exception):  # closing a connection another thread still holds
                conn.close()


def _lock_key(key: int, *, salt: int = 0) -> int:
    """A signed 64-bit advisory-lock key (Discord ids fit; `salt` separates other lock families)."""
    value = (key ^ (salt << 62)) & 0xFFFF_FFFF_FFFF_FFFF
    return value - (1 << 64) if value >= 1 << 63 else value


MIGRATION_LOCK = _lock_key(0, salt=1)  # one lock for every process's migrations


def _complete(text: str) -> bool:
    """A migration statement ends at a `;` outside a $$-quoted function body."""
    return text.count("$$") % 2 == 0
