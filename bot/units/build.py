"""Any catalog datasheet -> `Unit`.

Order of sources (each answer names the one used):
1. the unit the wh40kdc importer stored with the entry (`data["unit"]`: composition with default weapons);
2. the entry's own composition and loadout words (seed pages, game-datacards `loadout`, Wahapedia
   `Datasheets_unit_composition`/`loadout`): "1 Boss Nob", "9-19 Boyz", "The Boss Nob is equipped with:
   slugga; big choppa.", "This model is equipped with: 3 big shootas; ...";
3. the linked complete datasheet's stored unit (a seed page without a loadout, like the Stompa's);
4. otherwise one model type, every model with the profile table's first profile and no known loadout,
   stated as assumptions.

Feel No Pain is read from an ability only when it is unconditional ("Feel No Pain 5+"), never from
abilities with conditions ("While this model is leading a unit ..."); see docs/rules-notes.md.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from bot.units.model import Carried, ModelType, Profile, Unit, norm

_FNP_NAME = re.compile(r"^\s*feel no pain\s*(\d)\+\s*$", re.IGNORECASE)
_FNP_TEXT = re.compile(r"^\s*(\d)\+\s*\.?\s*$")
_FNP_MORTAL_NAME = re.compile(
    r"^\s*feel no pain\s*(\d)\+\s*(?:\(|against |vs\.? )\s*mortal wounds\)?\s*$", re.IGNORECASE
)
_COMPOSITION = re.compile(r"^\W*(\d+)(?:\s*[-–]\s*(\d+))?\s+(.+?)\W*$")
_EQUIPPED = re.compile(
    r"^\W*(?:the|every|each|this|these|all)?\s*(.+?)\s+(?:is|are|models? (?:is|are))\s+equipped with:?\s*(.+?)\.?$",
    re.IGNORECASE,
)
_COUNT = re.compile(r"^(\d+)\s+(.+)$")
_ATTACHED = re.compile(r"attached to(?: the following units?)?:?\s*(.*)", re.IGNORECASE | re.DOTALL)


def _int(value: Any) -> int | None:
    match = re.search(r"\d+", str(value)) if value is not None else None
    return int(match.group()) if match else None


def _profile(p: dict[str, Any], fnp: tuple[int | None, int | None]) -> Profile:
    return Profile(
        name=str(p.get("name") or ""), movement=p.get("M"), toughness=_int(p.get("T")), save=_int(p.get("Sv")),
        wounds=_int(p.get("W")), leadership=_int(p.get("Ld")), oc=_int(p.get("OC")),
        invulnerable=_int(p.get("InSv")), feel_no_pain=fnp[0], feel_no_pain_mortal=fnp[1],
    )


def _leader_names(text: str | None) -> tuple[str, ...]:
    if not text:
        return ()
    match = _ATTACHED.search(text)
    if not match:
        return ()
    parts = re.split(r"[,;\n•▪]|\s-\s|\band\b", match.group(1))
    return tuple(dict.fromkeys(p.strip(" .*■-") for p in parts if p.strip(" .*■-")))


def _weapon_matches(words: str, weapons: list[dict[str, Any]]) -> str | None:
    """The datasheet weapon a loadout word names ("big shootas" -> "Big Shoota"), or None."""
    key = norm(words)
    for w in weapons:
        for name in (w.get("weapon"), w.get("name"), re.split(r"\s+[-–—]\s+", str(w.get("name")))[0]):
            if name and norm(str(name)) == key:
                return str(w.get("weapon") or re.split(r"\s+[-–—]\s+", str(w.get("name")))[0])
    return None


def _loadouts(text: str, weapons: list[dict[str, Any]]) -> tuple[dict[str, list[Carried]], list[str]]:
    """Model name (normalised; "" for "this model") -> what it carries, plus words that matched no weapon."""
    out: dict[str, list[Carried]] = {}
    unknown: list[str] = []
    sentences = re.split(r"(?<=\.)\s+|\n", text.replace("**", ""))
    for match in filter(None, (_EQUIPPED.match(sentence.strip()) for sentence in sentences)):
        who = norm(match.group(1))
        who = "" if who in ("model", "this model", "every model", "each model", "all model") else who
        carried: list[Carried] = []
        for item in re.split(r";|,", match.group(2)):
            item = item.strip(" .")
            if not item:
                continue
            count = 1
            if m := _COUNT.match(item):
                count, item = int(m.group(1)), m.group(2)
            name = _weapon_matches(item, weapons)
            if name is None:
                unknown.append(item)
                continue
            carried.append(Carried(name, count))
        out[who] = carried
    return out, unknown


def _character_types(names: list[str], unit_name: str, keywords: list[str], text: str) -> set[str]:
    """Which model types are CHARACTERs: all of a one-type unit; in a mixed unit the type a keyword line
    names ("GRIMNYR MODEL: CHARACTER") or, failing that, the type named like the unit."""
    if not any("character" in k.lower() for k in keywords) and "CHARACTER" not in text:
        return set()
    if len(names) == 1:
        return set(names)
    named = {n for n in names if re.search(rf"{re.escape(n.upper())} MODELS?:[^\n]*CHARACTER", text.upper())}
    if named:
        return named
    return {n for n in names if norm(n) == norm(unit_name)}


def from_text(name: str, edition: str, source: str, data: dict[str, Any], fnp: tuple[int | None, int | None]
              ) -> Unit | None:
    """A unit from composition and loadout words; None when the words give no loadout at all."""
    weapons = list(data.get("weapons") or [])
    lines = [str(c) for c in data.get("composition") or []]
    text = "\n".join([*lines, str(data.get("loadout") or "")])
    loadouts, unknown = _loadouts(text, weapons)
    if not loadouts:
        return None
    profiles = list(data.get("profiles") or [])
    assumptions: list[str] = []
    types: list[tuple[str, int, int]] = []
    for line in lines:
        if "equipped" in line.lower():
            continue
        if m := _COMPOSITION.match(line.replace("**", "")):
            label = re.sub(r"\s+models?$", "", m.group(3).strip(" *"), flags=re.IGNORECASE)
            types.append((label, int(m.group(1)), int(m.group(2) or m.group(1))))
    if not types:
        low = int(data.get("models_min") or 1)
        types = [(profiles[0].get("name") if profiles else name, low, int(data.get("models_max") or low))]
        assumptions.append(f"{name}: composition not stated; {low} model(s) of one type assumed")
    keywords = [str(k) for k in data.get("keywords") or []]
    characters = _character_types([t[0] for t in types], name, keywords, str(data.get("keywords_text") or text))
    models: list[ModelType] = []
    for label, low, high in types:
        key = norm(label)
        profile = next((p for p in profiles if norm(p.get("name", "")) == key), None)
        if profile is None:
            profile = next((p for p in profiles if norm(p.get("name", "")) in key or key in norm(p.get("name", ""))),
                           profiles[0] if profiles else {})
            if len(profiles) > 1:
                assumptions.append(f"{label}: uses the {profile.get('name')} profile (closest name)")
        carried = loadouts.get(key)
        if carried is None:
            carried = next((v for k, v in loadouts.items() if k and (k in key or key in k)), None)
        if carried is None and "" in loadouts:  # "Every model is equipped with: ..."
            carried = loadouts[""]
        if carried is None and len(types) == 1:
            carried = next(iter(loadouts.values()))
        if carried is None:
            assumptions.append(f"{label}: loadout not stated")
        models.append(ModelType(label, low, high, _profile(profile, fnp), label in characters, tuple(carried or ())))
    if unknown:
        assumptions.append("loadout words matched no weapon profile: " + ", ".join(dict.fromkeys(unknown)))
    return Unit(
        name=name, edition=edition, source=f"{source} (composition and loadout text)", models=tuple(models),
        weapons=tuple(weapons), leads=_leader_names(data.get("leader")), keywords=tuple(keywords),
        assumptions=tuple(assumptions),
    )


def fallback(name: str, edition: str, source: str, data: dict[str, Any], fnp: tuple[int | None, int | None]
             ) -> Unit:
    """One model type, first profile, no known loadout: every weapon of the datasheet is an option."""
    profiles = list(data.get("profiles") or [{}])
    low = int(data.get("models_min") or 1)
    high = int(data.get("models_max") or low)
    keywords = [str(k) for k in data.get("keywords") or []]
    notes = [f"{name}: the source states no loadout; weapons are chosen with `weapon:`"]
    if len(profiles) > 1:
        notes.append(f"{name}: several model profiles but no composition; every model uses {profiles[0].get('name')}")
    model = ModelType(str(profiles[0].get("name") or name), low, high, _profile(profiles[0], fnp),
                      any("character" in k.lower() for k in keywords), ())
    return Unit(name=name, edition=edition, source=source, models=(model,), weapons=tuple(data.get("weapons") or ()),
                leads=_leader_names(data.get("leader")), keywords=tuple(keywords), assumptions=tuple(notes))


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


def unit_for(entry: Any, linked: Any | None = None) -> Unit:
    """The unit as fielded for catalog datasheet `entry` (`linked`: its complete datasheet, if any)."""
    data = entry.data or {}
    unit = _unit_for(entry, linked, data)
    # Faction keywords count as the unit's keywords for ANTI-<keyword> and conditional weapon keywords.
    extra = [str(k) for k in data.get("faction_keywords") or [] if str(k) not in unit.keywords]
    return replace(unit, keywords=(*unit.keywords, *dict.fromkeys(extra))) if extra else unit


def _unit_for(entry: Any, linked: Any | None, data: dict[str, Any]) -> Unit:
    fnp = feel_no_pain(data.get("abilities") or [])
    if data.get("unit"):
        return Unit.from_json({**data["unit"], "weapons": data.get("weapons") or []})
    built = from_text(entry.name, entry.edition, entry.source, data, fnp)
    if built is not None:
        return built
    if linked is not None and (linked.data or {}).get("unit"):
        unit = Unit.from_json({**linked.data["unit"], "weapons": linked.data.get("weapons") or []})
        own = list(data.get("weapons") or [])
        if own:  # the entry's own weapon profiles (the seed is the spec); the linked ones fill gaps
            mine = {norm(str(w.get("weapon") or re.split(r"\s+[-–—]\s+", str(w.get("name")))[0])) for w in own}
            extra = [w for w in unit.weapons if norm(str(w.get("weapon") or w.get("name"))) not in mine]
            unit = replace(unit, weapons=(*own, *extra))
        return replace(unit, name=entry.name, source=f"{entry.source} + {linked.source} (composition)",
                       assumptions=(*unit.assumptions,
                                    f"{entry.name}: composition and loadout from {linked.source}"))
    return fallback(entry.name, entry.edition, entry.source, data, fnp)
