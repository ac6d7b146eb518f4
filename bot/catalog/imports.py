"""Kept imports: a copy of every imported source file, so `catalog.sqlite` is only ever a cache.

The catalog file can always be rebuilt from the seeds, wh40kdc and the files kept here; the service
(`bot/catalog/service.py`) replays them, oldest first, whenever it rebuilds (missing, empty, corrupt or
outdated catalog, or `catalog build --force`).

Layout under `COGITATOR_DATA/imports/`:

    manifest.json        {"version": 1, "imports": [entry, ...]}   oldest first
    <id>/<file>...       the copied file, or the copied files of an imported folder

A manifest entry (a plain JSON-able dict):

    {"id": "gdc-1a2b3c4d5e6f-20260101T120000", "format": "gdc", "name": "orks.json",
     "kind": "file" | "folder", "files": ["orks.json"], "bytes": 539447,
     "sha256": "<hex>",        # of the file's bytes; for a folder, of "name\\0" + bytes of each file in order
     "imported_at": "2026-01-01T12:00:00+00:00", "source": "/where/it/was/imported/from",
     "datasets": ["gdc:orks"]}

API (kept small on purpose; other import kinds build on it):

    keep_import(root, fmt, path, datasets) -> entry   copy `path` under `root`, record it (last), return the entry
    prune_superseded(root, entry) -> [dropped]         once `entry` is in the catalog: drop earlier entries whose
                                                      datasets it all replaces (a re-import of the same file)
    kept_imports(root) -> [entry, ...]                 the manifest, oldest first ([] when nothing is kept)
    kept_path(root, entry) -> Path                     the file or folder to hand to the importer on replay
    forget_import(root, import_id) -> bool             drop one entry and its files

`root` is the `imports/` folder (`imports_dir(settings.data_dir)`). Callers serialise writers (the service
holds the catalog build lock); the manifest is replaced atomically, so readers never see half of it.
Which files of a folder are kept is decided by the format's pattern in `FOLDER_PATTERNS` (other files of
the folder are not read by the importer either).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
import threading
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

log = logging.getLogger("cogitator.catalog")

MANIFEST = "manifest.json"
FOLDER_PATTERNS = {"wahapedia": "*.csv", "gdc": "*.json"}
MANIFEST_VERSION = 1


class KeptImportError(Exception):
    """The imports folder cannot be read or written (permissions, full disk, a damaged manifest)."""


def imports_dir(data_dir: Path) -> Path:
    return Path(data_dir) / "imports"


def kept_imports(root: Path) -> list[dict]:
    """The manifest, oldest first. A damaged one (not JSON, not a manifest) is set aside and rebuilt from
    the kept folders with a warning, so lookups never fail on it; only an unreadable folder raises."""
    path = Path(root) / MANIFEST
    if not path.exists():
        return []
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise KeptImportError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        return _rebuild_manifest(Path(root), f"not UTF-8 ({exc.reason})")
    try:
        doc = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        return _rebuild_manifest(Path(root), f"not JSON ({str(exc)[:80]})")
    imports = doc.get("imports") if isinstance(doc, dict) else None
    if not isinstance(imports, list) or not all(isinstance(e, dict) and isinstance(e.get("id"), str)
                                                and isinstance(e.get("format"), str) for e in imports):
        return _rebuild_manifest(Path(root), "not a kept-imports manifest")
    return imports


def _rebuild_manifest(root: Path, problem: str) -> list[dict]:
    """Set the damaged manifest aside (`manifest.json.damaged-<time>`) and write one listing every kept
    import folder, oldest first by the time in its id. What the folders cannot tell (the imported name and
    source, the datasets) is left blank: replay needs only the format and the files."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f")
    aside = root / f"{MANIFEST}.damaged-{stamp}"
    entries = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        fmt, _, rest = folder.name.partition("-")
        files = sorted(p for p in folder.iterdir() if p.is_file())
        if fmt not in FOLDER_PATTERNS or not rest or not files:
            continue
        digest = hashlib.sha256()
        for file in files:
            digest.update(file.name.encode() + b"\0" + file.read_bytes())
        # Replayed as a folder: every importer reads a folder of its files (a kept file's folder holds just it).
        entries.append({"id": folder.name, "format": fmt, "name": folder.name, "kind": "folder",
                        "files": [f.name for f in files], "bytes": sum(f.stat().st_size for f in files),
                        "sha256": digest.hexdigest(), "imported_at": "", "source": "", "datasets": []})
    entries.sort(key=lambda e: e["id"].rsplit("-", 1)[-1])
    try:
        os.replace(root / MANIFEST, aside)
        _write_manifest(root, entries)
        where = f"set aside as {aside.name}"
    except OSError as exc:  # a read-only or full disk: answer from the rebuilt list all the same
        where = f"could not be replaced ({exc.strerror or exc})"
    log.warning("kept-imports manifest %s was damaged (%s): %s and rebuilt from the %d kept import folder(s)",
                root / MANIFEST, problem, where, len(entries))
    return entries


def kept_path(root: Path, entry: dict) -> Path:
    folder = Path(root) / entry["id"]
    return folder if entry.get("kind") == "folder" else folder / entry["files"][0]


def keep_import(root: Path, fmt: str, path: Path, datasets: Iterable[str]) -> dict:
    """Copy `path` (a file, or a folder's files matching the format's pattern) and record it."""
    root, path = Path(root), Path(path)
    datasets = sorted(set(datasets))
    if path.is_dir():
        files = sorted(p for p in path.glob(FOLDER_PATTERNS.get(fmt, "*")) if p.is_file())
        kind = "folder"
    else:
        files, kind = [path], "file"
    now = datetime.now(UTC)
    try:
        root.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=root))
        try:
            digest, size = hashlib.sha256(), 0
            for src in files:
                dst = staging / src.name
                shutil.copyfile(src, dst)
                data_hash = _file_hash(dst) if kind == "file" else None
                if kind == "folder":
                    digest.update(src.name.encode() + b"\0")
                    with open(dst, "rb") as handle:
                        for block in iter(lambda: handle.read(1 << 20), b""):
                            digest.update(block)
                size += dst.stat().st_size
            sha = data_hash if kind == "file" else digest.hexdigest()
            entry = {"id": f"{fmt}-{sha[:12]}-{now.strftime('%Y%m%dT%H%M%S%f')}", "format": fmt,
                     "name": path.name, "kind": kind, "files": [p.name for p in files], "bytes": size,
                     "sha256": sha, "imported_at": now.isoformat(timespec="seconds"),
                     "source": str(path.resolve()), "datasets": datasets}
            os.replace(staging, root / entry["id"])
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        _write_manifest(root, [*kept_imports(root), entry])
    except OSError as exc:
        raise KeptImportError(f"cannot keep a copy of {path} under {root}: {exc.strerror or exc}") from exc
    return entry


def prune_superseded(root: Path, entry: dict) -> list[dict]:
    """Drop the earlier entries whose datasets `entry` all replaces (call once `entry` is in the catalog)."""
    root = Path(root)
    covered = set(entry.get("datasets") or [])
    kept, dropped = [], []
    for old in kept_imports(root):
        superseded = old["id"] != entry["id"] and old.get("datasets") and set(old["datasets"]) <= covered
        (dropped if superseded else kept).append(old)
    if dropped:
        _write_manifest(root, kept)
        for old in dropped:
            shutil.rmtree(root / old["id"], ignore_errors=True)
    return dropped


def forget_import(root: Path, import_id: str) -> bool:
    root = Path(root)
    entries = kept_imports(root)
    remaining = [e for e in entries if e["id"] != import_id]
    if len(remaining) == len(entries):
        return False
    _write_manifest(root, remaining)
    shutil.rmtree(root / import_id, ignore_errors=True)
    return True


def _file_hash(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _write_manifest(root: Path, entries: list[dict]) -> None:
    tmp = root / f".{MANIFEST}.{os.getpid()}-{threading.get_ident()}.tmp"  # one per writer: readers may rebuild
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump({"version": MANIFEST_VERSION, "imports": entries}, handle, ensure_ascii=False, indent=1)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, root / MANIFEST)
