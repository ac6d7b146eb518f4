"""Weapon, target and context profiles, and weapon-keyword parsing.

Keywords are read as printed on datasheets ("SUSTAINED HITS D3", "ANTI-INFANTRY 4+", "BLAST 2",
"[LETHAL HITS: non-MONSTER/VEHICLE]"), case-insensitively and with or without square brackets.
A known keyword with a malformed value raises KeywordError; an unknown keyword is kept as `unknown`
so the engine can list it in `ignored_keywords` (never dropped silently).

Conditional forms (11e 24.01): "If a weapon ability is followed by one or more keywords, when making
attacks with that weapon, that ability only applies if the target unit has one or more of those
keywords." A `non-` prefix inverts this: `LETHAL HITS: non-MONSTER/VEHICLE` applies only when the
target has none of MONSTER, VEHICLE (the Stompa seed prints it that way).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from engine import dice

KNOWN = (
    "SUSTAINED HITS",
    "LETHAL HITS",
    "DEVASTATING WOUNDS",
    "TORRENT",
    "BLAST",
    "RAPID FIRE",
    "MELTA",
    "ANTI",
    "TWIN-LINKED",
    "HEAVY",
    "LANCE",
    "IGNORES COVER",
    "HAZARDOUS",
    "CLEAVE",
    "PRECISION",
    "INDIRECT FIRE",
)
# Keywords that take a value, and whether that value may be a dice expression.
_VALUED = {"SUSTAINED HITS": "dice", "RAPID FIRE": "dice", "MELTA": "dice", "CLEAVE": "int", "BLAST": "int?"}


class KeywordError(ValueError):
    """A known weapon keyword whose value cannot be read."""


@dataclass(frozen=True)
class Condition:
    """Target keywords an ability depends on: any of `keywords` (or none of them when `negated`)."""

    keywords: tuple[str, ...]
    negated: bool = False

    def holds(self, target_keywords: frozenset[str]) -> bool:
        present = any(k in target_keywords for k in self.keywords)
        return not present if self.negated else present

    def __str__(self) -> str:
        return ("non-" if self.negated else "") + "/".join(self.keywords)


@dataclass(frozen=True)
class Keyword:
    """One parsed weapon keyword. `name` is canonical (upper case) or the raw text when unknown."""

    raw: str
    name: str
    value: dice.Dice | None = None  # SUSTAINED HITS X, RAPID FIRE X, MELTA X, CLEAVE X, BLAST X
    anti_keyword: str | None = None  # ANTI-X Y+
    threshold: int | None = None  # ANTI-X Y+
    condition: Condition | None = None
    known: bool = True

    def applies_to(self, target_keywords: frozenset[str]) -> bool:
        return self.condition is None or self.condition.holds(target_keywords)


_DASHES = str.maketrans({"\u2013": "-", "\u2014": "-", "\u2011": "-", "\u2010": "-", "\u2212": "-"})


@lru_cache(maxsize=4096)
def normalise_word(text: str) -> str:
    """Upper case, plain hyphens, single spaces: how keywords are compared."""
    return re.sub(r"\s+", " ", text.translate(_DASHES)).strip().upper()


def parse_keyword(raw: str) -> Keyword:
    """Parse one weapon keyword; unknown ones come back with known=False."""
    if not isinstance(raw, str):
        raise KeywordError("a keyword must be a string")
    return _parse_keyword(raw)


@lru_cache(maxsize=2048)
def _parse_keyword(raw: str) -> Keyword:
    text = normalise_word(raw)
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1].strip()
    condition = None
    if ":" in text:
        head, _, cond = text.partition(":")
        text = head.strip()
        condition = _parse_condition(cond.strip(), raw)
    if text.startswith("ANTI-") or text.startswith("ANTI "):
        m = re.fullmatch(r"ANTI[- ]([A-Z][A-Z0-9 '\-]*?) (\d)\+", text)
        if not m:
            raise KeywordError(f"cannot read {raw!r}; expected the form ANTI-INFANTRY 4+")
        threshold = int(m.group(2))
        if not 2 <= threshold <= 6:
            raise KeywordError(f"{raw!r}: the ANTI threshold must be between 2+ and 6+")
        return Keyword(raw, "ANTI", anti_keyword=m.group(1).strip(), threshold=threshold, condition=condition)
    for name in KNOWN:
        if text == name or text.startswith(name + " "):
            rest = text[len(name):].strip()
            kind = _VALUED.get(name)
            if kind is None:
                if rest:
                    return Keyword(raw, text, condition=condition, known=False)
                return Keyword(raw, name, condition=condition)
            if not rest:
                if kind == "int?":  # plain BLAST
                    return Keyword(raw, name, condition=condition)
                raise KeywordError(f"{raw!r} needs a value, e.g. {name} 1")
            try:
                value = dice.parse(rest)
            except dice.DiceError as exc:
                raise KeywordError(f"{raw!r}: {exc}") from None
            if kind in ("int", "int?") and value.count:
                raise KeywordError(f"{raw!r}: {name} takes a whole number, not dice")
            if value.maximum < 1:
                raise KeywordError(f"{raw!r}: the value must be at least 1")
            return Keyword(raw, name, value=value, condition=condition)
    return Keyword(raw, text, condition=condition, known=False)


def _parse_condition(text: str, raw: str) -> Condition:
    negated = False
    if text.startswith("NON-") or text.startswith("NON "):
        negated = True
        text = text[4:].strip()
    words = tuple(w.strip() for w in re.split(r"[/,]| OR ", text) if w.strip())
    if not words or any(not re.fullmatch(r"[A-Z][A-Z0-9 '\-]*", w) for w in words):
        raise KeywordError(f"cannot read the target condition in {raw!r}; expected e.g. ': non-MONSTER/VEHICLE'")
    return Condition(words, negated)


@dataclass(frozen=True)
class Weapon:
    """One weapon profile as in contract 1 (`skill` None means TORRENT / no roll)."""

    name: str
    range: int | str  # inches, or "melee"
    attacks: dice.Dice
    skill: int | None
    strength: int
    ap: int
    damage: dice.Dice
    keywords: tuple[Keyword, ...] = ()

    @property
    def melee(self) -> bool:
        return self.range == "melee"

    def has(self, name: str) -> bool:
        return any(k.name == name for k in self.keywords)


@dataclass(frozen=True)
class Group:
    """`models` attacking models each firing `weapon` (a weapon group of the volley)."""

    models: int
    weapon: Weapon


@dataclass(frozen=True)
class ModelGroup:
    """One model type of a mixed target (contract 1b): its profile and whether it is a CHARACTER.

    Damage modifiers apply to an attack allocated to one of these models, in the order of contract 1
    (docs/engine.md): `damage_set` (the Damage characteristic becomes X), `halve_damage` (rounding up),
    then `damage_reduction` (to a minimum of 1)."""

    name: str
    models: int
    toughness: int
    save: int  # 7 means no armour save
    invulnerable: int | None
    wounds: int
    feel_no_pain: int | None = None
    feel_no_pain_mortal: int | None = None
    damage_reduction: int = 0
    damage_set: int | None = None
    halve_damage: bool = False
    character: bool = False


@dataclass(frozen=True)
class Target:
    """The target unit. Its own profile fields describe a single-profile unit; with `groups` (two or
    more model groups, contract 1b) they hold the unit-level values the weapon rolls use: `models` is
    the whole unit, `toughness` the edition's unit toughness, and the rest those of the first group in
    allocation order (used only for notes)."""

    models: int
    toughness: int
    save: int  # 7 means no armour save
    invulnerable: int | None
    wounds: int
    feel_no_pain: int | None = None
    feel_no_pain_mortal: int | None = None
    damage_reduction: int = 0
    keywords: frozenset[str] = frozenset()
    wounds_lost: int = 0
    damage_set: int | None = None
    halve_damage: bool = False
    groups: tuple[ModelGroup, ...] = ()  # empty: single profile; else the model groups in request order

    @property
    def total_wounds(self) -> int:
        """Wounds the unit has left before the volley."""
        if self.groups:
            return sum(g.models * g.wounds for g in self.groups) - self.wounds_lost
        return self.models * self.wounds - self.wounds_lost

    @property
    def mixed(self) -> bool:
        """Two or more model groups: allocation follows contract 1b (engine.mixed)."""
        return len(self.groups) > 1


@dataclass(frozen=True)
class Context:
    half_range: bool = False
    stationary: bool = False
    charged: bool = False
    cover: bool = False
    hit_modifier: int = 0
    wound_modifier: int = 0
    save_modifier: int = 0
    reroll_hits: str | None = None  # None | "ones" | "failed" | "non_critical"
    reroll_wounds: str | None = None
    critical_hit: int = 6
    critical_wound: int = 6


@dataclass(frozen=True)
class Attacker:
    keywords: frozenset[str] = field(default_factory=frozenset)
