"""Per-server preferences (for now: the default edition), stored in the state database."""

from __future__ import annotations

from pathlib import Path

from bot.errors import UserError
from bot.storage import open_storage
from bot.storage.base import Storage
from bot.storage.registry import SmallTable, StoredFeature, register

EDITIONS = ("10e", "11e")
CURRENT_EDITION = "11e"

_MIGRATIONS = {
    "sqlite": ["CREATE TABLE guild_settings (guild_id INTEGER PRIMARY KEY, edition TEXT NOT NULL)"],
    "postgresql": ["CREATE TABLE guild_settings (guild_id BIGINT PRIMARY KEY, edition TEXT NOT NULL)"],
}


class GuildSettings:
    def __init__(self, storage: Storage | Path | str) -> None:
        self._owned = not hasattr(storage, "transaction")
        self._storage = open_storage(storage)
        self._storage.migrate("guild_settings", _MIGRATIONS)

    def edition(self, guild_id: int | None) -> str:
        """The server's default edition, or the current edition where none was set (or in DMs)."""
        if guild_id is None:
            return CURRENT_EDITION
        with self._storage.read() as conn:
            row = conn.execute("SELECT edition FROM guild_settings WHERE guild_id = ?", (guild_id,)).fetchone()
        return row["edition"] if row else CURRENT_EDITION

    def set_edition(self, guild_id: int, edition: str) -> None:
        if edition not in EDITIONS:
            raise UserError(f"Unknown edition {edition!r}: choose one of {', '.join(EDITIONS)}.", field="edition")
        with self._storage.transaction() as conn:
            conn.execute(
                "INSERT INTO guild_settings (guild_id, edition) VALUES (?, ?) "
                "ON CONFLICT(guild_id) DO UPDATE SET edition = excluded.edition",
                (guild_id, edition),
            )

    def close(self) -> None:
        if self._owned:
            self._storage.close()


register(StoredFeature(__name__, order=1, open=GuildSettings,
                       small_tables=(SmallTable("guild_settings", ("guild_id", "edition"), "guild_settings"),)))
