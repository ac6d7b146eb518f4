"""Per-server preferences (for now: the default edition), stored in the state database."""

from __future__ import annotations

import threading
from pathlib import Path

from bot import db
from bot.errors import UserError

EDITIONS = ("10e", "11e")
CURRENT_EDITION = "11e"

_MIGRATIONS = [
    "CREATE TABLE guild_settings (guild_id INTEGER PRIMARY KEY, edition TEXT NOT NULL)",
]


class GuildSettings:
    def __init__(self, path: Path) -> None:
        self._conn = db.connect(path)
        self._lock = threading.Lock()
        db.apply_migrations(self._conn, "guild_settings", _MIGRATIONS)

    def edition(self, guild_id: int | None) -> str:
        """The server's default edition, or the current edition where none was set (or in DMs)."""
        if guild_id is None:
            return CURRENT_EDITION
        with self._lock:
            row = self._conn.execute("SELECT edition FROM guild_settings WHERE guild_id = ?", (guild_id,)).fetchone()
        return row["edition"] if row else CURRENT_EDITION

    def set_edition(self, guild_id: int, edition: str) -> None:
        if edition not in EDITIONS:
            raise UserError(f"Unknown edition {edition!r}: choose one of {', '.join(EDITIONS)}.", field="edition")
        with self._lock:
            self._conn.execute(
                "INSERT INTO guild_settings (guild_id, edition) VALUES (?, ?) "
                "ON CONFLICT(guild_id) DO UPDATE SET edition = excluded.edition",
                (guild_id, edition),
            )

    def close(self) -> None:
        self._conn.close()
