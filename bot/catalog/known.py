"""Names known to exist in the game, whether or not their text is loaded: for honest misses.

When a query names a rule the catalog has no entry for ("fnp" on the embedded data), the right answer is
"Feel No Pain is a core ability; it is not in the loaded data; here is how to load it", not ten entries
that happen to mention it. Known names come from:
  - wh40kdc's lists: weapon keywords, core abilities (parameters dropped: "Feel No Pain 5+" -> "Feel No
    Pain"), detachments and enhancements (with their faction). These are *strong*: a query that names one
    exactly is about it, so a confident answer with another name is not given.
  - the weapon-ability heads the keyword parser knows (bot/catalog/keywords.py);
  - the names of the complete public sources, shipped in data/known_names.json.gz (bot/catalog/known_list.py):
    weak, with their source;
  - the alias table's meanings (data/aliases.toml): weak, used only when nothing answers confidently.

The wh40kdc part is extracted once when the base catalog is built and kept in the catalog's meta table
(`known_names`), so opening the catalog never loads wh40kdc.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from rapidfuzz import fuzz, process

from bot.catalog.normalize import normalize
from bot.catalog.things import name_key

RULE_KINDS = ("rule", "ability", "keyword")
TYPO_RATIO = 88.0  # a known name this close to the query (edit-distance ratio) is what was meant
_PARAM = re.compile(r"""(\s+(\d+\+?|\d+"|\d*d\d+(\+\d+)?|x\+?)|\s*\(.*\))$""", re.IGNORECASE)


@dataclass(frozen=True)
class KnownName:
    name: str  # as printed, e.g. "Feel No Pain"
    what: str  # "core ability", "weapon ability", "detachment (Orks)", "enhancement (Orks)", "rules term"
    kinds: tuple[str, ...]  # the catalog kinds an entry for it would have
    strong: bool = True
    source: str = ""  # where the name is listed, said in the answer (the shipped list: bot/catalog/known_list.py)


def bare(name: str) -> str:
    """"Feel No Pain 5+" / 'Scouts 6"' / "Deadly Demise D6+3 (Szarekh model only)" -> the rule's name."""
    previous = None
    name = " ".join(name.split())
    while previous != name:
        previous, name = name, _PARAM.sub("", name).strip()
    return name


def from_wh40kdc() -> list[KnownName]:
    """The strong names, read from the pinned wh40kdc package (called when the base catalog is built)."""
    from wh40kdc import Dataset

    ds = Dataset.embedded()

    def raw(items) -> list[dict]:  # noqa: ANN001 - wh40kdc views or dicts
        return [x.raw if hasattr(x, "raw") else x for x in items]

    factions = {f["id"]: f["name"] for f in raw(ds.factions)}
    out: dict[tuple[str, str], KnownName] = {}

    def add(k: KnownName) -> None:
        out.setdefault((name_key(normalize(k.name)), k.kinds[0]), k)

    for kw in raw(ds.weapon_keywords):
        add(KnownName(bare(kw["name"]), "weapon ability", RULE_KINDS))
    for a in raw(ds.abilities):
        if a.get("ability_type") == "core":
            add(KnownName(bare(a["name"]), "core ability", RULE_KINDS))
        elif a.get("ability_type") == "faction" and not a.get("community_notes", "").startswith("auto"):
            faction = factions.get(a.get("faction_id") or "", "")
            add(KnownName(bare(a["name"]), f"army rule ({faction})" if faction else "army rule", RULE_KINDS))
    for d in raw(ds.detachments):
        faction = factions.get(d.get("faction_id") or "", "")
        add(KnownName(d["name"], f"detachment ({faction})" if faction else "detachment", ("detachment",)))
    detachment_faction = {d["id"]: factions.get(d.get("faction_id") or "", "") for d in raw(ds.detachments)}
    for e in raw(ds.enhancements):
        faction = detachment_faction.get(e.get("detachment_id") or "", "")
        add(KnownName(e["name"], f"enhancement ({faction})" if faction else "enhancement", ("enhancement",)))
    return list(out.values())


def dumps(names: list[KnownName]) -> str:
    return json.dumps([[k.name, k.what, list(k.kinds)] for k in names], ensure_ascii=False, separators=(",", ":"))


def loads(text: str | None) -> list[KnownName]:
    if not text:
        return []
    try:
        return [KnownName(n, w, tuple(k)) for n, w, k in json.loads(text)]
    except (ValueError, TypeError):
        return []


class KnownNames:
    """Lookup of a query (and its alias readings) among the known names."""

    def __init__(self, strong: list[KnownName], alias_meanings: list[str],
                 listed: tuple[KnownName, ...] | list[KnownName] = ()) -> None:
        from bot.catalog.keywords import _HEADS

        self.by_key: dict[str, list[KnownName]] = {}
        for k in strong:
            self._put(k)
        for head in [*_HEADS, "Anti"]:
            self._put(KnownName(head.title().replace("-L", "-l").replace("-Q", "-q"), "weapon ability", RULE_KINDS))
        for k in listed:
            self._put(k)
        for meaning in alias_meanings:
            self._put(KnownName(bare(meaning).title(), "rules term", RULE_KINDS, strong=False))
        self.keys = sorted(self.by_key)

    def _put(self, k: KnownName) -> None:
        key = name_key(normalize(k.name))
        if not key:
            return
        known = self.by_key.setdefault(key, [])
        if all(x.kinds != k.kinds for x in known):
            known.append(k)

    def find(self, readings: list[str], kinds: tuple[str, ...] | None, *, typos: bool) -> KnownName | None:
        """The known name a query means: a reading equal to one (parameters like "5+" dropped), or with
        `typos`, within TYPO_RATIO of one. Only names whose kinds the command asks for count."""
        def fits(k: KnownName) -> bool:
            return kinds is None or bool(set(kinds) & set(k.kinds))

        for reading in readings:
            # "anti-infantry 4+" is the Anti ability with a parameter
            extra = ("anti",) if reading.startswith(("anti ", "anti-")) else ()
            for text in dict.fromkeys((reading, bare(reading), *extra)):
                for k in self.by_key.get(name_key(text), ()):
                    if fits(k):
                        return k
        if not typos:
            return None
        for reading in readings[:2]:
            key = name_key(bare(reading))
            if len(key) < 5:
                continue
            found = process.extractOne(key, self.keys, scorer=fuzz.ratio, score_cutoff=TYPO_RATIO)
            if found:
                for k in self.by_key[found[0]]:
                    if fits(k):
                        return k
        return None
