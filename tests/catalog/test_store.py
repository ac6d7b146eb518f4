"""The catalog file itself: atomic dataset replacement and the FTS5 index made by sqlite-utils, and a
reading process that never imports sqlite-utils (the bot only reads; the import costs ~0.17 s)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from bot.catalog.model import Entry
from bot.catalog.store import CatalogStore

REPO = Path(__file__).resolve().parents[2]


def _entry(key: str, name: str, text: str) -> Entry:
    return Entry(f"11e:rule:test:{key}", "rule", name, "11e", None, "test", text, {})


def _ids(store: CatalogStore, word: str) -> list[str]:
    found = []
    for rowid, _score in store.full_text([word]):
        found.append(store._conn.execute("SELECT id FROM entries WHERE rowid = ?", (rowid,)).fetchone()[0])
    return sorted(found)


def test_a_failed_replacement_leaves_every_dataset_and_the_index_as_they_were(tmp_path: Path) -> None:
    store = CatalogStore(tmp_path / "catalog.sqlite")
    store.replace_datasets({"a": ("A", None, [_entry("one", "Lethal Hits", "critical hits wound")]),
                            "b": ("B", None, [_entry("two", "Sustained Hits", "extra hits")])})
    # One call: a new dataset "c" of 1,200 entries (several multi-row INSERTs), then dataset "a" again with
    # 1,200 more and, last, an id that belongs to dataset "b": the whole call must fail and change nothing.
    many = [_entry(f"new{i}", f"Grenade {i}", "throw a grenade") for i in range(2400)]
    with pytest.raises(sqlite3.IntegrityError):
        store.replace_datasets({"c": ("C", None, many[:1200]),
                                "a": ("A", None, [*many[1200:], _entry("two", "Clash", "same id as b's")])})
    assert store.count() == 2
    assert [d["name"] for d in store.datasets()] == ["a", "b"]
    assert _ids(store, "lethal") == ["11e:rule:test:one"]
    assert _ids(store, "grenade") == []
    assert not store._conn.in_transaction
    store.close()


def test_the_index_follows_replacements_and_survives_a_reopen(tmp_path: Path) -> None:
    path = tmp_path / "catalog.sqlite"
    store = CatalogStore(path)
    store.replace_datasets({"a": ("A", None, [_entry("one", "Lethal Hits", "critical hits wound")])})
    store.replace_datasets({"a": ("A", None, [_entry("one", "Lethal Hits", "now about devastating wounds")])})
    assert _ids(store, "devastating") == ["11e:rule:test:one"] and _ids(store, "critical") == []
    store.close()
    reopened = CatalogStore(path)
    assert _ids(reopened, "devastating") == ["11e:rule:test:one"]
    assert reopened._conn.execute(
        "INSERT INTO entries_fts(entries_fts, rank) VALUES ('integrity-check', 1)").fetchall() == []
    reopened.close()


def test_opening_and_searching_a_built_catalog_never_imports_sqlite_utils(tmp_path: Path) -> None:
    path = tmp_path / "catalog.sqlite"
    store = CatalogStore(path)
    store.replace_datasets({"a": ("A", None, [_entry("one", "Lethal Hits", "critical hits wound")])})
    store.close()
    code = (f"import sys; from bot.catalog.store import CatalogStore; s = CatalogStore({str(path)!r}); "
            "assert s.full_text(['lethal']); s.get('11e:rule:test:one'); list(s.index_rows()); "
            "print('sqlite_utils' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
