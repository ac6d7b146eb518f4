"""The pieces of a contract-1 request shared by /sim unit and /sim custom: catalog weapon -> engine weapon,
the situational options, and the request itself. (Feel No Pain read from ability names is part of a
datasheet's unit: bot/units/build.py.) What fires at what, for datasheets, is bot/sim/fielded.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from bot.catalog.model import Entry

REROLL_CHOICES = ("none", "ones", "failed", "non_critical")
_PROFILE_SPLIT = re.compile(r"\s+[-–—]\s+")


def _dice(value: Any) -> int | str:
    text = str(value).strip()
    return int(text) if text.isdigit() else text


def engine_weapon(weapon: dict[str, Any]) -> dict[str, Any]:
    """A catalog weapon (datasheet schema) as a contract-1 weapon."""
    return {
        "name": str(weapon.get("name", "weapon")),
        "range": weapon.get("range", "melee"),
        "attacks": _dice(weapon.get("A", "1")),
        "skill": weapon.get("skill"),
        "strength": weapon.get("S"),
        "ap": weapon.get("AP", 0),
        "damage": _dice(weapon.get("D", "1")),
        "keywords": [str(k) for k in weapon.get("keywords", [])],
    }


def base_name(name: str) -> str:
    """`Supa-gatler - Aimed` -> `Supa-gatler`; names without a profile suffix are returned unchanged."""
    return _PROFILE_SPLIT.split(name, maxsplit=1)[0].strip()


def weapon_kind(weapon: dict[str, Any]) -> str:
    kind = weapon.get("type")
    if kind in ("ranged", "melee"):
        return kind
    return "melee" if weapon.get("range") == "melee" else "ranged"


@dataclass(frozen=True)
class SimOptions:
    """The situational options both /sim subcommands share."""

    edition: str
    method: str = "exact"
    half_range: bool = False
    stationary: bool = False
    charged: bool = False
    cover: bool = False
    hit_modifier: int = 0
    wound_modifier: int = 0
    save_modifier: int = 0
    reroll_hits: str = "none"
    reroll_wounds: str = "none"
    critical_hit: int = 6
    critical_wound: int = 6

    def context(self) -> dict[str, Any]:
        return {
            "half_range": self.half_range,
            "stationary": self.stationary,
            "charged": self.charged,
            "cover": self.cover,
            "hit_modifier": self.hit_modifier,
            "wound_modifier": self.wound_modifier,
            "save_modifier": self.save_modifier,
            "reroll_hits": None if self.reroll_hits == "none" else self.reroll_hits,
            "reroll_wounds": None if self.reroll_wounds == "none" else self.reroll_wounds,
            "critical_hit": self.critical_hit,
            "critical_wound": self.critical_wound,
        }

    def describe(self) -> list[str]:
        """The non-default options in words, for the embed."""
        words = []
        for flag, label in (
            (self.half_range, "half range"),
            (self.stationary, "remained stationary"),
            (self.charged, "charged"),
            (self.cover, "target in cover"),
        ):
            if flag:
                words.append(label)
        for value, label in (
            (self.hit_modifier, "hit"),
            (self.wound_modifier, "wound"),
            (self.save_modifier, "save"),
        ):
            if value:
                words.append(f"{label} {value:+d}")
        reroll_words = {"ones": "re-roll 1s", "failed": "re-roll fails", "non_critical": "re-roll non-crits"}
        if self.reroll_hits != "none":
            words.append(f"hits: {reroll_words[self.reroll_hits]}")
        if self.reroll_wounds != "none":
            words.append(f"wounds: {reroll_words[self.reroll_wounds]}")
        if self.critical_hit != 6:
            words.append(f"critical hits on {self.critical_hit}+")
        if self.critical_wound != 6:
            words.append(f"critical wounds on {self.critical_wound}+")
        return words


def build_request(
    volley: list[dict[str, Any]],
    target: dict[str, Any],
    options: SimOptions,
    *,
    attacker_keywords: list[str] | None = None,
) -> dict[str, Any]:
    return {
        "edition": options.edition,
        "method": options.method,
        "volley": volley,
        "attacker": {"keywords": list(attacker_keywords or [])},
        "target": target,
        "context": options.context(),
    }


def with_profiles(entry: Entry, complete: Entry | None) -> Entry:
    """A datasheet whose source prints no profile table (the Stompa seed page) borrows the profiles of the
    complete datasheet the catalog links it to, and keeps its own weapons and keywords (the seed is the spec)."""
    if entry.data.get("profiles") or complete is None or not complete.data.get("profiles"):
        return entry
    data = {**complete.data, **{k: v for k, v in entry.data.items() if v and k != "incomplete"}}
    data["profiles"] = complete.data["profiles"]
    return replace(entry, source=f"{entry.source} + {complete.source} (profiles)", data=data)
