"""Wahapedia CSV export folder -> entries (datasheets, weapons, abilities, stratagems, detachment rules,
enhancements).

The export's dialect: UTF-8 with a BOM, CRLF line ends, '|' separators, a trailing '|' on every line and
no quoting at all (so a field can never contain '|' or a line break). Columns are mapped by header
name, because the 10th- and 11th-edition exports order and name some columns differently. Every file
is read and checked before anything is written; a malformed one stops the import with file, line and
reason.
"""

from __future__ import annotations

import re
from pathlib import Path

from bot.catalog.importers.common import (
    MAX_CSV_BYTES,
    MAX_CSV_FIELD_CHARS,
    MAX_CSV_FOLDER_BYTES,
    MAX_CSV_FOLDER_ROWS,
    MAX_CSV_ROWS,
    MAX_NUMBER_DIGITS,
    MAX_POINTS,
    MAX_STRATAGEM_CP,
    bounded_int,
    detachment_entries,
    printed_keyword,
    read_text,
    sheet_text,
    shown,
    weapon_line,
)
from bot.catalog.importers.seed_lines import title_case
from bot.catalog.markdown import html_to_markdown
from bot.catalog.model import CatalogImportError, Entry, make_id, slug

Batches = dict[str, tuple[str, str | None, list[Entry]]]

REQUIRED = {
    "Factions.csv": ("id", "name"),
    "Datasheets.csv": ("id", "name", "faction_id"),
}
OPTIONAL = {
    "Datasheets_models.csv": ("datasheet_id", "name", "M", "T", "Sv", "W", "Ld", "OC"),
    "Datasheets_wargear.csv": ("datasheet_id", "name", "range", "type", "A", "S", "AP", "D"),
    "Datasheets_abilities.csv": ("datasheet_id",),
    "Abilities.csv": ("id", "name"),
    "Datasheets_keywords.csv": ("datasheet_id", "keyword"),
    "Datasheets_models_cost.csv": ("datasheet_id", "description", "cost"),
    "Datasheets_unit_composition.csv": ("datasheet_id", "description"),
    "Datasheets_leader.csv": ("leader_id", "attached_id"),
    "Stratagems.csv": ("name", "id", "cp_cost", "description"),
    "Detachment_abilities.csv": ("id", "name", "description"),
    "Enhancements.csv": ("id", "name", "description"),
    "Source.csv": ("id", "name"),
    "Last_update.csv": ("last_update",),
}


def read_table(path: Path, required: tuple[str, ...]) -> list[dict[str, str]]:
    """One export file as a list of dicts keyed by header name (BOM, CRLF and the trailing '|' handled)."""
    text = read_text(path, MAX_CSV_BYTES)
    if text.count("\n") > MAX_CSV_ROWS + 1 or text.count("\r") > 2 * (MAX_CSV_ROWS + 1):  # before splitting
        raise CatalogImportError(str(path), MAX_CSV_ROWS + 2, f"more than {MAX_CSV_ROWS:,} rows; that is the limit")
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines:
        raise CatalogImportError(str(path), 1, "the file is empty (expected a header line)")
    header = _split(lines[0])
    if len(set(header)) != len(header) or any(not h for h in header):
        raise CatalogImportError(str(path), 1, "the header has empty or repeated column names")
    missing = [c for c in required if c not in header]
    if missing:
        raise CatalogImportError(str(path), 1, f"missing column(s) {', '.join(missing)}; found {', '.join(header)}")
    if len(lines) - 1 > MAX_CSV_ROWS + 1:
        raise CatalogImportError(str(path), MAX_CSV_ROWS + 2, f"more than {MAX_CSV_ROWS:,} rows; that is the limit")
    rows = []
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        if len(line) > MAX_CSV_FIELD_CHARS:
            cells = _split(line)
            at = max(range(len(cells)), key=lambda i: len(cells[i]))
            if len(cells[at]) > MAX_CSV_FIELD_CHARS:
                column = repr(header[at]) if at < len(header) else f"number {at + 1}"
                raise CatalogImportError(str(path), number, f"field {column} has {len(cells[at]):,} characters; "
                                                            f"the limit is {MAX_CSV_FIELD_CHARS:,}")
        fields = _split(line)
        if len(fields) != len(header):
            raise CatalogImportError(str(path), number, f"{len(fields)} fields where the header has {len(header)} "
                                                        "(this format has no quoting, so a stray '|' breaks a row)")
        row = dict(zip(header, fields, strict=True))
        row["_line"] = str(number)
        rows.append(row)
    return rows


def _split(line: str) -> list[str]:
    fields = line.split("|")
    if len(fields) > 1 and fields[-1] == "":
        fields.pop()  # the trailing '|'
    return fields


def _edition(folder: Path, tables: dict[str, list[dict]]) -> str:
    for name in ("Stratagems.csv", "Datasheets_wargear.csv", "Detachment_abilities.csv"):
        for row in tables.get(name, [])[:200]:
            blob = " ".join(row.values())
            m = re.search(r"/wh40k(10|11)ed/", blob)
            if m:
                return f"{m.group(1)}e"
    editions = [row.get("edition", "") for row in tables.get("Source.csv", []) if row.get("edition")]
    if editions:
        top = max(set(editions), key=editions.count)
        if top in ("10", "11"):
            return f"{top}e"
    raise CatalogImportError(str(folder), None, "cannot tell whether this is a 10th or 11th edition export "
                                                "(no /wh40k10ed/ links and no Source.csv edition column)")


def load_folder(folder: Path) -> Batches:
    folder = Path(folder)
    if not folder.is_dir():
        raise CatalogImportError(str(folder), None, "not a folder (point at the unzipped Wahapedia export)")
    tables: dict[str, list[dict]] = {}
    wanted = [(name, cols) for name, cols in REQUIRED.items()]
    wanted += [(name, cols) for name, cols in OPTIONAL.items() if (folder / name).exists()]
    total = sum((folder / name).stat().st_size for name, _ in wanted if (folder / name).is_file())
    if total > MAX_CSV_FOLDER_BYTES:
        raise CatalogImportError(str(folder), None, f"the export's files total {total:,} bytes; the limit is "
                                                    f"{MAX_CSV_FOLDER_BYTES:,} bytes")
    rows = 0
    for name, cols in wanted:
        tables[name] = read_table(folder / name, cols)
        rows += len(tables[name])
        if rows > MAX_CSV_FOLDER_ROWS:
            raise CatalogImportError(str(folder / name), None, f"the export has more than {MAX_CSV_FOLDER_ROWS:,} "
                                                               "rows in all; that is the limit")
    edition = _edition(folder, tables)
    updated = (tables.get("Last_update.csv") or [{}])[0].get("last_update", "")[:10]
    source = f"Wahapedia export {updated}".strip()
    entries = _entries(tables, edition, source, folder)
    entries += detachment_entries(entries, "wahapedia", source)
    if updated:
        for entry in entries:
            entry.data.setdefault("source_date", updated)
    return {f"wahapedia:{edition}": (source, str(folder), entries)}


def _md(raw: str) -> str:
    return html_to_markdown(raw or "")


_BIG = 10 ** MAX_NUMBER_DIGITS


def _num(value: str) -> int | None:
    """Leading integer of a cell ("4+", "24"), None when absent or absurdly long."""
    return bounded_int(value, -_BIG, _BIG)


def _entries(t: dict[str, list[dict]], edition: str, source: str, folder: Path) -> list[Entry]:
    factions = {r["id"]: r["name"] for r in t["Factions.csv"]}
    sheets = {r["id"]: r for r in t["Datasheets.csv"]}
    out: dict[str, Entry] = {}

    def add(entry: Entry, file: str | None = None, row: dict | None = None) -> None:
        """Keep the first entry per id; record where it came from (file and line of the export)."""
        if file:
            entry.data.setdefault("provenance", {"file": file, **({"line": int(row["_line"])} if row else {})})
        out.setdefault(entry.id, entry)

    def faction_of(fid: str) -> str | None:
        return factions.get(fid) or (fid or None)

    by_sheet: dict[str, dict[str, list[dict]]] = {}
    for table in ("Datasheets_models.csv", "Datasheets_wargear.csv", "Datasheets_abilities.csv",
                  "Datasheets_keywords.csv", "Datasheets_models_cost.csv", "Datasheets_unit_composition.csv"):
        for row in t.get(table, []):
            by_sheet.setdefault(row["datasheet_id"], {}).setdefault(table, []).append(row)
    leads: dict[str, list[str]] = {}
    for row in t.get("Datasheets_leader.csv", []):
        target = sheets.get(row["attached_id"])
        if target:
            leads.setdefault(row["leader_id"], []).append(target["name"])
    abilities_by_id: dict[str, dict] = {}
    for row in t.get("Abilities.csv", []):
        abilities_by_id.setdefault(row["id"], row)
        desc = _md(row.get("description", ""))
        if desc:
            add(Entry(make_id(edition, "ability", f"wahapedia.{slug(row.get('faction_id') or 'core')}", row["name"]),
                      "ability", row["name"], edition, faction_of(row.get("faction_id", "")), source, desc,
                      {"legend": _md(row.get("legend", ""))}), "Abilities.csv", row)

    weapons: dict[tuple[str, str], list[dict]] = {}
    weapon_users: dict[tuple[str, str], set[str]] = {}
    used_ids: set[str] = set()
    for sid, sheet in sheets.items():
        rows = by_sheet.get(sid, {})
        faction = faction_of(sheet.get("faction_id", ""))
        profiles = []
        for m in sorted(rows.get("Datasheets_models.csv", []), key=lambda r: _num(r.get("line", "")) or 0):
            profiles.append({"name": title_case(m["name"]), "M": m.get("M", ""), "T": _num(m.get("T", "")),
                             "Sv": _num(m.get("Sv", "")), "InSv": _num(m.get("inv_sv", "")),
                             "W": _num(m.get("W", "")), "Ld": _num(m.get("Ld", "")), "OC": _num(m.get("OC", ""))})
        sheet_weapons = []
        for w in sorted(rows.get("Datasheets_wargear.csv", []), key=lambda r: (_num(r.get("line", "")) or 0,
                                                                               _num(r.get("line_in_wargear", "")) or 0)):
            melee = w.get("type", "").lower() == "melee"
            rng = w.get("range", "")
            kw_text = _md(w.get("description", ""))
            keywords = [printed_keyword(k) for k in re.split(r",\s*", kw_text) if k.strip()] if kw_text else []
            skill = w.get("BS_WS", w.get("BS", w.get("WS", "")))
            weapon = {"name": w["name"], "type": "melee" if melee else "ranged",
                      "range": "melee" if melee or rng.lower() == "melee" else _num(rng),
                      "A": w.get("A", "").upper(), "skill": None if skill in ("", "N/A", "-") else _num(skill),
                      "S": _num(w.get("S", "")), "AP": _num(w.get("AP", "")) or 0, "D": w.get("D", "").upper(),
                      "keywords": keywords, "weapon": re.split(r"\s[–-]\s", w["name"], maxsplit=1)[0].strip()}
            sheet_weapons.append(weapon)
            key = (sheet.get("faction_id", ""), weapon["weapon"])
            weapons.setdefault(key, [])
            if weapon not in weapons[key]:
                weapons[key].append(weapon)
            weapon_users.setdefault(key, set()).add(sheet["name"])
        sheet_abilities = []
        for a in sorted(rows.get("Datasheets_abilities.csv", []), key=lambda r: _num(r.get("line", "")) or 0):
            ref = abilities_by_id.get(a.get("ability_id", ""))
            name = a.get("name") or (ref or {}).get("name") or ""
            if a.get("parameter"):
                name = f"{name} {a['parameter']}".strip()
            text = _md(a.get("description", ""))
            typ = (a.get("type") or "datasheet").lower()
            if name:
                sheet_abilities.append({"name": name, "text": text, "type": typ})
                if text and typ not in ("core", "faction"):
                    add(Entry(make_id(edition, "ability", f"wahapedia.{slug(sheet.get('faction_id') or 'x')}", name),
                              "ability", name, edition, faction, source, text, {"datasheets": [sheet["name"]]}))
        keywords = [k["keyword"] for k in rows.get("Datasheets_keywords.csv", []) if
                    k.get("is_faction_keyword", "false") != "true"]
        faction_keywords = [k["keyword"] for k in rows.get("Datasheets_keywords.csv", []) if
                            k.get("is_faction_keyword") == "true"]
        composition = [_md(c["description"]) for c in rows.get("Datasheets_unit_composition.csv", [])]
        points = []
        for c in rows.get("Datasheets_models_cost.csv", []):
            models = _num(c.get("description", ""))
            cost = bounded_int(c.get("cost", ""), 0, MAX_POINTS)
            if models is not None and cost is not None:
                points.append({"models": models, "points": cost})
        counts = [_num(c) for c in composition if _num(c) is not None]
        data = {
            "profiles": profiles, "weapons": sheet_weapons, "abilities": sheet_abilities,
            "composition": composition, "models_min": min((p["models"] for p in points), default=None) or
            (sum(counts) if counts else None), "models_max": max((p["models"] for p in points), default=None)
            or (sum(counts) if counts else None), "points": points, "keywords": keywords,
            "faction_keywords": faction_keywords,
            "leader": ("This model can be attached to: " + ", ".join(sorted(set(leads[sid])))) if sid in leads
            else None,
            "loadout": _md(sheet.get("loadout", "")), "role": sheet.get("role", ""),
            "legend": _md(sheet.get("legend", "")), "wahapedia_id": sid,
        }
        if sheet.get("transport"):
            data["transport"] = _md(sheet["transport"])
        scope = f"wahapedia.{slug(sheet.get('faction_id') or 'x')}"
        eid = make_id(edition, "datasheet", scope, sheet["name"])
        if eid in used_ids:
            eid = make_id(edition, "datasheet", scope, f"{sheet['name']} {sid}")
        used_ids.add(eid)
        add(Entry(eid, "datasheet", sheet["name"], edition, faction, source, sheet_text(data), data),
            "Datasheets.csv", sheet)

    for (fid, wname), profiles in weapons.items():
        add(Entry(make_id(edition, "weapon", f"wahapedia.{slug(fid or 'x')}", wname), "weapon", wname, edition,
                  faction_of(fid), source, "\n".join(weapon_line(p) for p in profiles),
                  {"profiles": profiles, "datasheets": sorted(weapon_users[(fid, wname)])}), "Datasheets_wargear.csv")

    for s in t.get("Stratagems.csv", []):
        text = _md(s.get("description", ""))
        fields = _fields(text)
        stype = s.get("type", "")
        m = re.match(r"^(?:(.+?) – )?(.+?)(?: Stratagem)?$", stype)
        category = (m.group(1) if m and m.group(1) else s.get("detachment") or "Core") if m else "Core"
        kind_type = m.group(2) if m else stype
        cp = bounded_int(s.get("cp_cost", ""), 0, MAX_STRATAGEM_CP)
        if cp is None and not s.get("cp_cost", "").strip():
            cp = 0  # e.g. Aeldari Agile Manoeuvres: listed with stratagems, no CP cost printed
        elif cp is None:
            raise CatalogImportError(str(folder / "Stratagems.csv"), int(s["_line"]),
                                     f"cp_cost {shown(s.get('cp_cost'))} is not a number from 0 to "
                                     f"{MAX_STRATAGEM_CP}")
        turn = s.get("turn", "").lower()
        data = {"cp": cp, "cp_extra": [], "category": category,
                "detachment": s.get("detachment") or None, "type": kind_type,
                "turn": "your" if turn.startswith("your") else "opponent" if "opponent" in turn else "either",
                "phase": s.get("phase", "").replace(" phase", "").lower() or "any", **fields,
                "fluff": _md(s.get("legend", ""))}
        name = title_case(s["name"].strip())
        body = (f"*{data['fluff']}*\n\n" if data["fluff"] else "") + text
        add(Entry(make_id(edition, "stratagem", f"wahapedia.{slug(s.get('faction_id') or 'core')}.{slug(category)}",
                          name), "stratagem", name, edition, faction_of(s.get("faction_id", "")), source, body, data),
            "Stratagems.csv", s)

    for d in t.get("Detachment_abilities.csv", []):
        body = _md(d.get("description", ""))
        legend = _md(d.get("legend", ""))
        add(Entry(make_id(edition, "detachment", f"wahapedia.{slug(d.get('faction_id') or 'x')}."
                                                 f"{slug(d.get('detachment') or '')}", d["name"]),
                  "detachment", d["name"], edition, faction_of(d.get("faction_id", "")), source,
                  (f"*{legend}*\n\n" if legend else "") + body,
                  {"detachment": d.get("detachment") or None, "rule": body, "fluff": legend}),
            "Detachment_abilities.csv", d)

    for e in t.get("Enhancements.csv", []):
        body = _md(e.get("description", ""))
        legend = _md(e.get("legend", ""))
        add(Entry(make_id(edition, "enhancement", f"wahapedia.{slug(e.get('faction_id') or 'x')}."
                                                  f"{slug(e.get('detachment') or '')}", e["name"]),
                  "enhancement", e["name"], edition, faction_of(e.get("faction_id", "")), source,
                  (f"*{legend}*\n\n" if legend else "") + body,
                  {"cost": bounded_int(e.get("cost", ""), 0, MAX_POINTS), "detachment": e.get("detachment") or None, "rule": body}),
            "Enhancements.csv", e)
    return list(out.values())


_FIELD = re.compile(r"\*\*(WHEN|TARGET|EFFECT|RESTRICTIONS):\*\*\s*")


def _fields(text: str) -> dict[str, str]:
    parts = _FIELD.split(text)
    fields = {"when": "", "target": "", "effect": "", "restrictions": ""}
    for key, value in zip(parts[1::2], parts[2::2], strict=False):
        fields[key.lower()] = value.strip()
    return fields




