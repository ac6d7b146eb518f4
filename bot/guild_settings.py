"""Per-server preferences, stored in the state database: the default edition, and the channel where points
news is posted with the record of what was posted (so each version is posted once per server, whatever the
number of processes or restarts: the claim is one INSERT that only one of them can make)."""

from __future__ import annotations

import time
from pathlib import Path

from bot.errors import UserError
from bot.storage import open_storage
from bot.storage.base import Storage
from bot.storage.registry import SmallTable, StoredFeature, register

EDITIONS = ("10e", "11e")
CURRENT_EDITION = "11e"

_MIGRATIONS = {
    "sqlite": ["CREATE TABLE guild_settings (guild_id INTEGER PRIMARY KEY, edition TEXT NOT NULL)",
               "CREATE TABLE points_channels (guild_id INTEGER PRIMARY KEY, channel_id INTEGER NOT NULL);"
               "CREATE TABLE points_posts (post_key TEXT PRIMARY KEY, guild_id INTEGER NOT NULL, "
               "version TEXT NOT NULL, posted_at REAL NOT NULL)"],
    "postgresql": ["CREATE TABLE guild_settings (guild_id BIGINT PRIMARY KEY, edition TEXT NOT NULL)",
                   "CREATE TABLE points_channels (guild_id BIGINT PRIMARY KEY, channel_id BIGINT NOT NULL);"
                   "CREATE TABLE points_posts (post_key TEXT PRIMARY KEY, guild_id BIGINT NOT NULL, "
                   "version TEXT NOT NULL, posted_at DOUBLE PRECISION NOT NULL)"],
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

    def set_points_channel(self, guild_id: int, channel_id: int | None) -> None:
        """Where points news goes in this server (None: nowhere)."""
        with self._storage.transaction() as conn:
            if channel_id is None:
                conn.execute("DELETE FROM points_channels WHERE guild_id = ?", (guild_id,))
            else:
                conn.execute("INSERT INTO points_channels (guild_id, channel_id) VALUES (?, ?) "
                             "ON CONFLICT(guild_id) DO UPDATE SET channel_id = excluded.channel_id",
                             (guild_id, channel_id))

    def points_channels(self) -> dict[int, int]:
        with self._storage.read() as conn:
            return {int(r["guild_id"]): int(r["channel_id"])
                    for r in conn.execute("SELECT guild_id, channel_id FROM points_channels")}

    def claim_points_post(self, guild_id: int, version: str) -> bool:
        """True for exactly one caller per server and version, ever: that caller posts the news."""
        with self._storage.transaction() as conn:
            row = conn.execute("INSERT INTO points_posts (post_key, guild_id, version, posted_at) VALUES (?, ?, ?, ?) "
                               "ON CONFLICT (post_key) DO NOTHING RETURNING post_key",
                               (f"{guild_id}:{version}", guild_id, version, time.time())).fetchone()
        return row is not None

    def close(self) -> None:
        if self._owned:
            self._storage.close()


register(StoredFeature(__name__, order=1, open=GuildSettings,
                       small_tables=(SmallTable("guild_settings", ("guild_id", "edition"), "guild_settings"),
                                     SmallTable("points_channels", ("guild_id", "channel_id"), "points_channels"),
                                     SmallTable("points_posts", ("post_key", "guild_id", "version", "posted_at"),
                                                "points_posts"))))
