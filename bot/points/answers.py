"""What the bot says about points: one unit's cost in one line, and what changed between two MFM versions.

Plain text with the version named in every answer; the Discord commands and the CLI print it as it is.
"""

from __future__ import annotations

from dataclasses import dataclass

from rapidfuzz import fuzz, process

from bot.points.book import Book, name_key
from bot.points.mfm import FactionPoints, Tier, UnitPoints

MAX_SUGGESTIONS = 5


class NotFound(LookupError):
    """No unit of that name; the message suggests the nearest ones."""


def find_unit(book: Book, name: str, faction: str | None = None) -> tuple[FactionPoints, UnitPoints]:
    """The unit called `name` (case, accents and punctuation ignored; else the one nearest above 90)."""
    want = book.faction(faction) if faction else None
    hits = book.units.get(name_key(name)) or []
    if want is not None:
        hits = [h for h in hits if h[0].slug == want.slug] or hits
    if hits:
        return hits[0]
    names = {u.name: key for key, pairs in book.units.items() for _f, u in pairs[:1]}
    near = process.extract(name, list(names), scorer=fuzz.WRatio, limit=MAX_SUGGESTIONS, score_cutoff=60)
    if near and near[0][1] >= 90 and (len(near) == 1 or near[0][1] - near[1][1] >= 5):
        return book.units[names[near[0][0]]][0]
    hint = f" Did you mean: {', '.join(n for n, _s, _i in near)}?" if near else ""
    raise NotFound(f"No unit called {name[:60]!r} in {book.label}.{hint}")


def _tier_text(tier: Tier, models: int | None, unit: UnitPoints, copy: int) -> str:
    if models is not None:
        cost = unit.cost(models, copy)
        return f"{cost.points} pts" + (f" (priced as {cost.models})" if cost.models != models else "")
    return ", ".join(f"{c.desc or f'{c.models} model' + ('s' if c.models != 1 else '')} {c.points}"
                     + (" (add-on)" if c.addon else "") for c in tier.costs)


def unit_line(book: Book, name: str, models: int | None = None, faction: str | None = None) -> str:
    """`/points unit:` in one line: sizes and costs, dearer copies, wargear, and the version."""
    owner, unit = find_unit(book, name, faction)
    head = f"{unit.name} ({owner.name})" + (f" × {models} models" if models is not None else "")
    parts = [_tier_text(unit.tiers[0], models, unit, unit.tiers[0].low)]
    for tier in unit.tiers[1:]:
        parts.append(f"{tier.label or f'copy {tier.low}+'}: {_tier_text(tier, models, unit, tier.low)}")
    if unit.wargear:
        parts.append("wargear " + ", ".join(f"{item} +{points}" for item, points in unit.wargear))
    if unit.legends:
        parts.append("Legends")
    others = len(book.units.get(name_key(unit.name)) or []) - 1
    also = f" (also in {others} other faction file{'s' if others != 1 else ''})" if others > 0 else ""
    return f"{head}: {' · '.join(parts)} — {book.label}{also}"


@dataclass(frozen=True)
class Change:
    faction: str
    what: str  # "unit", "enhancement", "detachment"
    name: str
    before: str | None
    after: str | None

    def line(self) -> str:
        if self.before is None:
            return f"{self.faction}: {self.name} new ({self.after})"
        if self.after is None:
            return f"{self.faction}: {self.name} removed (was {self.before})"
        return f"{self.faction}: {self.name} {self.before} → {self.after}"


def _unit_costs(unit: UnitPoints) -> str:
    return "; ".join((f"{t.label}: " if len(unit.tiers) > 1 else "")
                     + ", ".join(f"{c.desc or c.models} {c.points}" for c in t.costs) for t in unit.tiers) + \
        ("".join(f"; {item} +{p}" for item, p in unit.wargear))


def _faction_entries(faction: FactionPoints) -> dict[tuple[str, str], str]:
    entries = {("unit", u.name): _unit_costs(u) for u in faction.units}
    for det in faction.detachments:
        entries[("detachment", det.name)] = f"{det.dp} DP" if det.dp is not None else "no DP"
        for enh in det.enhancements:
            entries[("enhancement", f"{enh.name} ({det.name})")] = f"{enh.points} pts"
    return entries


def changes(old: Book, new: Book, faction: str | None = None) -> list[Change]:
    """Every unit, detachment and enhancement whose points differ between `old` and `new` (by faction)."""
    want = name_key(faction) if faction else None
    found: list[Change] = []
    for slug in sorted(set(old.factions) | set(new.factions)):
        before_f, after_f = old.factions.get(slug), new.factions.get(slug)
        label = (after_f or before_f).name  # type: ignore[union-attr]
        if want and want not in (name_key(label), name_key(slug)):
            continue
        before = _faction_entries(before_f) if before_f else {}
        after = _faction_entries(after_f) if after_f else {}
        for key in sorted(set(before) | set(after), key=lambda k: (k[0] != "unit", k[1])):
            if before.get(key) != after.get(key):
                found.append(Change(label, key[0], key[1], before.get(key), after.get(key)))
    return found
