"""Building the catalog file: what it is built from (its fingerprint), the base datasets that ship with the
bot, the lock that serialises builds and imports across processes, the check that sets a damaged file
aside, and a rebuild that replays the kept imports. `open_catalog` (bot/catalog/service.py) decides when.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

try:
    import fcntl
except ImportError:  # not on Windows: there, concurrent first builds are not serialised
    fcntl = None  # type: ignore[assignment]

from bot.catalog import asks as asks_mod
from bot.catalog import imports as kept
from bot.catalog import known as known_mod
from bot.catalog.importers import seeds as seed_importer
from bot.catalog.importers import wh40kdc as wh40kdc_dataset
from bot.catalog.importers.formats import IMPORT_FORMATS, load_import
from bot.catalog.model import CatalogImportError
from bot.catalog.normalize import normalize
from bot.catalog.store import SCHEMA_VERSION, CatalogStore
from bot.config import DATA_ROOT

log = logging.getLogger("bot.catalog.service")  # build messages keep the logger they always had

BUILDER_VERSION = "14"  # bump when an importer's output changes, so existing catalogs rebuild


def fingerprint(data_root: Path = DATA_ROOT) -> str:
    """Hash of everything the base catalog is built from."""
    import wh40kdc

    h = hashlib.sha256()
    h.update(f"schema={SCHEMA_VERSION};builder={BUILDER_VERSION};wh40kdc={wh40kdc.__version__}".encode())
    files = sorted((data_root / "seeds").glob("*.txt")) + [data_root / "aliases.toml",
                                                             data_root / "wh40kdc_overrides.json",
                                                             data_root / "unit_overrides.json",
                                                             data_root / asks_mod.FILE]
    for path in files:
        if path.exists():
            h.update(path.name.encode())
            h.update(path.read_bytes())
    return h.hexdigest()


def build_base(store: CatalogStore, data_root: Path = DATA_ROOT) -> dict[str, int]:
    """(Re)build the datasets that ship with the bot: the seed pages and wh40kdc (with overrides)."""
    from bot.catalog.importers import wh40kdc as wh40kdc_importer

    started = time.perf_counter()
    entries, page_aliases, _paths = seed_importer.load_seed_dir(data_root / "seeds")
    aliases: dict[str, list[str]] = {}
    for alias, target in page_aliases.items():
        # an errata alias ("Tank Shock" is now "Crushing Impact") points at the entries of that name
        for e in entries:
            if normalize(e.name) == normalize(target):
                aliases.setdefault(e.id, []).append(alias)
    wh_entries, wh_source = wh40kdc_importer.load(data_root / "wh40kdc_overrides.json")
    # players' asks, indexed with the passages that replace_datasets builds (bot/catalog/asks.py)
    store.set_meta(asks_mod.META_KEY, json.dumps(players_asks(data_root), ensure_ascii=False))
    store.replace_datasets({
        seed_importer.DATASET: ("Seed pages", str(data_root / "seeds"), entries),
        wh40kdc_importer.DATASET: (wh_source, None, wh_entries),
    }, aliases)
    try:
        store.set_meta("known_names", known_mod.dumps(known_mod.from_wh40kdc()))
    except Exception:  # honest misses then rely on the alias table alone; the catalog itself is fine
        log.warning("could not read wh40kdc's known names", exc_info=True)
    log.info("catalog base built: %d seed + %d wh40kdc entries in %.2fs", len(entries), len(wh_entries),
             time.perf_counter() - started)
    return {"seeds": len(entries), "wh40kdc": len(wh_entries)}


def players_asks(data_root: Path) -> dict[str, dict[str, list[str]]]:
    """data/rules_asks.jsonl read, or none with one warning line when it is missing or invalid: the passages are
    then indexed without them and answers keep working."""
    try:
        return asks_mod.load(data_root / asks_mod.FILE)
    except asks_mod.AsksError as exc:
        log.warning("%s; questions are answered without the players' asks", exc)
        return {}


@contextlib.contextmanager
def build_lock(path: Path) -> Iterator[None]:
    """Serialise catalog creation, rebuilds and imports across processes (shards start together)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "a") as handle:
        if fcntl is not None:
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            if fcntl is not None:
                fcntl.flock(handle, fcntl.LOCK_UN)


BASE_DATASETS = (seed_importer.DATASET, wh40kdc_dataset.DATASET)


def kept_ids(entries: list[dict]) -> str:
    return json.dumps([e["id"] for e in entries])


def discard_damaged(path: Path) -> None:
    """Move a damaged catalog aside (one copy, `catalog.sqlite.corrupt`, for a post-mortem)."""
    for suffix in ("-wal", "-shm", "-journal"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(f"{path}{suffix}")
    with contextlib.suppress(FileNotFoundError):
        os.replace(path, path.with_name(path.name + ".corrupt"))


def open_checked(path: Path) -> tuple[CatalogStore | None, str | None]:
    """The store, or None and why it cannot be used (then the file has been moved aside)."""
    store = None
    try:
        store = CatalogStore(path)
        problem = store.check()
    except sqlite3.OperationalError as exc:
        if store is not None:
            store.close()
        if "malformed" not in str(exc) and "not a database" not in str(exc):
            raise  # locked, read-only, cannot open: a storage problem to report, not a damaged file to replace
        problem = str(exc)
    except sqlite3.DatabaseError as exc:
        problem = str(exc) or type(exc).__name__
    if problem is None:
        return store, None
    problem = " / ".join(line.strip() for line in problem.splitlines() if line.strip())
    if store is not None:
        store.close()
    discard_damaged(path)
    return None, problem


def adopt_legacy(store: CatalogStore, root: Path, entries: list[dict]) -> list[str]:
    """Keep the sources of datasets imported before imports were kept (when their files still exist);
    the rest stay in the catalog as they are (a rebuild replaces only what it rebuilds). Returns notes."""
    covered = {d for e in entries for d in e.get("datasets") or []}
    notes = []
    sources: dict[tuple[str, str], list[str]] = {}
    for ds in store.datasets():
        name = ds["name"]
        fmt = name.split(":", 1)[0]
        if name in BASE_DATASETS or name in covered or fmt not in IMPORT_FORMATS:
            continue
        sources.setdefault((fmt, ds.get("path") or ""), []).append(name)
    for (fmt, source), names in sources.items():
        if source and Path(source).exists():
            try:
                kept.keep_import(root, fmt, Path(source), names)
                notes.append(f"kept {source} ({', '.join(names)}), imported before imports were kept")
                continue
            except kept.KeptImportError as exc:
                notes.append(str(exc))
        notes.append(f"{', '.join(names)} was imported before imports were kept and its source "
                     f"{source or '(unknown)'} is gone: it stays until the catalog is lost; import it again to keep it")
    return notes


def rebuild_from_sources(store: CatalogStore, data_root: Path, root: Path,
                         entries: list[dict]) -> tuple[list[str], list[str]]:
    """Base datasets, then every kept import in order. Returns (replayed names, failures)."""
    build_base(store, data_root)
    replayed, failed = [], []
    for entry in entries:
        label = f"{entry['format']} {entry.get('name', entry['id'])}"
        try:
            store.replace_datasets(load_import(entry["format"], kept.kept_path(root, entry)))
            replayed.append(label)
        except (CatalogImportError, ValueError, OSError) as exc:
            failed.append(f"{label}: {exc}")
    return replayed, failed
