"""The state backend boundary: everything the bot writes (games, guild settings, overlay links) goes
through a `Storage`, either SQLite (the embedded default: one file, nothing to install) or PostgreSQL
(`COGITATOR_DATABASE_URL=postgresql://…`, for shard processes on several hosts).

Both give the same guarantees, so the stores above them are written once:
- `transaction(key)`: one transaction per change, serialised per key (a channel) across processes
  (SQLite: a per-key thread lock plus `BEGIN IMMEDIATE`; PostgreSQL: `pg_advisory_xact_lock(key)`);
- `read()`: a connection for reads that never blocks writers;
- `migrate(namespace, migrations)`: numbered migrations per feature, each dialect with its own SQL, and a
  database written by a newer version refused;
- SQL is written once with `?` placeholders; rows answer both `row["name"]` and `row[0]`.

`bot.storage.check` is the start-up check of either backend.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bot.storage.base import Storage, StorageError


def is_postgres_url(target: object) -> bool:
    return isinstance(target, str) and target.startswith(("postgresql://", "postgres://"))


def open_storage(target: Storage | Path | str) -> Storage:
    """A backend for `target`: a Storage as it is, a postgresql:// URL, or an SQLite file path."""
    if hasattr(target, "transaction"):
        return target  # type: ignore[return-value]
    if is_postgres_url(target):
        from bot.storage.postgres import PostgresStorage

        return PostgresStorage(str(target))
    from bot.storage.sqlite import SqliteStorage

    return SqliteStorage(target)  # type: ignore[arg-type]


def settings_storage(settings: Any) -> Storage:
    """The configured backend: COGITATOR_DATABASE_URL when set, else the COGITATOR_DB file."""
    return open_storage(settings.database_url or settings.db_path)


__all__ = ["Storage", "StorageError", "is_postgres_url", "open_storage", "settings_storage"]
