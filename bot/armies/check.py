"""`/army check` and `army check --json` (contract 6b): an imported list costed by the Munitorum Field Manual
in force and checked against a battle size, every problem naming its rule and source.

Why here and not in the list reader: the check needs only contract 6's document (names, counts, who leads
whom, tags), the MFM Book and the battle size, so it runs in the bot process in a few milliseconds on a list
stored in a game, and again whenever the points or the battle size change, without reading the file again.
The rules are the core rules' 25.03 (Select Battle Size, with its unit-limit footnote) and 25.04 (Fill Your
Army Roster), and the MFM's own notes (requisition thresholds, wargear, Leader/Support lists, Unique tags).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from rapidfuzz import fuzz, process

from bot.points.book import Book, name_key
from bot.points.mfm import Detachment, Enhancement, FactionPoints, UnitPoints
from bot.points.sizes import BattleSize

SIZE_RULE = "25.03 Select Battle Size"
ROSTER_RULE = "25.04 Fill Your Army Roster"
MFM_RULE = "Munitorum Field Manual"
MATCH_SCORE = 90  # a list name read as an MFM name it differs from (a typo, a plural) only above this
UPGRADE_MAX = 3  # 25.04: up to three of the same Upgrade


@dataclass(frozen=True)
class Rules:
    """What each problem names as its rule and source, by edition."""

    size: str = SIZE_RULE
    roster: str = ROSTER_RULE
    points: str = MFM_RULE
    no_points: str = ("No Munitorum Field Manual is imported, so nothing is costed: run "
                      "`python -m bot data update --source mfm`.")


ELEVENTH = Rules()
TENTH_ROSTER = "10e core rules, Muster Army"
TENTH = Rules(size="10e battle size", roster=TENTH_ROSTER, points="Wahapedia export points",
              no_points="No 10th-edition points are loaded (the Wahapedia export carries them), so nothing is "
                        "costed: run `python -m bot data update --source wahapedia`.")
# the Wahapedia export has no battle-size table and the Chapter Approved file is 11e: never numbers of our own
TENTH_NOT_CHECKED = ("Not checked for 10th edition: total points, enhancements and copies of a unit against a "
                     "battle size, because the loaded data has no 10e battle-size table (the Wahapedia export "
                     "carries points, not the core rules' limits; the Chapter Approved file is 11e); Detachment "
                     "Points are 11e only; Leader attachments are not checked. Checked: each unit's and "
                     "enhancement's cost, the list's stated figures, unknown names, and enhancements (one per "
                     "CHARACTER, none on an EPIC HERO, each once, from the list's detachment).")


@dataclass
class Problem:
    rule: str
    severity: str  # "error" or "warning"
    message: str
    units: list[int] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"rule": self.rule, "severity": self.severity, "message": self.message, "units": self.units}


@dataclass
class _Costed:
    index: int
    entry: UnitPoints | None
    points: int | None
    stated: int | None
    notes: list[str] = field(default_factory=list)


class _Check:
    def __init__(self, army: dict[str, Any], book: Book | None, size: BattleSize | None, sizes_source: str,
                 rules: Rules = ELEVENTH) -> None:
        self.army = army
        self.rules = rules
        self.units: list[dict[str, Any]] = army.get("units") or []
        self.book = book
        self.size = size
        self.sizes_source = sizes_source
        self.problems: list[Problem] = []
        self.faction_points: FactionPoints | None = None
        self.source = f"{book.label}" if book else ("no MFM imported" if rules is ELEVENTH else "no points loaded")

    def problem(self, rule: str, severity: str, message: str, units: list[int] | None = None) -> None:
        self.problems.append(Problem(rule, severity, message, units or []))

    # ---- looking names up ---------------------------------------------------------------------------

    def faction(self) -> FactionPoints | None:
        assert self.book is not None
        name = str(self.army.get("faction") or "")
        found = self.book.faction(name)
        if found is None and name:
            choices = {f.name: f for f in self.book.factions.values()}
            hit = process.extractOne(name, list(choices), scorer=fuzz.WRatio, score_cutoff=MATCH_SCORE)
            found = choices[hit[0]] if hit else None
        return found

    def unit_entry(self, raw: dict[str, Any], faction: FactionPoints | None, i: int) -> tuple[UnitPoints | None, str]:
        assert self.book is not None
        names = [n for n in (raw.get("datasheet_name"), raw.get("name")) if n]
        for name in names:
            entry = self.book.unit(name, faction)
            if entry is not None:
                return entry, ""
        pool = list(faction.units) if faction is not None else [u for _f, u in _all_units(self.book)]
        choices = {u.name: u for u in pool}
        found = process.extract(names[0] if names else "", list(choices), scorer=fuzz.WRatio, limit=3,
                                score_cutoff=60)
        if found and found[0][1] >= MATCH_SCORE and (len(found) == 1 or found[0][1] - found[1][1] >= 5):
            return choices[found[0][0]], f"read as {found[0][0]!r}"
        hint = f" Did you mean: {', '.join(m[0] for m in found)}?" if found else ""
        self.problem(self.rules.points, "warning", f"{raw.get('name')!r} is not in {self.source} (Legends, another faction or "
                                          f"mistyped), so it is not costed.{hint}", [i])
        return None, "not in the MFM"

    def detachments(self, faction: FactionPoints | None) -> list[Detachment]:
        assert self.book is not None
        found = []
        for name in self.army.get("detachments") or []:
            hits = self.book.detachments.get(name_key(str(name))) or []
            own = [d for f, d in hits if faction is None or f.slug == faction.slug] or [d for _f, d in hits]
            if own:
                found.append(own[0])
            else:
                pool = [d.name for d in faction.detachments] if faction is not None else []
                near = process.extract(str(name), pool, scorer=fuzz.WRatio, limit=3, score_cutoff=60)
                hint = f" Did you mean: {', '.join(m[0] for m in near)}?" if near else ""
                counted = "DP and enhancements are" if self.rules is ELEVENTH else "enhancements are"
                self.problem(self.rules.points, "warning", f"Detachment {str(name)[:60]!r} is not in {self.source}; its "
                                                           f"{counted} not counted.{hint}")
        return found

    def enhancement(self, name: str, detachments: list[Detachment]) -> tuple[Enhancement | None, Detachment | None]:
        assert self.book is not None
        hits = self.book.enhancement_hits(name)
        for _f, det, enh in hits:
            if any(det is d for d in detachments):
                return enh, det
        if hits:
            return hits[0][2], hits[0][1]
        return nearest_enhancement(name, detachments) or (None, None)

    def near_enhancements(self, name: str, detachments: list[Detachment]) -> str:
        """" Did you mean: …?" from the selected detachments' enhancements, else the faction's."""
        pool = [e.name for d in detachments for e in d.enhancements]
        if not pool and self.faction_points is not None:
            pool = [e.name for d in self.faction_points.detachments for e in d.enhancements]
        near = process.extract(name, pool, scorer=fuzz.WRatio, limit=3, score_cutoff=60)
        return f" Did you mean: {', '.join(m[0] for m in near)}?" if near else ""

    # ---- the checks -----------------------------------------------------------------------------------

    def run(self) -> dict[str, Any]:
        if self.book is None:
            self.problem(self.rules.points, "warning", self.rules.no_points)
            costed = [_Costed(i, None, None, u.get("points")) for i, u in enumerate(self.units)]
            return self.report(costed, None, 0, 0)
        faction = self.faction_points = self.faction()
        if faction is None:
            self.problem(self.rules.points, "warning", f"Faction {str(self.army.get('faction'))[:60]!r} is not in "
                                              f"{self.source}; units are looked up in every faction.")
        detachments = self.detachments(faction)
        costed = self.cost_units(faction, detachments)
        self.check_copies(costed)
        dp = self.check_detachments(detachments)
        enhancements = self.check_enhancements(detachments, costed)
        self.check_attachments(costed)
        self.check_factions(costed, faction)
        return self.report(costed, dp, enhancements, len(detachments))

    def cost_units(self, faction: FactionPoints | None, detachments: list[Detachment]) -> list[_Costed]:
        copies: Counter[str] = Counter()
        costed = []
        for i, raw in enumerate(self.units):
            entry, note = self.unit_entry(raw, faction, i)
            row = _Costed(i, entry, None, raw.get("points") if isinstance(raw.get("points"), int) else None)
            if note:
                row.notes.append(note)
            if entry is not None:
                copies[entry.name] += 1
                copy = copies[entry.name]
                models = int(raw.get("models") or 0) or None
                cost = entry.cost(models, copy)
                total = cost.points
                if entry.threshold is not None and copy >= entry.threshold:
                    row.notes.append(f"copy {copy}: {entry.tier(copy).label or 'the dearer tier'}")
                if models is not None and cost.models != models and len(entry.tier(copy).costs) > 1:
                    row.notes.append(f"{models} model{'s' if models != 1 else ''} pay for {cost.models}")
                total += self.wargear(raw, entry, row)
                for name in raw.get("enhancements") or []:
                    enh, _det = self.enhancement(str(name), detachments)
                    if enh is not None:
                        total += enh.points
                        row.notes.append(f"+{enh.points} {enh.name}")
                row.points = total
                if row.stated is not None and row.stated != total:
                    row.notes.append(f"the list states {row.stated} ({total - row.stated:+d} by {self.source})")
            costed.append(row)
        return costed

    def wargear(self, raw: dict[str, Any], entry: UnitPoints, row: _Costed) -> int:
        if not entry.wargear:
            return 0
        prices = {name_key(item): (item, points) for item, points in entry.wargear}
        extra = 0
        for group in raw.get("composition") or []:
            for weapon in group.get("weapons") or []:
                hit = prices.get(name_key(str(weapon.get("name") or "")))
                if hit and hit[1]:
                    count = int(weapon.get("count") or 1)
                    extra += hit[1] * count
                    row.notes.append(f"+{hit[1] * count} {count}× {hit[0]}")
        return extra

    def check_copies(self, costed: list[_Costed]) -> None:
        if self.size is None:
            return
        by_name: dict[str, list[int]] = {}
        for row in costed:
            name = row.entry.name if row.entry else str(self.units[row.index].get("datasheet_name")
                                                         or self.units[row.index].get("name"))
            by_name.setdefault(name, []).append(row.index)
        for name, indices in by_name.items():
            tags = set(self.units[indices[0]].get("tags") or [])
            if "epic-hero" in tags:
                limit, why = 1, "an EPIC HERO has a unit limit of 1"
            elif tags & {"battleline", "dedicated-transport"}:
                limit, why = 2 * self.size.copies, "BATTLELINE and DEDICATED TRANSPORT units have double the limit"
            else:
                limit, why = self.size.copies, f"the unit limit of {self.size.name}"
            if len(indices) > limit:
                self.problem(f"{self.rules.size} (unit limit)", "error",
                             f"{len(indices)} × {name}: at most {limit} ({why}; {self.sizes_source}).", indices)

    def check_detachments(self, detachments: list[Detachment]) -> int:
        dp = sum(d.dp or 0 for d in detachments)
        names = Counter(d.name for d in detachments)
        for name, count in names.items():
            if count > 1:
                self.problem(self.rules.roster, "error", f"{name} is selected {count} times; a detachment can be selected "
                                                   "once.")
        tags: dict[str, list[str]] = {}
        for d in detachments:
            if d.unique:
                tags.setdefault(name_key(d.unique), []).append(d.name)
        for same in tags.values():
            if len(same) > 1:
                self.problem(f"{self.rules.points} (Unique tag)", "error",
                             f"{' and '.join(same)} share a Unique tag: at most one of them ({self.source}).")
        if self.size is not None and dp > self.size.detachment_points:
            single_three = len(detachments) == 1 and dp == 3 and name_key(self.size.name) == "incursion"
            if not single_three:
                self.problem(self.rules.size, "error", f"Detachments cost {dp} DP; {self.size.name} allows "
                                                 f"{self.size.detachment_points} ({self.sizes_source}; DP by "
                                                 f"{self.source}).")
        return dp

    def check_enhancements(self, detachments: list[Detachment], costed: list[_Costed]) -> int:
        counted = 0
        seen: Counter[str] = Counter()
        for row in costed:
            raw = self.units[row.index]
            names = [str(n) for n in raw.get("enhancements") or []]
            if len(names) > 1:
                self.problem(self.rules.roster, "error", f"{raw.get('name')} has {len(names)} enhancements; a unit can "
                                                   "have one.", [row.index])
            for name in names:
                enh, det = self.enhancement(name, detachments)
                upgrade = "(upgrade)" in name.casefold()
                seen[name_key(name)] += 1
                if not upgrade or seen[name_key(name)] == 1:
                    counted += 1
                if enh is None:
                    self.problem(self.rules.points, "warning", f"Enhancement {name[:60]!r} is not in {self.source}; it is not "
                                                      f"costed.{self.near_enhancements(name, detachments)}", [row.index])
                    continue
                if det is not None and not any(det is d for d in detachments):
                    self.problem(self.rules.roster, "error", f"{enh.name} belongs to {det.name}, which the list has not "
                                                       "selected.", [row.index])
                tags = set(raw.get("tags") or [])
                if "epic-hero" in tags:
                    self.problem(self.rules.roster, "error", f"{raw.get('name')} is an EPIC HERO and cannot be given "
                                                       f"{enh.name}.", [row.index])
                elif not upgrade and not raw.get("character") and row.entry is not None:
                    self.problem(self.rules.roster, "error", f"{enh.name} is on {raw.get('name')}, which is not a "
                                                       "CHARACTER (only Upgrades can be).", [row.index])
        for key, count in seen.items():
            limit = UPGRADE_MAX if "upgrade" in key.split() else 1
            if count > limit:
                self.problem(self.rules.roster, "error", f"{count} × the same enhancement ({key}); at most {limit}.")
        if self.size is not None and counted > self.size.enhancements:
            self.problem(self.rules.size, "error", f"{counted} enhancements; {self.size.name} allows "
                                             f"{self.size.enhancements} ({self.sizes_source}).")
        return counted

    def check_attachments(self, costed: list[_Costed]) -> None:
        for row in costed:
            raw, entry = self.units[row.index], row.entry
            if entry is None or entry.role is None:
                continue
            target = raw.get("leading")
            if not isinstance(target, int) or not 0 <= target < len(costed):
                if entry.role == "support":
                    self.problem(self.rules.roster, "warning", f"{raw.get('name')} is a support unit and must be "
                                                         "attached to a bodyguard unit (/army attach).", [row.index])
                continue
            led = costed[target].entry
            allowed = {name_key(n) for n in entry.attach_to}
            led_name = led.name if led else str(self.units[target].get("name"))
            if allowed and name_key(led_name) not in allowed:
                listed = ", ".join(entry.attach_to[:8]) + (" …" if len(entry.attach_to) > 8 else "")
                self.problem(f"{self.rules.points} (Leader/Support)", "error",
                             f"{raw.get('name')} is attached to {led_name}, which its list does not name "
                             f"({listed}; {self.source}).", [row.index, target])

    def check_factions(self, costed: list[_Costed], faction: FactionPoints | None) -> None:
        if faction is None or self.book is None:
            return
        own = {name_key(u.name) for u in faction.units}
        outside: dict[str, list[int]] = {}
        for row in costed:
            if row.entry is not None and name_key(row.entry.name) not in own:
                owners = [f.name for f, _u in self.book.units.get(name_key(row.entry.name), [])]
                outside.setdefault(owners[0] if owners else "?", []).append(row.index)
        for owner, indices in outside.items():
            self.problem(self.rules.roster, "warning", f"{len(indices)} unit(s) are listed under {owner}, not "
                                                 f"{faction.name}, in {self.source} (allowed only where a rule "
                                                 "lets the army include them).", indices)

    def report(self, costed: list[_Costed], dp: int | None, enhancements: int, _detachments: int) -> dict[str, Any]:
        total = sum(r.points for r in costed if r.points is not None) if self.book else None
        stated = self.army.get("points") if isinstance(self.army.get("points"), int) else None
        if self.size is not None and total is not None and total > self.size.points:
            self.problem(self.rules.size, "error", f"{total:,} points is over {self.size.name}'s {self.size.points:,} "
                                             f"({self.sizes_source}; points by {self.source}).")
        if stated is not None and total is not None and stated != total:
            self.problem(self.rules.points, "warning", f"The list states {stated:,} points; {self.source} gives {total:,} "
                                              f"({total - stated:+,}): see each unit.")
        return {
            "battle_size": self.size.name if self.size else None,
            "points_source": self.book.label if self.book else None,
            "sizes_source": self.sizes_source,
            "points": {"total": total, "limit": self.size.points if self.size else None, "stated": stated},
            "detachment_points": {"spent": dp, "limit": self.size.detachment_points if self.size else None},
            "enhancements": {"count": enhancements, "limit": self.size.enhancements if self.size else None},
            "units": [{"index": r.index, "points": r.points, "stated": r.stated, "note": "; ".join(r.notes)}
                      for r in costed],
            "problems": [p.to_dict() for p in self.problems],
        }


def nearest_enhancement(name: str, detachments: list[Detachment]) -> tuple[Enhancement, Detachment] | None:
    """A spelling the list builder and the MFM differ in ("Stave of Kurnos" / "Stave of Kurnous"), read as one
    of these detachments' enhancements only when it is clearly the nearest (as unit names are read)."""
    pool = {e.name: (e, d) for d in detachments for e in d.enhancements}
    found = process.extract(name, list(pool), scorer=fuzz.WRatio, limit=2, score_cutoff=MATCH_SCORE)
    if found and (len(found) == 1 or found[0][1] - found[1][1] >= 5):
        return pool[found[0][0]]
    return None


def _all_units(book: Book) -> list[tuple[FactionPoints, UnitPoints]]:
    return [pair for pairs in book.units.values() for pair in pairs]


def check(army: dict[str, Any], book: Book | None, size: BattleSize | None, sizes_source: str = "",
          size_problem: str | None = None, rules: Rules = ELEVENTH) -> dict[str, Any]:
    """Contract 6b's `check` object for a contract 6 army (never raises on a list it was given);
    `size_problem` says why there is no battle size (no Chapter Approved file, an unknown name)."""
    checker = _Check(army, book, size, sizes_source, rules)
    if size_problem:
        checker.problem(rules.size, "warning", size_problem)
    return checker.run()


def check_tenth(army: dict[str, Any], catalog: Any, battle_size: str | None = None) -> dict[str, Any]:
    """A 10e list costed by the Wahapedia export's points in the catalog (bot.points.tenth), with the checks
    that need no battle-size table; the first problem says which checks do not apply and why."""
    from bot.points.tenth import book_for

    book = book_for(catalog, army.get("faction")) if catalog is not None else None
    asked = f" The battle size asked ({str(battle_size)[:40]}) is not used." if battle_size else ""
    report = check(army, book, None, "", TENTH_NOT_CHECKED + asked, TENTH)
    report["detachment_points"] = {"spent": None, "limit": None}
    return report


def check_in(army: dict[str, Any], data_dir: Any, battle_size: str | None = None,
             catalog: Any = None) -> dict[str, Any]:
    """`check` with the MFM and battle sizes in force in `data_dir` for an 11e list; a 10e list is costed by
    the Wahapedia export's points in `catalog` (the bot.catalog Catalog; None when it is not available)."""
    from pathlib import Path

    from bot.points import sizes as battle_sizes
    from bot.points.book import current
    from bot.points.mfm import PointsDataError

    if army.get("edition") == "10e":
        return check_tenth(army, catalog, battle_size)
    if army.get("edition") not in (None, "11e"):
        return {"battle_size": None, "points_source": None, "sizes_source": "", "points": {}, "units": [],
                "detachment_points": {}, "enhancements": {},
                "problems": [Problem(MFM_RULE, "warning", f"No points for edition {str(army.get('edition'))[:10]!r}: "
                                                          "lists are checked for 10e and 11e.").to_dict()]}
    try:
        book = current(Path(data_dir))
    except PointsDataError as exc:
        book = None
        army_problem = f"The MFM in force cannot be read ({exc}); run `python -m bot data update --source mfm`."
    else:
        army_problem = None
    size = None
    source = ""
    size_problem = None
    try:
        known = battle_sizes.load(Path(data_dir))
        source = known.source
        size = known.get(battle_size)
        if size is None:
            size_problem = (f"No battle size called {str(battle_size)[:40]!r} in {known.source}: "
                            f"{', '.join(known.names)}.")
    except battle_sizes.SizesError as exc:
        size_problem = f"Battle-size limits are not checked: {exc}."
    report = check(army, book, size, source, size_problem)
    if army_problem:
        report["problems"].insert(0, Problem(MFM_RULE, "warning", army_problem).to_dict())
    return report


def fill_missing_points(army: dict[str, Any], report: dict[str, Any]) -> list[int]:
    """Give each unit the list left without points its MFM cost from `report`, and say so in the army
    (`points_filled`: the version and the units), so points destroyed count them. Done once, when the list is
    stored: a later MFM update does not change a game already played. Returns the units filled."""
    filled = []
    for row in report.get("units") or []:
        unit = army["units"][row["index"]]
        if unit.get("points") is None and isinstance(row.get("points"), int):
            unit["points"] = row["points"]
            filled.append(row["index"])
    if filled:
        army["points_filled"] = {"source": report.get("points_source"), "units": filled}
    return filled
