"""The catalog is a cache: imports are kept under COGITATOR_DATA/imports and replayed on every rebuild, and a
missing, empty, corrupt or outdated catalog.sqlite is rebuilt with a warning and nothing lost."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.catalog import imports as kept
from bot.catalog.model import CatalogImportError
from bot.catalog.service import Catalog, open_catalog
from bot.catalog.store import CatalogDamaged, CatalogStore

from .conftest import FIX_GDC, FIX_WAHAPEDIA, REPO, copy_catalog, settings_for

WARBOSS = "10e:datasheet:wahapedia.ork:warboss"
BANNERNOB = "11e:datasheet:gdc.orks:bannernob"


@pytest.fixture
def data(base_dir: Path, tmp_path: Path) -> Path:
    """A data dir holding the base catalog plus both fixture imports (kept)."""
    folder = copy_catalog(base_dir, tmp_path / "data")
    catalog = open_catalog(settings_for(folder))
    try:
        catalog.import_dataset("wahapedia", FIX_WAHAPEDIA)
        catalog.import_dataset("gdc", FIX_GDC / "orks.json")
    finally:
        catalog.close()
    return folder


def _reopen(folder: Path) -> Catalog:
    return open_catalog(settings_for(folder))


def _has_imports(catalog: Catalog) -> bool:
    return catalog.get(WARBOSS) is not None and catalog.get(BANNERNOB) is not None


def _drop_catalog(folder: Path) -> None:
    for name in ("catalog.sqlite", "catalog.sqlite-wal", "catalog.sqlite-shm"):
        (folder / name).unlink(missing_ok=True)


def test_imports_are_kept_with_hash_and_time(data: Path) -> None:
    entries = kept.kept_imports(kept.imports_dir(data))
    assert [(e["format"], e["kind"], e["name"]) for e in entries] == [("wahapedia", "folder", "wahapedia-10e"),
                                                                      ("gdc", "file", "orks.json")]
    gdc = entries[1]
    assert gdc["sha256"] == hashlib.sha256((FIX_GDC / "orks.json").read_bytes()).hexdigest()
    assert gdc["datasets"] == ["gdc:orks"] and gdc["imported_at"].startswith("20")
    assert kept.kept_path(kept.imports_dir(data), gdc).read_bytes() == (FIX_GDC / "orks.json").read_bytes()
    folder = kept.kept_path(kept.imports_dir(data), entries[0])
    assert sorted(p.name for p in folder.iterdir()) == sorted(p.name for p in FIX_WAHAPEDIA.glob("*.csv"))


@pytest.mark.parametrize("damage, reason", [
    (lambda f: _drop_catalog(f), "was missing"),
    (lambda f: (f / "catalog.sqlite").write_bytes(b""), "was empty"),
    (lambda f: (f / "catalog.sqlite").write_bytes(b"this is not a database at all" * 100), "was corrupt"),
])
def test_a_lost_or_broken_catalog_comes_back_with_every_import(data: Path, damage, reason: str,
                                                               caplog: pytest.LogCaptureFixture) -> None:
    before = _reopen(data)
    count = before.count()
    before.close()
    _drop_catalog(data) if reason != "was missing" else None
    damage(data)
    with caplog.at_level(logging.WARNING, logger="bot.catalog.service"):
        catalog = _reopen(data)
    try:
        assert _has_imports(catalog) and catalog.count() == count
    finally:
        catalog.close()
    warning = " ".join(r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)
    assert reason in warning and "replayed 2 kept import(s)" in warning and "orks.json" in warning
    if reason == "was corrupt":
        assert (data / "catalog.sqlite.corrupt").exists()


def test_pages_overwritten_in_the_middle_are_detected(data: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = data / "catalog.sqlite"
    catalog = _reopen(data)
    catalog.store._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    catalog.close()
    size = path.stat().st_size
    with open(path, "r+b") as handle:  # keep the header, smash a run of pages after it
        handle.seek(8192)
        handle.write(os.urandom(min(size - 8192, 256 * 1024)))
    store = CatalogStore.__new__(CatalogStore)  # a store opened without the start-up check ...
    try:
        store.__init__(path)
        with pytest.raises(CatalogDamaged, match="rebuilt automatically"):  # ... refuses clearly on a read
            for _ in range(3):
                list(store.index_rows())
                store.count()
    except Exception as exc:  # noqa: BLE001 - the damage may already show when the file is opened
        assert isinstance(exc, (CatalogDamaged, __import__("sqlite3").DatabaseError))
    finally:
        store.close()
    with caplog.at_level(logging.WARNING, logger="bot.catalog.service"):
        catalog = _reopen(data)
    try:
        assert _has_imports(catalog)
    finally:
        catalog.close()
    assert "was corrupt" in caplog.text


def test_an_outdated_catalog_is_rebuilt_and_replays(data: Path, caplog: pytest.LogCaptureFixture) -> None:
    catalog = _reopen(data)
    catalog.store.set_meta("fingerprint", "from an older builder")
    catalog.close()
    with caplog.at_level(logging.WARNING, logger="bot.catalog.service"):
        catalog = _reopen(data)
    try:
        assert _has_imports(catalog)
    finally:
        catalog.close()
    assert "outdated" in caplog.text and "replayed 2" in caplog.text


def test_reimport_replaces_the_kept_copy_and_a_failed_import_keeps_nothing(data: Path, tmp_path: Path) -> None:
    catalog = _reopen(data)
    try:
        catalog.import_dataset("gdc", FIX_GDC / "orks.json")
        assert [e["name"] for e in catalog.kept_imports()] == ["wahapedia-10e", "orks.json"]
        bad = tmp_path / "bad.json"
        bad.write_text('{"name": "X", "source": "40k-11e", "datasheets": [', encoding="utf-8")
        with pytest.raises(CatalogImportError):
            catalog.import_dataset("gdc", bad)
        assert len(catalog.kept_imports()) == 2
        assert not [p for p in kept.imports_dir(data).iterdir() if p.name.startswith(".staging")]
    finally:
        catalog.close()


def test_a_clean_start_does_not_rebuild(data: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="bot.catalog.service"):
        _reopen(data).close()
    assert "rebuilt" not in caplog.text


def test_legacy_imports_are_adopted_when_their_source_still_exists(data: Path,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    """A catalog from before imports were kept: its import is copied from the recorded path on rebuild."""
    root = kept.imports_dir(data)
    for entry in kept.kept_imports(root):
        kept.forget_import(root, entry["id"])
    catalog = _reopen(data)  # out of step with the (now empty) manifest: rebuilt, sources adopted
    try:
        assert _has_imports(catalog)
        assert {e["name"] for e in catalog.kept_imports()} == {"wahapedia-10e", "orks.json"}
    finally:
        catalog.close()
    assert "imported before imports were kept" in caplog.text


def _cli(args: list[str], data: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, COGITATOR_DATA=str(data), COGITATOR_DB=str(data / "state.db"),
               COGITATOR_LOG_LEVEL="WARNING")
    env.pop("DISCORD_TOKEN", None)
    return subprocess.run([sys.executable, "-m", "bot", *args], capture_output=True, text=True, cwd=REPO, env=env,
                          timeout=300)


def test_cli_on_a_corrupt_catalog(data: Path) -> None:
    _drop_catalog(data)
    (data / "catalog.sqlite").write_bytes(b"\x00garbage" * 5000)
    info = _cli(["catalog", "info"], data)
    assert info.returncode == 0, info.stderr
    assert "kept imports (2" in info.stdout and "orks.json" in info.stdout and "gdc:orks" in info.stdout
    assert "Traceback" not in info.stderr
    (data / "catalog.sqlite").write_bytes(b"\x00garbage" * 5000)
    build = _cli(["catalog", "build", "--force"], data)
    assert build.returncode == 0 and "Traceback" not in build.stderr, build.stderr
    lookup = _cli(["lookup", "bannernob", "--json", "--limit", "1"], data)
    assert json.loads(lookup.stdout)["results"][0]["id"] == BANNERNOB


DAMAGE = [b"{not json", b"\xff\xfe garbage", b"[]", b'{"imports": 5}', b"[" * 100000]


@pytest.mark.parametrize("damage", DAMAGE[1:])
def test_every_damaged_manifest_shape_is_set_aside_and_rebuilt(tmp_path: Path, damage: bytes,
                                                                caplog: pytest.LogCaptureFixture) -> None:
    root = tmp_path / "imports"
    (root / "wahapedia-aaaaaaaaaaaa-20260101T120000000000").mkdir(parents=True)
    for csv in sorted(FIX_WAHAPEDIA.glob("*.csv"))[:2]:
        (root / "wahapedia-aaaaaaaaaaaa-20260101T120000000000" / csv.name).write_bytes(csv.read_bytes())
    (root / "gdc-bbbbbbbbbbbb-20250101T120000000000").mkdir()
    (root / "gdc-bbbbbbbbbbbb-20250101T120000000000" / "orks.json").write_text("{}", encoding="utf-8")
    (root / ".staging-x").mkdir()  # an interrupted import's staging folder is not an import
    (root / "manifest.json").write_bytes(damage)
    with caplog.at_level(logging.WARNING, logger="cogitator.catalog"):
        entries = kept.kept_imports(root)
    assert [e["id"] for e in entries] == ["gdc-bbbbbbbbbbbb-20250101T120000000000",
                                          "wahapedia-aaaaaaaaaaaa-20260101T120000000000"], "oldest first"
    assert "damaged" in caplog.text and "rebuilt from the 2" in caplog.text
    aside = [p for p in root.iterdir() if p.name.startswith("manifest.json.damaged-")]
    assert len(aside) == 1 and aside[0].read_bytes() == damage
    assert [e["id"] for e in kept.kept_imports(root)] == [e["id"] for e in entries], "the rebuilt manifest is read"


def test_a_damaged_manifest_keeps_lookups_answering(data: Path) -> None:
    """The bot's lookups keep answering (a real console process), the damaged file is kept for a look,
    and a later full rebuild of the catalog still replays both imports."""
    root = kept.imports_dir(data)
    ids = [e["id"] for e in kept.kept_imports(root)]
    (root / "manifest.json").write_bytes(DAMAGE[0])
    env = dict(os.environ, COGITATOR_DATA=str(data), COGITATOR_DB=str(data / "state.db"))
    env.pop("DISCORD_TOKEN", None)
    proc = subprocess.run([sys.executable, "-m", "bot", "console"], input="/rule query:bannernob\n",
                          capture_output=True, text=True, cwd=REPO, env=env, timeout=300)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr and "Something went wrong" not in proc.stdout
    assert "Bannernob" in proc.stdout, proc.stdout[-500:]
    assert "manifest" in proc.stderr and "damaged" in proc.stderr and "rebuilt from the 2" in proc.stderr
    assert len([p for p in root.iterdir() if p.name.startswith("manifest.json.damaged-")]) == 1
    assert [e["id"] for e in kept.kept_imports(root)] == ids, "the same imports, in the same order"
    _drop_catalog(data)
    catalog = _reopen(data)
    try:
        assert _has_imports(catalog)
    finally:
        catalog.close()
