"""An army as read from a list: units mapped to catalog datasheets, with the unit-as-fielded composition.

`Army.to_dict()` is contract 6's document and also what the game log's `army` event stores, so it is kept
small: names, counts and ids only, never rules text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Weapon:
    name: str
    count: int

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "count": self.count}


@dataclass
class ModelGroup:
    """One model type of a unit and what each group carries in total (a Stompa's three big shootas: count 3)."""

    name: str
    count: int
    weapons: list[Weapon] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "count": self.count, "weapons": [w.to_dict() for w in self.weapons]}


@dataclass
class ArmyUnit:
    name: str  # as the list prints it
    datasheet_id: str | None  # catalog entry id; None when unresolved
    models: int
    points: int | None = None
    composition: list[ModelGroup] = field(default_factory=list)
    leading: int | None = None  # index of the unit this leader leads
    enhancements: list[str] = field(default_factory=list)
    warlord: bool = False
    character: bool = False
    wounds: int | None = None  # W of the unit's main model type (for damage bookkeeping)
    datasheet_name: str | None = None  # the resolved datasheet's own name
    tags: list[str] = field(default_factory=list)  # tracked-rule facts, e.g. "waaagh" (has the Waaagh! ability)
    line: int | None = None  # where the list names its datasheet (for diagnostics; never stored)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "name": self.name, "datasheet_id": self.datasheet_id, "models": self.models, "points": self.points,
            "composition": [g.to_dict() for g in self.composition], "leading": self.leading,
            "enhancements": list(self.enhancements), "warlord": self.warlord,
        }
        if self.character:
            data["character"] = True
        if self.wounds is not None:
            data["wounds"] = self.wounds
        if self.datasheet_name and self.datasheet_name != self.name:
            data["datasheet_name"] = self.datasheet_name
        if self.tags:
            data["tags"] = list(self.tags)
        return data

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> ArmyUnit:
        groups = [ModelGroup(g["name"], int(g["count"]), [Weapon(w["name"], int(w["count"])) for w in g.get("weapons", [])])
                  for g in raw.get("composition", [])]
        return cls(name=raw["name"], datasheet_id=raw.get("datasheet_id"), models=int(raw.get("models") or 0),
                   points=raw.get("points"), composition=groups, leading=raw.get("leading"),
                   enhancements=list(raw.get("enhancements", [])), warlord=bool(raw.get("warlord")),
                   character=bool(raw.get("character")), wounds=raw.get("wounds"),
                   datasheet_name=raw.get("datasheet_name"), tags=list(raw.get("tags", [])))


@dataclass
class Diagnostic:
    level: str  # "error" (an unresolved name), "warning" (an assumption), "info"
    message: str
    line: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"level": self.level, "message": self.message, "line": self.line}


@dataclass
class Army:
    format: str
    edition: str
    faction: str
    detachments: list[str]
    points: int | None
    units: list[ArmyUnit]
    diagnostics: list[Diagnostic] = field(default_factory=list)
    name: str | None = None
    faction_id: str | None = None

    @property
    def resolved(self) -> int:
        return sum(1 for u in self.units if u.datasheet_id)

    def to_dict(self) -> dict[str, Any]:
        """Contract 6 (plus `name` and `faction_id`, added keys)."""
        return {
            "format": self.format, "edition": self.edition, "faction": self.faction,
            "detachments": list(self.detachments), "points": self.points,
            "units": [u.to_dict() for u in self.units],
            "diagnostics": [d.to_dict() for d in self.diagnostics],
            "name": self.name, "faction_id": self.faction_id,
        }

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Army:
        return cls(format=raw["format"], edition=raw["edition"], faction=raw["faction"],
                   detachments=list(raw.get("detachments", [])), points=raw.get("points"),
                   units=[ArmyUnit.from_dict(u) for u in raw.get("units", [])],
                   diagnostics=[Diagnostic(d["level"], d["message"], d.get("line")) for d in raw.get("diagnostics", [])],
                   name=raw.get("name"), faction_id=raw.get("faction_id"))
