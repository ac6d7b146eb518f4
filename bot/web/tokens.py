"""Overlay links: a random token per link, only its SHA-256 hash stored, bound to one game.

A link is `<public url>/o/<token>/`. The token is 32 random bytes (256 bits) in URL-safe base64, so
it cannot be guessed; the database holds only its hash, so a copy of the database cannot be turned
back into working links. Revoking deletes the rows: a revoked token then takes exactly the path of
a token that never existed (one indexed lookup that finds nothing), so the two can't be told apart.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from bot import db

TOKEN_BYTES = 32
TOKEN_PATTERN = re.compile(r"[A-Za-z0-9_-]{43}")
# Older links of a game beyond this many are dropped when a new one is made (a link per stream setup).
LINKS_PER_GAME_MAX = 10

MIGRATIONS = [
    """
    CREATE TABLE overlay_tokens (
        token_hash TEXT PRIMARY KEY,
        game_id INTEGER NOT NULL,
        channel_id INTEGER NOT NULL,
        created_by INTEGER NOT NULL,
        created_at REAL NOT NULL
    );
    CREATE INDEX overlay_tokens_by_game ON overlay_tokens (game_id, created_at)
    """,
]


@dataclass(frozen=True)
class Link:
    game_id: int
    channel_id: int


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("ascii", "replace")).hexdigest()


class OverlayTokens:
    """The `overlay_tokens` table of the state database (`bot.services.overlay_tokens`)."""

    def __init__(self, path: Path | str) -> None:
        self._conn = db.connect(path)
        self._lock = threading.Lock()
        db.apply_migrations(self._conn, "web", MIGRATIONS)

    def issue(self, game_id: int, channel_id: int, user_id: int) -> str:
        """A new link's token; the game's oldest links beyond LINKS_PER_GAME_MAX stop working."""
        token = secrets.token_urlsafe(TOKEN_BYTES)
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                self._conn.execute(
                    "INSERT INTO overlay_tokens (token_hash, game_id, channel_id, created_by, created_at)"
                    " VALUES (?, ?, ?, ?, ?)", (token_hash(token), game_id, channel_id, user_id, time.time()))
                self._conn.execute(
                    "DELETE FROM overlay_tokens WHERE game_id = ? AND token_hash NOT IN ("
                    " SELECT token_hash FROM overlay_tokens WHERE game_id = ?"
                    " ORDER BY created_at DESC LIMIT ?)", (game_id, game_id, LINKS_PER_GAME_MAX))
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
        return token

    def revoke(self, game_id: int) -> int:
        """Invalidate every link of the game; returns how many there were."""
        with self._lock:
            cursor = self._conn.execute("DELETE FROM overlay_tokens WHERE game_id = ?", (game_id,))
        return cursor.rowcount

    def resolve(self, token: str) -> Link | None:
        """The game a token opens, or None (malformed, unknown and revoked alike)."""
        if not TOKEN_PATTERN.fullmatch(token):
            return None
        with self._lock:
            row = self._conn.execute("SELECT game_id, channel_id FROM overlay_tokens WHERE token_hash = ?",
                                     (token_hash(token),)).fetchone()
        return Link(row["game_id"], row["channel_id"]) if row else None

    def close(self) -> None:
        self._conn.close()
