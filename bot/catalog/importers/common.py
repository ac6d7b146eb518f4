"""Shared helpers for importers: size-limited reading, precise errors, keyword normalisation."""

from __future__ import annotations

from pathlib import Path

from bot.catalog.keywords import _parse_sequence
from bot.catalog.model import DETACHMENT_SCOPE, CatalogImportError, Entry, make_id, slug
from bot.catalog.normalize import normalize

# Documented in docs/rules-notes.md: files larger than this are refused before they are read.
MAX_CSV_BYTES = 64 * 1024 * 1024
MAX_JSON_BYTES = 32 * 1024 * 1024


def read_text(path: Path, max_bytes: int) -> str:
    """The file as text: UTF-8 (a BOM is dropped), refused when over `max_bytes`, line endings kept."""
    path = Path(path)
    if not path.is_file():
        raise CatalogImportError(str(path), None, "no such file")
    size = path.stat().st_size
    if size > max_bytes:
        raise CatalogImportError(str(path), None, f"file is {size:,} bytes; the limit is {max_bytes:,} bytes")
    raw = path.read_bytes()
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise CatalogImportError(str(path), line, f"not UTF-8 text (byte {raw[exc.start]:#04x})") from exc


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
