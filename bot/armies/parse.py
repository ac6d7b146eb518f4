"""Read an army list into an `Army`: wh40kdc's format adapters and resolver, then our mapping onto the catalog.

wh40kdc does the format work (one adapter per export format, names resolved against its 11th-edition
dataset). Our code covers where it falls short for the tracker: bounded decoding (`decode`), a unit cap,
multi-detachment lines matched longest-first against the faction's detachments, leaders attached to an
eligible unit when the list does not say, suggestions for every unresolved name, catalog datasheet ids per
edition, and each model type's weapons with counts.
"""

from __future__ import annotations

import functools
import importlib
import json
import re
from typing import Any

from rapidfuzz import fuzz, process

from bot.armies.decode import Payload, decode
from bot.armies.errors import ListError
from bot.armies.limits import MAX_UNITS, check_parsed
from bot.armies.model import Army, ArmyUnit, Diagnostic, ModelGroup, Weapon
from bot.catalog.model import make_id
from bot.games.rules import MAX_NAME, printable_name
from bot.longlived import freeze_loaded

# A unit name leaves room for the tracker's " #150" within its name limit, so every unit can be named in a
# command (found by the console fuzz: a 5,000-character name was imported but could never be addressed).
MAX_UNIT_NAME = MAX_NAME - len(f" #{MAX_UNITS}")
MAX_DIAGNOSTICS = 40
EDITIONS = ("10e", "11e")

_FORMAT_NAMES = {
    "gw": "GW app (+++ header)", "gw-headerless": "GW app", "newrecruit-json": "NewRecruit JSON",
    "newrecruit-wtc-full": "NewRecruit WTC", "newrecruit-wtc-compact": "NewRecruit WTC compact",
    "newrecruit-simple": "NewRecruit text", "listforge": "ListForge JSON", "listforge-text": "ListForge text",
    "rosterizer": "Rosterizer", "roster-json": "40kdc roster",
}


@functools.cache
def dataset() -> Any:
    """wh40kdc's embedded dataset, loaded once per process (the slow part of the first import).

    wh40kdc's resolver also checks every unit's loadout for legality (over half of its time on a 2,000-point
    list, measured in bench/bench_armies.py); the tracker never reads that verdict, so the check is switched
    off in the resolver module (its result only ever adds a `loadout-illegal` warning)."""
    from wh40kdc import Dataset

    # The module, not the `resolve` function the package re-exports under the same name.
    wh40kdc_resolve = importlib.import_module("wh40kdc.imports.resolve")
    wh40kdc_resolve.check_unit_legality = lambda *args, **kwargs: []
    # An unknown weapon name is looked up by a substring scan of every weapon; the same names recur.
    wh40kdc_resolve._find_weapon_candidates = functools.lru_cache(maxsize=4096)(
        wh40kdc_resolve._find_weapon_candidates)
    data = Dataset.embedded()
    # The dataset lives as long as the process and holds large containers: one full (generation 2) garbage
    # collection walking it took 0.5-0.8 s on the shared machine, and an import allocates enough to trigger
    # one every ~100 reads — that was the import p99 tail.
    freeze_loaded()
    return data


@functools.cache
def _eligible_bodyguards() -> dict[str, list[str]]:
    """Leader datasheet id -> the datasheet ids it may lead (wh40kdc's leader attachments)."""
    eligible: dict[str, list[str]] = {}
    for la in dataset().leader_attachments:
        eligible.setdefault(la["leader_id"], []).extend(la.get("eligible_bodyguard_ids") or [])
    return eligible


def parse_list(data: bytes | str, *, filename: str | None = None, edition: str = "11e",
               catalog: Any = None) -> Army:
    """The army in `data`, all in this process (the CLI, tests); raises `ListError` when nothing usable is in
    it (nothing is stored then). The bot reads lists in a worker process instead (bot.armies.reader)."""
    return for_edition(read_army(data, filename=filename, edition=edition), catalog)


def read_army(data: bytes | str, *, filename: str | None = None, edition: str = "11e") -> Army:
    """Everything but the catalog: the part that runs in a list worker process. Resolved units carry the
    dataset's own (11e) datasheet id; `for_edition` then maps them to the game's edition."""
    if edition not in EDITIONS:
        raise ListError(f"Unknown edition {edition!r}: choose 10e or 11e.")
    return build_army(decode(data, filename), edition=edition)


def for_edition(army: Army, catalog: Any) -> Army:
    """A 10e game's catalog datasheets for the resolved units (the catalog lives in the bot's process, never
    in a worker; a few fuzzy lookups), then the diagnostics cut to MAX_DIAGNOSTICS."""
    if army.edition != "11e":
        for unit in army.units:
            if unit.datasheet_id and unit.datasheet_name:
                unit.datasheet_id = _catalog_id(unit, army.edition, catalog, army.diagnostics)
    if len(army.diagnostics) > MAX_DIAGNOSTICS:
        dropped = len(army.diagnostics) - MAX_DIAGNOSTICS + 1
        army.diagnostics = army.diagnostics[: MAX_DIAGNOSTICS - 1] + [Diagnostic("info", f"... and {dropped} more.")]
    return army


def build_army(payload: Payload, *, edition: str) -> Army:
    from wh40kdc.imports import ADAPTERS
    from wh40kdc.imports.resolve import resolve

    ds = dataset()
    adapter = next((a for a in ADAPTERS if _matches(a, payload.value)), None)
    if adapter is None:
        raise ListError(_not_a_list(payload))
    try:
        parsed = adapter.parse(payload.value)
    except Exception as error:  # an adapter that claimed the payload but cannot read it
        raise ListError(f"The list looks like a {_FORMAT_NAMES.get(adapter.id, adapter.id)} export but cannot be "
                        f"read: {error}") from None
    if not parsed.get("units"):
        raise ListError("No units found: is this an army list? Paste the whole export from the app.")
    check_parsed(parsed)
    roster = _resolve_distinct(parsed, ds, adapter.id, resolve)
    if not roster.get("faction_id"):
        named = parsed.get("faction_raw_name")
        raise ListError(f"Unknown faction {named!r}: no faction of the dataset has that name, and its units do "
                        "not name one either." if named else
                        "Cannot tell the army's faction: the list names none and its units are unknown.")
    return _army(payload, parsed, roster, _format_id(adapter), edition)


def _resolve_distinct(parsed: dict, ds: Any, fmt: str, resolve: Any) -> dict:
    """wh40kdc's resolver, run once per distinct unit entry (three identical Boyz units resolve once)."""
    keys = [json.dumps(u, sort_keys=True, default=str) for u in parsed["units"]]
    first: dict[str, int] = {}
    distinct = []
    for key, unit in zip(keys, parsed["units"], strict=True):
        if key not in first:
            first[key] = len(distinct)
            distinct.append(unit)
    if len(distinct) == len(keys):
        return resolve(parsed, ds, fmt)
    roster = resolve({**parsed, "units": distinct}, ds, fmt)
    resolved = roster["units"]
    # Shallow copies: only the top-level warlord/leader marks below differ between copies, and the mapping
    # that follows builds new objects from them (a deep copy was a fifth of a 2,000-point import).
    roster["units"] = [dict(resolved[first[key]]) for key in keys]
    # Only the first copy of a unit keeps the list's warlord/leader marks (a list has one warlord).
    seen: set[str] = set()
    for key, unit in zip(keys, roster["units"], strict=True):
        if key in seen:
            unit["is_warlord"] = False
            unit["leader_attachment"] = None
        seen.add(key)
    parsed["units"] = [distinct[first[key]] for key in keys]
    return roster


def _format_id(adapter: Any) -> str:
    from wh40kdc.imports.gw_headerless import gw_headerless_adapter

    return "gw-headerless" if adapter is gw_headerless_adapter else adapter.id


def _matches(adapter: Any, value: Any) -> bool:
    try:
        return bool(adapter.matches(value))
    except Exception:  # a matcher fed a shape it never expected: not its format
        return False


def _not_a_list(payload: Payload) -> str:
    if isinstance(payload.value, str):
        return ("This does not look like an army list: paste the export from the GW app, NewRecruit or ListForge "
                "(units with their points, e.g. 'Boyz (85 points)').")
    return "This JSON is not an army list export (NewRecruit, ListForge or BattleScribe)."


# ---- roster -> Army -----------------------------------------------------------------------------------

def _army(payload: Payload, parsed: dict, roster: dict, fmt: str, edition: str) -> Army:
    ds = dataset()
    text = payload.value if isinstance(payload.value, str) else ""
    lines = text.split("\n") if text else []
    diagnostics: list[Diagnostic] = []

    def where(raw: str | None) -> int | None:
        if not raw or not lines:
            return None
        needle = raw.casefold()
        return next((i for i, line in enumerate(lines, start=1) if needle in line.casefold()), None)

    faction_id = roster["faction_id"]
    faction = ds.factions.get(faction_id)
    faction_name = faction.name if faction is not None else faction_id
    detachments = _detachments(roster, faction_id, diagnostics, where)

    units: list[ArmyUnit] = []
    for raw_unit, parsed_unit in zip(roster["units"], parsed["units"], strict=True):
        units.append(_unit(raw_unit, parsed_unit, faction_id, diagnostics, where))
    _warlord_from_header(lines, units)
    _leaders(roster, units, faction_id, diagnostics)
    for entry in roster["diagnostics"]["warnings"]:
        if entry["code"] in ("weapon-unresolved", "enhancement-unresolved"):
            raw = entry.get("raw_name")
            what = "weapon" if entry["code"] == "weapon-unresolved" else "enhancement"
            diagnostics.append(Diagnostic("warning", f"Unknown {what} {raw!r}: kept as written.", where(raw)))
    points = roster["points"].get("total_reported") or roster["points"].get("total_computed") or None
    sources = {"battlescribe-rosz": "BattleScribe .rosz", "battlescribe-xml": "BattleScribe .ros",
               "listforge-url": "ListForge URL"}
    return Army(format=sources.get(payload.source) or _FORMAT_NAMES.get(fmt, fmt),
                edition=edition, faction=faction_name, detachments=detachments, points=points, units=units,
                diagnostics=diagnostics, name=roster.get("name"), faction_id=faction_id)


def _detachments(roster: dict, faction_id: str, diagnostics: list[Diagnostic], where: Any) -> list[str]:
    """Resolved detachment names; an unresolved line is matched longest-first against the faction's names."""
    ds = dataset()
    known = {d["id"]: d["name"] for d in ds.detachments.by_faction(faction_id)}
    names: list[str] = []
    for entry in roster["detachments"]:
        ref = entry["ref"]
        if ref.get("id"):
            names.append(known.get(ref["id"]) or _detachment_name(ref["id"]) or ref["raw_name"])
            continue
        found, rest = split_detachments(ref["raw_name"], list(known.values()))
        names.extend(found)
        if rest:
            hint = _suggest(rest, list(known.values()))
            diagnostics.append(Diagnostic("error", f"Unknown detachment {rest!r}.{hint}", where(ref["raw_name"])))
    return list(dict.fromkeys(names))


def _detachment_name(detachment_id: str) -> str | None:
    hit = dataset().detachments.get_any(detachment_id)
    return hit.get("name") if hit else None


_JOINERS = re.compile(r"^(?:\s|,|\+|&|\band\b|/)+|(?:\s|,|\+|&|\band\b|/)+$", re.IGNORECASE)


def split_detachments(line: str, known: list[str]) -> tuple[list[str], str]:
    """Known detachment names in `line`, longest first (so "Legends of Saga and Song" is never split), and
    what is left once the joiners ("and", "+", ",") are gone."""
    rest = " " + " ".join(line.split()) + " "
    found: list[tuple[int, str]] = []
    for name in sorted(known, key=len, reverse=True):
        pattern = re.compile(r"(?<![\w-])" + re.escape(" ".join(name.split())) + r"(?![\w-])", re.IGNORECASE)
        match = pattern.search(rest)
        if match:
            found.append((match.start(), name))
            rest = rest[: match.start()] + "\0" * (match.end() - match.start()) + rest[match.end():]  # keeps positions
    leftover = " ".join(p for p in (_JOINERS.sub("", part) for part in rest.split("\0")) if p.strip())
    return [name for _, name in sorted(found)], leftover.strip()


def _unit(raw: dict, parsed: dict, faction_id: str, diagnostics: list[Diagnostic], where: Any) -> ArmyUnit:
    ds = dataset()
    ref = raw["ref"]
    name = list_name(ref["raw_name"])
    if name != " ".join(str(ref["raw_name"]).split()):
        diagnostics.append(Diagnostic("warning", f"Unit name {str(ref['raw_name'])[:40]!r} kept as {name!r} "
                                                 f"(printable characters, at most {MAX_UNIT_NAME}).",
                                      where(str(ref["raw_name"])[:40])))
    hit = ds.units.get_any(ref["id"]) if ref.get("id") else None
    composition = _composition(raw, hit, name)
    models = int(raw.get("model_count") or sum(g.count for g in composition) or 1)
    enhancement = raw.get("enhancement")
    unit = ArmyUnit(name=name, datasheet_id=None, models=models, points=raw.get("points"), composition=composition,
                    enhancements=[enhancement["raw_name"]] if enhancement else [], warlord=bool(raw.get("is_warlord")),
                    character=bool(parsed.get("is_character")))
    if hit is None:
        candidates = [c.get("name") for c in ref.get("candidates") or [] if c.get("name")]
        hint = (f" Did you mean: {', '.join(candidates[:5])}?" if candidates
                else _suggest(name, [u.name for u in ds.units.by_faction(faction_id)]))
        diagnostics.append(Diagnostic("error", f"Unknown unit {name!r}: kept as an unlisted unit.{hint}", where(name)))
        return unit
    record = hit.raw
    unit.datasheet_name = hit.name
    unit.character = unit.character or record.get("role") in ("character", "epic-hero")
    unit.wounds = _main_wounds(record, composition)
    keywords = {str(k).casefold() for k in record.get("keywords") or []}
    for tag, keyword in (("epic-hero", "epic hero"), ("battleline", "battleline"),
                         ("dedicated-transport", "dedicated transport")):
        if record.get("role") == tag or keyword in keywords:
            unit.tags.append(tag)  # the unit limits of 25.03 (bot/armies/check.py)
    if "Orks" in (record.get("faction_keywords") or []):
        unit.tags.append("waaagh")  # every Orks datasheet carries the Waaagh! army rule (docs/rules-notes.md)
    unit.datasheet_id = make_id("11e", "datasheet", f"wh40kdc.{record.get('faction_id')}", hit.id)
    unit.line = where(hit.name)
    return unit


def _catalog_id(unit: ArmyUnit, edition: str, catalog: Any, diagnostics: list[Diagnostic]) -> str | None:
    """The catalog entry of this unit's datasheet in the game's edition (else the dataset's own, 11e one)."""
    name = unit.datasheet_name or unit.name
    if catalog is None:
        diagnostics.append(Diagnostic("info", f"{name}: no catalog to look up its {edition} datasheet; "
                                              "the 11e one is used.", unit.line))
        return unit.datasheet_id
    try:
        resolution = catalog.resolve(name, kind="datasheet", edition=edition)
    except Exception:  # the catalog is optional here: fall back to the dataset's own entry
        resolution = None
    best = getattr(resolution, "best", None)
    if best is not None and getattr(resolution, "confident", False) and fuzz.ratio(best.name.casefold(),
                                                                                    name.casefold()) >= 90:
        return best.id
    diagnostics.append(Diagnostic("info", f"{name}: the catalog has no {edition} datasheet; the 11e one is used.",
                                  unit.line))
    return unit.datasheet_id


def _composition(raw: dict, hit: Any, name: str) -> list[ModelGroup]:
    """Each model type with what the whole group carries; a flat list's wargear goes to one group."""
    groups = raw.get("loadout_groups")
    if groups:
        flat: dict[str, int] = {}
        for w in raw.get("wargear") or []:
            key = str(w["ref"]["raw_name"]).casefold()
            flat[key] = flat.get(key, 0) + int(w["count"])
        # Grouped counts are per model for most adapters and already per group for some: the unit-wide totals
        # of the flat wargear tell which (multiplying must not exceed them).
        scaled: dict[str, int] = {}
        for group in groups:
            for w in group["wargear"]:
                key = str(w["ref"].get("raw_name") or w["ref"]["id"]).casefold()
                scaled[key] = scaled.get(key, 0) + int(w["count"]) * int(group["count"])
        per_model = all(scaled[k] <= flat.get(k, scaled[k]) for k in scaled)
        out = []
        for group in groups:
            count = int(group["count"])
            weapons = [Weapon(" ".join(str(w["ref"].get("raw_name") or w["ref"]["id"]).split()),
                              int(w["count"]) * (count if per_model else 1)) for w in group["wargear"]]
            out.append(ModelGroup(group["model_name"], count, _merge(weapons)))
        return out
    count = int(raw.get("model_count") or 1)
    model_name = hit.name if hit is not None else name
    if hit is not None:
        profiles = hit.raw.get("profiles") or []
        if len(profiles) == 1:
            model_name = profiles[0].get("name") or model_name
    weapons = [Weapon(" ".join(str(w["ref"]["raw_name"]).split()), int(w["count"])) for w in raw.get("wargear") or []]
    return [ModelGroup(model_name, count, _merge(weapons))]


def _merge(weapons: list[Weapon]) -> list[Weapon]:
    merged: dict[str, Weapon] = {}
    for w in weapons:
        key = w.name.casefold()
        if key in merged:
            merged[key].count += w.count
        else:
            merged[key] = Weapon(w.name, w.count)
    return list(merged.values())


def _main_wounds(record: dict, composition: list[ModelGroup]) -> int | None:
    """W of the model type that makes up most of the unit (the one damage is tracked on)."""
    profiles = [p for p in record.get("profiles") or [] if isinstance(p.get("W"), int)]
    if not profiles:
        return None
    if composition:
        biggest = max(composition, key=lambda g: g.count).name.casefold()
        for p in profiles:
            if str(p.get("name", "")).casefold() in (biggest, biggest.rstrip("s")):
                return int(p["W"])
    return int(profiles[0]["W"])


_WARLORD_HEADER = re.compile(r"^\+\s*WARLORD:\s*(?:Char\d+:\s*)?(.+?)\s*$", re.IGNORECASE)


def list_name(raw: Any) -> str:
    """The tracker's name for a unit of a list: printable (commands clean typed names the same way, so a
    unit named with a bidi override or a zero-width mark can still be chosen), and short enough to type."""
    name = printable_name(str(raw)) or "Unnamed unit"
    return name if len(name) <= MAX_UNIT_NAME else name[: MAX_UNIT_NAME - 1].rstrip() + "…"


def _warlord_from_header(lines: list[str], units: list[ArmyUnit]) -> None:
    """WTC headers name the warlord ("+ WARLORD: Char1: Kâhl") where the unit block does not say it."""
    if any(u.warlord for u in units):
        return
    for line in lines[:40]:
        match = _WARLORD_HEADER.match(line)
        if match:
            named = list_name(match.group(1)).casefold()
            unit = next((u for u in units if u.name.casefold() == named), None)
            if unit is not None:
                unit.warlord = True
            return


def _leaders(roster: dict, units: list[ArmyUnit], faction_id: str, diagnostics: list[Diagnostic]) -> None:
    """Which leader leads which unit: the list's own attachment when it has one, else the first eligible unit."""
    ids = [u["ref"].get("id") for u in roster["units"]]
    led: set[int] = set()
    for i, raw in enumerate(roster["units"]):
        attachment = raw.get("leader_attachment")
        if attachment and attachment.get("bodyguard_ref"):
            bodyguard = attachment["bodyguard_ref"].get("raw_name")
            target = next((j for j, u in enumerate(units)
                           if j != i and u.name == list_name(bodyguard) and j not in led), None)
            if target is not None:
                units[i].leading = target
                led.add(target)
                if attachment.get("provisional"):
                    diagnostics.append(Diagnostic("warning", f"Assumed {units[i].name} leads {bodyguard} (the list "
                                                             "does not say; change it with /army attach)."))
    eligible = _eligible_bodyguards()
    for i, unit in enumerate(units):
        if unit.leading is not None or not unit.character or not ids[i] or ids[i] not in eligible:
            continue
        target = next((j for j, uid in enumerate(ids) if uid in eligible[ids[i]] and j not in led
                       and not units[j].character), None)
        if target is None:
            continue
        unit.leading = target
        led.add(target)
        diagnostics.append(Diagnostic("warning", f"Assumed {unit.name} leads {units[target].name} (the list does not "
                                                 "say; change it with /army attach)."))


def _suggest(name: str, choices: list[str]) -> str:
    if not choices or not name:
        return ""
    found = process.extract(name, choices, scorer=fuzz.WRatio, limit=3, score_cutoff=60)
    return f" Did you mean: {', '.join(m[0] for m in found)}?" if found else ""
