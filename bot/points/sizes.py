"""Battle sizes (points, enhancements, Detachment Points, copies of a unit) read from game-datacards' Chapter
Approved file, which `data update --source gdc` keeps in `downloads/gdc/missions/`.

Why from the file: the limits change with each Chapter Approved, so the bot states the file's figures and
its date, never numbers written into the code.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.points.book import name_key

FILE = Path("downloads") / "gdc" / "missions" / "chapter_approved_2026_2027.json"
DEFAULT_11E = "Strike Force"
MAX_LIMIT = 100_000


class SizesError(ValueError):
    """The Chapter Approved file is missing or not what we read; one line."""


@dataclass(frozen=True)
class BattleSize:
    name: str
    points: int
    enhancements: int
    detachment_points: int
    copies: int


@dataclass(frozen=True)
class Sizes:
    source: str  # "Chapter Approved 2026-2027 (game-datacards, 2026-07-23)"
    sizes: tuple[BattleSize, ...]

    def get(self, name: str | None) -> BattleSize | None:
        key = name_key(name or DEFAULT_11E)
        return next((s for s in self.sizes if name_key(s.name) == key), None)

    @property
    def names(self) -> list[str]:
        return [s.name for s in self.sizes]


def parse(doc: Any) -> Sizes:
    """The battle sizes of a Chapter Approved document (SizesError when it has none we can read)."""
    if not isinstance(doc, dict) or not isinstance(doc.get("battleSizes"), list) or not doc["battleSizes"]:
        raise SizesError("no battleSizes list")
    sizes = []
    for i, raw in enumerate(doc["battleSizes"][:20]):
        if not isinstance(raw, dict):
            raise SizesError(f"battleSizes[{i}] is not an object")
        name = raw.get("name")
        name = name.get("en") if isinstance(name, dict) else name
        numbers = [raw.get(k) for k in ("pointsLimit", "enhancementLimit", "detachmentPointsLimit",
                                        "duplicateUnitLimit")]
        if not isinstance(name, str) or not name.strip() or len(name) > 60:
            raise SizesError(f"battleSizes[{i}] has no English name")
        if not all(isinstance(n, int) and not isinstance(n, bool) and 0 <= n <= MAX_LIMIT for n in numbers):
            raise SizesError(f"battleSizes[{i}] ({name[:40]}): a limit is not a whole number in 0..{MAX_LIMIT:,}")
        sizes.append(BattleSize(name.strip(), *numbers))
    title = doc.get("name")
    title = title.get("en") if isinstance(title, dict) else title
    title = title if isinstance(title, str) and title.strip() else "Chapter Approved"
    updated = str(doc.get("updated") or "")[:10]
    return Sizes(f"{title[:60]} (game-datacards{', ' + updated if updated else ''})", tuple(sizes))


def resolve(data_dir: Path, name: str) -> str:
    """The Chapter Approved spelling of a battle size a user typed (SizesError listing the known ones)."""
    known = load(data_dir)
    size = known.get(name)
    if size is None:
        raise SizesError(f"No battle size called {name[:40]!r} in {known.source}: {', '.join(known.names)}")
    return size.name


def load(data_dir: Path) -> Sizes:
    """The battle sizes in force (SizesError naming the command that fetches them)."""
    path = Path(data_dir) / FILE
    try:
        stamp = path.stat().st_mtime_ns
    except OSError:
        raise SizesError("no battle sizes yet: run `python -m bot data update --source gdc` "
                         "(it fetches the Chapter Approved file)") from None
    return _load(str(path), stamp)


@functools.lru_cache(maxsize=4)
def _load(path: str, stamp: int) -> Sizes:
    try:
        return parse(json.loads(Path(path).read_text(encoding="utf-8-sig")))
    except (OSError, ValueError) as exc:
        raise SizesError(f"the Chapter Approved file cannot be read: {str(exc)[:120]}") from None
