"""A seed page's datasheet: profiles, weapon tables, abilities, composition, points, keywords."""

from __future__ import annotations

import re

from bot.catalog.importers.seed_lines import title_case
from bot.catalog.keywords import split_name_keywords

_STAT_LABELS = ("M", "T", "Sv", "W", "Ld", "OC")


def int_or_none(text: str) -> int | None:
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
        "range": "melee" if rng.lower() == "melee" else int_or_none(rng),
        "A": attacks.upper(),
        "skill": None if skill in ("-", "N/A", "") else int_or_none(skill),
        "S": int_or_none(strength),
        "AP": int_or_none(ap) or 0,
        "D": damage.upper(),
        "keywords": keywords,
    }
    if len(parts) == 2:
        weapon["weapon"], weapon["profile"] = parts[0].strip(), parts[1].strip()
    else:
        weapon["weapon"] = name
    return weapon


def parse_datasheet(lines: list[str], faction: str, unit: str) -> tuple[dict, list[str], list[dict]]:
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
                                     "T": int_or_none(stats[1]), "Sv": int_or_none(stats[2]), "InSv": None,
                                     "W": int_or_none(stats[3]), "Ld": int_or_none(stats[4]), "OC": int_or_none(stats[5])})
            elif line == "INVULNERABLE SAVE" and i + 1 < len(lines) and profiles:
                profiles[-1]["InSv"] = int_or_none(lines[i + 1])
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
                if m and len(cells) > 1 and int_or_none(cells[1]) is not None:
                    entry = {"models": int(m.group(1)), "points": int_or_none(cells[1])}
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
        "keywords": dedupe(keywords),
        "faction_keywords": dedupe(faction_keywords),
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


def dedupe(items: list[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for item in items:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out
