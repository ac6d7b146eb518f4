"""game-datacards JSON: faction files (datasheets, stratagems, enhancements, army and detachment rules),
`core_rules.json` (the complete numbered 11th-edition core rules, English text under `en`), `faqs.json`
(errata and FAQ answers with their targets) and `keywords.json` (the weapon/unit ability glossary).

Everything is parsed and validated before anything is written; a bad file raises CatalogImportError
with the file, the line (from the JSON decoder, or of the offending record) and the reason.
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Any

from bot.catalog.importers.common import (
    MAX_JSON_BYTES,
    MAX_JSON_DEPTH,
    MAX_JSON_ITEMS,
    MAX_NUMBER_DIGITS,
    MAX_POINTS,
    MAX_STRATAGEM_CP,
    bounded_int,
    detachment_entries,
    line_of,
    printed_keyword,
    read_text,
    sheet_text,
    shown,
    weapon_line,
)
from bot.catalog.markdown import html_to_markdown
from bot.catalog.model import FAQ_TARGET_KINDS, STRATAGEM_NUMBERS, CatalogImportError, Entry, make_id, slug
from bot.catalog.normalize import normalize

Batches = dict[str, tuple[str, str | None, list[Entry]]]
log = logging.getLogger(__name__)


class UnknownFileError(CatalogImportError):
    """A JSON file that is no game-datacards file we read: refused alone, skipped with a warning in a folder."""


def _en(value: Any) -> str:
    """A localised field: {"en": "..."} -> "..."; plain strings pass through."""
    if isinstance(value, dict):
        value = value.get("en", "")
    return value if isinstance(value, str) else ""


def _edition(source: Any, path: Path) -> str:
    m = re.search(r"(10|11)e", str(source or ""))
    if not m:
        raise CatalogImportError(str(path), 1, f"unknown 'source' {str(source)[:40]!r}: expected 40k-10e or 40k-11e")
    return f"{m.group(1)}e"


def load_path(path: Path, skipped: list[str] | None = None) -> Batches:
    """A single JSON file, or every *.json in a folder (e.g. the gdc export with core_rules.json).

    In a folder, a JSON file that is no game-datacards file is skipped: logged, and described in
    `skipped` ("readme.json: <reason>") so the CLI can show the operator.
    """
    path = Path(path)
    # dot files are bookkeeping (the download folder's .meta.json), not data
    files = sorted(p for p in path.glob("*.json") if not p.name.startswith(".")) if path.is_dir() else [path]
    if not files:
        raise CatalogImportError(str(path), None, "no .json files here")
    batches: Batches = {}
    for file in files:
        try:
            name, batch = load_file(file)
        except UnknownFileError as exc:
            if not path.is_dir():
                raise
            log.warning("game-datacards import: skipped %s (%s)", file.name, exc.reason)
            if skipped is not None:
                skipped.append(f"{file.name}: {exc.reason}")
            continue
        batches[name] = batch
    if not batches:
        raise CatalogImportError(str(path), None, "no game-datacards faction or core rules file here")
    return batches


def parse_bounded(text: str, path: Path) -> Any:
    """json.loads within the documented limits: at most MAX_JSON_ITEMS values (an upper bound counted on the
    raw text before parsing, so memory stays proportional to a real file) and MAX_JSON_DEPTH levels."""
    items = text.count(",") + text.count("{") + text.count("[")
    if items > MAX_JSON_ITEMS:
        raise CatalogImportError(str(path), None, f"about {items:,} JSON values; the limit is {MAX_JSON_ITEMS:,}")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CatalogImportError(str(path), exc.lineno, f"invalid JSON: {exc.msg}") from exc
    except RecursionError:
        raise CatalogImportError(str(path), None, f"JSON nested deeper than {MAX_JSON_DEPTH} levels") from None
    if _depth_over(doc, MAX_JSON_DEPTH):
        raise CatalogImportError(str(path), None, f"JSON nested deeper than {MAX_JSON_DEPTH} levels")
    return doc


def _depth_over(doc: Any, limit: int) -> bool:
    """Whether `doc` nests deeper than `limit` containers (iterative: no recursion on hostile input)."""
    stack = [(doc, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict | list):
            if depth > limit:
                return True
            stack.extend((v, depth + 1) for v in (value.values() if isinstance(value, dict) else value))
    return False


def load_file(path: Path) -> tuple[str, tuple[str, str | None, list[Entry]]]:
    text = read_text(path, MAX_JSON_BYTES)
    doc = parse_bounded(text, path)
    if not isinstance(doc, dict):
        raise CatalogImportError(str(path), 1, "expected a JSON object at the top level")
    if "sections" in doc:
        entries = _core_rules(doc, path, text)
        for entry in entries:
            entry.data.setdefault("provenance", {"file": path.name})
            if isinstance(doc.get("updated"), str):
                entry.data.setdefault("source_date", doc["updated"][:10])
        updated = f" ({doc['updated'][:10]})" if isinstance(doc.get("updated"), str) else ""
        return "gdc:core-rules", (f"game-datacards core rules{updated}", str(path), entries)
    if "datasheets" in doc or "stratagems" in doc:
        entries, faction = _faction(doc, path, text)
        updated = f" ({doc['updated'][:10]})" if isinstance(doc.get("updated"), str) else ""
        return f"gdc:{slug(faction)}", (f"game-datacards {faction}{updated}", str(path), entries)
    if isinstance(doc.get("faqs"), list):
        updated = f" ({doc['updated'][:10]})" if isinstance(doc.get("updated"), str) else ""
        return "gdc:faqs", (f"game-datacards FAQ and errata{updated}", str(path), _faqs(doc, path, text))
    if isinstance(doc.get("keywords"), list) and doc.get("cardType") == "keywords":
        updated = f" ({doc['updated'][:10]})" if isinstance(doc.get("updated"), str) else ""
        return "gdc:keywords", (f"game-datacards keyword glossary{updated}", str(path), _keywords(doc, path, text))
    raise UnknownFileError(str(path), 1, "not a game-datacards core rules, faction, faqs or keywords file")


# ---------------------------------------------------------------------------------------------
# FAQ / errata and the keyword glossary

FAQ_NAME_CHARS = 120  # a question is the entry's name; long ones are cut at a word


def _short(text: str, limit: int = FAQ_NAME_CHARS) -> str:
    text = " ".join(text.replace("**", "").split())
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0].rstrip(",;:") + "…"


def _faqs(doc: dict, path: Path, text: str) -> list[Entry]:
    """Each errata or Q&A is one `faq` entry; its targets (gdc ids and names) are linked in the store."""
    edition = _edition(doc.get("source"), path)
    updated = doc["updated"][:10] if isinstance(doc.get("updated"), str) else None
    entries: dict[str, Entry] = {}
    for i, item in enumerate(doc["faqs"]):
        where = line_of(text, f'"{item.get("id", "")}"') if isinstance(item, dict) else None
        if not isinstance(item, dict):
            raise CatalogImportError(str(path), where, f"faqs[{i}] is not an object")
        publication = _en((item.get("publication") or {}).get("name")).strip() or "game-datacards"
        question = html_to_markdown(_en(item.get("question")))
        answer = html_to_markdown(_en(item.get("answer")))
        header = html_to_markdown(_en(item.get("errataHeader")))
        change = html_to_markdown(_en(item.get("errataText")))
        if question:
            kind, name = "faq", _short(question)
            body = f"**Q:** {question}\n\n**A:** {answer or '(no answer printed)'}"
        elif header or change:
            kind, name = "errata", _short(header or change)
            body = (f"**{header}**\n\n" if header else "") + change
        else:
            raise CatalogImportError(str(path), where, f"faqs[{i}] has neither a question nor errata text")
        targets = []
        for t in item.get("targets") or []:
            if isinstance(t, dict) and t.get("type") in FAQ_TARGET_KINDS and _en(t.get("name")).strip():
                targets.append({"type": t["type"], "gdc_id": str(t.get("id") or ""), "name": _en(t["name"]).strip()})
        data = {"faq_kind": kind, "publication": publication, "date": updated, "targets": targets,
                "question": question, "answer": answer, "header": header, "errata": change,
                "gdc_id": str(item.get("id") or ""), "order": item.get("order"),
                "provenance": {"file": path.name}}
        eid = make_id(edition, "faq", f"gdc.faq.{slug(publication)}", f"{item.get('order', i)} {name}")
        label = f"{publication}" + (f" ({updated})" if updated else "")
        entries[eid] = Entry(eid, "faq", name, edition, None, f"{label} · game-datacards", body, data)
    return list(entries.values())


def _keywords(doc: dict, path: Path, text: str) -> list[Entry]:
    """The glossary: one `keyword` entry per ability ("Anti-", "Deep Strike"), text as printed."""
    edition = _edition(doc.get("source"), path)
    updated = doc["updated"][:10] if isinstance(doc.get("updated"), str) else None
    source = "game-datacards keyword glossary" + (f" ({updated})" if updated else "")
    entries: dict[str, Entry] = {}
    for i, k in enumerate(doc["keywords"]):
        if not isinstance(k, dict) or not isinstance(k.get("name"), str) or not k["name"].strip():
            raise CatalogImportError(str(path), line_of(text, f'"{(k or {}).get("key", "")}"') if isinstance(k, dict)
                                     else None, f"keywords[{i}] has no name")
        body = html_to_markdown(_en(k.get("description")))
        if not body:
            raise CatalogImportError(str(path), line_of(text, f'"{k.get("key", "")}"'),
                                     f"keywords[{i}] ({k['name'][:40]}) has no description")
        name = k["name"].strip()
        if name.endswith("-"):  # "Anti-" is printed as [ANTI-X Y+]
            name = name + "X Y+" if name.lower() == "anti-" else name.rstrip("-")
        applies = [a for a in k.get("appliesTo") or [] if isinstance(a, str)]
        eid = make_id(edition, "keyword", "gdc.keywords", name)
        entries[eid] = Entry(eid, "keyword", name, edition, None, source, body,
                             {"key": k.get("key"), "match": k.get("matchType"), "applies_to": applies,
                              "glossary": True, "provenance": {"file": path.name}})
    if not entries:
        raise CatalogImportError(str(path), None, "the keyword list is empty")
    return list(entries.values())


# ---------------------------------------------------------------------------------------------
# Core rules


def _core_rules(doc: dict, path: Path, text: str) -> list[Entry]:
    edition = _edition(doc.get("source"), path)
    source = "game-datacards core rules" + (f" ({doc['updated'][:10]})" if isinstance(doc.get("updated"), str) else "")
    sections = doc.get("sections")
    if not isinstance(sections, list):
        raise CatalogImportError(str(path), line_of(text, '"sections"'), "'sections' must be a list")
    entries: dict[str, Entry] = {}
    numbered: list[dict] = []  # the core stratagems gdc numbers but only references (see `_stratagem_numbers`)
    for s_i, section in enumerate(sections):
        if not isinstance(section, dict) or not isinstance(section.get("containers"), list):
            raise CatalogImportError(str(path), line_of(text, str((section or {}).get("id", ""))),
                                     f"sections[{s_i}] has no 'containers' list")
        section_name = _en(section.get("name"))
        for c_i, container in enumerate(section["containers"]):
            where = line_of(text, str(container.get("id", ""))) if isinstance(container, dict) else None
            if not isinstance(container, dict):
                raise CatalogImportError(str(path), where, f"sections[{s_i}].containers[{c_i}] is not an object")
            title = _en(container.get("title")).strip()
            number = _en(container.get("subTitle")).strip() or None
            ctype = container.get("type")
            if not title:
                raise CatalogImportError(str(path), where, f"sections[{s_i}].containers[{c_i}] has no English title")
            if ctype == "stratagem":  # gdc only references core stratagems by id: their number joins them
                if number and isinstance(container.get("stratagem_id"), str):
                    numbered.append({"id": container["stratagem_id"], "number": number, "name": _display(title)})
                continue
            parts: list[str] = []
            subrules: list[tuple[str, str, str]] = []
            if ctype == "behaviourType" and isinstance(container.get("behaviour"), dict):
                parts.append(_behaviour_text(container["behaviour"]))
            for comp in sorted(container.get("components") or [], key=lambda c: c.get("order", 0)):
                kind = comp.get("type")
                if kind == "text":
                    parts.append(html_to_markdown(_en(comp.get("text"))))
                elif kind == "header" and _en(comp.get("text") or comp.get("title")):
                    parts.append(f"**{_en(comp.get('text') or comp.get('title'))}**")
                elif kind == "accordion":
                    a_title = _en(comp.get("title"))
                    m = re.match(r"^\s*(\d+(?:\.\d+)+)\s*-\s*(.+)$", a_title)
                    if m:
                        a_number = ".".join(f"{int(p):02d}" for p in m.group(1).split("."))
                        subrules.append((a_number, m.group(2).strip(), html_to_markdown(_en(comp.get("text")))))
                    elif a_title:
                        parts.append(f"**{a_title}**\n{html_to_markdown(_en(comp.get('text')))}")
            if subrules:
                parts.append("**See also:** " + "; ".join(f"{n} {t}" for n, t, _ in subrules))
            body = "\n\n".join(p for p in parts if p).strip()
            name = _display(title)
            data = {"title": title, "number": number, "section": section_name, "gdc_id": str(container.get("id") or "")}
            if ctype == "introduction":
                data["introduction"] = True
            if body:
                eid = make_id(edition, "rule", "gdc.core", f"{number or ''} {name}")
                entries[eid] = Entry(eid, "rule", name, edition, None, source, body, data)
            for a_number, a_title, a_text in subrules:
                eid = make_id(edition, "rule", "gdc.core", f"{a_number} {a_title}")
                entries[eid] = Entry(eid, "rule", a_title, edition, None, source, a_text,
                                     {"title": a_title, "number": a_number, "section": section_name,
                                      "parent": f"{number} {name}" if number else name})
    if not entries:
        raise CatalogImportError(str(path), None, "no rules with English text found")
    if numbered:
        next(iter(entries.values())).data[STRATAGEM_NUMBERS] = numbered
    return list(entries.values())


_BEHAVIOUR_ORDER = [("maximumDistance", "MAXIMUM DISTANCE"), ("setupDistance", "SET-UP DISTANCE"),
                    ("eligibleIf", "ELIGIBLE IF"), ("effect", "EFFECT"), ("beforeMoving", "BEFORE MOVING"),
                    ("whileMoving", "WHILE MOVING"), ("afterMoving", "AFTER MOVING"),
                    ("whileShooting", "WHILE SHOOTING"), ("afterShooting", "AFTER SHOOTING")]


def _behaviour_text(behaviour: dict) -> str:
    lines = []
    for key, label in _BEHAVIOUR_ORDER:
        value = html_to_markdown(_en(behaviour.get(key)))
        if value:
            lines.append(f"**{label}:** {value}")
    return "\n\n".join(lines)


def _display(title: str) -> str:
    """"[LETHAL HITS]" -> "Lethal Hits"; other titles as printed."""
    if title.startswith("[") and title.endswith("]"):
        inner = title[1:-1]
        return " ".join(w[:1].upper() + w[1:].lower() for w in inner.split(" "))
    return title


# ---------------------------------------------------------------------------------------------
# Faction files


def _faction(doc: dict, path: Path, text: str) -> tuple[list[Entry], str]:
    faction = doc.get("name")
    if not isinstance(faction, str) or not faction.strip():
        raise CatalogImportError(str(path), line_of(text, '"name"'), "faction file has no 'name'")
    edition = _edition(doc.get("source"), path)
    source = f"game-datacards {faction}"
    scope = "gdc." + slug(faction)
    entries: dict[str, Entry] = {}

    updated = doc["updated"][:10] if isinstance(doc.get("updated"), str) else None

    def add(entry: Entry) -> None:
        entry.data.setdefault("provenance", {"file": path.name})
        if updated:
            entry.data.setdefault("source_date", updated)  # the newest source wins in /sim (things.py)
        entries.setdefault(entry.id, entry)

    rules = doc.get("rules") or {}
    for rule in rules.get("army") or []:
        name = _en(rule.get("name"))
        body = "\n\n".join(html_to_markdown(_en(r.get("text"))) for r in rule.get("rules") or [])
        if name and body:
            add(Entry(make_id(edition, "rule", scope, name), "rule", name, edition, faction, source, body,
                      {"title": name, "army_rule": True}))
    for det in rules.get("detachment") or []:
        for rule in det.get("rules") or []:
            name = _en(rule.get("name"))
            body = "\n\n".join(html_to_markdown(_en(r.get("text"))) for r in rule.get("rules") or [])
            if name and body:
                add(Entry(make_id(edition, "detachment", f"{scope}.{slug(det.get('detachment', ''))}", name),
                          "detachment", name, edition, faction, source, body,
                          {"detachment": det.get("detachment"), "rule": body}))

    for i, s in enumerate(doc.get("stratagems") or []):
        if isinstance(s, dict):
            s = {k: (_en(v) if isinstance(v, dict) and "en" in v else v) for k, v in s.items()}
        if not isinstance(s, dict) or not isinstance(s.get("name"), str) or not s["name"].strip():
            raise CatalogImportError(str(path), line_of(text, str((s or {}).get("id", ""))) if isinstance(s, dict)
                                     else None, f"stratagems[{i}] has no name")
        fields = {k: html_to_markdown(str(s.get(k) or "")) for k in ("when", "target", "effect", "restrictions")}
        cp = s.get("cost")
        cp = bounded_int(cp, 0, MAX_STRATAGEM_CP) if isinstance(cp, int | str) and not isinstance(cp, bool) else None
        if cp is None or str(s.get("cost")).strip() != str(cp):
            raise CatalogImportError(str(path), line_of(text, str(s.get("id", ""))),
                                     f"stratagems[{i}] ({shown(s['name'])}) has a cost {shown(s.get('cost'))} "
                                     f"that is not a whole number from 0 to {MAX_STRATAGEM_CP}")
        detachment = s.get("detachment")
        stype = str(s.get("type") or "")
        data = {"cp": cp, "cp_extra": [], "category": detachment or "Core", "detachment": detachment, "type": stype,
                "gdc_id": str(s.get("id") or ""),
                "turn": {"your": "your", "opponents": "opponent", "opponent": "opponent"}.get(
                    str(s.get("turn") or "").lower(), "either"),
                "phase": "/".join(s.get("phase") or []) or "any", **fields, "fluff": s.get("fluff") or ""}
        parts = ([f"*{data['fluff']}*"] if data["fluff"] else []) + [
            f"**{k.upper()}:** {v}" for k, v in fields.items() if v]
        name = s["name"].strip()
        add(Entry(make_id(edition, "stratagem", f"{scope}.{slug(detachment or 'core')}", name), "stratagem", name,
                  edition, faction, source, "\n\n".join(parts), data))

    for i, e in enumerate(doc.get("enhancements") or []):
        if isinstance(e, dict):
            e = {k: (_en(v) if isinstance(v, dict) and "en" in v else v) for k, v in e.items()}
        if not isinstance(e, dict) or not isinstance(e.get("name"), str) or not e["name"].strip():
            raise CatalogImportError(str(path), None, f"enhancements[{i}] has no name")
        body = html_to_markdown(str(e.get("description") or ""))
        cost = bounded_int(e.get("cost"), 0, MAX_POINTS) if str(e.get("cost", "")).isdigit() else None
        add(Entry(make_id(edition, "enhancement", f"{scope}.{slug(e.get('detachment') or '')}", e["name"]),
                  "enhancement", e["name"], edition, faction, source, body,
                  {"cost": cost, "detachment": e.get("detachment"), "rule": body, "gdc_id": str(e.get("id") or "")}))

    weapons: dict[str, list[dict]] = {}
    weapon_users: dict[str, list[str]] = {}
    for i, ds in enumerate(doc.get("datasheets") or []):
        if isinstance(ds, dict):
            ds = _localised(ds)
        where = line_of(text, str(ds.get("id", ""))) if isinstance(ds, dict) else None
        if not isinstance(ds, dict) or not isinstance(ds.get("name"), str) or not ds["name"].strip():
            raise CatalogImportError(str(path), where, f"datasheets[{i}] has no name")
        if not isinstance(ds.get("stats", []), list):
            raise CatalogImportError(str(path), where, f"datasheets[{i}] ({ds['name']}): 'stats' must be a list")
        sheet = _datasheet(ds, path, where)
        for w in sheet["weapons"]:
            base = w.get("weapon") or w["name"]
            weapons.setdefault(base, [])
            if w not in weapons[base]:
                weapons[base].append(w)
            weapon_users.setdefault(base, []).append(ds["name"])
        for a in sheet["abilities"]:
            if a["type"] == "datasheet" and a["text"]:
                add(Entry(make_id(edition, "ability", scope, a["name"]), "ability", a["name"], edition, faction,
                          source, a["text"], {"datasheets": [ds["name"]]}))
        eid = make_id(edition, "datasheet", scope, ds["name"])
        if eid in entries:
            eid = make_id(edition, "datasheet", scope, f"{ds['name']} {ds.get('id', i)}")
        sheet["gdc_id"] = str(ds.get("id") or "")
        add(Entry(eid, "datasheet", ds["name"].strip(), edition, faction, source, sheet_text(sheet), sheet))
    for base, profiles in weapons.items():
        add(Entry(make_id(edition, "weapon", scope, base), "weapon", base, edition, faction, source,
                  "\n".join(weapon_line(p) for p in profiles),
                  {"profiles": profiles, "datasheets": sorted(set(weapon_users[base]))}))
    det_ids = {normalize(_en(d.get("name"))): str(d.get("id") or "") for d in doc.get("detachments") or []
               if isinstance(d, dict)}
    for entry in detachment_entries(list(entries.values()), "gdc", source, ids=det_ids):
        add(entry)
    return list(entries.values()), faction


def _localised(value: Any) -> Any:
    """Replace every {"en": ...} (with other languages) by its English text, recursively."""
    if isinstance(value, dict):
        if "en" in value and all(isinstance(v, str) for v in value.values()):
            return value["en"]
        return {k: _localised(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_localised(v) for v in value]
    return value


def _num(value: Any) -> int | None:
    """Leading integer of a stat ("4+", "6\""), None when absent or absurdly long."""
    return bounded_int(value, -(10 ** MAX_NUMBER_DIGITS), 10 ** MAX_NUMBER_DIGITS)


def _datasheet(ds: dict, path: Path, where: int | None) -> dict:
    abilities_raw = ds.get("abilities") or {}
    invul = _num((abilities_raw.get("invul") or {}).get("value")) if isinstance(abilities_raw, dict) else None
    profiles = []
    for st in ds.get("stats") or []:
        profiles.append({"name": st.get("name") or ds["name"], "M": str(st.get("m", "")), "T": _num(st.get("t")),
                         "Sv": _num(st.get("sv")), "InSv": invul, "W": _num(st.get("w")), "Ld": _num(st.get("ld")),
                         "OC": _num(st.get("oc"))})
    weapons = []
    for kind, key in (("ranged", "rangedWeapons"), ("melee", "meleeWeapons")):
        for group in ds.get(key) or []:
            group_profiles = group.get("profiles") or []
            for prof in group_profiles:
                rng = str(prof.get("range", ""))
                skill = str(prof.get("skill", ""))
                weapons.append({
                    "name": prof.get("name", ""), "type": kind,
                    "range": "melee" if kind == "melee" or rng.lower() == "melee" else _num(rng),
                    "A": str(prof.get("attacks", "")).upper(), "skill": None if skill in ("", "N/A", "-") else _num(skill),
                    "S": _num(prof.get("strength")), "AP": _num(prof.get("ap")) or 0,
                    "D": str(prof.get("damage", "")).upper(),
                    "keywords": [printed_keyword(k) for k in prof.get("keywords") or [] if isinstance(k, str) and k],
                    "weapon": (prof.get("name", "").split(" – ")[0].split(" - ")[0]).strip(),
                })
    abilities = []
    if isinstance(abilities_raw, dict):
        for typ in ("core", "faction"):
            for a in abilities_raw.get(typ) or []:
                name = a.get("name") if isinstance(a, dict) else a
                if name:
                    abilities.append({"name": str(name), "text": "", "type": typ})
        for typ in ("other", "wargear", "special"):
            for a in abilities_raw.get(typ) or []:
                if isinstance(a, dict) and a.get("name"):
                    abilities.append({"name": a["name"], "text": html_to_markdown(a.get("description") or ""),
                                      "type": "datasheet" if typ == "other" else typ})
    points = []
    for p in ds.get("points") or []:
        cost, models = bounded_int(p.get("cost"), 0, MAX_POINTS), _num(p.get("models"))
        if cost is not None and models is not None:
            points.append({"models": models, "points": cost})
    composition = [html_to_markdown(c).lstrip("▪ ").strip() for c in ds.get("composition") or [] if isinstance(c, str)]
    counts = [int(m.group(1)) for c in composition if (m := re.match(r"^(\d+)(?:-(\d+))?", c))]
    maxes = [int(m.group(2) or m.group(1)) for c in composition if (m := re.match(r"^(\d+)(?:-(\d+))?", c))]
    leader = ds.get("leader")
    return {
        "profiles": profiles, "weapons": weapons, "abilities": abilities, "composition": composition,
        "models_min": sum(counts) if counts else None, "models_max": sum(maxes) if maxes else None,
        "points": points, "keywords": [k for k in ds.get("keywords") or [] if isinstance(k, str)],
        "faction_keywords": [k for k in ds.get("factions") or [] if isinstance(k, str)],
        "leader": html_to_markdown(leader) if isinstance(leader, str) and leader else None,
        "loadout": html_to_markdown(ds.get("loadout") or "") if isinstance(ds.get("loadout"), str) else "",
    }




