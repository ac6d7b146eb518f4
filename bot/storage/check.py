"""Start-up check of the state database, and the words for storage failures.

`run` and `console` call `check_state_database` before serving anyone: it opens the file (creating
it and its folder if needed), applies every feature's migrations, refuses a database written by a
newer version, proves it can take a write lock (`BEGIN IMMEDIATE`, a throw-away write, rollback),
looks for free disk space and runs `PRAGMA quick_check`. Any failure is a `StorageError` whose text
names the path and the cause in one line, so the CLI prints it and exits 2 instead of starting a bot
that would answer "Something went wrong" to every game command.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sqlite3
from pathlib import Path

from bot import db
from bot.storage.base import StorageError

# Below this much free space on the database's file system the start-up check fails as "full disk":
# SQLite needs room for the WAL and its checkpoints, and a bot that starts on a full disk loses writes.
MIN_FREE_BYTES = 1 << 20

FULL_MESSAGE = "Storage is full: nothing was saved. Tell the bot's operator; try again later."
CORRUPT_MESSAGE = ("The bot's state database is damaged where this command needs it: nothing was saved. "
                   "Tell the bot's operator (docs/operations.md, \"A damaged state database\").")


def cause(error: BaseException) -> str:
    """A short cause in words: permission, full disk, read-only, not a database, corrupt, ..."""
    if isinstance(error, db.SchemaTooNew):
        return str(error)
    if isinstance(error, sqlite3.Error):
        name = getattr(error, "sqlite_errorname", "") or ""
        text = str(error)
        if is_full(error):
            return "the disk is full"
        if name.startswith("SQLITE_READONLY") or "readonly" in text:
            return "it is read-only (file or folder permissions, or a read-only file system)"
        if name.startswith("SQLITE_NOTADB") or "not a database" in text:
            return "the file is not a SQLite database"
        if name.startswith("SQLITE_CORRUPT") or "malformed" in text:
            return f"the database is corrupt ({text})"
        if name.startswith(("SQLITE_CANTOPEN", "SQLITE_PERM", "SQLITE_AUTH")) or "unable to open" in text:
            return "it cannot be opened (permission denied or no such folder)"
        if name.startswith("SQLITE_IOERR"):
            return f"an I/O error ({text})"
        return text
    if isinstance(error, OSError):
        code = error.errno
        if code in (errno.EACCES, errno.EPERM):
            return "permission denied"
        if code in (errno.ENOSPC, errno.EDQUOT):
            return "the disk is full"
        if code == errno.EROFS:
            return "it is on a read-only file system"
        if code in (errno.ENOENT, errno.ENOTDIR):
            return "the folder does not exist and cannot be created"
        return error.strerror or str(error)
    return str(error)


def is_corrupt(error: BaseException) -> bool:
    """True for SQLite's "database disk image is malformed" at run time (damage `quick_check` can miss)."""
    return isinstance(error, sqlite3.DatabaseError) and (
        (getattr(error, "sqlite_errorname", "") or "").startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB"))
        or "malformed" in str(error))


def is_full(error: BaseException) -> bool:
    """True for the errors a full disk (or quota) gives at run time."""
    if isinstance(error, sqlite3.Error):
        name = getattr(error, "sqlite_errorname", "") or ""
        # SHMSIZE: a connection could not grow the -shm file, which on a full disk is how SQLite says it
        return name.startswith("SQLITE_FULL") or name == "SQLITE_IOERR_SHMSIZE" or "disk is full" in str(error)
    return isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EDQUOT)


def _fail(path: Path, error: BaseException) -> StorageError:
    return StorageError(f"the state database {path} cannot be used: {cause(error)}")


def _probe_write(conn: sqlite3.Connection) -> None:
    """Take the write lock and write something, then roll back: nothing is changed on disk."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute("CREATE TABLE cogitator_write_probe (x)")
        conn.execute("INSERT INTO cogitator_write_probe VALUES (randomblob(4096))")
    finally:
        if conn.in_transaction:
            conn.execute("ROLLBACK")


def _free_bytes(path: Path) -> int | None:
    try:
        st = os.statvfs(path.parent)
    except OSError:
        return None
    return st.f_bavail * st.f_frsize


def _empty_file(path: Path, init: bool) -> None:
    """A 0-byte file at the state database's path is refused: this code never leaves one (bot.db makes a
    new database complete under another name first), so it is a truncated database or someone else's
    file, and taking it as a new database would silently start from nothing. `--init` makes a new one."""
    try:
        if path.stat().st_size != 0:
            return
    except FileNotFoundError:
        return
    if not init:
        raise StorageError(f"the state database {path} cannot be used: the file is empty (0 bytes), so it was "
                           "truncated or made by something else; restore a backup (`python -m bot restore`), "
                           "or start once with --init to make a new, empty database there")
    wal = path.with_name(path.name + "-wal")
    if wal.exists() and wal.stat().st_size > 0:
        raise StorageError(f"the state database {path} cannot be used: the file is empty but {wal.name} beside "
                           "it holds data; restore a backup (`python -m bot restore`)")
    for stale in (wal, path.with_name(path.name + "-shm"), path):
        stale.unlink(missing_ok=True)


def check_state_database(path: Path, *, init: bool = False) -> dict[str, int]:
    """Open, migrate, write-probe and quick-check the state database; return the schema versions.
    `init`: an empty (0-byte) file at `path` is replaced by a new database instead of refused.

    Raises StorageError (one line: path + cause) for every failure."""
    path = Path(path)
    conn: sqlite3.Connection | None = None
    try:
        _empty_file(path, init)
        conn = db.connect(path)
        versions = {ns: db.apply_migrations(conn, ns, migrations) for ns, migrations in db.state_schemas().items()}
        _probe_write(conn)
        free = _free_bytes(path)
        if free is not None and free < MIN_FREE_BYTES:
            raise StorageError(f"the state database {path} cannot be used: the disk is full "
                               f"({free // 1024} KB free, at least {MIN_FREE_BYTES // 1024} KB needed)")
        rows = conn.execute("PRAGMA quick_check").fetchall()
        if [tuple(r) for r in rows] != [("ok",)]:
            detail = "; ".join(str(r[0]) for r in rows[:3])
            raise StorageError(f"the state database {path} cannot be used: the database is corrupt ({detail})")
    except StorageError:
        raise
    except (sqlite3.Error, OSError, db.SchemaTooNew) as error:
        free = _free_bytes(path)
        if isinstance(error, sqlite3.Error) and free is not None and free < MIN_FREE_BYTES:
            # SQLite reports most writes that find no room as "disk I/O error"
            raise StorageError(f"the state database {path} cannot be used: the disk is full ({free // 1024} KB "
                               f"free, at least {MIN_FREE_BYTES // 1024} KB needed)") from None
        raise _fail(path, error) from None
    finally:
        if conn is not None:
            with contextlib.suppress(sqlite3.Error):
                conn.close()
    return versions


def backup_versions(path: Path) -> dict[str, int]:
    """Schema versions recorded in a database file (read-only), {} when it has none yet."""
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
        has = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'schema_migrations'").fetchone()
        if not has:
            return {}
        rows = conn.execute("SELECT namespace, MAX(version) FROM schema_migrations GROUP BY namespace").fetchall()
    return {str(ns): int(v) for ns, v in rows}


def refuse_newer(path: Path) -> None:
    """Raise db.SchemaTooNew when `path` was written by a newer version of this code."""
    known = {ns: len(m) for ns, m in db.state_schemas().items()}
    for ns, version in backup_versions(path).items():
        if ns in known and version > known[ns]:
            raise db.SchemaTooNew(ns, version, known[ns])



def check_postgres(url: str) -> dict[str, int]:
    """The PostgreSQL counterpart: connect (right password, database exists, reachable), apply every
    feature's migrations (needs CREATE on the schema), prove a write (a rolled-back insert into the
    game log's table needs INSERT) and refuse a newer schema. Raises StorageError in one line."""
    from bot.masking import mask_text, mask_url
    from bot.storage.postgres import PostgresStorage

    storage = None
    try:
        storage = PostgresStorage(url, max_size=1)
        versions = {ns: storage.migrate(ns, {"postgresql": m}) for ns, m in db.state_schemas("postgresql").items()}
        from bot.storage.move import missing_foreign_keys

        with storage.read() as conn:
            if missing := missing_foreign_keys(conn):
                raise StorageError(f"the PostgreSQL database {mask_url(url)} cannot be used yet: a migrate-store into it "
                                   f"was interrupted ({', '.join(missing)} still lack their foreign key); finish it "
                                   f"with `python -m bot migrate-store --from … --to … --resume`")
        with contextlib.suppress(_Rollback), storage.transaction() as conn:
            conn.execute("INSERT INTO schema_migrations (namespace, version) VALUES ('write-probe', -1)")
            raise _Rollback
        return versions
    except StorageError:
        raise
    except db.SchemaTooNew as error:
        raise StorageError(f"the PostgreSQL database {mask_url(url)} cannot be used: {error}") from None
    except Exception as error:  # psycopg errors: permissions, a dropped server
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise StorageError(f"the PostgreSQL database {mask_url(url)} cannot be used: {mask_text(reason, url)}") from None
    finally:
        if storage is not None:
            storage.close()


class _Rollback(Exception):
    """Leaves the write probe's transaction by rolling it back."""
