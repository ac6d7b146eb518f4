"""Parser for the seed page format (`data/seeds/*.txt`): a text scrape of one datasheet page.

A page is: a title line ("Orks – Stompa"), the datasheet (profiles, weapon tables, abilities,
composition, points, keywords), summary lists (stratagems, detachment abilities, enhancements), and
then a flat run of blocks: core rules, stratagems, detachment rules, enhancements and keyword indexes,
often glued together ("...target.Oathband Detachment"), with repeated lines and repeated blocks.

The parser unglues lines, cuts the run into blocks by their headers, turns each block into an
`Entry`, and merges repeated blocks (same edition, kind, scope and name) paragraph by paragraph.
Nothing is typed in by hand: every name, number and text comes from the page.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from bot.catalog.importers.common import detachment_entries, sheet_text, weapon_line
from bot.catalog.keywords import split_name_keywords
from bot.catalog.model import CatalogImportError, Entry, make_id, slug
from bot.catalog.normalize import normalize

DATASET = "seeds"
MAX_PAGE_BYTES = 2_000_000

FIELDS = ("WHEN", "TARGET", "EFFECT", "RESTRICTIONS")
BEHAVIOUR_FIELDS = ("MAXIMUM DISTANCE", "SET-UP DISTANCE", "ELIGIBLE IF", "BEFORE MOVING", "WHILE MOVING",
                    "AFTER MOVING", "WHILE SHOOTING", "AFTER SHOOTING", "EFFECT")
_FIELD_LINE = re.compile(r"^(WHEN|TARGET|EFFECT|RESTRICTIONS|MAXIMUM DISTANCE|SET-UP DISTANCE|ELIGIBLE IF|"
                         r"BEFORE MOVING|WHILE MOVING|AFTER MOVING|WHILE SHOOTING|AFTER SHOOTING):\s*(.*)$")
_CP = re.compile(r"^(\d+)CP$")
_EXTRA_CP = re.compile(r"^\+(\d+)CP$")
_NUM_FIRST = re.compile(r"^(\d{2}(?:\.\d{2})+) (\S.*)$")
_NUM_LAST = re.compile(r"^(\[[A-Z][A-Z -]*\]|[A-Z][A-Z' !-]*[A-Z!])(\d{2}\.\d{2}(?:\.\d{2})?)$")
_KEYWORD_INDEX = re.compile(r"^The (.*?) ?keywords? (?:is|are) used in the following (.+?) datasheets:$")
_DETACHMENT_LINE = re.compile(r"^(.+) Detachment$")
_STRAT_HEADER = re.compile(r"^(?:(?P<source>.+?) – (?P<type>.+?)|(?P<single>.+?)) Stratagem$")
_STRAY_PROFILE_NOTE = re.compile(r"Before selecting targets for this weapon, select one of its (?:eligible )?"
                                 r"profiles to make attacks with\.")
_EMPTY_TABLE = re.compile(r"^\|[\s|]*$")
_SUBHEADINGS = {"FAQ", "SEE ALSO", "ERRATA"}
_STAT_LABELS = ("M", "T", "Sv", "W", "Ld", "OC")


@dataclass
class _Block:
    kind: str  # rule | stratagem | detachment | enhancement | keyword | errata
    title: str
    lines: list[str] = field(default_factory=list)
    number: str | None = None
    meta: dict = field(default_factory=dict)
    line_no: int = 0


@dataclass
class SeedPage:
    """Everything one page yields: entries plus the page's own aliases (e.g. errata renames)."""

    path: Path
    edition: str
    faction: str
    unit: str
    source: str
    entries: list[Entry]
    aliases: dict[str, str]


# ----------------------------------------------------------------------------------------------
# Line clean-up


def _unglue(lines: list[str]) -> list[str]:
    """Split lines where the scrape glued a new header or bullet onto the end of a sentence."""
    out: list[str] = []
    patterns = [
        re.compile(r"(?<=[^\d][.)!])(?=\d{2}(?:\.\d{2})+ [A-Z])"),  # "...step.06.02.01 Normal Damage"
        re.compile(r"(?<=[.)!])(?=(?:\[[A-Z][A-Z -]*\]|[A-Z][A-Z' -]{2,}[A-Z])\d{2}\.\d{2}$)"),  # ".EMERGENCY ...18.05"
        re.compile(r"(?<=[.)!])(?=The [A-Za-z ,]*?keywords? (?:is|are) used)"),
        re.compile(r"(?<=[.)!])(?=[A-Z][\w’' -]+ Detachment$)"),
        re.compile(r"(?<=[.)!])(?=(?:Example|Designer’s Note|Designer's Note):)"),
        re.compile(r"(?<=[.)!])(?=Army List$)"),
        re.compile(r"(?<=[a-z.)])(?=FAQ$)"),
        re.compile(r"(?<=[a-z.)])(?=SEE ALSO$)"),
        re.compile(r"(?<=[.!)])(?=[A-Z][\w’' ()!-]{2,40}: [A-Z])"),  # "...by 1.Grimnyr’s Regard: Once per battle"
    ]
    for raw in lines:
        pieces = [raw]
        for pat in patterns:
            nxt: list[str] = []
            for piece in pieces:
                nxt.extend(p for p in pat.split(piece) if p)
            pieces = nxt
        for piece in pieces:
            # "...as shown below:- Incursion: 2 units" -> a bullet on its own line
            parts = re.split(r"(?<=[:.])- (?=\S)", piece)
            out.append(parts[0])
            out.extend("- " + p for p in parts[1:])
    # A stratagem name glued after a sentence: "...Fights First ability.HEROIC INTERVENTION" + "1CP"
    fixed: list[str] = []
    for i, line in enumerate(out):
        nxt = out[i + 1] if i + 1 < len(out) else ""
        m = re.match(r"^(.*[.!)])([A-Z][A-Z' -]{2,}[A-Z](?:\d{2}\.\d{2})?)$", line)
        if m and _CP.match(nxt):
            fixed.extend([m.group(1), m.group(2)])
        else:
            fixed.append(line)
    return [line.strip() for line in fixed if line.strip() and line.strip() not in ("Army List",)]


def _is_prose(line: str) -> bool:
    return len(line) > 60 or (line.endswith((".", ":", "?")) and len(line.split()) >= 4) or line.startswith("- ")


def _is_title(line: str) -> bool:
    if not line or line[0] in "-|+" or _FIELD_LINE.match(line) or _CP.match(line) or _EXTRA_CP.match(line):
        return False
    if len(line) > 60 or len(line.split()) > 8 or line.endswith((".", ",", ";", ":")):
        return False
    if re.fullmatch(r"[\d\s.+\-\"]+", line):
        return False
    return line[0].isupper() or line[0].isdigit() or line[0] == "["


def title_case(name: str) -> str:
    """"WAYFARER’S GRACE" -> "Wayfarer’s Grace", "HIT 'EM HARDER" -> "Hit 'em Harder" (words split on spaces)."""
    if not _is_upper(name):
        return name
    words = []
    for word in name.split(" "):
        lower = word.lower()
        words.append(lower if lower[:1] in "'’" else lower[:1].upper() + lower[1:])
    return " ".join(words)


def _is_upper(line: str) -> bool:
    return not any(ch.islower() for ch in line)


# ----------------------------------------------------------------------------------------------
# Datasheet


def _int(text: str) -> int | None:
    m = re.match(r"^\s*-?(\d+)", text or "")
    if not m:
        return None
    value = int(m.group(1))
    return -value if text.strip().startswith("-") else value


def _parse_weapon_row(cells: list[str], kind: str) -> dict:
    name, keywords = split_name_keywords(cells[0])
    rng, attacks, skill, strength, ap, damage = (c.strip() for c in cells[1:7])
    parts = re.split(r"\s[–-]\s", name, maxsplit=1)  # "Supa-gatler - Aimed": weapon and profile
    weapon = {
        "name": name,
        "type": kind,
        "range": "melee" if rng.lower() == "melee" else _int(rng),
        "A": attacks.upper(),
        "skill": None if skill in ("-", "N/A", "") else _int(skill),
        "S": _int(strength),
        "AP": _int(ap) or 0,
        "D": damage.upper(),
        "keywords": keywords,
    }
    if len(parts) == 2:
        weapon["weapon"], weapon["profile"] = parts[0].strip(), parts[1].strip()
    else:
        weapon["weapon"] = name
    return weapon


def _parse_datasheet(lines: list[str], faction: str, unit: str) -> tuple[dict, list[str], list[dict]]:
    """Return (datasheet data, leftover notes, ability dicts with their type)."""
    profiles: list[dict] = []
    weapons: list[dict] = []
    abilities: list[dict] = []
    composition: list[str] = []
    equipped: list[str] = []
    points: list[dict] = []
    keywords: list[str] = []
    faction_keywords: list[str] = []
    wargear: list[str] = []
    leader: str | None = None
    transport: str | None = None
    section = "profiles"
    values: list[str] = []
    pending_points_label: str | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        upper = line.upper()
        if upper.startswith("RANGED WEAPONS |"):
            section = "ranged"
        elif upper.startswith("MELEE WEAPONS |"):
            section = "melee"
        elif line in ("WARGEAR OPTIONS", "ABILITIES", "UNIT COMPOSITION", "LEADER", "TRANSPORT"):
            section = line
        elif line.startswith("FACTION KEYWORDS:"):
            section = "faction_keywords"
            rest = line.split(":", 1)[1].strip()
            if rest:
                faction_keywords.append(rest)
        elif line.startswith("KEYWORDS"):
            section = "keywords"
            keywords.extend(_parse_keywords_line(line, [p["name"] for p in profiles]))
        elif line.startswith("| CORE ABILITIES |") or line.startswith("| ARMY RULES |") or \
                line.startswith("| FACTION ABILITIES |"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            kind = "core" if "CORE" in cells[0] else "faction"
            for name in re.split(r",\s*", cells[1] if len(cells) > 1 else ""):
                if name:
                    abilities.append({"name": name, "text": "", "type": kind})
        elif section == "profiles":
            if line in _STAT_LABELS:
                pass
            elif "(⌀" in line or re.match(r"^[A-Z][A-Z' -]+$", line) and line != "INVULNERABLE SAVE":
                name = re.sub(r"\s*\(⌀.*$", "", line).strip()
                stats = values[-6:]
                values = []
                if len(stats) == 6:
                    profiles.append({"name": title_case(name), "M": stats[0],
                                     "T": _int(stats[1]), "Sv": _int(stats[2]), "InSv": None,
                                     "W": _int(stats[3]), "Ld": _int(stats[4]), "OC": _int(stats[5])})
            elif line == "INVULNERABLE SAVE" and i + 1 < len(lines) and profiles:
                profiles[-1]["InSv"] = _int(lines[i + 1])
                i += 1
            else:
                values.append(line)
        elif section in ("ranged", "melee") and line.startswith("|"):
            cells = [c for c in line.strip().strip("|").split("|")]
            if len(cells) >= 7 and any(c.strip() for c in cells[1:7]):
                weapons.append(_parse_weapon_row(cells, section))
        elif section == "WARGEAR OPTIONS":
            if line.lstrip("- ").strip().lower() != "none":
                wargear.append(line.lstrip("- ").strip())
        elif section == "ABILITIES":
            m = re.match(r"^(CORE|FACTION):\s*(.+)$", line)
            if m:
                for name in re.split(r",\s*", m.group(2)):
                    abilities.append({"name": name.strip(), "text": "", "type": m.group(1).lower()})
            else:
                m = re.match(r"^([^:]{2,60}):\s*(.+)$", line)
                if m:
                    abilities.append({"name": m.group(1).strip(), "text": m.group(2).strip(), "type": "datasheet"})
                elif abilities:
                    abilities[-1]["text"] += "\n" + line
        elif section == "UNIT COMPOSITION":
            if line.startswith("- "):
                composition.append(line[2:].strip())
            elif line.startswith("|"):
                cells = [c.strip() for c in line.strip("|").split("|")]
                m = re.match(r"^(\d+) models?$", cells[0])
                if m and len(cells) > 1 and _int(cells[1]) is not None:
                    entry = {"models": int(m.group(1)), "points": _int(cells[1])}
                    if pending_points_label:
                        entry["label"] = pending_points_label
                    points.append(entry)
                elif cells and cells[0]:
                    pending_points_label = cells[0].capitalize()
            else:
                equipped.append(line)
        elif section == "LEADER":
            leader = (leader + " " if leader else "") + line
        elif section == "TRANSPORT":
            transport = (transport + " " if transport else "") + line
        elif section == "keywords":
            keywords.extend(_parse_keywords_line(line, [p["name"] for p in profiles]))
        elif section == "faction_keywords":
            faction_keywords.append(line)
        i += 1
    counts = [int(m.group(1)) for c in composition if (m := re.match(r"^(\d+)", c))]
    total = sum(counts) if counts else None
    data = {
        "profiles": profiles,
        "weapons": weapons,
        "abilities": [{"name": a["name"], "text": a["text"], "type": a["type"]} for a in abilities],
        "composition": composition + equipped,
        "models_min": total,
        "models_max": total,
        "points": points,
        "keywords": _dedupe(keywords),
        "faction_keywords": _dedupe(faction_keywords),
        "leader": leader,
        "wargear_options": wargear,
    }
    if transport:
        data["transport"] = transport
    return data, [], abilities


def _parse_keywords_line(line: str, model_names: list[str]) -> list[str]:
    body = re.sub(r"^KEYWORDS(?: – ALL MODELS)?:\s*", "", line)
    # "INFANTRY, GRIMNYRGRIMNYR MODEL: CHARACTER, PSYKER": cut at each "<MODEL NAME> MODEL:" marker
    for name in model_names:
        body = body.replace(f"{name.upper()} MODEL:", ";")
    return [k.strip() for k in re.split(r"[;,]", body) if k.strip()]


def _dedupe(items: list[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for item in items:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out


# ----------------------------------------------------------------------------------------------
# Blocks


def _split_blocks(lines: list[str], start: int, edition: str, detachment_names: set[str]) -> list[_Block]:
    blocks: list[_Block] = []
    current: _Block | None = None
    i = start
    n = len(lines)

    def nxt(k: int = 1) -> str:
        return lines[i + k] if i + k < n else ""

    while i < n:
        line = lines[i]
        m_num_first = _NUM_FIRST.match(line)
        m_num_last = _NUM_LAST.match(line)
        m_kw = _KEYWORD_INDEX.match(line)
        new: _Block | None = None
        if _is_title(line) and _CP.match(nxt()) and _STRAT_HEADER.match(nxt(2)):
            name, number = line, None
            mm = re.match(r"^(.*?)(\d{2}\.\d{2})$", line)
            if mm:
                name, number = mm.group(1), mm.group(2)
            new = _Block("stratagem", name.strip(), number=number, line_no=i + 1)
            new.meta["cp"] = int(_CP.match(nxt()).group(1))
            new.meta["header"] = nxt(2)
            i += 3
        elif m_num_first and _is_title(line):
            new = _Block("rule", m_num_first.group(2), number=m_num_first.group(1), line_no=i + 1)
            i += 1
        elif m_num_last:
            new = _Block("rule", m_num_last.group(1), number=m_num_last.group(2), line_no=i + 1)
            i += 1
        elif m_kw:
            new = _Block("keyword", m_kw.group(1).strip(), line_no=i + 1)
            new.meta["faction"] = m_kw.group(2)
            i += 1
            while i < n and _is_title(lines[i]) and len(lines[i]) <= 30 and not _CP.match(
                    lines[i + 1] if i + 1 < n else "") and not _is_prose(lines[i + 1] if i + 1 < n else "x" * 80):
                new.lines.append(lines[i])
                i += 1
            if i < n and _is_title(lines[i]) and i + 1 >= n:
                new.lines.append(lines[i])
                i += 1
        elif line == "Errata" and i + 2 < n:
            new = _Block("errata", nxt(), line_no=i + 1)
            new.lines.append(nxt(2))
            i += 3
        elif _is_title(line) and _DETACHMENT_LINE.match(nxt()) and line in detachment_names:
            new = _Block("detachment", line, line_no=i + 1)
            new.meta["detachment"] = _DETACHMENT_LINE.match(nxt()).group(1)
            i += 2
        elif _DETACHMENT_LINE.match(line) and current is not None and not (current.kind == "detachment"
                                                                            and not current.lines):
            new = _Block("enhancement", "", line_no=i + 1)
            new.meta["detachment"] = _DETACHMENT_LINE.match(line).group(1)
            i += 1
        elif _is_title(line) and line.upper() not in _SUBHEADINGS and not (
                edition == "11e" and _is_upper(line) and current is not None):
            following = nxt()
            if following and (_NUM_LAST.match(following) or _NUM_FIRST.match(following)) and \
                    normalize(following).startswith(normalize(line)):
                i += 1  # "Super-heavy Walker" label right above "SUPER-HEAVY WALKER24.35"
                continue
            if following and not _is_title(following) or (following and _is_prose(following)):
                new = _Block("rule", line, line_no=i + 1)
                i += 1
        if new is not None:
            if current is not None:
                blocks.append(current)
            current = new
            continue
        if current is not None:
            current.lines.append(line)
        i += 1
    if current is not None:
        blocks.append(current)
    return blocks


def _clean_lines(lines: list[str]) -> tuple[list[str], bool, list[str]]:
    """Drop repeated lines and stray notes; report whether an empty table was found."""
    seen: set[str] = set()
    out: list[str] = []
    empty_table = False
    notes: list[str] = []
    for line in lines:
        if _EMPTY_TABLE.match(line):
            empty_table = True
            continue
        stray = _STRAY_PROFILE_NOTE.search(line)
        if stray:
            notes.append(stray.group(0))
            line = _STRAY_PROFILE_NOTE.sub("", line).strip()
            if not line:
                continue
        if line in seen and not line.startswith("| Q:") and not line.startswith("| A:"):
            continue
        seen.add(line)
        out.append(line)
    return out, empty_table, notes


def _faq(lines: list[str]) -> tuple[list[str], list[dict]]:
    body: list[str] = []
    faq: list[dict] = []
    for line in lines:
        m = re.match(r"^\|\s*(Q|A):\s*\|\s*(.*?)\s*\|?$", line)
        if m:
            if m.group(1) == "Q":
                faq.append({"q": m.group(2), "a": ""})
            elif faq:
                faq[-1]["a"] = m.group(2)
            continue
        if line == "FAQ":
            continue
        body.append(line)
    # a page repeats the same FAQ under several rules; keep each question once per rule
    unique: list[dict] = []
    for item in faq:
        if item not in unique:
            unique.append(item)
    return body, unique


def _see_also(lines: list[str]) -> tuple[list[str], list[str]]:
    body: list[str] = []
    refs: list[str] = []
    in_see = False
    for line in lines:
        if line == "SEE ALSO":
            in_see = True
            continue
        if in_see and line.startswith("- "):
            refs.append(line[2:].strip())
            continue
        in_see = False
        body.append(line)
    return body, refs


_GLUED_SENTENCE = re.compile(r"(?<=[a-z0-9)\]’'\"])\.(?=[A-Z](?:[a-z]|\s))")


def _unglue_sentences(line: str) -> str:
    """The scrape joins paragraphs without a space ("...by those attacks.Mortal wounds..."): split them."""
    return _GLUED_SENTENCE.sub(".\n\n", line)


def _text_of(lines: list[str], edition: str) -> str:
    out: list[str] = []
    for line in map(_unglue_sentences, lines):
        if line.startswith("- "):
            out.append(line)
        elif _is_upper(line) and _is_title(line) and edition == "11e":
            out.append(f"\n**{line.title()}**")
        elif re.match(r"^(Example|Designer’s Note|Designer's Note):", line):
            head, _, rest = line.partition(":")
            out.append(f"\n*{head}:* {rest.strip()}")
        else:
            out.append("\n" + line)
    return "\n".join(out).replace("\n\n\n", "\n\n").strip()


def _summary_split(lines: list[str]) -> tuple[list[str], list[str]]:
    """10e pages end a rule with a bullet summary; split it off (only when prose precedes it)."""
    k = len(lines)
    while k > 0 and lines[k - 1].startswith("- "):
        k -= 1
    if 0 < k < len(lines) and not lines[k - 1].endswith(":"):
        return lines[:k], [line[2:] for line in lines[k:]]
    return lines, []


def _summary_item(lines: list[str], i: int) -> bool:
    """Whether NAME / 1CP / "War Horde Stratagem" at `i` is a summary-list row, not a full block.

    11e pages print a summary row's category as "War Horde Stratagem", the same form as a full block's
    header; a summary row is followed by the next row (a name, then a cost) or the next summary list,
    a full block by its fluff or WHEN line.
    """
    j = i + 3
    if j < len(lines) and re.fullmatch(r"[A-Z]{1,3}", lines[j]):
        j += 1  # the "C" / "BA" badge
    following = lines[j] if j < len(lines) else ""
    return following in ("DETACHMENT ABILITY", "ENHANCEMENTS") or (
        j + 1 < len(lines) and bool(_CP.match(lines[j + 1])))


def _stratagem_data(block: _Block, lines: list[str]) -> tuple[dict, str, str | None, str]:
    header = _STRAT_HEADER.match(block.meta["header"])
    assert header is not None
    if header.group("single"):
        source, stype = header.group("single"), ""
    else:
        source, stype = header.group("source"), header.group("type")
    fields: dict[str, str] = {}
    order: list[str] = []
    fluff: list[str] = []
    extra_cp: list[str] = []
    pending_extra: str | None = None
    open_field: str | None = None  # the field whose text ended with ':' ("...one of the following rolls:")
    sub_list = False  # inside the bullets of a bullet that ends with ':' ("- Into the Fray:")
    for line in lines:
        m = _FIELD_LINE.match(line)
        if m and m.group(1) in FIELDS:
            key = m.group(1)
            if key not in fields:
                fields[key] = m.group(2).strip()
                order.append(key)
                if fields[key].endswith(":"):
                    open_field = key
            continue
        m_extra = _EXTRA_CP.match(line)
        if m_extra:
            pending_extra = f"+{m_extra.group(1)}CP"
            continue
        if not fields:
            fluff.append(line)
            continue
        # bullets continue the last field that ends with a colon ("...one of the following rolls:")
        target = open_field or order[-1]
        if not line.startswith("- "):
            sub_list = False
        elif sub_list:
            line = "  " + line  # "- Into the Fray:" printed its own bullets under it
        if pending_extra and line.startswith("- "):
            label = line[2:].rstrip(":").strip()
            extra_cp.append(f"{label}: {pending_extra}")
            line = f"- {label} ({pending_extra})" + (":" if line.endswith(":") else "")
            pending_extra = None
        if line.startswith("- ") and line.endswith(":"):
            sub_list = True
        fields[target] += "\n" + line
    is_core = source.lower() == "core"
    category = "Core" if is_core else source
    detachment = None if is_core or source == "Boarding Actions" else source
    when = fields.get("WHEN", "")
    data = {
        "cp": block.meta["cp"],
        "cp_extra": extra_cp,
        "category": category,
        "detachment": detachment,
        "type": stype,
        "turn": _turn_of(when),
        "phase": _phase_of(when),
        "when": when,
        "target": fields.get("TARGET", ""),
        "effect": fields.get("EFFECT", ""),
        "restrictions": fields.get("RESTRICTIONS", ""),
        "fluff": " ".join(fluff),
    }
    if block.number:
        data["number"] = block.number
    parts = []
    if data["fluff"]:
        parts.append(f"*{data['fluff']}*")
    for key in FIELDS:
        if fields.get(key):
            parts.append(f"**{key}:** {fields[key]}")
    return data, "\n\n".join(parts), detachment, category


def _turn_of(when: str) -> str:
    """Whose turn the WHEN names: "your opponent's ... phase" -> opponent, "your ... phase" (also "Battle-shock
    step of your Command phase") -> your, a phase without an owner ("Fight phase") -> either."""
    low = when.lower().replace("’", "'")
    if low.startswith("your opponent") or "your opponent's" in low[:40]:
        return "opponent"
    if low.startswith(("your ", "end of your", "start of your")) or re.search(
            r"\byour (command|movement|shooting|charge|fight)\b", low[:60]):
        return "your"
    if "opponent" in low:
        return "opponent"
    return "either"


def _phase_of(when: str) -> str:
    low = when.lower()
    if low.startswith("any phase") or low.startswith("start or end of any phase"):
        return "any"
    found = [p for p in ("command", "movement", "shooting", "charge", "fight") if p in low]
    return "/".join(found) if found else "any"


# ----------------------------------------------------------------------------------------------
# The page


def parse_seed_page(path: Path, text: str | None = None) -> SeedPage:
    """Parse one seed page into entries; raise CatalogImportError with a line number on bad input."""
    path = Path(path)
    if text is None:
        size = path.stat().st_size
        if size > MAX_PAGE_BYTES:
            raise CatalogImportError(str(path), None, f"file is {size} bytes; seed pages are limited to "
                                                      f"{MAX_PAGE_BYTES} bytes")
        try:
            text = path.read_text(encoding="utf-8-sig")
        except UnicodeDecodeError as exc:
            line = path.read_bytes()[: exc.start].count(b"\n") + 1
            raise CatalogImportError(str(path), line, "not UTF-8 text") from exc
    raw_lines = [line.rstrip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    raw_lines = [line for line in raw_lines if line.strip()]
    if not raw_lines:
        raise CatalogImportError(str(path), 1, "the page is empty")
    title = raw_lines[0].strip()
    m = re.match(r"^(.+?) [–-] (.+)$", title)
    if not m:
        raise CatalogImportError(str(path), 1, f"first line must be 'Faction – Unit', got {title[:60]!r}")
    faction, unit = m.group(1).strip(), m.group(2).strip()
    lines = _unglue(raw_lines[1:])
    try:
        strat_at = lines.index("STRATAGEMS")
    except ValueError:
        raise CatalogImportError(str(path), None, "no STRATAGEMS section: not a seed datasheet page") from None
    numbered = sum(1 for line in lines if _NUM_FIRST.match(line) or _NUM_LAST.match(line))
    edition = "11e" if numbered >= 3 or any(line.startswith("| CORE ABILITIES |") for line in lines) else "10e"
    source = f"Seed page: {faction} – {unit}"

    sheet, _, sheet_abilities = _parse_datasheet(lines[:strat_at], faction, unit)

    # Summary lists: stratagems (name, cp, category), detachment abilities, enhancements (name, cost).
    i = strat_at + 1
    summary: list[dict] = []
    detachment_names: set[str] = set()
    enhancement_names: list[tuple[str, int | None]] = []
    mode = "stratagems"
    while i < len(lines):
        line = lines[i]
        if line == "DETACHMENT ABILITY":
            mode = "detachments"
        elif line == "ENHANCEMENTS":
            mode = "enhancements"
        elif mode == "stratagems" and i + 1 < len(lines) and _CP.match(lines[i + 1]):
            if i + 2 < len(lines) and _STRAT_HEADER.match(lines[i + 2]) and not _summary_item(lines, i):
                break  # full stratagem blocks have started
            item = {"name": line, "cp": int(_CP.match(lines[i + 1]).group(1)),
                    "category": lines[i + 2] if i + 2 < len(lines) else ""}
            summary.append(item)
            i += 3
            if i < len(lines) and re.fullmatch(r"[A-Z]{1,3}", lines[i]):
                i += 1  # the "C" / "BA" badge
            continue
        elif mode in ("detachments", "enhancements"):
            following = lines[i + 1] if i + 1 < len(lines) else ""
            if _NUM_FIRST.match(line) or _NUM_LAST.match(line) or (_is_title(line) and _is_prose(following)
                                                                 and not _DETACHMENT_LINE.match(following)):
                break
            if mode == "detachments":
                detachment_names.add(line)
            else:
                cost = _int(following) if re.fullmatch(r"\d+", following) else None
                enhancement_names.append((line, cost))
                if cost is not None:
                    i += 1
        else:
            break
        i += 1
    blocks = _split_blocks(lines, i, edition, detachment_names)

    entries: dict[str, Entry] = {}
    aliases: dict[str, str] = {}
    notes: list[str] = []
    faction_rules = {a["name"] for a in sheet_abilities if a["type"] == "faction"}
    enhancement_queue = list(enhancement_names)

    def add(entry: Entry) -> None:
        entry.data.setdefault("provenance", {"file": path.name})
        old = entries.get(entry.id)
        entries[entry.id] = _merge(old, entry) if old else entry

    for block in blocks:
        lines_clean, empty_table, stray = _clean_lines(block.lines)
        notes.extend(stray)
        body, faq = _faq(lines_clean)
        body, see_also = _see_also(body)
        if block.kind == "errata":
            mm = re.match(r"^The (.+?) Stratagem is the same as the (.+?) stratagem\.?$", body[0] if body else "",
                          re.IGNORECASE)
            if mm:
                aliases[normalize(mm.group(1))] = mm.group(2)
            continue
        if block.kind == "stratagem":
            data, text, detachment, category = _stratagem_data(block, body)
            sedition = "10e" if category == "Boarding Actions" else edition
            scope = "seed." + slug(category)
            name = title_case(block.title.strip())
            add(Entry(make_id(sedition, "stratagem", scope, name), "stratagem", name, sedition,
                      None if category in ("Core", "Boarding Actions") else faction, source, text, data))
            continue
        if block.kind == "keyword":
            if not block.title or re.search(r"\band\b", block.title):
                continue  # "The ORKS and INFANTRY keywords ..." or a keyword the scrape dropped
            cats = [c for c in body if _is_title(c)]
            text = f"Used in the following {block.meta['faction']} datasheet categories: " + ", ".join(cats) \
                if cats else f"Used in {block.meta['faction']} datasheets."
            add(Entry(make_id(edition, "keyword", "seed." + slug(faction), block.title), "keyword", block.title,
                      edition, faction, source, text, {"categories": cats, "keyword": block.title}))
            continue
        if block.kind == "enhancement":
            if not enhancement_queue:
                continue
            name, cost = enhancement_queue.pop(0)
            display = title_case(name)
            fluff, rule = (body[0], body[1:]) if len(body) > 1 else ("", body)
            text = (f"*{fluff}*\n\n" if fluff else "") + "\n".join(_unglue_sentences(r) for r in rule)
            add(Entry(make_id(edition, "enhancement", "seed." + slug(block.meta["detachment"]), display),
                      "enhancement", display, edition, faction, source, text.strip(),
                      {"cost": cost, "detachment": block.meta["detachment"], "fluff": fluff,
                       "rule": "\n".join(rule)}))
            continue
        if block.kind == "detachment":
            fluff, rule = (body[0], body[1:]) if len(body) > 1 else ("", body)
            rule_text = "\n".join(_unglue_sentences(r) for r in rule)
            data = {"detachment": block.meta["detachment"], "fluff": fluff, "rule": rule_text}
            text = (f"*{fluff}*\n\n" if fluff else "") + rule_text
            if empty_table:
                data["incomplete"] = "table"
                text += "\n\n*(The table for this rule is empty in the source page.)*"
            add(Entry(make_id(edition, "detachment", "seed." + slug(block.meta["detachment"]), block.title),
                      "detachment", block.title, edition, faction, source, text.strip(), data))
            continue
        # rules
        if not body and not faq:
            continue
        summary_lines: list[str] = []
        if edition == "10e":
            body, summary_lines = _summary_split(body)
        text = _text_of(body, edition)
        title = block.title
        display = title
        if title.startswith("[") and title.endswith("]"):
            display = title_case(title[1:-1])
        elif _is_upper(title):
            display = title_case(title)
        data: dict = {"title": title}
        if block.number:
            data["number"] = block.number
        if summary_lines:
            data["summary"] = summary_lines
        if faq:
            data["faq"] = faq
        if see_also:
            data["see_also"] = see_also
        if empty_table:
            data["incomplete"] = "table"
            text += "\n\n*(The table for this rule is empty in the source page.)*"
        rule_faction = faction if title in faction_rules else None
        scope = "seed." + (slug(faction) if rule_faction else "core")
        add(Entry(make_id(edition, "rule", scope, display), "rule", display, edition, rule_faction, source,
                  text.strip(), data))

    # The datasheet, its weapons and its own abilities
    sheet["notes"] = _dedupe(notes)
    if not sheet["profiles"]:
        sheet["incomplete"] = "profiles"  # linked to a datasheet with profiles when one is loaded
    text = sheet_text(sheet, composition=True)
    unit_entry = Entry(make_id(edition, "datasheet", "seed." + slug(faction), unit), "datasheet", unit, edition,
                       faction, source, text, sheet)
    add(unit_entry)
    by_weapon: dict[str, list[dict]] = {}
    for w in sheet["weapons"]:
        by_weapon.setdefault(w.get("weapon") or w["name"], []).append(w)
    for wname, profiles in by_weapon.items():
        text = "\n".join(weapon_line(p) for p in profiles)
        add(Entry(make_id(edition, "weapon", "seed." + slug(faction), wname), "weapon", wname, edition, faction,
                  source, text, {"profiles": profiles, "datasheets": [unit]}))
    for ability in sheet_abilities:
        if ability["type"] == "datasheet" and ability["text"]:
            add(Entry(make_id(edition, "ability", "seed." + slug(faction), ability["name"]), "ability",
                      ability["name"], edition, faction, source, ability["text"], {"datasheets": [unit]}))
    # Stratagems named in the summary but never printed in full: keep the metadata, say the text is missing.
    printed = {normalize(e.name) for e in entries.values() if e.kind == "stratagem"}
    for item in summary:
        if normalize(item["name"]) not in printed:
            cat = item["category"].split(" – ")[0].replace(" Stratagem", "")
            sedition = "10e" if cat == "Boarding Actions" else edition
            add(Entry(make_id(sedition, "stratagem", "seed." + slug(cat), item["name"]), "stratagem",
                      title_case(item["name"]),
                      sedition, None if cat in ("Core", "Boarding Actions") else faction, source,
                      "*(Only the name and cost are printed in the source page.)*",
                      {"cp": item["cp"], "cp_extra": [], "category": cat, "detachment": None, "type": "",
                       "turn": "", "phase": "", "when": "", "target": "", "effect": "", "restrictions": "",
                       "incomplete": "text"}))
    return SeedPage(path, edition, faction, unit, source, list(entries.values()), aliases)


def _merge(old: Entry, new: Entry) -> Entry:
    """Two copies of one block: keep every paragraph once, in first-seen order; union list data.

    A copy without text (the page printed only the header) yields to the one with text, data included,
    so a stratagem's phase and turn come from the copy that prints its WHEN.
    """
    if not old.text.strip() and new.text.strip():
        old, new = new, old
    paragraphs = [p for p in old.text.split("\n\n") if p.strip()]
    for para in new.text.split("\n\n"):
        if para and para not in paragraphs and para not in old.text:
            paragraphs.append(para)
    data = dict(old.data)
    for key, value in new.data.items():
        if key not in data or not data[key]:
            data[key] = value
        elif isinstance(value, list) and isinstance(data[key], list):
            data[key] = data[key] + [v for v in value if v not in data[key]]
    source = old.source if new.source in old.source else f"{old.source}; {new.source.removeprefix('Seed page: ')}"
    return Entry(old.id, old.kind, old.name, old.edition, old.faction, source, "\n\n".join(paragraphs), data)






def load_seed_dir(folder: Path) -> tuple[list[Entry], dict[str, str], list[Path]]:
    """Parse every page in `folder`; entries that two pages share (Boarding Actions stratagems) merge."""
    entries: dict[str, Entry] = {}
    aliases: dict[str, str] = {}
    paths = sorted(Path(folder).glob("*.txt"))
    for path in paths:
        page = parse_seed_page(path)
        aliases.update(page.aliases)
        for entry in page.entries:
            entries[entry.id] = _merge(entries[entry.id], entry) if entry.id in entries else entry
    for entry in detachment_entries(list(entries.values()), "seed"):
        entries[entry.id] = entry
    return list(entries.values()), aliases, paths
