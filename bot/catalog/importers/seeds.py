"""Parser for the seed page format (`data/seeds/*.txt`): a text scrape of one datasheet page.

A page is: a title line ("Orks – Stompa"), the datasheet (profiles, weapon tables, abilities,
composition, points, keywords), summary lists (stratagems, detachment abilities, enhancements), and
then a flat run of blocks: core rules, stratagems, detachment rules, enhancements and keyword indexes,
often glued together ("...target.Oathband Detachment"), with repeated lines and repeated blocks.

The parser unglues lines, cuts the run into blocks by their headers, turns each block into an
`Entry`, and merges repeated blocks (same edition, kind, scope and name) paragraph by paragraph.
Nothing is typed in by hand: every name, number and text comes from the page.

This module reads a page and a folder of pages; each part of a page has its parser: seed_lines.py (line
clean-up, header shapes), seed_datasheets.py, seed_rules.py (blocks and their text), seed_stratagems.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from bot.catalog.importers.common import detachment_entries, sheet_text, weapon_line
from bot.catalog.importers.seed_datasheets import dedupe, int_or_none, parse_datasheet
from bot.catalog.importers.seed_lines import (
    CP,
    DETACHMENT_LINE,
    NUM_FIRST,
    NUM_LAST,
    STRAT_HEADER,
    is_prose,
    is_title,
    is_upper,
    title_case,
    unglue,
    unglue_sentences,
)
from bot.catalog.importers.seed_rules import (
    clean_lines,
    split_blocks,
    split_faq,
    split_see_also,
    summary_item,
    summary_split,
    text_of,
)
from bot.catalog.importers.seed_stratagems import stratagem_data
from bot.catalog.model import CatalogImportError, Entry, make_id, slug
from bot.catalog.normalize import normalize

DATASET = "seeds"
MAX_PAGE_BYTES = 2_000_000


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
    lines = unglue(raw_lines[1:])
    try:
        strat_at = lines.index("STRATAGEMS")
    except ValueError:
        raise CatalogImportError(str(path), None, "no STRATAGEMS section: not a seed datasheet page") from None
    numbered = sum(1 for line in lines if NUM_FIRST.match(line) or NUM_LAST.match(line))
    edition = "11e" if numbered >= 3 or any(line.startswith("| CORE ABILITIES |") for line in lines) else "10e"
    source = f"Seed page: {faction} – {unit}"

    sheet, _, sheet_abilities = parse_datasheet(lines[:strat_at], faction, unit)

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
        elif mode == "stratagems" and i + 1 < len(lines) and CP.match(lines[i + 1]):
            if i + 2 < len(lines) and STRAT_HEADER.match(lines[i + 2]) and not summary_item(lines, i):
                break  # full stratagem blocks have started
            item = {"name": line, "cp": int(CP.match(lines[i + 1]).group(1)),
                    "category": lines[i + 2] if i + 2 < len(lines) else ""}
            summary.append(item)
            i += 3
            if i < len(lines) and re.fullmatch(r"[A-Z]{1,3}", lines[i]):
                i += 1  # the "C" / "BA" badge
            continue
        elif mode in ("detachments", "enhancements"):
            following = lines[i + 1] if i + 1 < len(lines) else ""
            if NUM_FIRST.match(line) or NUM_LAST.match(line) or (is_title(line) and is_prose(following)
                                                                 and not DETACHMENT_LINE.match(following)):
                break
            if mode == "detachments":
                detachment_names.add(line)
            else:
                cost = int_or_none(following) if re.fullmatch(r"\d+", following) else None
                enhancement_names.append((line, cost))
                if cost is not None:
                    i += 1
        else:
            break
        i += 1
    blocks = split_blocks(lines, i, edition, detachment_names)

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
        lines_clean, empty_table, stray = clean_lines(block.lines)
        notes.extend(stray)
        body, faq = split_faq(lines_clean)
        body, see_also = split_see_also(body)
        if block.kind == "errata":
            mm = re.match(r"^The (.+?) Stratagem is the same as the (.+?) stratagem\.?$", body[0] if body else "",
                          re.IGNORECASE)
            if mm:
                aliases[normalize(mm.group(1))] = mm.group(2)
            continue
        if block.kind == "stratagem":
            data, text, detachment, category = stratagem_data(block, body)
            sedition = "10e" if category == "Boarding Actions" else edition
            scope = "seed." + slug(category)
            name = title_case(block.title.strip())
            add(Entry(make_id(sedition, "stratagem", scope, name), "stratagem", name, sedition,
                      None if category in ("Core", "Boarding Actions") else faction, source, text, data))
            continue
        if block.kind == "keyword":
            if not block.title or re.search(r"\band\b", block.title):
                continue  # "The ORKS and INFANTRY keywords ..." or a keyword the scrape dropped
            cats = [c for c in body if is_title(c)]
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
            text = (f"*{fluff}*\n\n" if fluff else "") + "\n".join(unglue_sentences(r) for r in rule)
            add(Entry(make_id(edition, "enhancement", "seed." + slug(block.meta["detachment"]), display),
                      "enhancement", display, edition, faction, source, text.strip(),
                      {"cost": cost, "detachment": block.meta["detachment"], "fluff": fluff,
                       "rule": "\n".join(rule)}))
            continue
        if block.kind == "detachment":
            fluff, rule = (body[0], body[1:]) if len(body) > 1 else ("", body)
            rule_text = "\n".join(unglue_sentences(r) for r in rule)
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
            body, summary_lines = summary_split(body)
        text = text_of(body, edition)
        title = block.title
        display = title
        if title.startswith("[") and title.endswith("]"):
            display = title_case(title[1:-1])
        elif is_upper(title):
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
    sheet["notes"] = dedupe(notes)
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
