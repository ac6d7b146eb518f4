"""Building contract-1 engine requests from catalog datasheets and /sim options.

The datasheet schema (team brief) maps almost one-to-one onto the engine's weapon and target
profiles. The judgement calls, each recorded in docs/rules-notes.md (Simulation front end):
- a weapon with several profiles ("Supa-gatler - Aimed" / "Supa-gatler - Point Blank") fires one
  profile per attack; "all ranged" therefore takes the first profile of each such weapon and says so;
- a target with several model profiles is simulated with its first profile for every model, noted;
- Feel No Pain is read from an ability only when it is unconditional ("Feel No Pain 5+"), never from
  abilities with conditions ("While this model is leading a unit ..."); the `fnp` option overrides.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from bot.catalog.model import Entry
from bot.errors import UserError

ALL_RANGED = "*ranged"
ALL_MELEE = "*melee"
REROLL_CHOICES = ("none", "ones", "failed", "non_critical")
_PROFILE_SPLIT = re.compile(r"\s+[-–—]\s+")
_FNP_NAME = re.compile(r"^\s*feel no pain\s*(\d)\+\s*$", re.IGNORECASE)
_FNP_TEXT = re.compile(r"^\s*(\d)\+\s*\.?\s*$")
_FNP_MORTAL_NAME = re.compile(
    r"^\s*feel no pain\s*(\d)\+\s*(?:\(|against |vs\.? )\s*mortal wounds\)?\s*$", re.IGNORECASE
)


@dataclass
class Built:
    """A request plus the words the embed needs and front-end notes (choices the user should see)."""

    request: dict[str, Any]
    notes: list[str] = field(default_factory=list)


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


def distinct_weapons(weapons: list[dict[str, Any]], kind: str) -> tuple[list[dict[str, Any]], list[str]]:
    """The `kind` weapons with one profile per multi-profile weapon (the first), and notes saying so."""
    chosen: list[dict[str, Any]] = []
    notes: list[str] = []
    seen: dict[str, str] = {}
    for weapon in weapons:
        if weapon_kind(weapon) != kind:
            continue
        name = str(weapon.get("name", ""))
        base = str(weapon.get("weapon") or base_name(name))
        if base in seen:
            notes.append(
                f"{base}: fired as {seen[base]} only (one profile per attack; pick another with weapon:)"
            )
            continue
        seen[base] = name
        chosen.append(weapon)
    return chosen, list(dict.fromkeys(notes))


def select_weapons(
    weapons: list[dict[str, Any]], choice: str | None, *, single_model: bool = True
) -> tuple[list[dict[str, Any]], list[str]]:
    """The weapons `choice` names: one weapon (by name, as autocomplete sends it, or `#n`), or all of a
    single model's ranged weapons (one profile each), or its one melee weapon. Returns (weapons, notes).

    Units of several models list wargear *options*, not what each model carries, so "all" is refused
    for them rather than firing every option from every model. A model fights with one melee weapon
    (11e 04.01), so "all melee" is refused when there is more than one to choose from."""
    if not weapons:
        raise UserError("That datasheet lists no weapons to simulate.", field="attacker")
    if choice is None or not choice.strip():
        ranged, _ = distinct_weapons(weapons, "ranged")
        melee, _ = distinct_weapons(weapons, "melee")
        if len(ranged) == 1 or (single_model and ranged):
            choice = ALL_RANGED
        elif not ranged and (len(melee) == 1):
            choice = ALL_MELEE
        else:
            options = ", ".join(str(w.get("name")) for w in (ranged or melee)[:8])
            raise UserError(
                f"Pick a weapon with `weapon:` (this unit has several: {options}).", field="weapon"
            )
    choice = choice.strip()
    if choice in (ALL_RANGED, ALL_MELEE):
        kind = "ranged" if choice == ALL_RANGED else "melee"
        chosen, notes = distinct_weapons(weapons, kind)
        if not chosen:
            raise UserError(f"That datasheet has no {kind} weapons.", field="weapon")
        if len(chosen) > 1 and kind == "melee":
            names = ", ".join(str(w.get("name")) for w in chosen[:8])
            raise UserError(
                f"A model fights with one melee weapon (core rules 04.01): pick one of {names}.",
                field="weapon",
            )
        if len(chosen) > 1 and not single_model:
            names = ", ".join(str(w.get("name")) for w in chosen[:8])
            raise UserError(
                "This unit's datasheet lists wargear options, not what each model carries, so "
                f"pick one weapon (and `models:`) at a time: {names}.",
                field="weapon",
            )
        return chosen, notes
    if re.fullmatch(r"#\d{1,3}", choice):
        index = int(choice[1:]) - 1
        if 0 <= index < len(weapons):
            return [weapons[index]], []
    lowered = choice.lower()
    exact = [w for w in weapons if str(w.get("name", "")).lower() == lowered]
    if exact:
        return exact[:1], []
    partial = [w for w in weapons if lowered in str(w.get("name", "")).lower()]
    if len(partial) == 1:
        return partial, []
    names = ", ".join(str(w.get("name")) for w in (partial or weapons)[:8])
    if partial:
        raise UserError(f"`{choice[:60]}` matches several weapons: {names}. Pick one.", field="weapon")
    raise UserError(f"This unit has no weapon `{choice[:60]}`; its weapons: {names}.", field="weapon")


def feel_no_pain(abilities: list[dict[str, Any]]) -> tuple[int | None, int | None]:
    """(FNP, FNP vs mortal wounds) from unconditional abilities only; (None, None) when unsure."""
    general = mortal = None
    for ability in abilities:
        name = str(ability.get("name", ""))
        text = str(ability.get("text", ""))
        if match := _FNP_MORTAL_NAME.match(name):
            value = int(match.group(1))
            mortal = value if mortal is None else min(mortal, value)
            continue
        match = _FNP_NAME.match(name)
        if match is None and name.strip().lower() == "feel no pain":
            match = _FNP_TEXT.match(text)
        if match:
            value = int(match.group(1))
            general = value if general is None else min(general, value)
    if general is not None and mortal is not None and mortal >= general:
        mortal = None  # the general value already covers mortal wounds at least as well
    return general, mortal


def datasheet_target(
    data: dict[str, Any], *, models: int | None, fnp: int | None
) -> tuple[dict[str, Any], str, list[str]]:
    """A contract-1 target from a datasheet: (target, profile name, notes)."""
    profiles = data.get("profiles") or []
    if not profiles:
        raise UserError("That datasheet has no model profile (T, Sv, W) to shoot at.", field="target")
    profile = profiles[0]
    notes: list[str] = []
    if len(profiles) > 1:
        different = any(
            (p.get("T"), p.get("Sv"), p.get("InSv"), p.get("W"))
            != (profile.get("T"), profile.get("Sv"), profile.get("InSv"), profile.get("W"))
            for p in profiles[1:]
        )
        if different:
            notes.append(
                f"target has several model profiles; every model uses the {profile.get('name')} profile"
            )
    parsed_fnp, parsed_mortal = feel_no_pain(data.get("abilities") or [])
    if fnp is not None:
        parsed_fnp = fnp
    count = models if models is not None else int(data.get("models_min") or 1)
    keywords = [str(k) for k in (data.get("keywords") or [])] + [
        str(k) for k in (data.get("faction_keywords") or [])
    ]
    target = {
        "models": count,
        "toughness": profile.get("T"),
        "save": profile.get("Sv"),
        "invulnerable": profile.get("InSv"),
        "wounds": profile.get("W"),
        "feel_no_pain": parsed_fnp,
        "feel_no_pain_mortal": parsed_mortal,
        "damage_reduction": 0,
        "keywords": list(dict.fromkeys(keywords)),
        "wounds_lost": 0,
    }
    return target, str(profile.get("name") or ""), notes


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
