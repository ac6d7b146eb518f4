"""Lookups that missed: each press of "Not what I asked" under an answer, kept so an operator can see which
queries players don't get answered (`python -m bot lookup misses`) and add aliases or vocabulary.

A press records the server, the query, what was shown and the time, never who pressed: the row's key is the
answer's message id, so pressing again (or several players pressing) counts one miss per answer. Rows older
than RETENTION_DAYS are deleted whenever a miss is recorded or listed (docs/operations.md).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path

from bot.catalog.normalize import clean_text, normalize
from bot.storage import open_storage
from bot.storage.base import Storage
from bot.storage.registry import SmallTable, StoredFeature, register

RETENTION_DAYS = 90
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")  # never stored: `lookup misses` prints to an operator's terminal
QUERY_MAX = 200  # characters kept of a query (the lookup commands clip at 200 too)
SHOWN_MAX = 300  # characters kept of what was shown (a title, or a menu's first choices)

MIGRATIONS = {
    "sqlite": ["CREATE TABLE lookup_misses (message_id INTEGER PRIMARY KEY, guild_id INTEGER, query TEXT NOT NULL, "
               "shown TEXT NOT NULL, at REAL NOT NULL)",
               "CREATE INDEX lookup_misses_at ON lookup_misses (at)"],
    "postgresql": ["CREATE TABLE lookup_misses (message_id BIGINT PRIMARY KEY, guild_id BIGINT, query TEXT NOT NULL, "
                   "shown TEXT NOT NULL, at DOUBLE PRECISION NOT NULL)",
                   "CREATE INDEX lookup_misses_at ON lookup_misses (at)"],
}


@dataclass(frozen=True)
class MissedQuery:
    query: str  # as first typed (the most recent spelling of the normalised query)
    misses: int
    shown: str  # what the most recent miss showed
    last: float  # time of the most recent miss


class LookupMisses:
    def __init__(self, storage: Storage | Path | str, now=time.time) -> None:  # noqa: ANN001 - a clock
        self._owned = not hasattr(storage, "transaction")
        self._storage = open_storage(storage)
        self._storage.migrate("lookup_misses", MIGRATIONS)
        self._now = now

    def record(self, message_id: int, guild_id: int | None, query: str, shown: str) -> bool:
        """One miss for the answer `message_id`; False when that answer was already reported."""
        query = " ".join(_CONTROL.sub(" ", clean_text(query or "")).split())[:QUERY_MAX]
        shown = " ".join(_CONTROL.sub(" ", clean_text(shown or "")).split())[:SHOWN_MAX]
        now = self._now()
        with self._storage.transaction() as conn:
            conn.execute("DELETE FROM lookup_misses WHERE at < ?", (now - RETENTION_DAYS * 86400,))
            done = conn.execute("SELECT 1 FROM lookup_misses WHERE message_id = ?", (message_id,)).fetchone()
            if done:
                return False
            conn.execute("INSERT INTO lookup_misses (message_id, guild_id, query, shown, at) VALUES (?, ?, ?, ?, ?) "
                         "ON CONFLICT (message_id) DO NOTHING", (message_id, guild_id, query, shown, now))
        return True

    def most_missed(self, *, since_seconds: float | None = None, guild_id: int | None = None,
                    limit: int = 50) -> list[MissedQuery]:
        """The most-missed queries (folded by case and punctuation), most misses first, then most recent."""
        now = self._now()
        with self._storage.transaction() as conn:  # the retention holds even where nothing is pressed any more
            conn.execute("DELETE FROM lookup_misses WHERE at < ?", (now - RETENTION_DAYS * 86400,))
        since = now - since_seconds if since_seconds is not None else 0.0
        sql, params = "SELECT query, shown, at FROM lookup_misses WHERE at >= ?", [since]
        if guild_id is not None:
            sql += " AND guild_id = ?"
            params.append(guild_id)
        groups: dict[str, MissedQuery] = {}
        with self._storage.read() as conn:
            for row in conn.execute(sql + " ORDER BY at", params):
                key = normalize(row["query"]) or row["query"]
                seen = groups.get(key)
                groups[key] = MissedQuery(row["query"], (seen.misses if seen else 0) + 1, row["shown"], row["at"])
        return sorted(groups.values(), key=lambda m: (-m.misses, -m.last))[:limit]

    def close(self) -> None:
        if self._owned:
            self._storage.close()


register(StoredFeature(__name__, order=1, open=LookupMisses, small_tables=(
    SmallTable("lookup_misses", ("message_id", "guild_id", "query", "shown", "at"), "lookup_misses"),)))
