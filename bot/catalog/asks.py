"""Players' asks for the rules: document expansion (doc2query, Nogueira et al., 2019) from data written blind.

`data/rules_asks.jsonl` holds, for the 11e numbered core rules and keywords and the 10e core rules, and for the
factions' abilities, stratagems, detachment rules and enhancements (a line with a "kind"), what players type
when that entry is the answer, written by writers who never saw the code or a query set. They are indexed
per rule they name in their own FTS5 table (passages.search_asks), a ranking of its own in the fusion
(answers.WEIGHTS["asks"]), so a question in players' words finds the rule in the rules' words; never quoted. They are read when the
catalog is built (`building.build_base` keeps them in the catalog's meta table, `passages.rebuild` indexes them),
never at answer time. A missing or invalid file is one warning line: the passages are then indexed without them
and answers keep working.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from bot.catalog.normalize import normalize
from bot.catalog.things import name_key

FILE = "rules_asks.jsonl"  # in the data root
META_KEY = "passage_asks"  # the catalog's meta row holding them (JSON: {edition: {rule key: [asks]}})
MAX_BYTES = 1_000_000
MAX_ASKS = 12  # per rule and writer
MAX_ASK_CHARS = 200
_NUMBER = re.compile(r"^\d{2}\.\d{2}(?:\.\d{2})?$")


class AsksError(ValueError):
    """The file cannot be used (the message names the file, the line and why)."""


FACTION_KINDS = ("ability", "stratagem", "detachment", "enhancement")  # a line's optional "kind": a faction's entry


def rule_key(rule: str, kind: str | None = None) -> str:
    """A rule number as printed ("13.08"), else the entry name's key ("Fall Back Moves" -> "name:fall back move");
    a faction entry's name is keyed with its kind ("ability:name:dok's toolz"), so the asks written for an
    ability never reach a core rule or keyword of the same name."""
    rule = rule.strip()
    key = rule if _NUMBER.match(rule) else "name:" + name_key(normalize(rule))
    return f"{kind}:{key}" if kind else key


def load(path: Path) -> dict[str, dict[str, list[str]]]:
    """{edition: {rule key: asks}} from the file (lines starting with '#' are comments); AsksError when it is
    missing, too large or a line is not {"edition": "10e"|"11e", "rule": str, "asks": [str, ...]}."""
    try:
        if path.stat().st_size > MAX_BYTES:
            raise AsksError(f"{path}: larger than {MAX_BYTES} bytes")
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise AsksError(f"{path}: cannot be read ({exc.__class__.__name__})") from exc
    out: dict[str, dict[str, list[str]]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise AsksError(f"{path}, line {number}: not JSON ({exc.msg})") from exc
        asks = row.get("asks") if isinstance(row, dict) else None
        if (not isinstance(row, dict) or row.get("edition") not in ("10e", "11e") or not isinstance(row.get("rule"), str)
                or not row["rule"].strip() or not isinstance(asks, list) or not all(isinstance(a, str) for a in asks)
                or row.get("kind") not in (None, *FACTION_KINDS)):
            raise AsksError(f'{path}, line {number}: expected {{"edition": "10e"|"11e", "rule": "...", "asks": [...]}}'
                            f' and an optional "kind": one of {", ".join(FACTION_KINDS)}')
        kept = out.setdefault(row["edition"], {}).setdefault(rule_key(row["rule"], row.get("kind")), [])
        kept += [a[:MAX_ASK_CHARS] for a in asks[:MAX_ASKS] if a.strip()]
    return out
