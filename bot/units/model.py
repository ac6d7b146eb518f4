"""The unit as fielded: model types with counts and profiles, default loadout, wargear options, leaders.

This is THE model of a unit on the table (team decision 3): `/sim` and army lists (issue 12) both use it.
A `Unit` is built once per datasheet (see `bot/units/build.py`) from whichever source describes it best
and carries the `assumptions` made where its source was silent, so every answer can state them.

API (all frozen dataclasses; plain JSON via `to_json`/`from_json` so catalog entries can carry them):
- `Unit.sized(models=None, force=False)` -> `Sized`: each model type with its count for a unit of that
  size (the datasheet's minimum when None); refuses sizes the datasheet does not allow unless `force`.
- `Unit.may_be_led_by(name)` / `Unit.leads_unit(name)`: leader eligibility from either side's data.
- `ModelType.loadout`: the weapons each model of that type carries by default, with counts per model.
- `Unit.weapon(name)`: the catalog weapon profiles (one dict per profile) of a named weapon.
"""

from __future__ import annotations

import functools
import re
from dataclasses import asdict, dataclass
from typing import Any

from bot.errors import UserError

_PLURAL = re.compile(r"(?<=[a-z])(?:es|s)$")


@functools.lru_cache(maxsize=8192)
def norm(name: str) -> str:
    """A comparable name: lower case, dashes and apostrophes folded, a trailing plural dropped
    ("Intercessors" ~ "intercessor", "CORVs*" ~ "corv", "big shootas" ~ "big shoota")."""
    text = str(name).lower().replace("\u2011", "-").replace("–", "-").replace("’", "'")
    text = re.sub(r"[^a-z0-9' -]+", " ", text)
    text = re.sub(r"\s+", " ", text).strip()
    words = text.split(" ")
    if words and len(words[-1]) > 3 and not words[-1].endswith("ss"):
        words[-1] = _PLURAL.sub("", words[-1])
    return " ".join(words)


@dataclass(frozen=True)
class Profile:
    """One model type's characteristics; FNP and damage reduction only when the data states them."""

    name: str
    movement: str | None = None
    toughness: int | None = None
    save: int | None = None
    wounds: int | None = None
    leadership: int | None = None
    oc: int | None = None
    invulnerable: int | None = None
    feel_no_pain: int | None = None
    feel_no_pain_mortal: int | None = None
    damage_reduction: int = 0


@dataclass(frozen=True)
class Carried:
    """A weapon a model carries by default: its name (as the datasheet's weapon list spells it) and count."""

    weapon: str
    count: int = 1


@dataclass(frozen=True)
class ModelType:
    name: str
    min: int
    max: int
    profile: Profile
    character: bool = False
    loadout: tuple[Carried, ...] = ()


@dataclass(frozen=True)
class WargearOption:
    """One wargear option as the source states it; `text` is the words, the rest what is structured."""

    text: str
    model: str | None = None
    replaces: tuple[str, ...] = ()
    choices: tuple[tuple[str, ...], ...] = ()
    per_n_models: int | None = None
    version: str | None = None  # the dataslate/codex it comes from (a source may carry two versions)


@dataclass(frozen=True)
class Ability:
    """An ability with a machine-readable effect (wh40kdc's DSL) when the data has one; `effect` is None
    for abilities known only by name or text, which are never applied."""

    name: str
    effect: dict[str, Any] | None = None


@dataclass(frozen=True)
class Sized:
    """A unit at a given size: (model type, count) in datasheet order, and what was assumed to get there."""

    unit: Unit
    counts: tuple[tuple[ModelType, int], ...]
    notes: tuple[str, ...] = ()

    @property
    def total(self) -> int:
        return sum(count for _, count in self.counts)


@dataclass(frozen=True)
class Unit:
    name: str
    edition: str
    source: str
    models: tuple[ModelType, ...]
    weapons: tuple[dict[str, Any], ...] = ()
    options: tuple[WargearOption, ...] = ()
    leads: tuple[str, ...] = ()          # units this one may be attached to (it is a leader)
    led_by: tuple[str, ...] = ()         # leaders that may attach to this unit
    keywords: tuple[str, ...] = ()
    abilities: tuple[Ability, ...] = ()
    assumptions: tuple[str, ...] = ()
    size_min: int | None = None          # the unit's sizes when the source states them apart from its models
    size_max: int | None = None

    # ------------------------------------------------------------------ sizes
    @property
    def models_min(self) -> int:
        return self.size_min if self.size_min else sum(m.min for m in self.models)

    @property
    def models_max(self) -> int:
        return self.size_max if self.size_max else sum(m.max for m in self.models)

    def allowed_sizes(self) -> str:
        low, high = self.models_min, self.models_max
        return str(low) if low == high else f"{low}-{high}"

    def size_allowed(self, models: int) -> bool:
        return self.models_min <= models <= self.models_max

    def sized(self, models: int | None = None, *, force: bool = False) -> Sized:
        """Each model type with its count for a unit of `models` models (the minimum size when None).

        Extra models go to the type that can take the most (the rank and file), then to the next; a size
        outside the datasheet's range is refused (naming the allowed sizes) unless `force`."""
        notes: list[str] = []
        target = self.models_min if models is None else models
        if models is not None and not self.size_allowed(models):
            if not force:
                raise UserError(
                    f"{self.name} is fielded as {self.allowed_sizes()} models, not {models}. "
                    "Add `force:True` (`--force` in `sim plan`) to simulate it anyway.",
                    field="models",
                )
            notes.append(f"{self.name}: {models} models is outside the datasheet's {self.allowed_sizes()} (forced)")
        counts = [m.min for m in self.models]
        order = sorted(range(len(self.models)), key=lambda i: (self.models[i].character, -self.models[i].max))
        for index in order:  # grow the rank and file first
            room = max(self.models[index].max - counts[index], 0)
            grow = min(room, max(target - sum(counts), 0))
            counts[index] += grow
        if sum(counts) < target:  # forced beyond every maximum: the rank and file take the rest
            counts[order[0]] += target - sum(counts)
        while sum(counts) > target:  # forced below the minimum: shrink the rank and file, keep one model
            index = next((i for i in order if counts[i] > 0 and sum(counts) > 1), None)
            if index is None:
                break
            counts[index] -= 1
        return Sized(self, tuple((m, c) for m, c in zip(self.models, counts, strict=True) if c > 0), tuple(notes))

    # ------------------------------------------------------------------ look-ups
    def weapon(self, name: str) -> list[dict[str, Any]]:
        """The profiles of weapon `name` (a weapon with several profiles returns them all, in order)."""
        key = norm(name)
        exact = [w for w in self.weapons if norm(str(w.get("weapon") or w.get("name"))) == key]
        if exact:
            return exact
        return [w for w in self.weapons if norm(str(w.get("name"))) == key]

    @property
    def character(self) -> bool:
        return any(m.character for m in self.models)

    def may_be_led_by(self, leader: Unit) -> bool:
        """Either side's data saying so is enough (sources list it on the leader, the bodyguard, or both)."""
        mine = {norm(n) for n in self.led_by}
        theirs = {norm(n) for n in leader.leads}
        return norm(leader.name) in mine or norm(self.name) in theirs

    # ------------------------------------------------------------------ JSON
    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Unit:
        models = tuple(
            ModelType(
                name=m["name"], min=int(m["min"]), max=int(m["max"]), profile=Profile(**m["profile"]),
                character=bool(m.get("character")),
                loadout=tuple(Carried(c["weapon"], int(c.get("count", 1))) for c in m.get("loadout") or ()),
            )
            for m in data.get("models") or ()
        )
        return cls(
            name=data["name"], edition=data["edition"], source=data["source"], models=models,
            weapons=tuple(data.get("weapons") or ()),
            options=tuple(
                WargearOption(
                    text=o.get("text", ""), model=o.get("model"), replaces=tuple(o.get("replaces") or ()),
                    choices=tuple(tuple(c) for c in o.get("choices") or ()), per_n_models=o.get("per_n_models"),
                    version=o.get("version"),
                )
                for o in data.get("options") or ()
            ),
            leads=tuple(data.get("leads") or ()), led_by=tuple(data.get("led_by") or ()),
            keywords=tuple(data.get("keywords") or ()),
            abilities=tuple(Ability(a["name"], a.get("effect")) for a in data.get("abilities") or ()),
            assumptions=tuple(data.get("assumptions") or ()),
            size_min=data.get("size_min"), size_max=data.get("size_max"),
        )


