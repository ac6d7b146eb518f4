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
import time
from dataclasses import dataclass
from pathlib import Path

from bot.storage import open_storage
from bot.storage.base import Storage
from bot.storage.registry import SmallTable, StoredFeature, register

TOKEN_BYTES = 32
TOKEN_PATTERN = re.compile(r"[A-Za-z0-9_-]{43}")
# Older links of a game beyond this many are dropped when a new one is made (a link per stream setup).
LINKS_PER_GAME_MAX = 10

# Revoking covers the channel's earlier games too (their links outlive the game, and once a new game has
# started, `/game overlay` no longer names them).
CHANNEL_INDEX = "CREATE INDEX overlay_tokens_by_channel ON overlay_tokens (channel_id)"

# League table links (`/league overlay`): the same tokens, bound to a league instead of a game.
LEAGUE_LINKS = {"sqlite": """
    CREATE TABLE league_links (
        token_hash TEXT PRIMARY KEY,
        league_id INTEGER NOT NULL,
        guild_id INTEGER NOT NULL,
        created_by INTEGER NOT NULL,
        created_at REAL NOT NULL
    );
    CREATE INDEX league_links_by_league ON league_links (league_id, created_at)
    """, "postgresql": """
    CREATE TABLE league_links (
        token_hash TEXT PRIMARY KEY,
        league_id BIGINT NOT NULL,
        guild_id BIGINT NOT NULL,
        created_by BIGINT NOT NULL,
        created_at DOUBLE PRECISION NOT NULL
    );
    CREATE INDEX league_links_by_league ON league_links (league_id, created_at)
    """}

MIGRATIONS = {
    "sqlite": ["""
    CREATE TABLE overlay_tokens (
        token_hash TEXT PRIMARY KEY,
        game_id INTEGER NOT NULL,
        channel_id INTEGER NOT NULL,
        created_by INTEGER NOT NULL,
        created_at REAL NOT NULL
    );
    CREATE INDEX overlay_tokens_by_game ON overlay_tokens (game_id, created_at)
    """, CHANNEL_INDEX, LEAGUE_LINKS["sqlite"]],
    "postgresql": ["""
    CREATE TABLE overlay_tokens (
        token_hash TEXT PRIMARY KEY,
        game_id BIGINT NOT NULL,
        channel_id BIGINT NOT NULL,
        created_by BIGINT NOT NULL,
        created_at DOUBLE PRECISION NOT NULL
    );
    CREATE INDEX overlay_tokens_by_game ON overlay_tokens (game_id, created_at)
    """, CHANNEL_INDEX, LEAGUE_LINKS["postgresql"]],
}


@dataclass(frozen=True)
class Link:
    game_id: int
    channel_id: int
    token_hash: str


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("ascii", "replace")).hexdigest()


class OverlayTokens:
    """The `overlay_tokens` table of the state database (`bot.services.overlay_tokens`)."""

    def __init__(self, storage: Storage | Path | str) -> None:
        self._owned = not hasattr(storage, "transaction")
        self._storage = open_storage(storage)
        self._storage.migrate("web", MIGRATIONS)

    def issue(self, game_id: int, channel_id: int, user_id: int) -> str:
        """A new link's token; the game's oldest links beyond LINKS_PER_GAME_MAX stop working."""
        token = secrets.token_urlsafe(TOKEN_BYTES)
        with self._storage.transaction(game_id) as conn:
            conn.execute(
                "INSERT INTO overlay_tokens (token_hash, game_id, channel_id, created_by, created_at)"
                " VALUES (?, ?, ?, ?, ?)", (token_hash(token), game_id, channel_id, user_id, time.time()))
            conn.execute(
                "DELETE FROM overlay_tokens WHERE game_id = ? AND token_hash NOT IN ("
                " SELECT token_hash FROM overlay_tokens WHERE game_id = ?"
                " ORDER BY created_at DESC LIMIT ?)", (game_id, game_id, LINKS_PER_GAME_MAX))
        return token

    def revoke(self, channel_id: int) -> int:
        """Invalidate every link of the channel's games, the current one and earlier ones; returns how many
        there were. Open pages of those links go blank within a poll of the feed (any process)."""
        with self._storage.transaction() as conn:
            return len(conn.execute("DELETE FROM overlay_tokens WHERE channel_id = ? RETURNING token_hash",
                                    (channel_id,)).fetchall())

    def resolve(self, token: str) -> Link | None:
        """The game a token opens, or None (malformed, unknown and revoked alike)."""
        if not TOKEN_PATTERN.fullmatch(token):
            return None
        digest = token_hash(token)
        with self._storage.read() as conn:
            row = conn.execute("SELECT game_id, channel_id FROM overlay_tokens WHERE token_hash = ?",
                               (digest,)).fetchone()
        return Link(row["game_id"], row["channel_id"], digest) if row else None

    def live(self, game_ids: list[int]) -> set[str]:
        """The hashes of the links that still work for these games (the feed ends the streams of the others)."""
        if not game_ids:
            return set()
        marks = ",".join("?" * len(game_ids))
        with self._storage.read() as conn:
            rows = conn.execute(f"SELECT token_hash FROM overlay_tokens WHERE game_id IN ({marks})",
                                tuple(game_ids)).fetchall()
        return {r["token_hash"] for r in rows}

    # ---- league table links (`/league overlay`) ----------------------------------------------------

    def issue_league(self, league_id: int, guild_id: int, user_id: int) -> str:
        """A new link to a league's table; the league's oldest links beyond LINKS_PER_GAME_MAX stop working."""
        token = secrets.token_urlsafe(TOKEN_BYTES)
        with self._storage.transaction(guild_id) as conn:
            conn.execute("INSERT INTO league_links (token_hash, league_id, guild_id, created_by, created_at)"
                         " VALUES (?, ?, ?, ?, ?)", (token_hash(token), league_id, guild_id, user_id, time.time()))
            conn.execute(
                "DELETE FROM league_links WHERE league_id = ? AND token_hash NOT IN ("
                " SELECT token_hash FROM league_links WHERE league_id = ?"
                " ORDER BY created_at DESC LIMIT ?)", (league_id, league_id, LINKS_PER_GAME_MAX))
        return token

    def revoke_league(self, league_id: int, guild_id: int) -> int:
        """Stop every link of a league's table; how many there were."""
        with self._storage.transaction(guild_id) as conn:
            return len(conn.execute("DELETE FROM league_links WHERE league_id = ? RETURNING token_hash",
                                    (league_id,)).fetchall())

    def resolve_league(self, token: str) -> tuple[int, int] | None:
        """(league id, guild id) a token opens, or None (malformed, unknown and revoked alike)."""
        if not TOKEN_PATTERN.fullmatch(token):
            return None
        with self._storage.read() as conn:
            row = conn.execute("SELECT league_id, guild_id FROM league_links WHERE token_hash = ?",
                               (token_hash(token),)).fetchone()
        return (int(row[0]), int(row[1])) if row else None

    def close(self) -> None:
        if self._owned:
            self._storage.close()


register(StoredFeature(__name__, order=2, open=OverlayTokens, small_tables=(
    SmallTable("overlay_tokens", ("token_hash", "game_id", "channel_id", "created_by", "created_at"), "overlay_links"),
    SmallTable("league_links", ("token_hash", "league_id", "guild_id", "created_by", "created_at"), "league_links"))))
