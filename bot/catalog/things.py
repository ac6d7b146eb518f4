"""One entry per thing: which catalog entries are the same datasheet, stratagem, rule or ability.

The same thing arrives from several sources (seed pages, wh40kdc, Wahapedia, game-datacards) and one
source may list it several times (Wahapedia prints Oath of Moment under five factions and Armour of
Contempt under twenty detachments). Grouping happens at build time, after every import, inside the
import's transaction (`CatalogStore._group_things`): each entry gets a *thing* key, the id of the
thing's primary entry. Search collapses a thing to one hit and `Catalog.get` shows all its sources.

Within one edition, kind and name (plural 's' and spacing folded), two entries are one thing when
  1. they share an external id (wh40kdc `external_refs` -> game-datacards / BSData ids), or
  2. they come from different datasets and name the same faction (aliases folded: Space Marines =
     Adeptus Astartes) and the same detachment (or one of them names none), or
  3. their rules content is identical (same stats and weapons; same cost, type, timing and effect;
     same rules text) - flavour text, faction and detachment aside.
The primary is the most recent complete source (complete text before metadata-only, then the
newest `source_date`, then the dataset priority); answers and /sim use it and show disagreements.
"""

from __future__ import annotations

import functools
import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from bot.catalog.normalize import normalize

# Faction names that differ between sources for the same army (normalised forms).
FACTION_ALIASES = {
    "space marines": "adeptus astartes",
    "imperial agents": "agents of the imperium",
    "asuryani": "aeldari",
    "craftworlds": "aeldari",
    "votann": "leagues of votann",
    "tau": "tau empire",
    "necron": "necrons",
    "ork": "orks",
    "chaos daemon": "chaos daemons",
    "daemons": "chaos daemons",
    "adeptus mechanicus": "adeptus mechanicus",
    "admech": "adeptus mechanicus",
    "sisters of battle": "adepta sororitas",
}
STAT_KEYS = ("M", "T", "Sv", "InSv", "W", "Ld", "OC")
WEAPON_KEYS = ("range", "A", "skill", "S", "AP", "D")


@functools.lru_cache(maxsize=512)
def faction_key(faction: str | None) -> str:
    """"Space Marines" and "Adeptus Astartes" fold to one key; None (core) is the empty key. Cached: the data
    names a few dozen factions, and ranking asks for them per candidate."""
    norm = normalize(faction or "")
    return FACTION_ALIASES.get(norm, norm)


def name_key(norm_name: str) -> str:
    """Plural 's' and spacing folded: "Wound Rolls" = "wound roll", "Counter-offensive" = "counteroffensive"."""
    return "".join(w[:-1] if w.endswith("s") and len(w) > 3 else w for w in norm_name.split())


def dataset_priority(dataset: str) -> float:
    """Seeds (the specification), then complete curated text (gdc), Wahapedia, wh40kdc metadata."""
    if dataset == "seeds":
        return 0.7
    if dataset.startswith("gdc"):
        return 0.6
    if dataset.startswith("wahapedia"):
        return 0.3
    return 0.1


@dataclass
class Member:
    id: str
    dataset: str
    kind: str
    edition: str
    norm_name: str
    faction: str | None
    data: dict = field(default_factory=dict)
    text: str = ""

    @property
    def detachment(self) -> str:
        return normalize(str(self.data.get("detachment") or ""))

    @property
    def complete(self) -> bool:
        return not self.data.get("metadata_only") and not self.data.get("incomplete")

    @property
    def date(self) -> str:
        return str(self.data.get("source_date") or "")

    def refs(self) -> set[str]:
        """External ids as "namespace:id" (wh40kdc external_refs; a gdc file's own ids)."""
        out = {f"{k}:{v}" for k, v in (self.data.get("external_refs") or {}).items() if v}
        if self.data.get("gdc_id"):
            out.add(f"game-datacards:{self.data['gdc_id']}")
        return out


def primary_key(m: Member) -> tuple:
    """Sort key, highest first: complete text, most recent source, dataset priority, then a stable id."""
    return (m.complete, m.date, dataset_priority(m.dataset), m.id)


def signature(m: Member) -> str:
    """What the rules say, without flavour, faction or detachment; '' when there is nothing to compare."""
    d = m.data
    if m.kind == "datasheet":
        profiles = sorted(tuple(str(p.get(k)) for k in STAT_KEYS) for p in d.get("profiles") or [])
        weapons = sorted((normalize(str(w.get("name", ""))), *(str(w.get(k)) for k in WEAPON_KEYS),
                          ",".join(sorted(str(x) for x in w.get("keywords") or [])))
                         for w in d.get("weapons") or [])
        if not profiles and not weapons:
            return ""
        return json.dumps([profiles, weapons])
    if m.kind == "weapon":
        profiles = sorted((normalize(str(p.get("name", ""))), *(str(p.get(k)) for k in WEAPON_KEYS),
                           ",".join(sorted(str(x) for x in p.get("keywords") or [])))
                          for p in d.get("profiles") or [])
        return json.dumps(profiles) if profiles else ""
    if m.kind == "stratagem":
        phases = "/".join(sorted(p for p in str(d.get("phase") or "").replace(" or ", "/").split("/") if p))
        head = [str(d.get("cp")), normalize(str(d.get("type") or "")), phases, str(d.get("turn") or "")]
        if d.get("metadata_only"):
            # wh40kdc metadata only: the same cost, type and timing from one source is one stratagem (its
            # community summary is written for some detachments and not others, so it does not count)
            return json.dumps(["meta", m.dataset, *head])
        body = " ".join(normalize(str(d.get(k) or "")) for k in ("when", "target", "effect", "restrictions"))
        if not body.strip():
            return ""
        return json.dumps([*head, body])
    text = str(d.get("rule") or m.text or "")
    fluff = str(d.get("fluff") or d.get("legend") or "")
    if fluff and isinstance(fluff, str):
        text = text.replace(f"*{fluff}*", "")
    norm = normalize(text)
    return json.dumps([m.kind, norm]) if len(norm) >= 12 else ""


class _Union:
    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def join(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def bucket_key(edition: str, kind: str, norm_name: str) -> tuple[str, str, str]:
    return (edition, kind, name_key(norm_name))


def _ref_joins(a: Member, b: Member, per_dataset: dict[str, int]) -> bool:
    """An external id joins entries of different datasets only. wh40kdc gives the Chaos Land Raider of five
    factions one game-datacards id although their profiles differ, so across factions the id joins only an
    entry that is its dataset's single entry of this name (a faction spelled differently, not another army)."""
    if a.dataset == b.dataset:
        return False
    return faction_key(a.faction) == faction_key(b.faction) or (per_dataset[a.dataset] == 1
                                                                and per_dataset[b.dataset] == 1)


def group(members: list[Member]) -> dict[str, str]:
    """entry id -> thing id (its primary's id) for the members of one bucket (same edition/kind/name)."""
    if len(members) == 1:
        return {members[0].id: members[0].id}
    uf = _Union(len(members))
    by_ref: dict[str, int] = {}  # first member seen with each external id
    by_sig: dict[str, int] = {}
    by_faction: dict[str, list[int]] = defaultdict(list)
    per_dataset: dict[str, int] = defaultdict(int)
    for m in members:
        per_dataset[m.dataset] += 1
    for i, m in enumerate(members):
        for ref in m.refs():
            j = by_ref.get(ref)
            if j is None:
                by_ref[ref] = i
            elif _ref_joins(m, members[j], per_dataset):
                uf.join(i, j)
        sig = signature(m)
        if sig:
            if sig in by_sig:
                uf.join(i, by_sig[sig])
            else:
                by_sig[sig] = i
        by_faction[faction_key(m.faction)].append(i)
    for idxs in by_faction.values():
        for a_pos, a in enumerate(idxs):
            for b in idxs[a_pos + 1:]:
                ma, mb = members[a], members[b]
                if ma.dataset == mb.dataset:
                    continue
                if ma.detachment and mb.detachment and ma.detachment != mb.detachment:
                    continue
                uf.join(a, b)
    groups: dict[int, list[int]] = defaultdict(list)
    for i in range(len(members)):
        groups[uf.find(i)].append(i)
    out: dict[str, str] = {}
    for idxs in groups.values():
        primary = max((members[i] for i in idxs), key=primary_key)
        for i in idxs:
            out[members[i].id] = primary.id
    return out


def group_all(rows: Iterable[tuple[str, str, str, str, str, str | None]],
              load: Any) -> dict[str, str]:
    """Thing keys for every entry. `rows` are (id, dataset, kind, edition, norm_name, faction);
    `load(ids)` returns {id: (data dict, text)} for the entries of buckets with more than one member,
    so the (large) data of the many one-member buckets is never read."""
    buckets: dict[tuple[str, str, str], list[tuple]] = defaultdict(list)
    for row in rows:
        buckets[bucket_key(row[3], row[2], row[4])].append(row)
    out: dict[str, str] = {}
    shared: list[list[tuple]] = []
    for rows_ in buckets.values():
        if len(rows_) == 1:
            out[rows_[0][0]] = rows_[0][0]
        else:
            shared.append(rows_)
    wanted = [r[0] for rows_ in shared for r in rows_]
    loaded = load(wanted) if wanted else {}
    for rows_ in shared:
        members = [Member(r[0], r[1], r[2], r[3], r[4], r[5], *loaded.get(r[0], ({}, ""))) for r in rows_]
        out.update(group(members))
    return out


# ---------------------------------------------------------------------------------------------
# What the sources of one thing say


def source_label(entry_source: str, data: dict) -> str:
    """"game-datacards Orks" -> "game-datacards"; the dataset's short name for disagreement lines
    (the Sources field beside them gives each source's version and date)."""
    src = entry_source.lower()
    if src.startswith("game-datacards"):
        short = "game-datacards"
    elif src.startswith("wahapedia"):
        short = "Wahapedia"
    elif src.startswith("wh40kdc"):
        short = "wh40kdc"
    elif src.startswith("seed"):
        short = "seed page"
    else:
        short = entry_source
    return short


def disagreements(primary: Any, others: list[Any]) -> list[str]:
    """Lines such as "Boss Nob: W 2 (game-datacards, 2026-07-23) · 3 (wh40kdc, 2026-06-20)", primary first.

    Datasheets compare each model profile (by model name, or the only profile) and each weapon profile
    (by name); stratagems compare cost. Values a source does not print are not a disagreement.
    """
    members = [primary, *others]
    lines: list[str] = []
    if primary.kind == "datasheet":
        def profiles(e: Any) -> dict[str, dict]:
            ps = e.data.get("profiles") or []
            return {("" if len(ps) == 1 else normalize(str(p.get("name", "")))): p for p in ps}

        def weapons(e: Any) -> dict[str, dict]:
            return {normalize(str(w.get("name", ""))): w for w in e.data.get("weapons") or []}

        for getter, keys, label_of in ((profiles, STAT_KEYS, "profile"), (weapons, WEAPON_KEYS, "weapon")):
            tables = [(m, getter(m)) for m in members]
            for key, first in tables[0][1].items():
                for stat in keys:
                    values: list[tuple[str, str]] = []
                    for m, table in tables:
                        row = table.get(key) if key or len(table) != 1 else next(iter(table.values()))
                        if row is None or row.get(stat) in (None, ""):
                            continue
                        values.append((_show(stat, row.get(stat)), source_label(m.source, m.data)))
                    if len({v for v, _ in values}) > 1:
                        name = str(first.get("name") or primary.name) if label_of == "weapon" or key \
                            else primary.name
                        lines.append(f"{name}: {stat} " + " · ".join(_merge_values(values)))
    elif primary.kind == "weapon":
        tables = [(m, {normalize(str(p.get("name", ""))): p for p in m.data.get("profiles") or []}) for m in members]
        for key, first in tables[0][1].items():
            for stat in WEAPON_KEYS:
                values = [(_show(stat, t[key].get(stat)), source_label(m.source, m.data)) for m, t in tables
                          if key in t and t[key].get(stat) not in (None, "")]
                if len({v for v, _ in values}) > 1:
                    lines.append(f"{first.get('name') or primary.name}: {stat} " + " · ".join(_merge_values(values)))
    elif primary.kind == "stratagem":
        values = [(f"{m.data.get('cp')}CP", source_label(m.source, m.data)) for m in members
                  if m.data.get("cp") is not None]
        if len({v for v, _ in values}) > 1:
            lines.append("Cost: " + " · ".join(_merge_values(values)))
    if primary.kind in ("stratagem", "rule"):
        # the Orks seed page prints Crushing Impact as 15.06, game-datacards' core rules as 15.05
        numbers = [(str(m.data["number"]), source_label(str(m.data.get("number_source") or m.source), m.data))
                   for m in members if m.data.get("number")]
        if len({v for v, _ in numbers}) > 1:
            lines.append("Rule number: " + " · ".join(_merge_values(numbers)))
    return lines


def _show(stat: str, value: Any) -> str:
    if stat in ("Sv", "InSv", "Ld", "skill") and isinstance(value, int):
        return f"{value}+"
    return str(value)


def _merge_values(values: list[tuple[str, str]]) -> list[str]:
    """[("2", "gdc"), ("3", "wh40kdc"), ("3", "Wahapedia")] -> ["2 (gdc)", "3 (wh40kdc, Wahapedia)"]."""
    order: dict[str, list[str]] = {}
    for value, src in values:
        order.setdefault(value, [])
        if src not in order[value]:
            order[value].append(src)
    return [f"{v} ({', '.join(srcs)})" for v, srcs in order.items()]


def merged(entry: Any, members: list[Any]) -> Any:
    """`entry` with what its thing's other sources say: `data["sources"]` (one line per source, with its
    factions and detachments) and `data["disagreements"]` (see `disagreements`). Unchanged when alone."""
    from bot.catalog.model import Entry

    others = [m for m in members if m.id != entry.id]
    if not others:
        return entry
    by_source: dict[str, dict[str, list[str]]] = {}
    for m in [entry, *others]:
        slot = by_source.setdefault(m.source, {"factions": [], "detachments": [], "ids": []})
        slot["ids"].append(m.id)
        if m.faction and m.faction not in slot["factions"]:
            slot["factions"].append(m.faction)
        det = m.data.get("detachment")
        if isinstance(det, str) and det and det not in slot["detachments"]:
            slot["detachments"].append(det)
    sources = [{"source": src, "date": next((m.data.get("source_date") for m in [entry, *others]
                                             if m.source == src and m.data.get("source_date")), None), **slot}
               for src, slot in by_source.items()]
    data = dict(entry.data)
    data["sources"] = sources
    data["disagreements"] = disagreements(entry, others)
    return Entry(entry.id, entry.kind, entry.name, entry.edition, entry.faction, entry.source, entry.text, data)
