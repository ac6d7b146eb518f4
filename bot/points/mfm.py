"""The Munitorum Field Manual as BSData/wh40k-11e-mfm publishes it (`data/<faction>.yaml`, `data/meta.yaml`),
checked key by key into frozen objects.

Why strict: these numbers decide whether a list is legal, so a file the scraper changed shape under us is
refused with one line naming the file, the place and the reason (an unknown key, a cost out of range, a
range that is not an interval), and the points imported before stay in force. The shape is the one in the
repository's specs/data-model.md.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Any

from bot.points import yamlsafe

MAX_POINTS = 10_000  # the dearest MFM entry (a Warlord Titan) is 3,500
MAX_MODELS = 500
MAX_ENTRIES = 2_000  # units, detachments, enhancements, tiers, costs or names in one list
MAX_TEXT = 300
_RANGE = re.compile(r"\[(\d{1,3}),(\d{0,3})([\])])")
MAX_FACTIONS = 100  # meta.yaml lists 29; each is a file fetched and a name used in a path
SLUG = re.compile(r"[a-z0-9][a-z0-9-]{0,59}")  # a faction's file name in data/ ("leagues-of-votann")


class PointsDataError(ValueError):
    """A points file we refuse; `str()` is one line: file, place, reason."""

    def __init__(self, file: str, where: str, reason: str) -> None:
        self.file, self.where, self.reason = file, where, reason
        super().__init__(f"{file}: {where}: {reason}" if where else f"{file}: {reason}")


@dataclass(frozen=True)
class Cost:
    models: int
    points: int
    desc: str | None = None
    addon: bool = False


@dataclass(frozen=True)
class Tier:
    """Which copies of the unit this tier prices: `low`..`high` (None: no upper end), from `range`."""

    low: int
    high: int | None
    label: str
    costs: tuple[Cost, ...]

    def covers(self, copy: int) -> bool:
        return self.low <= copy and (self.high is None or copy <= self.high)


@dataclass(frozen=True)
class UnitPoints:
    name: str
    tiers: tuple[Tier, ...]
    role: str | None = None  # "leader" or "support"
    attach_to: tuple[str, ...] = ()
    wargear: tuple[tuple[str, int], ...] = ()
    legends: bool = False
    group: str | None = None

    def tier(self, copy: int = 1) -> Tier:
        return next((t for t in self.tiers if t.covers(copy)), self.tiers[-1])

    def cost(self, models: int | None = None, copy: int = 1) -> Cost:
        """The cost of the `copy`-th unit of this kind with `models` models: the smallest size that holds
        them (a size between two listed ones pays the larger, per the MFM's notes), else the largest."""
        sizes = [c for c in self.tier(copy).costs if not c.addon] or list(self.tier(copy).costs)
        if models is None:
            return sizes[0]
        fitting = [c for c in sizes if c.models >= models]
        return min(fitting, key=lambda c: c.models) if fitting else max(sizes, key=lambda c: c.models)

    @property
    def threshold(self) -> int | None:
        """The copy from which the price changes (3 for "Your 3rd+ units cost"), None when it never does."""
        return self.tiers[1].low if len(self.tiers) > 1 else None


@dataclass(frozen=True)
class Enhancement:
    name: str
    points: int
    leader_to: tuple[str, ...] = ()
    support_to: tuple[str, ...] = ()


@dataclass(frozen=True)
class Detachment:
    name: str
    dp: int | None
    objective: str | None
    unique: str | None
    enhancements: tuple[Enhancement, ...]


@dataclass(frozen=True)
class FactionPoints:
    name: str
    slug: str
    version: str
    first_seen: str
    parent: str | None
    detachments: tuple[Detachment, ...]
    units: tuple[UnitPoints, ...]


@dataclass(frozen=True)
class Meta:
    version: str
    last_updated: str
    factions: tuple[str, ...]
    title: str | None = None  # another source's own name (10e: "Wahapedia export 2025-11-14 (10th edition)")

    @property
    def label(self) -> str:
        return self.title or f"MFM v{self.version}, {self.last_updated}"


class _Reader:
    """Walks one document, naming the place of every refusal (`units[3].pricing[0].range`)."""

    def __init__(self, file: str) -> None:
        self.file = file

    def fail(self, where: str, reason: str) -> PointsDataError:
        return PointsDataError(self.file, where, reason)

    def mapping(self, value: Any, where: str, required: tuple[str, ...], optional: tuple[str, ...] = ()) -> dict:
        if not isinstance(value, dict):
            raise self.fail(where, f"expected a mapping, got {type(value).__name__}")
        unknown = [str(k)[:40] for k in value if k not in required and k not in optional]
        if unknown:
            raise self.fail(where, f"unknown key {unknown[0]!r} (known: {', '.join(required + optional)})")
        missing = [k for k in required if k not in value]
        if missing:
            raise self.fail(where, f"missing key {missing[0]!r}")
        return value

    def items(self, value: Any, where: str, *, allow_empty: bool = True) -> list:
        if value is None and allow_empty:
            return []
        if not isinstance(value, list):
            raise self.fail(where, f"expected a list, got {type(value).__name__}")
        if len(value) > MAX_ENTRIES:
            raise self.fail(where, f"{len(value):,} entries; the limit is {MAX_ENTRIES:,}")
        if not value and not allow_empty:
            raise self.fail(where, "empty")
        return value

    def text(self, value: Any, where: str, *, optional: bool = False) -> str | None:
        if value is None and optional:
            return None
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            value = str(value)  # an unquoted version (1.1) or a numeric name
        if isinstance(value, dt.date):
            value = value.isoformat()
        if not isinstance(value, str) or not value.strip():
            raise self.fail(where, "expected a non-empty text")
        if len(value) > MAX_TEXT:
            raise self.fail(where, f"text of {len(value):,} characters; the limit is {MAX_TEXT}")
        return value.strip()

    def whole(self, value: Any, where: str, low: int, high: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(where, f"expected a whole number, got {str(value)[:40]!r}")
        if not low <= value <= high:
            raise self.fail(where, f"{value:,} is outside {low:,}..{high:,}")
        return value

    def names(self, value: Any, where: str) -> tuple[str, ...]:
        return tuple(self.text(v, f"{where}[{i}]") or "" for i, v in enumerate(self.items(value, where)))


def parse_faction(text: str, file: str) -> FactionPoints:
    """One `data/<slug>.yaml` checked into a FactionPoints (PointsDataError when refused)."""
    try:
        doc = yamlsafe.load(text)
    except yamlsafe.YamlRefused as exc:
        raise PointsDataError(file, "", str(exc)) from None
    return faction_from_doc(doc, file)


def faction_from_doc(doc: Any, file: str) -> FactionPoints:
    r = _Reader(file)
    top = r.mapping(doc, "top level", ("name", "slug", "version", "units"),
                    ("firstSeen", "parent", "detachments"))
    slug = r.text(top["slug"], "slug") or ""
    stem = file.rsplit("/", 1)[-1].removesuffix(".yaml").removesuffix(".json")
    if file.endswith(".yaml") and slug != stem:
        raise r.fail("slug", f"{slug[:40]!r} is not the file's name {stem!r}")
    detachments = tuple(_detachment(r, d, f"detachments[{i}]")
                        for i, d in enumerate(r.items(top.get("detachments"), "detachments")))
    units = tuple(_unit(r, u, f"units[{i}]") for i, u in enumerate(r.items(top["units"], "units", allow_empty=False)))
    return FactionPoints(name=r.text(top["name"], "name") or "", slug=slug, version=r.text(top["version"], "version") or "",
                         first_seen=r.text(top.get("firstSeen"), "firstSeen", optional=True) or "",
                         parent=r.text(top.get("parent"), "parent", optional=True), detachments=detachments,
                         units=units)


def _detachment(r: _Reader, raw: Any, where: str) -> Detachment:
    d = r.mapping(raw, where, ("name",), ("dp", "objective", "unique", "enhancements"))
    enhancements = []
    for i, e in enumerate(r.items(d.get("enhancements"), f"{where}.enhancements")):
        at = f"{where}.enhancements[{i}]"
        e = r.mapping(e, at, ("name", "points"), ("leaderTo", "supportTo"))
        enhancements.append(Enhancement(r.text(e["name"], f"{at}.name") or "",
                                        r.whole(e["points"], f"{at}.points", 0, MAX_POINTS),
                                        r.names(e.get("leaderTo"), f"{at}.leaderTo"),
                                        r.names(e.get("supportTo"), f"{at}.supportTo")))
    dp = None if d.get("dp") is None else r.whole(d["dp"], f"{where}.dp", 0, 100)
    return Detachment(r.text(d["name"], f"{where}.name") or "", dp,
                      r.text(d.get("objective"), f"{where}.objective", optional=True),
                      r.text(d.get("unique"), f"{where}.unique", optional=True), tuple(enhancements))


def parse_range(r: _Reader, value: Any, where: str) -> tuple[int, int | None]:
    """`[a,b]` or `[a,)`: the copies a tier prices."""
    match = _RANGE.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        raise r.fail(where, f"{str(value)[:40]!r} is not an interval like [1,) or [1,2]")
    low = int(match[1])
    high = int(match[2]) if match[2] else None
    if (high is None) != (match[3] == ")") or low < 1 or (high is not None and high < low):
        raise r.fail(where, f"{value!r} is not an interval like [1,) or [1,2]")
    return low, high


def _unit(r: _Reader, raw: Any, where: str) -> UnitPoints:
    u = r.mapping(raw, where, ("name", "pricing"), ("role", "attachTo", "wargear", "legends", "groupTitle"))
    tiers = []
    for i, t in enumerate(r.items(u["pricing"], f"{where}.pricing", allow_empty=False)):
        at = f"{where}.pricing[{i}]"
        t = r.mapping(t, at, ("range", "costs"), ("label",))
        low, high = parse_range(r, t["range"], f"{at}.range")
        costs = []
        for j, c in enumerate(r.items(t["costs"], f"{at}.costs", allow_empty=False)):
            ct = f"{at}.costs[{j}]"
            c = r.mapping(c, ct, ("models", "points"), ("desc", "addon"))
            costs.append(Cost(r.whole(c["models"], f"{ct}.models", 0, MAX_MODELS),
                              r.whole(c["points"], f"{ct}.points", 0, MAX_POINTS),
                              r.text(c.get("desc"), f"{ct}.desc", optional=True), c.get("addon") is True))
        tiers.append(Tier(low, high, r.text(t.get("label"), f"{at}.label", optional=True) or "", tuple(costs)))
    role = r.text(u.get("role"), f"{where}.role", optional=True)
    if role not in (None, "leader", "support"):
        raise r.fail(f"{where}.role", f"{role[:40]!r} is neither leader nor support")
    wargear = []
    for i, w in enumerate(r.items(u.get("wargear"), f"{where}.wargear")):
        w = r.mapping(w, f"{where}.wargear[{i}]", ("item", "points"))
        wargear.append((r.text(w["item"], f"{where}.wargear[{i}].item") or "",
                        r.whole(w["points"], f"{where}.wargear[{i}].points", 0, MAX_POINTS)))
    return UnitPoints(r.text(u["name"], f"{where}.name") or "", tuple(tiers), role,
                      r.names(u.get("attachTo"), f"{where}.attachTo"), tuple(wargear), u.get("legends") is True,
                      r.text(u.get("groupTitle"), f"{where}.groupTitle", optional=True))


def parse_meta(text: str, file: str = "meta.yaml") -> Meta:
    try:
        doc = yamlsafe.load(text)
    except yamlsafe.YamlRefused as exc:
        raise PointsDataError(file, "", str(exc)) from None
    r = _Reader(file)
    top = r.mapping(doc, "top level", ("version", "lastUpdated", "factions"), ("notes",))
    factions = r.names(r.items(top["factions"], "factions", allow_empty=False), "factions")
    if len(factions) > MAX_FACTIONS:
        raise r.fail("factions", f"{len(factions):,} factions; the limit is {MAX_FACTIONS}")
    for i, slug in enumerate(factions):
        if not SLUG.fullmatch(slug):
            raise r.fail(f"factions[{i}]", f"{slug[:40]!r} is not a file name like 'orks' (a-z, 0-9, -)")
    return Meta(r.text(top["version"], "version") or "", r.text(top["lastUpdated"], "lastUpdated") or "", factions)
