"""The catalog's SQLite file: entries, the datasets they came from, cross-links, and an FTS5 index.

Each import replaces one *dataset* (e.g. "wahapedia:10e") inside a single transaction, so re-importing
never duplicates and a failure half-way leaves the previous contents in place.
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path

from bot import db
from bot.catalog import things
from bot.catalog.model import FAQ_TARGET_KINDS, Entry
from bot.catalog.normalize import normalize
from bot.errors import UserError

SCHEMA_VERSION = 3  # PRAGMA user_version of the catalog file; a different version means rebuild from scratch
THINGS_VERSION = "2"  # bump when bot/catalog/things.py groups differently: existing catalogs regroup on open

# One entry per thing (bot/catalog/things.py): entry id -> the id of its thing's primary entry. A table of its
# own (created if missing) so that adding it kept existing catalogs and their imports.
_THINGS_SCHEMA = """
    CREATE TABLE IF NOT EXISTS things (entry_id TEXT PRIMARY KEY, thing TEXT NOT NULL);
    CREATE INDEX IF NOT EXISTS things_thing ON things(thing);
"""

_SCHEMA = """
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE datasets (
        name TEXT PRIMARY KEY, source TEXT NOT NULL, path TEXT, fingerprint TEXT,
        imported_at TEXT NOT NULL, entries INTEGER NOT NULL);
    CREATE TABLE entries (
        rowid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, dataset TEXT NOT NULL, kind TEXT NOT NULL,
        name TEXT NOT NULL, edition TEXT NOT NULL, faction TEXT, source TEXT NOT NULL, text TEXT NOT NULL,
        data TEXT NOT NULL, number TEXT, norm_name TEXT NOT NULL, aliases TEXT NOT NULL DEFAULT '');
    CREATE INDEX entries_dataset ON entries(dataset);
    CREATE INDEX entries_number ON entries(number);
    CREATE TABLE links (entry_id TEXT NOT NULL, target_id TEXT NOT NULL, relation TEXT NOT NULL,
        PRIMARY KEY (entry_id, target_id, relation));
    CREATE VIRTUAL TABLE entries_fts USING fts5(
        name, text, content='entries', content_rowid='rowid', tokenize='unicode61 remove_diacritics 2');
    CREATE TRIGGER entries_ai AFTER INSERT ON entries BEGIN
        INSERT INTO entries_fts(rowid, name, text) VALUES (new.rowid, new.name, new.text);
    END;
    CREATE TRIGGER entries_ad AFTER DELETE ON entries BEGIN
        INSERT INTO entries_fts(entries_fts, rowid, name, text) VALUES ('delete', old.rowid, old.name, old.text);
    END;
"""


class CatalogDamaged(UserError):
    """The catalog file broke while the bot was running (found corrupt on a read)."""

    def __init__(self) -> None:
        super().__init__("The rules catalog file is damaged, so lookups are unavailable. It is rebuilt "
                         "automatically at the next start (an operator can run `python -m bot catalog build "
                         "--force` now); imported data is kept and comes back.")


def _reading(method):  # noqa: ANN001, ANN202 - a decorator for the store's read methods
    """A damaged file answers with CatalogDamaged (a clear message), never a raw sqlite3 error."""
    import functools

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        try:
            return method(self, *args, **kwargs)
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                raise
            raise CatalogDamaged() from exc
        except sqlite3.DatabaseError as exc:
            raise CatalogDamaged() from exc
    return wrapper


class CatalogStore:
    """Thin data access over one catalog file; safe to share between threads (one lock)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._conn = db.connect(self.path)
        self._lock = threading.RLock()
        version = self._conn.execute("PRAGMA user_version").fetchone()[0]
        if version != SCHEMA_VERSION:
            # The catalog is a cache of data/ plus imports: an old layout is dropped, not migrated.
            names = [(r[0], r[1]) for r in self._conn.execute(
                "SELECT type, name FROM sqlite_master WHERE type IN ('table', 'trigger') "
                "AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'entries_fts_%'")]
            drops = "".join(f'DROP {kind.upper()} IF EXISTS "{name}";' for kind, name in names)
            try:
                self._conn.executescript(
                    f"BEGIN IMMEDIATE;{drops}{_SCHEMA}PRAGMA user_version = {SCHEMA_VERSION};COMMIT;")
            except BaseException:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise
        self._conn.executescript(_THINGS_SCHEMA)
        if self.meta("things_version") != THINGS_VERSION:
            with self._lock:
                self._conn.execute("BEGIN IMMEDIATE")
                try:
                    self._group_things()
                    self._conn.execute("COMMIT")
                except BaseException:
                    self._conn.execute("ROLLBACK")
                    raise

    def check(self) -> str | None:
        """None when the file is sound, else what is wrong (PRAGMA quick_check; the tables read)."""
        with self._lock:
            rows = [r[0] for r in self._conn.execute("PRAGMA quick_check(3)").fetchall()]
            if rows != ["ok"]:
                return "; ".join(str(r) for r in rows)[:300]
            self._conn.execute("SELECT COUNT(*) FROM entries").fetchone()
            self._conn.execute("SELECT key, value FROM meta").fetchall()
        return None

    # -- meta ------------------------------------------------------------------------------
    def meta(self, key: str) -> str | None:
        with self._lock:
            row = self._conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        with self._lock:
            self._conn.execute("INSERT INTO meta (key, value) VALUES (?, ?) "
                               "ON CONFLICT(key) DO UPDATE SET value = excluded.value", (key, value))

    # -- writing ---------------------------------------------------------------------------
    def replace_datasets(self, batches: dict[str, tuple[str, str | None, list[Entry]]],
                         aliases: dict[str, list[str]] | None = None) -> None:
        """Replace each named dataset with its entries, all in one transaction.

        `batches` maps dataset name -> (human source, path or None, entries). Ids must be unique
        across the whole catalog; an entry whose id belongs to another dataset is an error.
        """
        aliases = aliases or {}
        now = datetime.now(UTC).isoformat(timespec="seconds")
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                for name, (source, path, entries) in batches.items():
                    self._conn.execute("DELETE FROM entries WHERE dataset = ?", (name,))
                    self._conn.executemany(
                        "INSERT INTO entries (id, dataset, kind, name, edition, faction, source, text, data, number,"
                        " norm_name, aliases) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (_row(e, name, aliases.get(e.id, [])) for e in entries),
                    )
                    self._conn.execute(
                        "INSERT INTO datasets (name, source, path, imported_at, entries) VALUES (?, ?, ?, ?, ?) "
                        "ON CONFLICT(name) DO UPDATE SET source = excluded.source, path = excluded.path, "
                        "imported_at = excluded.imported_at, entries = excluded.entries",
                        (name, source, path, now, len(entries)),
                    )
                self._relink()
                self._group_things()
                self._link_errata()
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise

    def _relink(self) -> None:
        """Link incomplete entries (an empty table in a seed page) to the complete rule of the same edition.

        Matching is by rule number when both have one, else by normalised title with a plural 's' folded
        ("Wound Roll" -> "05.02 Wound Rolls"). Only entries from another dataset qualify.
        """
        self._conn.execute("DELETE FROM links WHERE relation = 'complete-text'")
        incomplete = self._conn.execute(
            "SELECT id, dataset, kind, edition, number, norm_name FROM entries "
            "WHERE json_extract(data, '$.incomplete') IS NOT NULL").fetchall()
        for row in incomplete:
            candidates = self._conn.execute(
                "SELECT id, number, norm_name FROM entries WHERE edition = ? AND kind = ? AND dataset != ? "
                "AND json_extract(data, '$.incomplete') IS NULL", (row["edition"], row["kind"], row["dataset"]),
            ).fetchall()
            want = _singular(row["norm_name"])
            for cand in candidates:
                if (row["number"] and cand["number"] == row["number"]) or _singular(cand["norm_name"]) == want:
                    self._conn.execute("INSERT OR IGNORE INTO links VALUES (?, ?, 'complete-text')",
                                       (row["id"], cand["id"]))
                    break

    def _group_things(self) -> None:
        """Recompute every entry's thing (inside the caller's transaction); see bot/catalog/things.py."""
        rows = self._conn.execute("SELECT id, dataset, kind, edition, norm_name, faction FROM entries").fetchall()

        def load(ids: list[str]) -> dict[str, tuple[dict, str]]:
            out: dict[str, tuple[dict, str]] = {}
            for start in range(0, len(ids), 500):
                chunk = ids[start:start + 500]
                marks = ",".join("?" * len(chunk))
                for r in self._conn.execute(f"SELECT id, data, text FROM entries WHERE id IN ({marks})", chunk):
                    out[r[0]] = (json.loads(r[1]), r[2])
            return out

        mapping = things.group_all((tuple(r) for r in rows), load)
        self._conn.execute("DELETE FROM things")
        self._conn.executemany("INSERT INTO things (entry_id, thing) VALUES (?, ?)", mapping.items())
        self._conn.execute("INSERT INTO meta (key, value) VALUES ('things_version', ?) "
                           "ON CONFLICT(key) DO UPDATE SET value = excluded.value", (THINGS_VERSION,))

    def _link_errata(self) -> None:
        """Link every FAQ/errata entry to the entries it is about: (target, faq, 'errata').

        A target is found by its game-datacards id when an imported gdc file has it, and otherwise by
        kind + normalised name in the same edition, so the seed pages and other sources get the errata
        too (the gdc Orks FAQ uses other ids than the gdc Orks file). Enhancement names drop a trailing
        "(Upgrade)" the way gdc prints them.
        """
        self._conn.execute("DELETE FROM links WHERE relation = 'errata'")
        faqs = self._conn.execute(
            "SELECT id, edition, json_extract(data, '$.targets') AS targets FROM entries WHERE kind = 'faq'").fetchall()
        if not faqs:
            return
        by_gdc: dict[str, list[str]] = {}
        by_name: dict[tuple[str, str, str], list[str]] = {}
        for row in self._conn.execute(
                "SELECT id, kind, edition, norm_name, json_extract(data, '$.gdc_id') AS gdc FROM entries "
                "WHERE kind != 'faq'"):
            if row["gdc"]:
                by_gdc.setdefault(row["gdc"], []).append(row["id"])
            by_name.setdefault((row["edition"], row["kind"], _bare(row["norm_name"])), []).append(row["id"])
        links: set[tuple[str, str]] = set()
        for faq in faqs:
            for target in json.loads(faq["targets"] or "[]"):
                found = list(by_gdc.get(target.get("gdc_id") or "", ()))
                for kind in FAQ_TARGET_KINDS.get(target.get("type"), ()):
                    found += by_name.get((faq["edition"], kind, _bare(normalize(target.get("name") or ""))), ())
                links.update((entry_id, faq["id"]) for entry_id in found)
        self._conn.executemany("INSERT OR IGNORE INTO links VALUES (?, ?, 'errata')", sorted(links))

    # -- reading ---------------------------------------------------------------------------
    @_reading
    def get(self, entry_id: str) -> Entry | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT id, kind, name, edition, faction, source, text, data FROM entries WHERE id = ?",
                (entry_id,)).fetchone()
        return _entry(row) if row else None

    @_reading
    def members(self, entry_id: str) -> list[Entry]:
        """Every entry of the same thing as `entry_id` (itself included), or [] when it is unknown."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT e.id, e.kind, e.name, e.edition, e.faction, e.source, e.text, e.data FROM things t "
                "JOIN things o ON o.thing = t.thing JOIN entries e ON e.id = o.entry_id WHERE t.entry_id = ? "
                "ORDER BY e.rowid", (entry_id,)).fetchall()
        return [_entry(r) for r in rows]

    @_reading
    def links(self, entry_id: str) -> list[tuple[str, str]]:
        with self._lock:
            rows = self._conn.execute("SELECT target_id, relation FROM links WHERE entry_id = ?",
                                      (entry_id,)).fetchall()
        return [(r[0], r[1]) for r in rows]

    @_reading
    def index_rows(self) -> Iterator[sqlite3.Row]:
        """Everything the in-memory name index needs, without the (large) texts."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT e.rowid, e.id, e.dataset, e.kind, e.name, e.edition, e.faction, e.source, e.number, e.norm_name,"
                " e.aliases, json_extract(e.data, '$.incomplete') AS incomplete,"
                " json_extract(e.data, '$.detachment') AS detachment, json_extract(e.data, '$.category') AS category,"
                " COALESCE(t.thing, e.id) AS thing FROM entries e LEFT JOIN things t ON t.entry_id = e.id"
                " ORDER BY e.rowid").fetchall()
        return iter(rows)

    @_reading
    def datasets(self) -> list[dict]:
        with self._lock:
            rows = self._conn.execute("SELECT * FROM datasets ORDER BY name").fetchall()
        return [dict(r) for r in rows]

    @_reading
    def count(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM entries").fetchone()[0])

    def full_text(self, words: list[str], *, limit: int = 20) -> list[tuple[int, float]]:
        """FTS5 search for rows containing all `words` (each quoted, so no query syntax gets through).

        Falls back to any-word matching when all-words finds nothing. Returns (rowid, bm25) best first.
        """
        safe = [w for w in (re.sub(r"[^\w]", "", w) for w in words) if w][:12]
        if not safe:
            return []
        results: list[tuple[int, float]] = []
        for joiner in (" AND ", " OR "):
            expr = joiner.join(f'"{w}"*' for w in safe)
            with self._lock:
                try:
                    rows = self._conn.execute(
                        "SELECT rowid, bm25(entries_fts, 4.0, 1.0) FROM entries_fts WHERE entries_fts MATCH ? "
                        "ORDER BY bm25(entries_fts, 4.0, 1.0) LIMIT ?", (expr, limit)).fetchall()
                except sqlite3.OperationalError as exc:
                    if "malformed" in str(exc) or "corrupt" in str(exc):
                        raise CatalogDamaged() from exc
                    rows = []
                except sqlite3.DatabaseError as exc:
                    raise CatalogDamaged() from exc
            results = [(int(r[0]), float(r[1])) for r in rows]
            if results or len(safe) == 1:
                break
        return results

    def close(self) -> None:
        with self._lock:
            self._conn.close()


def _bare(norm: str) -> str:
    """A normalised name without gdc's "(Upgrade)" suffix and a plural 's' folded."""
    return _singular(norm.removesuffix(" upgrade"))


def _singular(norm: str) -> str:
    return " ".join(w[:-1] if w.endswith("s") and len(w) > 3 else w for w in norm.split())


def _row(e: Entry, dataset: str, aliases: Iterable[str]) -> tuple:
    number = e.data.get("number") if isinstance(e.data, dict) else None
    return (e.id, dataset, e.kind, e.name, e.edition, e.faction, e.source, e.text,
            json.dumps(e.data, ensure_ascii=False, separators=(",", ":")), number, normalize(e.name),
            "\n".join(aliases))


def _entry(row: sqlite3.Row) -> Entry:
    return Entry(row["id"], row["kind"], row["name"], row["edition"], row["faction"], row["source"], row["text"],
                 json.loads(row["data"]))
