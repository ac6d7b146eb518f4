"""Names -> units as fielded -> a `Plan`: the service behind `/sim unit` and `python -m bot sim plan`.

It resolves datasheet names through the catalog (an autocomplete id, or a confidently matched name in
this edition, else in the other edition, noted), turns each into a `Unit` (cached per entry: building
one parses the stored JSON) and hands them to `bot.sim.fielded.plan`. The cog only parses options and
renders; this is where every choice about what fires at what is made.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from bot.catalog.model import Entry
from bot.errors import UserError
from bot.sim.fielded import Plan, plan
from bot.sim.requests import SimOptions, with_profiles
from bot.units.build import unit_for
from bot.units.model import Unit

CACHE_SIZE = 256
_COUNTED = re.compile(r"^\s*(\d{1,3})\s*[x×*]?\s+(.+)$", re.IGNORECASE)


@dataclass(frozen=True)
class UnitRequest:
    """What /sim unit and `sim plan` were asked, as typed (names, not ids, are fine)."""

    attacker: str
    target: str
    weapon: str | None = None
    models: int | None = None
    target_models: int | None = None
    phase: str | None = None
    leader: str | None = None
    target_leader: str | None = None
    wounds_lost: int = 0
    fnp: int | None = None
    abilities: bool = True
    force: bool = False
    faction: str | None = None  # preferred for typed names several factions share


def split_count(weapon: str | None) -> tuple[str | None, int | None]:
    """`3x Plasma pistol` / `3 × plasma pistol` -> ("Plasma pistol", 3); a plain name -> (name, None)."""
    if not weapon or not weapon.strip():
        return None, None
    if match := _COUNTED.match(weapon):
        return match.group(2).strip(), int(match.group(1))
    return weapon.strip(), None


class UnitPlanner:
    def __init__(self, catalog: Any) -> None:
        self.catalog = catalog
        self._units: OrderedDict[str, Unit] = OrderedDict()
        self._names: OrderedDict[tuple[str, str, str], Entry] = OrderedDict()
        self._index: object = None  # the catalog's search index the caches were filled from
        self._lock = threading.Lock()

    def _fresh(self) -> None:
        """Forget everything when the catalog was reloaded (an import replaces its index)."""
        index = getattr(self.catalog, "index", None)
        if index is not self._index:
            with self._lock:
                self._units.clear()
                self._names.clear()
                self._index = index

    # ------------------------------------------------------------------ look-ups
    def datasheet(self, value: str, edition: str, option: str, faction: str | None = None) -> Entry:
        """An autocomplete id, or a typed name resolved confidently (in `faction` first, when given: a name
        several factions share); otherwise a UserError with candidates."""
        text = (value or "").strip()
        if not text:
            raise UserError(f"Name a unit for `{option}`.", field=option)
        catalog = self.catalog
        self._fresh()
        key = (text.lower(), edition, (faction or "").lower())
        with self._lock:
            if key in self._names:
                return self._names[key]
        entry = catalog.get(text) if ":datasheet:" in text else None
        if entry is not None and entry.kind == "datasheet":
            return self._remember(key, entry)  # an id: parsing the stored entry costs a few ms each time
        if faction:
            mine = catalog.resolve(text, kind="datasheet", prefer_edition=edition, faction=faction)
            if mine.best is not None and mine.confident:
                return self._remember(key, mine.best)
        resolution = catalog.resolve(text, kind="datasheet", edition=edition)
        if resolution.best is not None and resolution.confident:
            return self._remember(key, resolution.best)
        anywhere = catalog.resolve(text, kind="datasheet", prefer_edition=edition)
        if anywhere.best is not None and anywhere.confident:
            return self._remember(key, anywhere.best)
        resolution = resolution if resolution.candidates else anywhere
        names = ", ".join(hit.name.replace("`", "'") for hit in resolution.candidates[:5])
        hint = f" Did you mean: {names}?" if names else " Pick one from the list as you type."
        shown = text[:60].replace("`", "'")
        raise UserError(f"No datasheet matches `{shown}` for `{option}`.{hint}", field=option)

    def _remember(self, key: tuple[str, str, str], entry: Entry) -> Entry:
        with self._lock:
            self._names[key] = entry
            while len(self._names) > CACHE_SIZE:
                self._names.popitem(last=False)
        return entry

    def unit(self, entry: Entry) -> Unit:
        """The entry as fielded; cached (a unit is immutable, the catalog only changes on import)."""
        self._fresh()
        with self._lock:
            if entry.id in self._units:
                self._units.move_to_end(entry.id)
                return self._units[entry.id]
        linked = self.catalog.complete_text_for(entry.id)
        unit = unit_for(with_profiles(entry, linked), linked)
        with self._lock:
            self._units[entry.id] = unit
            while len(self._units) > CACHE_SIZE:
                self._units.popitem(last=False)
        return unit

    def clear(self) -> None:
        with self._lock:
            self._units.clear()
            self._names.clear()

    # ------------------------------------------------------------------ the plan
    def plan(self, asked: UnitRequest, options: SimOptions) -> tuple[Plan, list[Entry]]:
        """The plan for `asked`, and the datasheets used (attacker, target, leaders) for the embed's footer."""
        edition = options.edition
        entries = {"attacker": self.datasheet(asked.attacker, edition, "attacker", asked.faction),
                   "target": self.datasheet(asked.target, edition, "target", asked.faction)}
        for option in ("leader", "target_leader"):
            if getattr(asked, option):
                entries[option] = self.datasheet(getattr(asked, option), edition, option, asked.faction)
        units = {name: self.unit(entry) for name, entry in entries.items()}
        weapon, count = split_count(asked.weapon)
        result = plan(
            units["attacker"], units["target"], options, phase=asked.phase, weapon=weapon, models=asked.models,
            target_models=asked.target_models, count=count, leader=units.get("leader"),
            target_leader=units.get("target_leader"), wounds_lost=asked.wounds_lost, fnp=asked.fnp,
            abilities=asked.abilities, force=asked.force,
        )
        for entry in entries.values():
            if entry.edition != edition:
                result.assumptions.append(f"{entry.name}: {entry.edition} datasheet used with {edition} rules")
        if asked.force:
            result.assumptions.append("force: ran without the datasheet checks")
        return result, list(entries.values())
