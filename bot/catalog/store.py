"""The catalog's SQLite file: entries, the datasets they came from, cross-links, and an FTS5 index.

Each import replaces one *dataset* (e.g. "wahapedia:10e") inside a single transaction, so re-importing
never duplicates and a failure half-way leaves the previous contents in place.

The tables, indexes and the FTS5 index with its triggers are made by sqlite-utils (`create`,
`create_index`, `enable_fts`) and the bulk rows go in with its `insert_all`, inside our own
BEGIN IMMEDIATE (sqlite-utils 4 nests its work in a savepoint and never commits an open transaction).
It is imported only when something is written: opening a built catalog and searching it, which is all
a running bot does, stay plain sqlite3 (importing sqlite-utils costs ~0.15 s and ~30 MB: click,
dateutil, numpy). The reads and the FTS5 query are hand-written SQL; why, with the numbers, is at
`full_text`.
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from bot import db
from bot.catalog import passages, things
from bot.catalog.model import FAQ_TARGET_KINDS, STRATAGEM_NUMBERS, Entry
from bot.catalog.normalize import normalize
from bot.errors import UserError

if TYPE_CHECKING:
    from sqlite_utils import Database

SCHEMA_VERSION = 3  # PRAGMA user_version of the catalog file; a different version means rebuild from scratch
THINGS_VERSION = "2"  # bump when bot/catalog/things.py groups differently: existing catalogs regroup on open

_ENTRY_COLUMNS = {"rowid": int, "id": str, "dataset": str, "kind": str, "name": str, "edition": str,
                  "faction": str, "source": str, "text": str, "data": str, "number": str, "norm_name": str,
                  "aliases": str}
_ROWS_PER_INSERT = 500  # entries per multi-row INSERT (12 values each; SQLite allows 32,766 per statement)


def _utils(conn: sqlite3.Connection) -> Database:
    """sqlite-utils over our connection, changing nothing on it (no recursive triggers, no plugins)."""
    from sqlite_utils import Database

    return Database(conn, recursive_triggers=False, execute_plugins=False)


def _create_schema(db: Database) -> None:
    """The catalog's tables on an empty file (inside the caller's transaction)."""
    db["meta"].create({"key": str, "value": str}, pk="key", not_null={"value"})
    db["datasets"].create({"name": str, "source": str, "path": str, "fingerprint": str, "imported_at": str,
                           "entries": int}, pk="name", not_null={"source", "imported_at", "entries"})
    entries = db["entries"].create(_ENTRY_COLUMNS, pk="rowid", defaults={"aliases": ""},
                                   not_null=set(_ENTRY_COLUMNS) - {"rowid", "faction", "number"})
    entries.create_index(["id"], index_name="entries_id", unique=True)
    entries.create_index(["dataset"], index_name="entries_dataset")
    entries.create_index(["number"], index_name="entries_number")
    db["links"].create({"entry_id": str, "target_id": str, "relation": str},
                       pk=("entry_id", "target_id", "relation"), not_null={"entry_id", "target_id", "relation"})
    entries.enable_fts(["name", "text"], tokenize="unicode61 remove_diacritics 2", create_triggers=True)
    _create_things(db)
    passages.create(db.conn)


def _create_things(db: Database) -> None:
    """One entry per thing (bot/catalog/things.py): entry id -> the id of its thing's primary entry. Its own
    table, made when missing, so that adding it kept existing catalogs and their imports."""
    db["things"].create({"entry_id": str, "thing": str}, pk="entry_id", not_null={"thing"}, if_not_exists=True)
    db["things"].create_index(["thing"], index_name="things_thing", if_not_exists=True)


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
        self._lock = threading.RLock()  # first: close() works even when a damaged file fails to connect
        self._conn = db.connect(self.path)
        version = self._conn.execute("PRAGMA user_version").fetchone()[0]
        if version != SCHEMA_VERSION:
            # The catalog is a cache of data/ plus imports: an old layout is dropped, not migrated.
            names = [(r[0], r[1]) for r in self._conn.execute(
                "SELECT type, name FROM sqlite_master WHERE type IN ('table', 'trigger') "
                "AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'entries_fts_%' AND name NOT LIKE 'passages_fts_%'")]
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                for kind, name in names:
                    self._conn.execute(f'DROP {kind.upper()} IF EXISTS "{name}"')
                _create_schema(_utils(self._conn))
                self._conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                self._conn.execute("COMMIT")
            except BaseException:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise
        elif not self._conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'things'").fetchone():
            _create_things(_utils(self._conn))
        regroup = self.meta("things_version") != THINGS_VERSION
        if regroup or self.meta("passages_version") != passages.VERSION:
            # a catalog built before the passages existed, or built differently, gets them now, once (issue 21:
            # about 2 s on full data)
            with self._lock:
                self._conn.execute("BEGIN IMMEDIATE")
                try:
                    if regroup:
                        self._group_things()
                    if regroup or self.meta("passages_version") != passages.VERSION:  # not done meanwhile
                        passages.rebuild(self._conn)
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
                table = _utils(self._conn)["entries"]
                for name, (source, path, entries) in batches.items():
                    self._conn.execute("DELETE FROM entries WHERE dataset = ?", (name,))
                    table.insert_all((_row(e, name, aliases.get(e.id, [])) for e in entries),
                                     batch_size=_ROWS_PER_INSERT)
                    self._conn.execute(
                        "INSERT INTO datasets (name, source, path, imported_at, entries) VALUES (?, ?, ?, ?, ?) "
                        "ON CONFLICT(name) DO UPDATE SET source = excluded.source, path = excluded.path, "
                        "imported_at = excluded.imported_at, entries = excluded.entries",
                        (name, source, path, now, len(entries)),
                    )
                self._relink()
                self._number_stratagems()
                self._group_things()
                self._link_errata()
                passages.rebuild(self._conn)
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

    def _number_stratagems(self) -> None:
        """Give the core stratagems that game-datacards numbers only by reference (model.STRATAGEM_NUMBERS) that
        number: the stratagems whose `external_refs.mfm` is the referenced id, else (a stratagem without the id,
        wh40kdc's Counter-offensive) the unnumbered core stratagem of that name in that edition. Recomputed after
        every import, so the order of imports does not matter and a catalog without game-datacards has none.
        An entry that prints its own number (a seed page) keeps it; a different one is a disagreement
        (things.disagreements)."""
        self._conn.execute("UPDATE entries SET number = NULL, data = json_remove(data, '$.number', '$.number_source') "
                           "WHERE json_extract(data, '$.number_source') IS NOT NULL")
        refs = [(edition, source, ref) for edition, source, value in self._conn.execute(
            f"SELECT edition, source, json_extract(data, '$.{STRATAGEM_NUMBERS}') FROM entries "
            f"WHERE json_extract(data, '$.{STRATAGEM_NUMBERS}') IS NOT NULL") for ref in json.loads(value)]
        if not refs:
            return
        by_ref: dict[tuple[str, str], list[str]] = {}
        by_name: dict[tuple[str, str], list[str]] = {}
        for row in self._conn.execute(
                "SELECT id, edition, norm_name, json_extract(data, '$.external_refs.mfm') AS mfm, "
                "json_extract(data, '$.category') AS category FROM entries WHERE kind = 'stratagem' AND number IS NULL"):
            if row["mfm"]:
                by_ref.setdefault((row["edition"], row["mfm"]), []).append(row["id"])
            if row["category"] == "Core":
                by_name.setdefault((row["edition"], things.name_key(row["norm_name"])), []).append(row["id"])
        for edition, source, ref in refs:
            found = by_ref.get((edition, ref["id"])) or by_name.get((edition, things.name_key(normalize(ref["name"]))), [])
            self._conn.executemany(
                "UPDATE entries SET number = ?, data = json_set(data, '$.number', ?, '$.number_source', ?) WHERE id = ?",
                [(ref["number"], ref["number"], source, entry_id) for entry_id in found])

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
        _utils(self._conn)["things"].insert_all(({"entry_id": k, "thing": v} for k, v in mapping.items()),
                                               batch_size=_ROWS_PER_INSERT)
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
        _utils(self._conn)["links"].insert_all(
            ({"entry_id": e, "target_id": f, "relation": "errata"} for e, f in sorted(links)), ignore=True,
            batch_size=_ROWS_PER_INSERT)

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
                " json_extract(e.data, '$.metadata_only') AS metadata_only,"
                " json_extract(e.data, '$.detachment') AS detachment, json_extract(e.data, '$.category') AS category,"
                " COALESCE(t.thing, e.id) AS thing FROM entries e LEFT JOIN things t ON t.entry_id = e.id"
                " ORDER BY e.rowid").fetchall()
        return iter(rows)

    @_reading
    def entry_counts(self) -> list[tuple[str, str, int]]:
        """(dataset, edition, entries) for every dataset and edition (the ops metrics)."""
        with self._lock:
            rows = self._conn.execute("SELECT dataset, edition, COUNT(*) FROM entries GROUP BY dataset, edition"
                                      ).fetchall()
        return [(str(r[0]), str(r[1]), int(r[2])) for r in rows]

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

        Hand-written, not sqlite-utils' `Table.search`: on the full catalog that took 1.73x the CPU time
        (1.45 against 0.84 ms a query over the 956 expressions of the labelled and player queries, same
        rows in the same order; bench/bench_catalog_sql.py), and this runs on every /rule fallback.
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

    # -- passages (bot/catalog/passages.py) ------------------------------------------------------
    @_reading
    def passage_search(self, words: list[str], *, limit: int = 50, edition: str | None = None,
                       kinds: tuple[str, ...] | None = None, faction: str | None = None,
                       core: bool = False) -> list[tuple[int, float]]:
        with self._lock:
            return passages.search(self._conn, words, limit=limit, edition=edition, kinds=kinds, faction=faction,
                                   core=core)

    @_reading
    def passage_asks(self, words: list[str], *, limit: int = 50, edition: str | None = None) -> list[str]:
        with self._lock:
            return passages.search_asks(self._conn, words, limit=limit, edition=edition)

    @_reading
    def passage_rows(self, rowids: list[int]) -> dict[int, passages.Passage]:
        with self._lock:
            return passages.fetch(self._conn, rowids)

    @_reading
    def passage_ids(self, entry_ids: list[str]) -> dict[str, list[int]]:
        with self._lock:
            return passages.ids_of(self._conn, entry_ids)

    @_reading
    def passage_members(self, keys: list[tuple[str, str]]) -> dict[tuple[str, str], list[str]]:
        with self._lock:
            return passages.members(self._conn, keys)

    @_reading
    def passages_defining(self, term: str, edition: str | None = None) -> list[int]:
        with self._lock:
            return passages.defining(self._conn, term, edition)

    @_reading
    def passage_vocabulary(self) -> dict[str, int]:
        with self._lock:
            return passages.vocabulary(self._conn)

    @_reading
    def passage_texts(self) -> list[tuple[int, str, str, str]]:
        with self._lock:
            return [(int(r[0]), r[1], r[2], r[3]) for r in passages.all_texts(self._conn)]

    @_reading
    def passage_fingerprint(self) -> str:
        with self._lock:
            return passages.fingerprint(self._conn)

    def close(self) -> None:
        with self._lock:
            if hasattr(self, "_conn"):
                self._conn.close()


def _bare(norm: str) -> str:
    """A normalised name without gdc's "(Upgrade)" suffix and a plural 's' folded."""
    return _singular(norm.removesuffix(" upgrade"))


def _singular(norm: str) -> str:
    return " ".join(w[:-1] if w.endswith("s") and len(w) > 3 else w for w in norm.split())


def _row(e: Entry, dataset: str, aliases: Iterable[str]) -> dict:
    number = e.data.get("number") if isinstance(e.data, dict) else None
    return {"id": e.id, "dataset": dataset, "kind": e.kind, "name": e.name, "edition": e.edition,
            "faction": e.faction, "source": e.source, "text": e.text,
            "data": json.dumps(e.data, ensure_ascii=False, separators=(",", ":")), "number": number,
            "norm_name": normalize(e.name), "aliases": "\n".join(aliases)}


def _entry(row: sqlite3.Row) -> Entry:
    return Entry(row["id"], row["kind"], row["name"], row["edition"], row["faction"], row["source"], row["text"],
                 json.loads(row["data"]))
