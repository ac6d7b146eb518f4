"""Shared helpers for importers: size-limited reading, precise errors, keyword normalisation.

Limits (documented in docs/operations.md; hostile files are refused before they cost much time or memory,
with headroom of 3-20x over the largest real export file of 2025/2026):

- CSV (Wahapedia): a file over `MAX_CSV_BYTES`, a folder whose read files total over `MAX_CSV_FOLDER_BYTES`,
  a field over `MAX_CSV_FIELD_CHARS`, a file over `MAX_CSV_ROWS` rows or a folder over `MAX_CSV_FOLDER_ROWS`.
- JSON (game-datacards): a file over `MAX_JSON_BYTES`, more than `MAX_JSON_ITEMS` values (counted as the
  commas, '{' and '[' of the file before it is parsed, so a file of millions of `{},` never becomes
  millions of objects), or nesting deeper than `MAX_JSON_DEPTH`.
- Numbers: a stratagem's CP cost must be 0..`MAX_STRATAGEM_CP`, points and enhancement costs
  0..`MAX_POINTS`; any number is read from at most `MAX_NUMBER_DIGITS` digits.
"""

from __future__ import annotations

import re
from pathlib import Path

from bot.catalog.keywords import _parse_sequence
from bot.catalog.model import DETACHMENT_SCOPE, CatalogImportError, Entry, make_id, slug
from bot.catalog.normalize import normalize

MAX_CSV_BYTES = 16 * 1024 * 1024          # largest real file read: 1.5 MB (Datasheets_abilities.csv)
MAX_CSV_FOLDER_BYTES = 32 * 1024 * 1024   # the files of a real export that are read: 7.2 MB together
MAX_CSV_FIELD_CHARS = 64 * 1024           # longest real field: 9,493 characters (Abilities.csv)
MAX_CSV_ROWS = 200_000                    # longest file read: 15,584 rows (Datasheets_keywords.csv)
MAX_CSV_FOLDER_ROWS = 400_000             # all files read: 43,700 rows
MAX_JSON_BYTES = 16 * 1024 * 1024         # largest real file: 1.9 MB (core_rules.json)
MAX_JSON_ITEMS = 400_000                  # core_rules.json: 18,600
MAX_JSON_DEPTH = 32                       # deepest real file: 9 levels
MAX_STRATAGEM_CP = 20                     # the same bound /strat use puts on a cost (bot/games/rules.MAX_CP_STEP)
MAX_POINTS = 10_000
MAX_NUMBER_DIGITS = 9


def read_text(path: Path, max_bytes: int) -> str:
    """The file as text: UTF-8 (a BOM is dropped), refused when over `max_bytes`, line endings kept."""
    path = Path(path)
    if not path.is_file():
        raise CatalogImportError(str(path), None, "no such file")
    size = path.stat().st_size
    if size > max_bytes:
        raise CatalogImportError(str(path), None, f"file is {size:,} bytes; the limit is {max_bytes:,} bytes")
    raw = path.read_bytes()
    body = raw[3:] if raw.startswith(b"\xef\xbb\xbf") else raw  # offsets below are in `body`, so no BOM shift
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = body[: exc.start].count(b"\n") + 1
        column = exc.start - (body.rfind(b"\n", 0, exc.start) + 1) + 1
        raise CatalogImportError(str(path), line, f"not UTF-8 text (byte {body[exc.start]:#04x} at column "
                                                  f"{column}, file offset {exc.start + len(raw) - len(body)})") from exc


def bounded_int(value: object, low: int, high: int) -> int | None:
    """The leading integer of `value` ("2+", " 3", 5) when it has at most MAX_NUMBER_DIGITS digits and lies
    in [low, high]; None otherwise (so a 10**30 or a 5,000-digit number never becomes an int)."""
    m = re.match(r"^\s*(-?\d+)", str(value if value is not None else ""))
    if not m or len(m.group(1).lstrip("-")) > MAX_NUMBER_DIGITS:
        return None
    number = int(m.group(1))
    return number if low <= number <= high else None


def shown(value: object, limit: int = 40) -> str:
    """A value echoed in an error message, shortened."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def line_of(text: str, needle: str) -> int | None:
    """1-based line of the first occurrence of `needle` (to point at a bad JSON record)."""
    if not needle:
        return None
    at = text.find(needle)
    return text.count("\n", 0, at) + 1 if at >= 0 else None


def printed_keyword(raw: str) -> str:
    """"Rapid Fire 1" / "anti-infantry 4+" -> "RAPID FIRE 1" / "ANTI-INFANTRY 4+" (unknown ones uppercased)."""
    raw = " ".join(raw.split()).strip(" ,.[]")
    parsed = _parse_sequence(raw)
    return parsed[0] if parsed and len(parsed) == 1 else raw.upper()


def weapon_line(w: dict) -> str:
    """One weapon profile as a line of the searchable text, the same for every source."""
    rng = "Melee" if w["range"] == "melee" else f'{w["range"]}"'
    skill = "N/A" if w["skill"] is None else f'{w["skill"]}+'
    kw = f" [{', '.join(w['keywords'])}]" if w["keywords"] else ""
    return f"**{w['name']}**{kw} — {rng} A{w['A']} {'WS' if w['type'] == 'melee' else 'BS'}{skill} " \
           f"S{w['S']} AP{w['AP']} D{w['D']}"


def sheet_text(sheet: dict, *, composition: bool = False) -> str:
    """A datasheet's `data` flattened into the entry text that full-text search indexes."""
    parts = [f"**{p['name']}** — M {p['M']} T {p['T']} Sv {p['Sv']}+ W {p['W']} Ld {p['Ld']}+ OC {p['OC']}"
             + (f" InSv {p['InSv']}+" if p.get("InSv") else "") for p in sheet["profiles"]]
    parts.extend(weapon_line(w) for w in sheet["weapons"])
    for a in sheet["abilities"]:
        detail = f": {a['text']}" if a["text"] else (f" ({a['type']})" if a.get("type") else "")
        parts.append(f"**{a['name']}**{detail}")
    if composition and sheet.get("composition"):
        parts.append("Composition: " + "; ".join(sheet["composition"]))
    if sheet["keywords"]:
        parts.append("Keywords: " + ", ".join(sheet["keywords"]))
    return "\n".join(parts)


def detachment_entries(entries: list[Entry], scope: str, source: str | None = None, *,
                       ids: dict[str, str] | None = None) -> list[Entry]:
    """One `detachment` entry named after each detachment the batch mentions, with its rules.

    A source prints a detachment as its rule ("Get Stuck In", data.detachment "War Horde"), its stratagems
    and its enhancements; this adds "War Horde" itself, so the detachment is found under its own name.
    Its stratagems and enhancements are listed in `data` by name (the answer finds them in every source).
    A detachment named only by stratagems/enhancements has no rule text here: `incomplete: "text"`.
    `ids` maps a normalised detachment name to the source's id (game-datacards, for errata links).
    Without `source`, each detachment names the source of the first entry that mentions it.
    """
    groups: dict[tuple, dict] = {}
    for e in entries:
        det = e.data.get("detachment") if e.kind in ("detachment", "stratagem", "enhancement") else None
        if not isinstance(det, str) or not det.strip() or e.data.get("role") == "detachment":
            continue
        group = groups.setdefault((e.edition, e.faction, normalize(det)),
                                  {"name": det.strip(), "rules": [], "stratagems": [], "enhancements": [],
                                   "source": source or e.source, "provenance": e.data.get("provenance")})
        if e.kind == "detachment":
            rule = {"name": e.name, "text": str(e.data.get("rule") or e.text).strip()}
            if rule not in group["rules"]:
                group["rules"].append(rule)
        elif e.name not in group[f"{e.kind}s"]:
            group[f"{e.kind}s"].append(e.name)
    out = []
    for (edition, faction, norm), g in groups.items():
        data = {"detachment": g["name"], "role": "detachment", "rules": g["rules"],
                "stratagems": g["stratagems"], "enhancements": g["enhancements"]}
        if g["provenance"]:
            data["provenance"] = g["provenance"]
        if ids and ids.get(norm):
            data["gdc_id"] = ids[norm]
        if g["rules"]:
            text = "\n\n".join(f"**{r['name']}** (detachment rule)\n{r['text']}" for r in g["rules"])
        else:
            text = "*This source names the detachment (its stratagems or enhancements) but prints no rule for it.*"
            data["incomplete"] = "text"
        eid = make_id(edition, "detachment", f"{scope}.{slug(faction or 'any')}.{DETACHMENT_SCOPE}", g["name"])
        out.append(Entry(eid, "detachment", g["name"], edition, faction, g["source"], text, data))
    return out
