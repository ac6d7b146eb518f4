"""The catalog contract shared by the rules, simulation and game code (see the team brief)."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

KINDS = ("datasheet", "weapon", "ability", "stratagem", "rule", "detachment", "enhancement", "keyword", "faq")
# "faq" (errata and FAQ answers, game-datacards faqs.json) extends contract 2's kinds
EDITIONS = ("10e", "11e")
# game-datacards FAQ target types -> the catalog kinds an errata is linked to (see CatalogStore._link_errata)
FAQ_TARGET_KINDS = {"datasheet": ("datasheet",), "stratagem": ("stratagem",), "enhancement": ("enhancement",),
                    "detachment": ("detachment",), "armyRule": ("rule",), "ruleContainer": ("rule",),
                    "ability": ("ability",)}

# game-datacards' core rules number the core stratagems but hold only their ids (`stratagem_id`), which are
# wh40kdc's `external_refs.mfm`: the list [{"id", "number", "name"}] rides on the file's first entry under this
# key, and CatalogStore._number_stratagems gives the stratagems of that id their number ("number_source")
STRATAGEM_NUMBERS = "stratagem_numbers"


@dataclass(frozen=True)
class Entry:
    id: str  # stable, e.g. "11e:stratagem:seed.core:command-re-roll"
    kind: str  # one of KINDS
    name: str
    edition: str  # "10e" | "11e"
    faction: str | None
    source: str  # human-readable source, e.g. "Seed page: Orks – Stompa"
    text: str  # full text, Markdown
    data: dict = field(default_factory=dict)  # kind-specific, JSON-serialisable


@dataclass(frozen=True)
class Hit:
    id: str
    kind: str
    name: str
    edition: str
    source: str
    score: float
    faction: str | None = None
    # one hit stands for one thing (bot/catalog/things.py): every faction and detachment it appears under
    factions: tuple[str, ...] = ()
    detachments: tuple[str, ...] = ()


@dataclass(frozen=True)
class Resolution:
    best: Entry | None
    confident: bool
    candidates: list[Hit]
    # set when the query names something known to exist (bot/catalog/known.py) that the catalog has no
    # entry for: answer honestly that it is not loaded instead of offering look-alikes
    missing: object | None = None


DETACHMENT_SCOPE = "detachments"  # last part of a detachment entry's scope; its rules have the detachment's slug


def is_detachment_entry(entry_id: str) -> bool:
    """A detachment itself ("War Horde"), not one of its rules ("Get Stuck In"), which share the kind."""
    parts = entry_id.split(":")
    return len(parts) >= 4 and parts[1] == "detachment" and parts[2].endswith("." + DETACHMENT_SCOPE)


def slug(text: str) -> str:
    """A lowercase ASCII slug for stable ids ("Hit 'Em Harder" -> "hit-em-harder")."""
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    folded = re.sub(r"['’‘`]", "", folded.lower())
    return re.sub(r"[^a-z0-9]+", "-", folded).strip("-") or "x"


def make_id(edition: str, kind: str, scope: str, name: str) -> str:
    """Ids are `edition:kind:scope:slug`; scope names the dataset and faction/category, e.g. `seed.core`."""
    return f"{edition}:{kind}:{scope}:{slug(name)}"


class CatalogImportError(Exception):
    """A file could not be imported; nothing was written. Carries the file, line and reason for the user."""

    def __init__(self, path: str, line: int | None, reason: str) -> None:
        self.path = str(path)
        self.line = line
        self.reason = reason
        where = f"{self.path}, line {line}" if line else self.path
        super().__init__(f"{where}: {reason}")
