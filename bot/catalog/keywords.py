"""Weapon keywords as printed on datasheets: find them in a weapon's name cell and normalise them.

The 11th-edition seed prints keywords after the weapon name ("Big Shoota LETHAL HITS: non-MONSTER/VEHICLE
Rapid Fire 2"); the 10th-edition seed puts them in brackets ("[hazardous, psychic]").
"""

from __future__ import annotations

import re

# Head words of every weapon ability in the 10e/11e core rules; the parameter (if any) follows.
_HEADS = [
    "DEVASTATING WOUNDS", "SUSTAINED HITS", "LETHAL HITS", "RAPID FIRE", "IGNORES COVER", "INDIRECT FIRE",
    "EXTRA ATTACKS", "CLOSE-QUARTERS", "TWIN-LINKED", "ONE SHOT", "HAZARDOUS", "PRECISION", "CONVERSION",
    "ASSAULT", "TORRENT", "PSYCHIC", "PISTOL", "CLEAVE", "MELTA", "LANCE", "HEAVY", "BLAST",
]
_PARAM = r"(?:\d+\+|D\d+(?:\+\d+)?|\d+)"
_KEYWORD = re.compile(
    r"(?P<head>ANTI-[A-Za-z]+(?:[ -][A-Za-z]+)*?|" + "|".join(re.escape(h) for h in _HEADS) + r")"
    r"(?:\s+(?P<param>" + _PARAM + r"))?(?=$|[\s:,\]])",
    re.IGNORECASE,
)


def _parse_sequence(tail: str) -> list[str] | None:
    """Parse `tail` as keywords only ("BLAST 2 Torrent"); None if any word is not part of a keyword."""
    out: list[str] = []
    pos = 0
    tail = tail.strip()
    while pos < len(tail):
        m = _KEYWORD.match(tail, pos)
        if not m:
            return None
        head = m.group("head").upper()
        param = m.group("param")
        if head.startswith("ANTI-"):
            if not param or not param.endswith("+"):
                return None
        elif head in ("SUSTAINED HITS", "RAPID FIRE", "MELTA", "CLEAVE") and not param:
            return None
        text = head + (f" {param.upper()}" if param else "")
        pos = m.end()
        if tail.startswith(":", pos):  # conditional form: "LETHAL HITS: non-MONSTER/VEHICLE"
            words = tail[pos + 1:].split()
            cut = len(words)
            for j in range(1, len(words)):  # the condition runs until the rest is keywords again
                if _parse_sequence(" ".join(words[j:])) is not None:
                    cut = j
                    break
            if not words:
                return None
            text += ": " + " ".join(words[:cut])
            rest = " ".join(words[cut:])
            out.append(text)
            if rest:
                more = _parse_sequence(rest)
                if more is None:
                    return None
                out.extend(more)
            return out
        out.append(text)
        while pos < len(tail) and tail[pos] in " ,":
            pos += 1
    return out


def split_name_keywords(cell: str) -> tuple[str, list[str]]:
    """"Skorcha BLAST 2 Torrent" -> ("Skorcha", ["BLAST 2", "TORRENT"]); "Bolter [pistol]" -> ("Bolter", ["PISTOL"])."""
    cell = " ".join(cell.split())
    bracket = re.search(r"\s*\[([^\]]*)\]\s*$", cell)
    if bracket:
        name = cell[: bracket.start()].strip()
        keywords = []
        for part in bracket.group(1).split(","):
            part = part.strip()
            if part:
                parsed = _parse_sequence(part)
                keywords.extend(parsed if parsed else [part.upper()])
        return name, keywords
    words = cell.split(" ")
    for i in range(1, len(words)):
        tail = " ".join(words[i:])
        parsed = _parse_sequence(tail)
        if parsed:
            return " ".join(words[:i]), parsed
    return cell, []
