"""SQLite (WAL) as the state backend: one connection per thread, writers serialised by BEGIN IMMEDIATE."""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from bot import db
from bot.ops.metrics import store_block


def _lenient_text(data: bytes) -> str:
    """Stored text as str even when damaged on disk: sqlite3 otherwise fails the whole row ("Could not decode
    to UTF-8"), before the store can see that a snapshot is damaged and rebuild it from the log."""
    return data.decode("utf-8", "replace")


_ERRORS = (sqlite3.Error,)  # what counts as a store error in the metrics (bot.ops.metrics.store_block)


class SqliteStorage:
    dialect = "sqlite"

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path) if str(path) != ":memory:" else path
        self.where = str(path)
        self._local = threading.local()
        self._conns: list[sqlite3.Connection] = []
        self._guard = threading.Lock()
        self._locks: dict[int | None, threading.Lock] = {}
        self._closed = False
        # Held until close: while any connection is open SQLite keeps the -wal and -shm files, so a worker
        # thread's first connection on a disk that filled up since can still read (it could not create them).
        self._conn()

    def _conn(self) -> sqlite3.Connection:
        """One connection per thread: a sqlite3 connection holds one transaction at a time."""
        if self._closed:
            raise RuntimeError("storage is closed")
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = db.connect(self.path)
            conn.text_factory = _lenient_text
            self._local.conn = conn
            with self._guard:
                self._conns.append(conn)
        return conn

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        with store_block("sqlite", "read", _ERRORS):
            yield self._conn()

    @contextmanager
    def transaction(self, key: int | None = None) -> Iterator[sqlite3.Connection]:
        """A per-key lock inside the process; BEGIN IMMEDIATE serialises writers across processes."""
        with self._guard:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock, store_block("sqlite", "write", _ERRORS):
            conn = self._conn()
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:  # SQLite already rolled back after SQLITE_FULL and similar
                    conn.execute("ROLLBACK")
                raise

    def migrate(self, namespace: str, migrations: dict[str, Sequence[str]]) -> int:
        """The namespace's new migrations (`db.apply_migrations`: a newer database raises db.SchemaTooNew)."""
        return db.apply_migrations(self._conn(), namespace, migrations[self.dialect])

    def close(self) -> None:
        with self._guard:
            conns, self._conns = self._conns, []
            self._closed = True
        for conn in conns:
            with contextlib.suppress(sqlite3.ProgrammingError):  # opened in a thread that already ended
                conn.close()
