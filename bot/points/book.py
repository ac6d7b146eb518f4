"""The imported MFM versions, kept in `COGITATOR_DATA/points/`, and the current one as a Book to look up.

Why kept per version: points news compares what changed between versions, and a refused update must leave
the points in force untouched. Each import writes `mfm-<version>-<date>.json` (the checked documents of
every faction) under a temporary name and renames it into place, then does the same for `versions.json`,
the ordered list of imported versions whose last entry is in force.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import unicodedata
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bot.points import yamlsafe
from bot.points.mfm import (
    Detachment,
    Enhancement,
    FactionPoints,
    Meta,
    PointsDataError,
    UnitPoints,
    faction_from_doc,
    parse_meta,
)

VERSIONS = "versions.json"


def folder(data_dir: Path) -> Path:
    return Path(data_dir) / "points"


def name_key(name: str) -> str:
    """How names are compared: case, accents, apostrophes and punctuation do not count."""
    text = unicodedata.normalize("NFKD", name.replace("’", "'")).encode("ascii", "ignore").decode().lower()
    return re.sub(r"[^a-z0-9]+", " ", text).strip()


_TAGS = re.compile(r"\((?:aura|psychic|upgrade)\)", re.IGNORECASE)


def loose_key(name: str) -> str:
    """`name_key` without the "(Aura)", "(Psychic)", "(Upgrade)" tags that list builders and the MFM add or
    leave out of enhancement names."""
    return name_key(_TAGS.sub(" ", name))


@dataclass
class Book:
    """One MFM version: every faction's points, and indexes by name."""

    meta: Meta
    factions: dict[str, FactionPoints]
    units: dict[str, list[tuple[FactionPoints, UnitPoints]]] = field(default_factory=dict)
    enhancements: dict[str, list[tuple[FactionPoints, Detachment, Enhancement]]] = field(default_factory=dict)
    detachments: dict[str, list[tuple[FactionPoints, Detachment]]] = field(default_factory=dict)
    loose_enhancements: dict[str, list[tuple[FactionPoints, Detachment, Enhancement]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for faction in self.factions.values():
            for unit in faction.units:
                self.units.setdefault(name_key(unit.name), []).append((faction, unit))
            for det in faction.detachments:
                self.detachments.setdefault(name_key(det.name), []).append((faction, det))
                for enh in det.enhancements:
                    self.enhancements.setdefault(name_key(enh.name), []).append((faction, det, enh))
                    self.loose_enhancements.setdefault(loose_key(enh.name), []).append((faction, det, enh))

    def enhancement_hits(self, name: str) -> list[tuple[FactionPoints, Detachment, Enhancement]]:
        """Every enhancement called `name`, tags such as "(Aura)" aside when nothing has the exact name."""
        return self.enhancements.get(name_key(name)) or self.loose_enhancements.get(loose_key(name)) or []

    @property
    def label(self) -> str:
        """How every points figure names its source: "MFM v1.1, 2026-07-22"."""
        return self.meta.label

    def faction(self, name: str) -> FactionPoints | None:
        key = name_key(name)
        return next((f for f in self.factions.values() if key in (name_key(f.name), name_key(f.slug))), None)

    def unit(self, name: str, faction: FactionPoints | None = None) -> UnitPoints | None:
        """The unit called `name`, preferring `faction`'s own entry, then its parent's, then any faction's."""
        found = self.units.get(name_key(name)) or []
        if faction is not None:
            for wanted in (faction.slug, name_key(faction.parent or "")):
                for owner, unit in found:
                    if wanted in (owner.slug, name_key(owner.name)):
                        return unit
        return found[0][1] if found else None


def _plain(value: Any) -> Any:
    """YAML's dates as ISO text, so a document can be kept as JSON."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value


def read_folder(source: Path) -> tuple[Meta, dict[str, Any]]:
    """The checked meta and faction documents of a downloaded MFM folder (PointsDataError when refused)."""
    meta_path = source / "meta.yaml"
    if not meta_path.is_file():
        raise PointsDataError("meta.yaml", "", "missing: nothing to import")
    meta = parse_meta(meta_path.read_text(encoding="utf-8"))
    docs: dict[str, Any] = {}
    for slug in meta.factions:
        path = source / f"{slug}.yaml"
        if not path.is_file():
            raise PointsDataError(f"{slug}.yaml", "", "missing, though meta.yaml lists the faction")
        try:
            doc = yamlsafe.load(path.read_text(encoding="utf-8"))
        except yamlsafe.YamlRefused as exc:
            raise PointsDataError(path.name, "", str(exc)) from None
        faction_from_doc(doc, path.name)
        docs[slug] = _plain(doc)
    return meta, docs


def _write_atomic(path: Path, text: str) -> None:
    part = path.with_name(f".{path.name}.{os.getpid()}.part")
    with open(part, "w", encoding="utf-8") as out:
        out.write(text)
        out.flush()
        os.fsync(out.fileno())
    os.replace(part, path)


def versions(data_dir: Path) -> list[dict[str, Any]]:
    try:
        raw = json.loads((folder(data_dir) / VERSIONS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [v for v in raw if isinstance(v, dict) and isinstance(v.get("file"), str)] if isinstance(raw, list) else []


def import_folder(source: Path, data_dir: Path) -> tuple[Meta, bool]:
    """Keep the MFM in `source` as a version; return its meta and whether it differs from the one in force.
    Raises PointsDataError (nothing written) when any file is refused."""
    meta, docs = read_folder(source)
    body = json.dumps({"version": meta.version, "date": meta.last_updated, "factions": docs}, ensure_ascii=False,
                      sort_keys=True)
    digest = hashlib.sha256(body.encode()).hexdigest()
    known = versions(data_dir)
    if known and known[-1].get("sha256") == digest:
        return meta, False
    target = folder(data_dir)
    target.mkdir(parents=True, exist_ok=True)
    name = f"mfm-{re.sub(r'[^0-9A-Za-z.]+', '_', meta.version)}-{re.sub(r'[^0-9-]+', '_', meta.last_updated)}.json"
    _write_atomic(target / name, body)
    entry = {"version": meta.version, "date": meta.last_updated, "file": name, "sha256": digest,
             "imported_at": datetime.now(UTC).isoformat(timespec="seconds")}
    kept = [v for v in known if v["file"] != name] + [entry]
    _write_atomic(target / VERSIONS, json.dumps(kept, indent=1))
    return meta, True


def load_version(data_dir: Path, entry: dict[str, Any]) -> Book:
    """A kept version as a Book (PointsDataError when its file is damaged)."""
    path = folder(data_dir) / Path(entry["file"]).name
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise PointsDataError(path.name, "", f"cannot be read ({exc})") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("factions"), dict):
        raise PointsDataError(path.name, "", "not a kept MFM version")
    factions = {slug: faction_from_doc(doc, f"{slug}.json") for slug, doc in raw["factions"].items()}
    meta = Meta(str(raw.get("version")), str(raw.get("date")), tuple(factions))
    return Book(meta, factions)


def current(data_dir: Path) -> Book | None:
    """The MFM version in force, or None when none was imported; re-read only when versions.json changed."""
    path = folder(data_dir) / VERSIONS
    try:
        stamp = path.stat().st_mtime_ns
    except OSError:
        return None
    return _current(str(Path(data_dir).resolve()), stamp)


@functools.lru_cache(maxsize=4)
def _current(data_dir: str, stamp: int) -> Book | None:
    known = versions(Path(data_dir))
    return load_version(Path(data_dir), known[-1]) if known else None


def steps(data_dir: Path, since: str | None = None) -> list[tuple[Book, Book]]:
    """Consecutive pairs of kept versions, from `since` (a version like "1.0" or a date) to the one in force;
    without `since`, the last step only. PointsDataError names an unknown `since`."""
    known = versions(data_dir)
    if since is None:
        start = max(len(known) - 2, 0)
    else:
        matches = [i for i, v in enumerate(known) if since.lstrip("v") in (v.get("version"), v.get("date"))]
        if not matches:
            listed = ", ".join(f"v{v.get('version')} ({v.get('date')})" for v in known) or "none"
            raise PointsDataError("versions.json", "", f"no imported version {since[:20]!r}; imported: {listed}")
        start = matches[0]
    books = [load_version(data_dir, v) for v in known[start:]]
    return list(zip(books, books[1:], strict=False))
