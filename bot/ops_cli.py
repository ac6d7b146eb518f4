"""Operator commands: `python -m bot backup PATH`, `restore PATH --yes`, `migrate`.

Backups use SQLite's online backup API, so they are consistent while the bot keeps running and
writing (WAL): a plain `cp` of a live WAL database can copy a torn state. Each command prints one
JSON line; on failure it prints `{"error": ..., "field": ...}` and exits 2.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import sqlite3
import sys
from pathlib import Path
from typing import Any

from bot.config import Settings
from bot.db import SchemaTooNew
from bot.storage.check import refuse_newer
from bot.storage.partials import partial_path, remove_stale

PAGES_PER_STEP = 1024  # copy in slices so the bot's writers are never blocked for long


class OpsError(Exception):
    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


def add_subcommands(subparsers: argparse._SubParsersAction) -> None:
    backup = subparsers.add_parser("backup", help="copy the state database to PATH, safely while the bot runs")
    backup.add_argument("path", type=_path_arg, help="the backup file to write (e.g. /var/backups/cogitator/2026-11-29.db)")
    backup.add_argument("--force", action="store_true", help="overwrite PATH if it exists")
    backup.set_defaults(func=cmd_backup)

    restore = subparsers.add_parser("restore", help="replace the state database with a backup (stop the bot first)")
    restore.add_argument("path", type=_path_arg, help="a file written by `backup`")
    restore.add_argument("--yes", action="store_true", help="confirm: the current state is replaced")
    restore.set_defaults(func=cmd_restore)

    migrate = subparsers.add_parser("migrate", help="apply pending schema migrations to the state database")
    migrate.set_defaults(func=cmd_migrate)


def _emit(data: dict[str, Any]) -> None:
    print(json.dumps(data, ensure_ascii=False), flush=True)


def _fail(error: OpsError) -> int:
    _emit({"error": str(error), "field": error.field})
    return 2


def _path_arg(text: str) -> Path:
    if not text.strip() or "\x00" in text:
        raise argparse.ArgumentTypeError("expected a file path")
    try:  # a name the file system cannot spell (e.g. a lone surrogate) is refused here, not mid-backup
        os.fsencode(text)
    except UnicodeEncodeError:
        raise argparse.ArgumentTypeError("the path has characters the file system cannot store") from None
    return Path(text).expanduser()


def _integrity(conn: sqlite3.Connection) -> str:
    rows = conn.execute("PRAGMA integrity_check").fetchall()
    return "ok" if rows == [("ok",)] else "; ".join(str(r[0]) for r in rows[:5])


def copy_database(source: Path, dest: Path) -> dict[str, Any]:
    """Online backup of `source` into a new single-file database at `dest` (atomic rename at the end)."""
    if not source.is_file():
        raise OpsError(f"no database at {source}", "COGITATOR_DB")
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise OpsError(f"cannot create {dest.parent}: {error.strerror}", "path") from None
    stale = remove_stale(dest.parent)  # left by a backup killed mid-copy
    partial = partial_path(dest)
    src = sqlite3.connect(f"file:{source}?mode=ro", uri=True, timeout=30)
    try:
        with contextlib.closing(sqlite3.connect(partial)) as out:
            src.backup(out, pages=PAGES_PER_STEP, sleep=0.005)
            out.execute("PRAGMA journal_mode = DELETE")  # a self-contained file, no -wal beside it
            integrity = _integrity(out)
            pages = out.execute("PRAGMA page_count").fetchone()[0]
    except (sqlite3.Error, OSError) as error:
        partial.unlink(missing_ok=True)
        raise OpsError(f"backup failed: {error}", "path") from None
    finally:
        src.close()
    if integrity != "ok":
        partial.unlink(missing_ok=True)
        raise OpsError(f"the copy failed its integrity check: {integrity}", "path")
    os.replace(partial, dest)
    return {"path": str(dest), "bytes": dest.stat().st_size, "pages": pages, "integrity": integrity,
            "stale_partials_removed": stale}


def cmd_backup(args: argparse.Namespace, settings: Settings) -> int:
    dest: Path = args.path.expanduser()
    try:
        if dest.resolve() == settings.db_path.resolve():
            raise OpsError("the backup path is the live database itself", "path")
        if dest.exists() and not args.force:
            raise OpsError(f"{dest} exists; pass --force to overwrite it", "path")
        if dest.exists() and dest.is_dir():
            raise OpsError(f"{dest} is a directory; give a file name", "path")
        result = copy_database(settings.db_path, dest)
    except OpsError as error:
        return _fail(error)
    _emit({"backup": result, "source": str(settings.db_path)})
    return 0


def cmd_restore(args: argparse.Namespace, settings: Settings) -> int:
    source: Path = args.path.expanduser()
    try:
        if not args.yes:
            raise OpsError("restore replaces the current state: stop the bot, then repeat with --yes", "yes")
        if not source.is_file():
            raise OpsError(f"no backup at {source}", "path")
        try:
            with contextlib.closing(sqlite3.connect(f"file:{source}?mode=ro", uri=True)) as check:
                integrity = _integrity(check)
        except sqlite3.DatabaseError as error:
            raise OpsError(f"{source} is not a SQLite database: {error}", "path") from None
        if integrity != "ok":
            raise OpsError(f"{source} failed its integrity check: {integrity}", "path")
        try:
            refuse_newer(source)
        except SchemaTooNew as error:
            raise OpsError(f"{source} cannot be restored: {error}", "path") from None
        saved = None
        if settings.db_path.exists():  # keep what we are about to replace
            stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
            saved = copy_database(settings.db_path, settings.db_path.with_name(f"{settings.db_path.name}.pre-restore-{stamp}"))
        settings.db_path.parent.mkdir(parents=True, exist_ok=True)
        # Backup API into the live path: goes through SQLite's locking and WAL, never a half-copied file.
        with contextlib.closing(sqlite3.connect(f"file:{source}?mode=ro", uri=True)) as src, \
                contextlib.closing(sqlite3.connect(settings.db_path, timeout=30)) as dst:
            src.backup(dst, pages=PAGES_PER_STEP)
            dst.execute("PRAGMA journal_mode = WAL")
            integrity = _integrity(dst)
    except OpsError as error:
        return _fail(error)
    except (sqlite3.Error, OSError) as error:
        return _fail(OpsError(f"restore failed: {error}", "COGITATOR_DB"))
    _emit({"restored": str(settings.db_path), "from": str(source), "previous_saved_as": saved and saved["path"],
           "integrity": integrity})
    return 0


def cmd_migrate(args: argparse.Namespace, settings: Settings) -> int:
    """Open every state store (each applies its own pending migrations) and report the versions."""
    from bot.services import Services

    if settings.database_url:  # PostgreSQL: the start-up check migrates every feature and probes a write
        from bot.masking import mask_url
        from bot.storage.check import StorageError, check_postgres

        try:
            versions = check_postgres(settings.database_url)
        except StorageError as error:
            return _fail(OpsError(f"migration failed: {error}", "COGITATOR_DATABASE_URL"))
        _emit({"database": mask_url(settings.database_url), "schema_versions": versions})
        return 0

    services = Services(settings)
    try:
        for name in ("games", "guild_settings", "guild_aliases", "lookup_misses", "overlay_tokens"):
            getattr(services, name)
    except (sqlite3.Error, OSError, SchemaTooNew) as error:
        from bot.storage.check import cause

        return _fail(OpsError(f"migration failed: {cause(error)}", "COGITATOR_DB"))
    finally:
        services.close()
    with contextlib.closing(sqlite3.connect(settings.db_path)) as conn:
        rows = conn.execute("SELECT namespace, MAX(version) FROM schema_migrations GROUP BY namespace").fetchall()
    _emit({"database": str(settings.db_path), "schema_versions": {ns: v for ns, v in rows}})
    return 0


if __name__ == "__main__":  # pragma: no cover - use `python -m bot`
    sys.exit("use: python -m bot backup|restore|migrate")
