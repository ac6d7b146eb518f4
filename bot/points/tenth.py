"""10th-edition points as a Book: the catalog's 10e datasheets, detachments and enhancements (the Wahapedia
export's `Datasheets_models_cost.csv` and `Enhancements.csv`), so `/army check` costs a 10e list the same way
as an 11e one by the MFM, naming the export and its date.

Why a Book and not a second checker: the costing, the stated-vs-computed difference and the enhancement rules
are the same code for both editions; only the source of the figures differs. The export carries no battle-size
table, so a 10e Book is checked without one (bot/armies/check.py says which checks that leaves out).
"""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

from bot.points.book import Book, name_key
from bot.points.mfm import (
    MAX_MODELS,
    MAX_POINTS,
    Cost,
    Detachment,
    Enhancement,
    FactionPoints,
    Meta,
    Tier,
    UnitPoints,
)

EDITION = "10e"
KINDS = ("datasheet", "detachment", "enhancement")


def faction_key(faction: str | None) -> str:
    return name_key(faction or "")
CACHED = 8  # Books kept (one per faction asked, per loaded catalog index)

_cache: dict[tuple[int, str], tuple[Any, Book | None]] = {}
_lock = threading.Lock()


def book_for(catalog: Any, faction: str | None) -> Book | None:
    """The 10e points of `faction` (every faction when it is unknown to the catalog) as a Book, or None when
    the catalog has no 10e datasheet with points (the Wahapedia export is not loaded). `catalog` is the
    bot.catalog Catalog, used through `index.records` and `get` only (points data sits below the catalog)."""
    index = catalog.index
    key = (id(index), faction_key(faction))
    with _lock:
        hit = _cache.get(key)
    if hit is not None and hit[0] is index:
        return hit[1]
    built = _build(catalog, index, faction)
    with _lock:
        _cache[key] = (index, built)  # the index is kept with it, so its id cannot be reused while cached
        while len(_cache) > CACHED:
            _cache.pop(next(iter(_cache)))
    return built


def _build(catalog: Any, index: Any, faction: str | None) -> Book | None:
    records = [r for r in index.records if r.edition == EDITION and r.kind in KINDS]
    want = faction_key(faction)
    own = [r for r in records if faction_key(r.faction) == want] if want else []
    if any(r.kind == "datasheet" for r in own):
        records = own
    # Wahapedia first: where a seed page and the export both have a datasheet, the export's figures count
    records.sort(key=lambda r: (r.dataset != "wahapedia", r.rowid))
    units: dict[str, dict[str, UnitPoints]] = {}
    sources: Counter[str] = Counter()
    detachments: dict[str, dict[str, list[Enhancement]]] = {}
    for rec in records:
        entry = catalog.get(rec.id)
        if entry is None:
            continue
        group = rec.faction or "Unaligned"
        if rec.kind == "datasheet":
            unit = _unit(entry.name, entry.data.get("points"))
            if unit is not None:
                units.setdefault(group, {}).setdefault(name_key(unit.name), unit)
                sources[entry.source] += 1
        elif rec.kind == "detachment":
            detachments.setdefault(group, {}).setdefault(entry.name, [])
        else:
            cost = entry.data.get("cost")
            det = entry.data.get("detachment")
            if isinstance(cost, int) and 0 <= cost <= MAX_POINTS and isinstance(det, str) and det:
                detachments.setdefault(group, {}).setdefault(det, []).append(Enhancement(entry.name, cost))
    if not units:
        return None
    source = sources.most_common(1)[0][0]
    factions = {}
    for group in sorted(set(units) | set(detachments)):
        dets = tuple(Detachment(name, None, None, None, tuple(enh))
                     for name, enh in sorted(detachments.get(group, {}).items()))
        factions[faction_key(group) or group] = FactionPoints(group, faction_key(group) or group, "", "", None, dets,
                                                              tuple((units.get(group) or {}).values()))
    date = source.rsplit(" ", 1)[-1] if source.startswith("Wahapedia export") else ""
    return Book(Meta(EDITION, date, tuple(factions), title=f"{source} (10th edition)"), factions)


def _unit(name: str, points: Any) -> UnitPoints | None:
    """One tier of costs by model count, as the export prints them (no requisition thresholds in 10e)."""
    costs = sorted({(p["models"], p["points"]) for p in points or [] if isinstance(p, dict)
                    and isinstance(p.get("models"), int) and 0 < p["models"] <= MAX_MODELS
                    and isinstance(p.get("points"), int) and 0 <= p["points"] <= MAX_POINTS})
    if not costs:
        return None
    return UnitPoints(name, (Tier(1, None, "", tuple(Cost(m, p) for m, p in costs)),))
