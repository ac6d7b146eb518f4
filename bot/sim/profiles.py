"""Ad-hoc profile strings for `/sim custom`, turned into contract-1 request pieces.

Players type profiles the way they read them off a datasheet, so the parser is forgiving about form
(`BS=3` or `BS=3+`, `WS` for `BS`, curly quotes from phone keyboards, `kw="A, B"` or repeated `kw=`)
and strict about meaning: every value it cannot read becomes a `UserError` that names the field,
never a silently-guessed number. Only syntax and sane bounds are checked here; the engine enforces its
own size limits (and the service turns those into a message that suggests Monte Carlo).

Attacker: one or more weapon groups separated by `;`, each like
    `A=D6+2 BS=3 S=14 AP=-3 D=D6+2 kw="BLAST 2" models=1 name="Deffkannon" range=72`
and, anywhere, the attacking unit's keywords: `unit_kw="VEHICLE"` (11e hazard rolls depend on them).
Target:
    `T=5 Sv=4 W=4 inv=4 models=3 fnp=5 fnp_mortal=5 dr=1 wounds_lost=1 kw="INFANTRY"`
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from bot.errors import UserError
from engine import limits

MAX_PROFILE_CHARS = 1000
MAX_GROUPS = 8
MAX_KEYWORDS = 20
MAX_KEYWORD_CHARS = 60
MAX_NAME_CHARS = 60
MAX_NUMBER = 1000  # no 40k characteristic comes near; the engine applies the real limits

_QUOTES = str.maketrans({"“": '"', "”": '"', "„": '"', "«": '"', "»": '"', "‘": "'", "’": "'", "＝": "="})
_PAIR = re.compile(r"""([A-Za-z_][A-Za-z_0-9]*)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"';,]+))""")
_SEPARATORS = " \t\r\n,"
# Unquoted keywords run on over spaces and commas until the next `key=`, so `kw=SUSTAINED HITS 1, LANCE` works.
_KW_KEYS = {"kw", "keywords", "keyword"}
# The attacking unit's own keywords (11e hazard rolls look for MONSTER/VEHICLE), allowed in any group.
_UNIT_KW_KEYS = {"unit_kw", "unit_keywords", "attacker_kw"}
_KW_BARE = re.compile(r"""[^\s"';=,]+(?:[\s,]+(?![A-Za-z_]\w*\s*=)[^\s"';=,]+)*""")
_DICE = re.compile(r"^(?:(\d{1,12})|(\d{0,3})D(\d{1,3})(?:\+(\d{1,4}))?)$")
_SKILL = re.compile(r"^(\d{1,3})\+?$")
_NONE_WORDS = {"-", "n/a", "na", "none", "no", "—", "–", "null", "off"}
_TORRENT_WORDS = {"torrent", "auto", "*"}

_ATTACKER_KEYS = {
    "a": "A",
    "attacks": "A",
    "bs": "BS",
    "ws": "BS",
    "skill": "BS",
    "s": "S",
    "strength": "S",
    "ap": "AP",
    "d": "D",
    "damage": "D",
    "kw": "kw",
    "keywords": "kw",
    "keyword": "kw",
    "models": "models",
    "n": "models",
    "range": "range",
    "r": "range",
    "name": "name",
}
_TARGET_KEYS = {
    "t": "T",
    "toughness": "T",
    "sv": "Sv",
    "save": "Sv",
    "w": "W",
    "wounds": "W",
    "inv": "inv",
    "invuln": "inv",
    "invulnerable": "inv",
    "models": "models",
    "n": "models",
    "fnp": "fnp",
    "fnp_mortal": "fnp_mortal",
    "fnpm": "fnp_mortal",
    "dr": "dr",
    "damage_reduction": "dr",
    "wounds_lost": "wounds_lost",
    "wl": "wounds_lost",
    "kw": "kw",
    "keywords": "kw",
    "keyword": "kw",
    "name": "name",
}
ATTACKER_HELP = (
    'A=D6+2 BS=3 S=14 AP=-3 D=D6+2 kw="BLAST 2" (also models=, range=, name=, unit_kw=; WS for melee)'
)
TARGET_HELP = 'T=5 Sv=4 W=4 inv=4 models=3 (also fnp=, fnp_mortal=, dr=, wounds_lost=, kw="INFANTRY")'


@dataclass(frozen=True)
class AttackerProfile:
    """What `/sim custom attacker:` describes: the volley, weapon groups resolved in order."""

    volley: list[dict[str, Any]]
    keywords: list[str] = field(default_factory=list)  # the attacking unit's keywords (`unit_kw=`)


@dataclass(frozen=True)
class TargetProfile:
    """What `/sim custom target:` describes: a contract-1 `target` dict and an optional display name."""

    target: dict[str, Any]
    name: str | None = None


def _fail(side: str, key: str, message: str) -> UserError:
    return UserError(f"{side} `{key}`: {message}", field=f"{side}.{key}")


def _show(raw: str) -> str:
    """Echo a user value back safely: short, no backticks that would break the inline code span."""
    cleaned = raw.replace("`", "'").replace("\n", " ")
    return cleaned if len(cleaned) <= 30 else cleaned[:29] + "…"


def _tokenize(text: str, side: str) -> list[list[tuple[str, str, str]]]:
    """Split `text` into `;`-separated groups of (key as typed, lowercase key, value) triples."""
    groups: list[list[tuple[str, str, str]]] = [[]]
    pos = 0
    while pos < len(text):
        char = text[pos]
        if char in _SEPARATORS:
            pos += 1
            continue
        if char == ";":
            groups.append([])
            pos += 1
            continue
        match = _PAIR.match(text, pos)
        if match is None:
            chunk = re.split(r"[\s,;]", text[pos:], maxsplit=1)[0]
            if re.match(r"""[A-Za-z_]\w*\s*=\s*["']""", text[pos:]):
                raise UserError(f"{side}: the quote after `{_show(chunk)}` is never closed.", field=side)
            raise UserError(
                f"{side}: I could not read `{_show(chunk)}`; write settings as NAME=VALUE, e.g. "
                f"{ATTACKER_HELP if side == 'attacker' else TARGET_HELP}.",
                field=side,
            )
        key = match.group(1)
        value = next(g for g in match.group(2, 3, 4) if g is not None)
        end = match.end()
        if key.lower() in _KW_KEYS | _UNIT_KW_KEYS and match.group(4) is not None:
            bare = _KW_BARE.match(text, match.start(4))
            if bare is not None:
                value, end = bare.group(0), bare.end()
        groups[-1].append((key, key.lower(), value.strip()))
        pos = end
    return [group for group in groups if group] or [[]]


def _prepare(text: str, side: str) -> str:
    if not isinstance(text, str) or not text.strip():
        raise UserError(
            f"{side}: the profile is empty; write e.g. {ATTACKER_HELP if side == 'attacker' else TARGET_HELP}.",
            field=side,
        )
    if len(text) > MAX_PROFILE_CHARS:
        raise UserError(f"{side}: the profile is longer than {MAX_PROFILE_CHARS} characters.", field=side)
    return text.translate(_QUOTES)


def _collect(group: list[tuple[str, str, str]], keys: dict[str, str], side: str) -> dict[str, Any]:
    """Map typed keys onto canonical ones; repeated keywords accumulate, other repeats are an error."""
    values: dict[str, Any] = {}
    keywords: list[str] = []
    for typed, lowered, value in group:
        canonical = keys.get(lowered)
        if canonical is None:
            known = ", ".join(dict.fromkeys(keys.values()))
            raise _fail(side, _show(typed), f"unknown setting; use {known}.")
        if canonical == "kw":
            keywords.extend(_keywords(value, side))
            continue
        if canonical in values:
            raise _fail(side, canonical, "given twice.")
        values[canonical] = value
    if len(keywords) > MAX_KEYWORDS:
        raise _fail(side, "kw", f"at most {MAX_KEYWORDS} keywords.")
    values["kw"] = keywords
    return values


def _keywords(value: str, side: str) -> list[str]:
    out = []
    for part in value.split(","):
        keyword = " ".join(part.split())
        if not keyword:
            continue
        if len(keyword) > MAX_KEYWORD_CHARS:
            raise _fail(side, "kw", f"the keyword `{_show(keyword)}` is too long.")
        if not re.fullmatch(r"[A-Za-z0-9+\-/:' ]+", keyword):
            raise _fail(
                side,
                "kw",
                f'`{_show(keyword)}` is not a keyword; keywords are words like "SUSTAINED HITS 1".',
            )
        out.append(keyword.upper())
    return out


def parse_dice(raw: str, side: str, key: str, *, minimum: int = 0) -> int | str:
    """`3`, `D3`, `D6`, `2D6`, `D6+2`, `3D6+3` -> int or normalised string; anything else is a UserError."""
    text = raw.strip().upper().replace(" ", "")
    match = _DICE.match(text)
    hint = "use a number or dice such as D3, D6, 2D6, D6+2"
    if re.fullmatch(r"-\d{1,6}", text):
        raise _fail(side, key, f"must be at least {minimum}, got {text}.")
    if match is None:
        raise _fail(side, key, f"`{_show(raw)}` is not a number or dice expression; {hint}.")
    flat, count, sides, plus = match.groups()
    if flat is not None:
        number = int(flat)
        if number < minimum:
            raise _fail(side, key, f"must be at least {minimum}, got {number}.")
        if number > limits.MAX_FLAT:
            raise _fail(side, key, f"{number} is more than {limits.MAX_FLAT}.")
        return number
    if sides not in ("3", "6"):
        raise _fail(side, key, f"D{sides} is not a 40k dice; {hint}.")
    n = int(count) if count else 1
    if n < 1:
        raise _fail(side, key, f"`{_show(raw)}` rolls no dice; {hint}.")
    bonus = int(plus) if plus else 0
    if n > limits.MAX_DICE_PER_EXPRESSION:
        raise _fail(side, key, f"`{_show(raw)}` rolls more than {limits.MAX_DICE_PER_EXPRESSION} dice.")
    if bonus > limits.MAX_FLAT:
        raise _fail(side, key, f"`{_show(raw)}` adds more than {limits.MAX_FLAT}.")
    return f"{n if n > 1 else ''}D{sides}" + (f"+{bonus}" if bonus else "")


def _int(raw: str, side: str, key: str, *, low: int, high: int, example: str) -> int:
    text = raw.strip()
    if not re.fullmatch(r"[+-]?\d{1,6}", text):
        raise _fail(side, key, f"`{_show(raw)}` is not a whole number (e.g. {example}).")
    number = int(text)
    if not low <= number <= high:
        raise _fail(side, key, f"must be between {low} and {high}, got {number}.")
    return number


def _roll(raw: str, side: str, key: str, *, allow_none: bool) -> int | None:
    """A D6 target such as `3`, `3+` (2..6); `-`/`none` where the characteristic may be absent."""
    text = raw.strip().lower()
    if allow_none and text in _NONE_WORDS:
        return None
    match = _SKILL.match(text)
    if match is None:
        extra = " or - for none" if allow_none else ""
        raise _fail(side, key, f"`{_show(raw)}` is not a roll such as 3+ (2+ to 6+{extra}).")
    number = int(match.group(1))
    if not 2 <= number <= 6:
        raise _fail(side, key, f"must be 2+ to 6+, got {number}+.")
    return number


def parse_attacker(text: str) -> AttackerProfile:
    """Parse `/sim custom attacker:`; one weapon group per `;`-separated part."""
    text = _prepare(text, "attacker")
    groups = _tokenize(text, "attacker")
    if len(groups) > MAX_GROUPS:
        raise UserError(f"attacker: at most {MAX_GROUPS} weapon groups (separated by ;).", field="attacker")
    unit_keywords: list[str] = []
    weapon_groups = []
    for group in groups:
        unit_keywords += [
            k for _, lowered, value in group if lowered in _UNIT_KW_KEYS for k in _keywords(value, "attacker")
        ]
        rest = [item for item in group if item[1] not in _UNIT_KW_KEYS]
        if rest or len(groups) == 1:
            weapon_groups.append(rest)
    if len(unit_keywords) > MAX_KEYWORDS:
        raise _fail("attacker", "unit_kw", f"at most {MAX_KEYWORDS} keywords.")
    volley = [_weapon_group(group, index) for index, group in enumerate(weapon_groups, start=1)]
    return AttackerProfile(volley=volley, keywords=list(dict.fromkeys(unit_keywords)))


def _weapon_group(group: list[tuple[str, str, str]], index: int) -> dict[str, Any]:
    side = "attacker"
    typed_keys = {lowered for _, lowered, _ in group}
    values = _collect(group, _ATTACKER_KEYS, side)
    for required in ("A", "S", "D"):
        if required not in values:
            raise _fail(side, required, f"missing (weapon {index}); e.g. {ATTACKER_HELP}.")
    keywords: list[str] = values["kw"]
    attacks = parse_dice(values["A"], side, "A", minimum=1)
    skill_raw = values.get("BS")
    if skill_raw is None:
        if "TORRENT" not in keywords:
            raise _fail(side, "BS", f"missing (weapon {index}); write BS=3 (or BS=N/A for TORRENT).")
        skill = None
    elif skill_raw.strip().lower() in _TORRENT_WORDS | _NONE_WORDS:
        skill = None
        if "TORRENT" not in keywords:
            keywords.append("TORRENT")
    else:
        skill = _roll(skill_raw, side, "BS", allow_none=False)
    strength = _int(values["S"], side, "S", low=1, high=MAX_NUMBER, example="S=5")
    ap_raw = values.get("AP", "0")
    ap = _int(ap_raw, side, "AP", low=-MAX_NUMBER, high=MAX_NUMBER, example="AP=-2")
    if ap > 0:
        raise _fail(side, "AP", f"must be 0 or negative, as printed on datasheets (e.g. AP=-{ap}).")
    damage = parse_dice(values["D"], side, "D", minimum=1)
    models = _int(values.get("models", "1"), side, "models", low=1, high=MAX_NUMBER, example="models=5")
    melee = "ws" in typed_keys
    range_raw = values.get("range")
    if range_raw is None:
        weapon_range: int | str = "melee" if melee else 24
    elif range_raw.strip().lower() == "melee":
        weapon_range = "melee"
    else:
        weapon_range = _int(range_raw.rstrip('"'), side, "range", low=1, high=MAX_NUMBER, example="range=24")
    name = " ".join(values.get("name", "").split()) or f"Weapon {index}"
    if len(name) > MAX_NAME_CHARS:
        raise _fail(side, "name", f"at most {MAX_NAME_CHARS} characters.")
    weapon = {
        "name": name,
        "range": weapon_range,
        "attacks": attacks,
        "skill": skill,
        "strength": strength,
        "ap": ap,
        "damage": damage,
        "keywords": keywords,
    }
    return {"models": models, "weapon": weapon}


def parse_target(text: str) -> TargetProfile:
    """Parse `/sim custom target:` into a contract-1 `target` dict."""
    side = "target"
    text = _prepare(text, side)
    groups = _tokenize(text, side)
    if len(groups) > 1:
        raise UserError("target: one profile only (no `;`).", field=side)
    values = _collect(groups[0], _TARGET_KEYS, side)
    for required in ("T", "Sv", "W"):
        if required not in values:
            raise _fail(side, required, f"missing; e.g. {TARGET_HELP}.")
    toughness = _int(values["T"], side, "T", low=1, high=MAX_NUMBER, example="T=4")
    save_raw = values["Sv"].strip().lower()
    save = (
        7
        if save_raw in _NONE_WORDS or save_raw in ("7", "7+")
        else _roll(save_raw, side, "Sv", allow_none=False)
    )
    wounds = _int(values["W"], side, "W", low=1, high=MAX_NUMBER, example="W=2")
    target: dict[str, Any] = {
        "models": _int(values.get("models", "1"), side, "models", low=1, high=MAX_NUMBER, example="models=5"),
        "toughness": toughness,
        "save": save,
        "invulnerable": _roll(values.get("inv", "-"), side, "inv", allow_none=True),
        "wounds": wounds,
        "feel_no_pain": _roll(values.get("fnp", "-"), side, "fnp", allow_none=True),
        "feel_no_pain_mortal": _roll(values.get("fnp_mortal", "-"), side, "fnp_mortal", allow_none=True),
        "damage_reduction": _int(values.get("dr", "0"), side, "dr", low=0, high=MAX_NUMBER, example="dr=1"),
        "keywords": values["kw"],
        "wounds_lost": _int(
            values.get("wounds_lost", "0"), side, "wounds_lost", low=0, high=MAX_NUMBER, example="wl=1"
        ),
    }
    if target["wounds_lost"] >= wounds:
        raise _fail(
            side, "wounds_lost", f"must be less than W={wounds} (a model with no wounds left is dead)."
        )
    name = " ".join(values.get("name", "").split())
    if len(name) > MAX_NAME_CHARS:
        raise _fail(side, "name", f"at most {MAX_NAME_CHARS} characters.")
    return TargetProfile(target=target, name=name or None)
