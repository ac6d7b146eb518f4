"""Adapter over the `wh40kdc` package (pinned in pyproject): units, weapons and stratagems as entries.

wh40kdc carries structured data but no rule text, so its stratagems become *metadata* entries (cost,
type, phases, turn, the community summary when it has one). Known errors in its data are corrected by
`data/wh40kdc_overrides.json`, each with the reason and the source that shows the correct value.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bot.catalog.importers.common import sheet_text, weapon_line
from bot.catalog.importers.seed_lines import title_case
from bot.catalog.model import DETACHMENT_SCOPE, Entry, make_id, slug
from bot.units import wh40kdc as units_loader
from bot.units.wh40kdc_weapons import apply_overrides, convert_weapon, load_overrides

DATASET = "wh40kdc"
_EDITIONS = {"11th": "11e", "10th": "10e"}


def _edition(record: dict) -> str:
    return _EDITIONS.get((record.get("game_version") or {}).get("edition", "11th"), "11e")


def load(overrides_path: Path) -> tuple[list[Entry], str]:
    """All wh40kdc units (datasheets), weapons and stratagems (metadata) as entries, overrides applied."""
    import wh40kdc
    from wh40kdc import Dataset

    source = f"wh40kdc {wh40kdc.__version__}"
    ds = Dataset.embedded()
    raw_units = [u.raw if hasattr(u, "raw") else u for u in ds.units]
    raw_weapons = [w.raw if hasattr(w, "raw") else w for w in ds.weapons]
    kw_names = {k["id"]: k["name"] for k in (kv.raw if hasattr(kv, "raw") else kv for kv in ds.weapon_keywords)}
    faction_names = {f["id"]: f["name"] for f in (fv.raw if hasattr(fv, "raw") else fv for fv in ds.factions)}
    slate_dates = {(g["edition"], g["dataslate"]): g.get("effective_date")
                   for g in (gv.raw if hasattr(gv, "raw") else gv for gv in ds.game_versions)}

    def dated(record: dict, data: dict) -> dict:
        """The date of the record's dataslate (so /sim can prefer the most recent source) and its
        external ids (game-datacards, BSData), which join it to the same thing from other sources."""
        gv = record.get("game_version") or {}
        date = slate_dates.get((gv.get("edition"), gv.get("dataslate")))
        if date:
            data["source_date"] = date
        refs = {r.get("namespace"): r.get("id") for r in record.get("external_refs") or [] if isinstance(r, dict)}
        if refs:
            data["external_refs"] = {k: v for k, v in refs.items() if k and v}
        return data

    detachments = {(d["faction_id"], d["id"]): d["name"] for d in ds.detachments}
    detachments_any = {d["id"]: d["name"] for d in ds.detachments}
    abilities: dict[tuple[str, str], dict] = {}
    for a in ds.abilities:
        a = a.raw if hasattr(a, "raw") else a
        abilities.setdefault((a.get("faction_id") or "", a["ability_id"]), a)
        abilities.setdefault(("", a["ability_id"]), a)

    weapons: dict[tuple[str, str], list[dict]] = {}
    weapon_names: dict[tuple[str, str], str] = {}
    weapon_edition: dict[tuple[str, str], str] = {}
    for w in raw_weapons:
        key = (w.get("faction_id", ""), w["id"])
        if key in weapons:
            continue
        weapons[key] = convert_weapon(w, kw_names)
        weapon_names[key] = w["name"]
        weapon_edition[key] = _edition(w)
    apply_overrides(weapons, load_overrides(overrides_path), overrides_path)


    # The unit as fielded (bot/units), stored with each datasheet so /sim never loads wh40kdc at run time.
    fielded = units_loader.build_all(ds, weapons, {wid: name for (_, wid), name in weapon_names.items()},
                                     units_loader.load_overrides())
    compositions = {(c.get("unit_id"), c.get("faction_id")): c for c in ds.unit_compositions}
    unit_names = {u["id"]: u["name"] for u in raw_units}
    leads: dict[str, list[str]] = {}
    for la in ds.leader_attachments:
        leads.setdefault(la["leader_id"], []).extend(unit_names.get(b, b) for b in la.get("eligible_bodyguard_ids", []))

    entries: dict[str, Entry] = {}
    users: dict[tuple[str, str], list[str]] = {}
    for u in raw_units:
        faction = faction_names.get(u["faction_id"], u["faction_id"])
        edition = _edition(u)
        sheet_weapons: list[dict] = []
        for wid in u.get("weapon_ids") or []:
            profiles = weapons.get((u["faction_id"], wid)) or next(
                (v for (f, i), v in weapons.items() if i == wid), None)
            if profiles:
                sheet_weapons.extend(profiles)
                users.setdefault((u["faction_id"], wid), []).append(u["name"])
        sheet_abilities = []
        for aid in u.get("ability_ids") or []:
            a = abilities.get((u["faction_id"], aid)) or abilities.get(("", aid))
            if a:
                sheet_abilities.append({"name": a["name"], "text": _notes(a),
                                        "type": a.get("ability_type", "")})
        comp = compositions.get((u["id"], u["faction_id"]))
        composition = [f"{m.get('min')}-{m.get('max')} {m.get('name')}" if m.get("min") != m.get("max")
                       else f"{m.get('min')} {m.get('name')}" for m in (comp or {}).get("models", [])]
        count = u.get("model_count") or {}
        data = {
            "profiles": [{"name": p.get("name", u["name"]), "M": f'{p["M"]}"' if isinstance(p.get("M"), int)
                          else str(p.get("M", "")), "T": p.get("T"), "Sv": p.get("Sv"), "InSv": p.get("invuln_sv"),
                          "W": p.get("W"), "Ld": p.get("Ld"), "OC": p.get("OC")} for p in u.get("profiles") or []],
            "weapons": sheet_weapons,
            "abilities": sheet_abilities,
            "composition": composition,
            "models_min": count.get("min"),
            "models_max": count.get("max"),
            "points": [{"models": p.get("models"), "points": p.get("cost")} for p in u.get("points") or []
                       if p.get("cost") is not None],
            "keywords": list(u.get("keywords") or []),
            "faction_keywords": list(u.get("faction_keywords") or []),
            "leader": ("This model can be attached to: " + ", ".join(sorted(set(leads[u["id"]]))))
            if u["id"] in leads else None,
            "legend": bool(u.get("is_legend")),
        }
        if (unit := fielded.get((u["faction_id"], u["id"]))) is not None:
            data["unit"] = {k: v for k, v in unit.to_json().items() if k != "weapons"}
        if (u.get("transport_capacity") or {}).get("capacity"):
            data["transport"] = f"Transport capacity {u['transport_capacity']['capacity']}"
        eid = make_id(edition, "datasheet", f"wh40kdc.{u['faction_id']}", u["id"])
        dated(u, data)
        text = sheet_text(data)
        entries[eid] = Entry(eid, "datasheet", u["name"], edition, faction, source, text, data)

    for key, profiles in weapons.items():
        faction_id, wid = key
        faction = faction_names.get(faction_id, faction_id) if faction_id else None
        eid = make_id(weapon_edition[key], "weapon", f"wh40kdc.{faction_id or 'any'}", wid)
        text = "\n".join(weapon_line(p) for p in profiles)
        entries[eid] = Entry(eid, "weapon", weapon_names[key], weapon_edition[key], faction, source, text,
                             {"profiles": profiles, "datasheets": sorted(set(users.get(key, [])))})

    for s in ds.stratagems:
        s = s.raw if hasattr(s, "raw") else s
        det = s.get("detachment_id")
        faction_id = next((f for (f, d) in detachments if d == det), None)
        det_name = detachments_any.get(det) if det else None
        core = s.get("category") == "core"
        ability = abilities.get((faction_id or "", s.get("ability_id", ""))) or abilities.get(("", s.get("ability_id", "")))
        notes = _notes(ability or {})
        stype = (s.get("type") or "").replace("-", " ").title()
        turn = {"your-turn": "your", "opponent-turn": "opponent"}.get(s.get("player_turn"), "either")
        data = {"cp": s.get("cp_cost"), "cp_extra": [], "category": "Core" if core else (det_name or "Detachment"),
                "detachment": None if core else det_name, "type": stype, "turn": turn,
                "phase": "/".join(s.get("phases") or []) or "any", "when": "", "target": "", "effect": "",
                "restrictions": "", "metadata_only": True}
        if notes:
            data["community_notes"] = notes
        dated(s, data)
        name = title_case(s["name"])
        scope = "wh40kdc." + ("core" if core else slug(det_name or det or "detachment"))
        eid = make_id(_edition(s), "stratagem", scope, name)
        # cost, type and category are the answer's header line (render.rules.body_text): not repeated here
        lines = [f"Phase: {data['phase']} · Turn: {turn}"]
        if notes:
            lines.append(f"*Community summary (wh40kdc):* {notes}")
        lines.append("*wh40kdc carries this stratagem's metadata only, not its rules text.*")
        entries[eid] = Entry(eid, "stratagem", name, _edition(s), None if core else
                             faction_names.get(faction_id or "", faction_id), source, "\n".join(lines), data)
    entries.update(_detachments(ds, abilities, faction_names, source))
    for eid, entry in entries.items():
        entry.data.setdefault("provenance", {"package": source, "id": eid.rsplit(":", 1)[-1]})
    return list(entries.values()), source






def _refs(record: dict) -> dict[str, str]:
    """wh40kdc external_refs as {namespace: id}, the form things.py joins on."""
    return {r["namespace"]: r["id"] for r in record.get("external_refs") or []
            if isinstance(r, dict) and r.get("namespace") and r.get("id")}


def _summary(ability: dict | None) -> str:
    """A rule's wh40kdc summary: the community notes, else wh40kdc's own reading of its structured effect."""
    import wh40kdc

    if not ability:
        return ""
    notes = _notes(ability)
    if notes:
        return notes
    try:
        return str(wh40kdc.describe_ability(ability) or "").strip()
    except Exception:  # a record the describer does not know: the entry keeps its name and metadata
        return ""


def _detachments(ds: Any, abilities: dict[tuple[str, str], dict], faction_names: dict[str, str],
                 source: str) -> dict[str, Entry]:
    """wh40kdc's detachments and enhancements as *metadata* entries: names, costs, which detachment holds
    which stratagems and enhancements, and a summary of each rule (no rules text: the package has none)."""
    raw = lambda x: x.raw if hasattr(x, "raw") else x  # noqa: E731 - records are dicts or wrappers of one
    out: dict[str, Entry] = {}
    stratagem_names = {raw(s)["id"]: title_case(raw(s)["name"]) for s in ds.stratagems}
    enhancements = {raw(e)["id"]: raw(e) for e in ds.enhancements}
    detachment_of: dict[str, dict] = {}
    for d in map(raw, ds.detachments):
        faction = faction_names.get(d.get("faction_id", ""), d.get("faction_id"))
        edition = _edition(d)
        rules = []
        for rid in d.get("detachment_rule_ids") or ([d["detachment_rule_id"]] if d.get("detachment_rule_id") else []):
            ability = abilities.get((d.get("faction_id", ""), rid)) or abilities.get(("", rid))
            if ability:
                rules.append({"name": ability["name"], "text": _summary(ability)})
        enh_names = [enhancements[e]["name"] for e in d.get("enhancement_ids") or [] if e in enhancements]
        data = {"detachment": d["name"], "role": "detachment", "rules": rules,
                "stratagems": [stratagem_names[s] for s in d.get("stratagem_ids") or [] if s in stratagem_names],
                "enhancements": enh_names, "detachment_points": d.get("detachment_points"),
                "metadata_only": True, "wh40kdc_id": d["id"],
                "external_refs": _refs(d)}
        text = "\n\n".join(f"**{r['name']}** (detachment rule)" + (f"\n*wh40kdc summary:* {r['text']}" if r["text"]
                                                                    else "") for r in rules)
        text += "\n\n*wh40kdc carries this detachment's metadata only, not its rules text.*"
        eid = make_id(edition, "detachment", f"wh40kdc.{slug(faction or 'any')}.{DETACHMENT_SCOPE}", d["id"])
        out[eid] = Entry(eid, "detachment", d["name"], edition, faction, source, text.strip(), data)
        for e in d.get("enhancement_ids") or []:
            detachment_of.setdefault(e, d)
    for e in enhancements.values():
        d = detachment_of.get(e["id"]) or {}
        det_name = d.get("name") or e.get("detachment_id")
        faction = faction_names.get(d.get("faction_id", ""), d.get("faction_id"))
        ability = abilities.get((d.get("faction_id", ""), e.get("ability_id", ""))) or abilities.get(
            ("", e.get("ability_id", "")))
        summary = _summary(ability)
        text = (f"*wh40kdc summary:* {summary}\n\n" if summary else "") + \
            "*wh40kdc carries this enhancement's metadata only, not its rules text.*"
        eid = make_id(_edition(e), "enhancement", f"wh40kdc.{slug(det_name or 'any')}", e["id"])
        out[eid] = Entry(eid, "enhancement", e["name"], _edition(e), faction, source, text,
                         {"cost": e.get("cost"), "detachment": det_name, "metadata_only": True,
                          "keywords": e.get("keyword_restrictions") or [], "wh40kdc_id": e["id"],
                          "external_refs": _refs(e)})
    return out


def _notes(ability: dict) -> str:
    """wh40kdc's community summary, minus its provenance placeholders ("community-authored from ...")."""
    notes = (ability.get("community_notes") or "").strip()
    return "" if notes.lower().startswith("community-authored") else notes
