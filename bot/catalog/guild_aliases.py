"""Per-server aliases (`/alias add term:… target:…`): a server's own words for catalog entries ("big bird" for
the Stormraven Gunship), stored in the state database (SQLite or PostgreSQL) and read by every lookup of
that server before the catalog is searched.

An alias is a whole query: the typed text, normalised, equal to the term. It points to an entry name, never to
another alias (so no chain and no loop can form), never hides a real entry name or a rule number, and holds
no mention or markdown: the term is shown back in answers ("server alias **bird** → …").
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from bot.catalog.normalize import clean_text, normalize, rule_number
from bot.catalog.things import name_key
from bot.errors import UserError
from bot.storage import open_storage
from bot.storage.base import Storage
from bot.storage.registry import SmallTable, StoredFeature, register

if TYPE_CHECKING:
    from bot.catalog.service import Catalog

MAX_ALIASES = 100  # per server: an alias list longer than this is a mistake, and /alias list must fit
TERM_MAX = 40  # characters of a term as typed
TARGET_MAX = 100  # characters of a target as typed (entry names are shorter)
# Letters (any alphabet), digits, spaces and the punctuation of names ("Ork'z", "Re-roll", "5+"): nothing
# Discord reads as markdown (* _ ~ ` | > # [ ] ( )), no "@", "<", ":" or "/" (mentions, emoji, links).
_ALLOWED = re.compile(r"[^\W_]|[ '’+\-.,!&]")
_MENTION = re.compile(r"@|<[@#:a]|https?:|discord\.gg", re.IGNORECASE)

MIGRATIONS = {
    "sqlite": ["CREATE TABLE guild_aliases (alias_key TEXT PRIMARY KEY, guild_id INTEGER NOT NULL, "
               "term TEXT NOT NULL, target TEXT NOT NULL, created_at REAL NOT NULL)",
               "CREATE INDEX guild_aliases_guild ON guild_aliases (guild_id)"],
    "postgresql": ["CREATE TABLE guild_aliases (alias_key TEXT PRIMARY KEY, guild_id BIGINT NOT NULL, "
                   "term TEXT NOT NULL, target TEXT NOT NULL, created_at DOUBLE PRECISION NOT NULL)",
                   "CREATE INDEX guild_aliases_guild ON guild_aliases (guild_id)"],
}


@dataclass(frozen=True)
class GuildAlias:
    term: str  # as the server typed it (checked: no mention, no markdown)
    target: str  # the entry name it stands for, as the catalog prints it


def _key(guild_id: int, term: str) -> str:
    return f"{guild_id}:{normalize(term)}"


def _plain(text: str, what: str, limit: int) -> str:
    """`text` cleaned and checked: short, printable, no mention, no markdown; else a UserError naming why."""
    text = " ".join(clean_text(text or "").split())
    if not text:
        raise UserError(f"The {what} is empty.", field=what)
    if len(text) > limit:
        raise UserError(f"The {what} is {len(text)} characters long; at most {limit}.", field=what)
    if _MENTION.search(text):
        raise UserError(f"The {what} can't contain a mention, an emoji or a link.", field=what)
    bad = next((ch for ch in text if not _ALLOWED.fullmatch(ch)), None)
    if bad is not None:
        shown = f"`{bad}`" if bad.isprintable() and bad != "`" else f"U+{ord(bad):04X}"
        raise UserError(f"The {what} can't contain {shown}: use letters, digits, spaces and ' - + . , ! &.",
                        field=what)
    if not normalize(text):
        raise UserError(f"The {what} needs letters or digits.", field=what)
    return text


class GuildAliases:
    """The aliases of every server; reads are one indexed query (cheap enough for each keystroke)."""

    def __init__(self, storage: Storage | Path | str) -> None:
        self._owned = not hasattr(storage, "transaction")
        self._storage = open_storage(storage)
        self._storage.migrate("guild_aliases", MIGRATIONS)

    def find(self, guild_id: int | None, query: str) -> GuildAlias | None:
        """The server's alias whose term is the whole query (normalised), if any."""
        if guild_id is None or not isinstance(query, str):
            return None
        q = normalize(clean_text(query)[: TERM_MAX * 4])
        if not q or len(q) > TERM_MAX * 2:
            return None
        with self._storage.read() as conn:
            row = conn.execute("SELECT term, target FROM guild_aliases WHERE alias_key = ?",
                               (f"{guild_id}:{q}",)).fetchone()
        return GuildAlias(row["term"], row["target"]) if row else None

    def listed(self, guild_id: int) -> list[GuildAlias]:
        with self._storage.read() as conn:
            rows = conn.execute("SELECT term, target FROM guild_aliases WHERE guild_id = ? ORDER BY alias_key",
                                (guild_id,)).fetchall()
        return [GuildAlias(r["term"], r["target"]) for r in rows]

    def add(self, guild_id: int, term: str, target: str, catalog: Catalog, *,
            prefer_edition: str | None = None) -> tuple[GuildAlias, bool]:
        """Add (or repoint) an alias after checking it; returns it and whether it replaced one. Refusals are
        UserErrors saying why: a hostile term, a real entry name, a rule number, a target that is an alias
        (a chain, so possibly a loop) or that names no entry, or too many aliases."""
        term = _plain(term, "term", TERM_MAX)
        target = _plain(target, "target", TARGET_MAX)
        norm = normalize(term)
        if rule_number(term) is not None or re.fullmatch(r"[\d. +]+", norm):
            raise UserError(f"**{term}** reads as a rule number or a characteristic; pick a word.", field="term")
        existing = catalog.index.by_key.get(name_key(norm))
        if existing:
            name = catalog.index.records[existing[0]].name
            raise UserError(f"**{term}** is already the name of an entry (**{name}**): an alias can't hide it.",
                            field="term")
        mine = {normalize(a.term): a for a in self.listed(guild_id)}
        if normalize(target) in mine:
            raise UserError(f"**{target}** is itself an alias here (→ {mine[normalize(target)].target}): point "
                            "the alias at an entry, not at another alias.", field="target")
        if norm == normalize(target):
            raise UserError("An alias can't point to itself.", field="target")
        resolution = catalog.resolve(target, prefer_edition=prefer_edition)
        exact = [h for h in resolution.candidates if name_key(normalize(h.name)) == name_key(normalize(target))]
        hit = exact[0] if exact else (resolution.candidates[0] if resolution.confident else None)
        if hit is None:
            near = ", ".join(f"**{h.name}**" for h in resolution.candidates[:3])
            raise UserError(f"**{target}** names no entry of the catalog" + (f"; did you mean {near}?" if near
                                                                                else "."), field="target")
        with self._storage.transaction(guild_id) as conn:  # counted and written at once: two adds can't pass 100
            count = conn.execute("SELECT COUNT(*) FROM guild_aliases WHERE guild_id = ? AND alias_key <> ?",
                                 (guild_id, _key(guild_id, term))).fetchone()[0]
            if count >= MAX_ALIASES:
                raise UserError(f"This server has {MAX_ALIASES} aliases, the most it can keep: remove one first.",
                                field="term")
            conn.execute(
                "INSERT INTO guild_aliases (alias_key, guild_id, term, target, created_at) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT(alias_key) DO UPDATE SET term = excluded.term, target = excluded.target",
                (_key(guild_id, term), guild_id, term, hit.name, time.time()),
            )
        return GuildAlias(term, hit.name), norm in mine

    def remove(self, guild_id: int, term: str) -> GuildAlias:
        norm = normalize(clean_text(term or "")[: TERM_MAX * 4])
        with self._storage.transaction(guild_id) as conn:
            row = conn.execute("SELECT term, target FROM guild_aliases WHERE alias_key = ?",
                               (f"{guild_id}:{norm}",)).fetchone()
            if row is None:
                raise UserError("This server has no such alias; `/alias list` shows them.", field="term")
            conn.execute("DELETE FROM guild_aliases WHERE alias_key = ?", (f"{guild_id}:{norm}",))
        return GuildAlias(row["term"], row["target"])

    def close(self) -> None:
        if self._owned:
            self._storage.close()


register(StoredFeature(__name__, order=1, open=GuildAliases, small_tables=(
    SmallTable("guild_aliases", ("alias_key", "guild_id", "term", "target", "created_at"), "guild_aliases"),)))
