"""How a seed page's lines are read: gluing undone, and the shapes of its headers and field lines.

Shared by the parsers of a seed page's parts (bot/catalog/importers/seed_datasheets.py, seed_rules.py,
seed_stratagems.py) and the page itself (seeds.py).
"""

from __future__ import annotations

import re

FIELDS = ("WHEN", "TARGET", "EFFECT", "RESTRICTIONS")
BEHAVIOUR_FIELDS = ("MAXIMUM DISTANCE", "SET-UP DISTANCE", "ELIGIBLE IF", "BEFORE MOVING", "WHILE MOVING",
                    "AFTER MOVING", "WHILE SHOOTING", "AFTER SHOOTING", "EFFECT")
FIELD_LINE = re.compile(r"^(WHEN|TARGET|EFFECT|RESTRICTIONS|MAXIMUM DISTANCE|SET-UP DISTANCE|ELIGIBLE IF|"
                         r"BEFORE MOVING|WHILE MOVING|AFTER MOVING|WHILE SHOOTING|AFTER SHOOTING):\s*(.*)$")
CP = re.compile(r"^(\d+)CP$")
EXTRA_CP = re.compile(r"^\+(\d+)CP$")
NUM_FIRST = re.compile(r"^(\d{2}(?:\.\d{2})+) (\S.*)$")
NUM_LAST = re.compile(r"^(\[[A-Z][A-Z -]*\]|[A-Z][A-Z' !-]*[A-Z!])(\d{2}\.\d{2}(?:\.\d{2})?)$")
KEYWORD_INDEX = re.compile(r"^The (.*?) ?keywords? (?:is|are) used in the following (.+?) datasheets:$")
DETACHMENT_LINE = re.compile(r"^(.+) Detachment$")
STRAT_HEADER = re.compile(r"^(?:(?P<source>.+?) – (?P<type>.+?)|(?P<single>.+?)) Stratagem$")


def unglue(lines: list[str]) -> list[str]:
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
        if m and CP.match(nxt):
            fixed.extend([m.group(1), m.group(2)])
        else:
            fixed.append(line)
    return [line.strip() for line in fixed if line.strip() and line.strip() not in ("Army List",)]


def is_prose(line: str) -> bool:
    return len(line) > 60 or (line.endswith((".", ":", "?")) and len(line.split()) >= 4) or line.startswith("- ")


def is_title(line: str) -> bool:
    if not line or line[0] in "-|+" or FIELD_LINE.match(line) or CP.match(line) or EXTRA_CP.match(line):
        return False
    if len(line) > 60 or len(line.split()) > 8 or line.endswith((".", ",", ";", ":")):
        return False
    if re.fullmatch(r"[\d\s.+\-\"]+", line):
        return False
    return line[0].isupper() or line[0].isdigit() or line[0] == "["


def title_case(name: str) -> str:
    """"WAYFARER’S GRACE" -> "Wayfarer’s Grace", "HIT 'EM HARDER" -> "Hit 'em Harder" (words split on spaces)."""
    if not is_upper(name):
        return name
    words = []
    for word in name.split(" "):
        lower = word.lower()
        words.append(lower if lower[:1] in "'’" else lower[:1].upper() + lower[1:])
    return " ".join(words)


def is_upper(line: str) -> bool:
    return not any(ch.islower() for ch in line)


_GLUED_SENTENCE = re.compile(r"(?<=[a-z0-9)\]’'\"])\.(?=[A-Z](?:[a-z]|\s))")


def unglue_sentences(line: str) -> str:
    """The scrape joins paragraphs without a space ("...by those attacks.Mortal wounds..."): split them."""
    return _GLUED_SENTENCE.sub(".\n\n", line)
