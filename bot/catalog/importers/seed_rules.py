"""A seed page's run of rules text cut into blocks (core rules, stratagems, detachment rules, enhancements,
keyword indexes) by their headers, and the text of a block: its lines cleaned, its FAQ and "see also"
parts, its summary lists."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from bot.catalog.importers.seed_lines import (
    CP,
    DETACHMENT_LINE,
    KEYWORD_INDEX,
    NUM_FIRST,
    NUM_LAST,
    STRAT_HEADER,
    is_prose,
    is_title,
    is_upper,
    unglue_sentences,
)
from bot.catalog.normalize import normalize

_STRAY_PROFILE_NOTE = re.compile(r"Before selecting targets for this weapon, select one of its (?:eligible )?"
                                 r"profiles to make attacks with\.")
_EMPTY_TABLE = re.compile(r"^\|[\s|]*$")
_SUBHEADINGS = {"FAQ", "SEE ALSO", "ERRATA"}


@dataclass
class Block:
    kind: str  # rule | stratagem | detachment | enhancement | keyword | errata
    title: str
    lines: list[str] = field(default_factory=list)
    number: str | None = None
    meta: dict = field(default_factory=dict)
    line_no: int = 0


def split_blocks(lines: list[str], start: int, edition: str, detachment_names: set[str]) -> list[Block]:
    blocks: list[Block] = []
    current: Block | None = None
    i = start
    n = len(lines)

    def nxt(k: int = 1) -> str:
        return lines[i + k] if i + k < n else ""

    while i < n:
        line = lines[i]
        m_num_first = NUM_FIRST.match(line)
        m_num_last = NUM_LAST.match(line)
        m_kw = KEYWORD_INDEX.match(line)
        new: Block | None = None
        if is_title(line) and CP.match(nxt()) and STRAT_HEADER.match(nxt(2)):
            name, number = line, None
            mm = re.match(r"^(.*?)(\d{2}\.\d{2})$", line)
            if mm:
                name, number = mm.group(1), mm.group(2)
            new = Block("stratagem", name.strip(), number=number, line_no=i + 1)
            new.meta["cp"] = int(CP.match(nxt()).group(1))
            new.meta["header"] = nxt(2)
            i += 3
        elif m_num_first and is_title(line):
            new = Block("rule", m_num_first.group(2), number=m_num_first.group(1), line_no=i + 1)
            i += 1
        elif m_num_last:
            new = Block("rule", m_num_last.group(1), number=m_num_last.group(2), line_no=i + 1)
            i += 1
        elif m_kw:
            new = Block("keyword", m_kw.group(1).strip(), line_no=i + 1)
            new.meta["faction"] = m_kw.group(2)
            i += 1
            while i < n and is_title(lines[i]) and len(lines[i]) <= 30 and not CP.match(
                    lines[i + 1] if i + 1 < n else "") and not is_prose(lines[i + 1] if i + 1 < n else "x" * 80):
                new.lines.append(lines[i])
                i += 1
            if i < n and is_title(lines[i]) and i + 1 >= n:
                new.lines.append(lines[i])
                i += 1
        elif line == "Errata" and i + 2 < n:
            new = Block("errata", nxt(), line_no=i + 1)
            new.lines.append(nxt(2))
            i += 3
        elif is_title(line) and DETACHMENT_LINE.match(nxt()) and line in detachment_names:
            new = Block("detachment", line, line_no=i + 1)
            new.meta["detachment"] = DETACHMENT_LINE.match(nxt()).group(1)
            i += 2
        elif DETACHMENT_LINE.match(line) and current is not None and not (current.kind == "detachment"
                                                                            and not current.lines):
            new = Block("enhancement", "", line_no=i + 1)
            new.meta["detachment"] = DETACHMENT_LINE.match(line).group(1)
            i += 1
        elif is_title(line) and line.upper() not in _SUBHEADINGS and not (
                edition == "11e" and is_upper(line) and current is not None):
            following = nxt()
            if following and (NUM_LAST.match(following) or NUM_FIRST.match(following)) and \
                    normalize(following).startswith(normalize(line)):
                i += 1  # "Super-heavy Walker" label right above "SUPER-HEAVY WALKER24.35"
                continue
            if following and not is_title(following) or (following and is_prose(following)):
                new = Block("rule", line, line_no=i + 1)
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


def clean_lines(lines: list[str]) -> tuple[list[str], bool, list[str]]:
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


def split_faq(lines: list[str]) -> tuple[list[str], list[dict]]:
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


def split_see_also(lines: list[str]) -> tuple[list[str], list[str]]:
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


def text_of(lines: list[str], edition: str) -> str:
    out: list[str] = []
    for line in map(unglue_sentences, lines):
        if line.startswith("- "):
            out.append(line)
        elif is_upper(line) and is_title(line) and edition == "11e":
            out.append(f"\n**{line.title()}**")
        elif re.match(r"^(Example|Designer’s Note|Designer's Note):", line):
            head, _, rest = line.partition(":")
            out.append(f"\n*{head}:* {rest.strip()}")
        else:
            out.append("\n" + line)
    return "\n".join(out).replace("\n\n\n", "\n\n").strip()


def summary_split(lines: list[str]) -> tuple[list[str], list[str]]:
    """10e pages end a rule with a bullet summary; split it off (only when prose precedes it)."""
    k = len(lines)
    while k > 0 and lines[k - 1].startswith("- "):
        k -= 1
    if 0 < k < len(lines) and not lines[k - 1].endswith(":"):
        return lines[:k], [line[2:] for line in lines[k:]]
    return lines, []


def summary_item(lines: list[str], i: int) -> bool:
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
        j + 1 < len(lines) and bool(CP.match(lines[j + 1])))
