"""wh40kdc weapons -> the catalog's weapon profile dicts, and the project's corrections to them
(data/wh40kdc_overrides.json, "weapons").

One place for both users: the catalog importer (bot.catalog.importers.wh40kdc) stores the profiles with
each datasheet, and the units loader (bot.units.wh40kdc) builds units from them for army lists. It sits
below both, so neither imports the other for it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bot.catalog.model import CatalogImportError


def keyword_text(ref: dict, names: dict[str, str]) -> str:
    """A wh40kdc keyword reference as printed on a datasheet ("ANTI-VEHICLE 4+", "LETHAL HITS: non-MONSTER/VEHICLE")."""
    kid = ref.get("keyword_id", "")
    params = ref.get("parameters") or {}
    name = names.get(kid, kid.replace("-", " ")).upper()
    if kid == "anti":
        text = f"ANTI-{str(params.get('target_keyword', '')).upper()} {params.get('threshold', '?')}+"
    elif "value" in params:
        text = f"{name} {str(params['value']).upper()}"
    elif kid == "hunter" and params.get("target_keyword"):
        text = f"{name} {str(params['target_keyword']).upper()}"
    else:
        text = name
    if params.get("excluded_target_keywords"):
        text += ": non-" + "/".join(k.upper() for k in params["excluded_target_keywords"])
    elif params.get("required_target_keywords_any") and kid != "anti":
        text += ": " + "/".join(k.upper() for k in params["required_target_keywords_any"])
    return text


def _int_or_none(value: Any) -> int | None:
    if value is None or value == "-":
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def convert_weapon(weapon: dict, names: dict[str, str]) -> list[dict]:
    """wh40kdc weapon -> the catalog's weapon profile dicts (one per profile)."""
    out = []
    multi = len(weapon.get("profiles") or []) > 1
    for prof in weapon.get("profiles") or []:
        stats = prof.get("stats") or {}
        melee = weapon.get("type") == "melee" or str(prof.get("range", "")).lower() == "melee"
        pname = prof.get("name") or weapon["name"]
        display = f"{weapon['name']} – {pname}" if multi and pname.lower() != weapon["name"].lower() else pname
        entry = {
            "name": display,
            "type": "melee" if melee else "ranged",
            "range": "melee" if melee else _int_or_none(prof.get("range")),
            "A": str(stats.get("A", "")).upper(),
            "skill": _int_or_none(stats.get("WS") if melee else stats.get("BS")),
            "S": _int_or_none(stats.get("S")),
            "AP": _int_or_none(stats.get("AP")) or 0,
            "D": str(stats.get("D", "")).upper(),
            "keywords": [keyword_text(k, names) for k in prof.get("keywords") or []],
            "weapon": weapon["name"],
        }
        if multi:
            entry["profile"] = pname
        out.append(entry)
    return out


def load_overrides(path: Path) -> list[dict]:
    if not path.exists():
        return []
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise CatalogImportError(str(path), exc.lineno, f"invalid JSON: {exc.msg}") from exc
    overrides = raw.get("weapons", []) if isinstance(raw, dict) else None
    if not isinstance(overrides, list):
        raise CatalogImportError(str(path), None, "expected an object with a 'weapons' list")
    for i, item in enumerate(overrides):
        missing = [k for k in ("faction_id", "weapon_id", "set", "reason") if k not in item]
        if missing:
            raise CatalogImportError(str(path), None, f"weapons[{i}] lacks {', '.join(missing)}")
    return overrides


def apply_overrides(weapons: dict[tuple[str, str], list[dict]], overrides: list[dict], path: Path) -> int:
    """Patch converted profiles in place; an override that matches nothing is an error (stale file)."""
    applied = 0
    for i, item in enumerate(overrides):
        profiles = weapons.get((item["faction_id"], item["weapon_id"]))
        targets = [p for p in profiles or [] if item.get("profile") in (None, p.get("profile"), p["name"])]
        if not targets:
            raise CatalogImportError(str(path), None, f"weapons[{i}] ({item['faction_id']}/{item['weapon_id']} "
                                                      f"{item.get('profile') or ''}) matches no wh40kdc weapon")
        for prof in targets:
            prof.update(item["set"])
            prof.setdefault("corrections", []).append(item["reason"])
        applied += 1
    return applied
