"""Shared helpers for importers: size-limited reading, precise errors, keyword normalisation."""

from __future__ import annotations

from pathlib import Path

from bot.catalog.keywords import _parse_sequence
from bot.catalog.model import CatalogImportError

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
