"""A seed page's stratagem block: cost, type, WHEN / TARGET / EFFECT / RESTRICTIONS, and the turn and
phase it is used in."""

from __future__ import annotations

import re

from bot.catalog.importers.seed_lines import EXTRA_CP, FIELD_LINE, FIELDS, STRAT_HEADER
from bot.catalog.importers.seed_rules import Block


def stratagem_data(block: Block, lines: list[str]) -> tuple[dict, str, str | None, str]:
    header = STRAT_HEADER.match(block.meta["header"])
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
        m = FIELD_LINE.match(line)
        if m and m.group(1) in FIELDS:
            key = m.group(1)
            if key not in fields:
                fields[key] = m.group(2).strip()
                order.append(key)
                if fields[key].endswith(":"):
                    open_field = key
            continue
        m_extra = EXTRA_CP.match(line)
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
