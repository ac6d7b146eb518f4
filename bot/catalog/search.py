"""Name search over the catalog: exact, then prefix, then token, then fuzzy (rapidfuzz), plus full text.

The index holds only names and metadata in memory (texts stay in SQLite), so a lookup is a few dict
and bisect operations plus, when the cheaper tiers do not fill the answer, one rapidfuzz pass over the
unique names. Scores are 0-100: exact 100, compact-exact (re-roll == reroll) 100, plural-folded
(grenades == Grenade) 99, unit name without its generic tail (leman russ == Leman Russ Battle Tank) 97,
entry alias 97, prefix 90-99 (89-98 spaces aside), token 80-89, fuzzy <= 80, full text 45-85. Ties are broken by the
preferred edition, the kind, and how complete the source is.

A query is also read without its rule parameters ("sustained hits 2" -> "sustained hits",
"anti-vehicle 4+" -> "anti") and with its unknown words corrected to the closest name word ("overwach"
-> "overwatch"), each reading a little behind the literal one (see `variants`).

Why one file of about 670 lines (issue 20 asks each product file over 500 lines for a reason): the tiers of
`SearchIndex` (exact, prefix, token, fuzzy, full text) and its readings of a query (parameters dropped,
typos corrected, aliases) share the in-memory name tables and the one 0-100 score scale above; apart, each
would reach into the others' internals. The functions at the end read a raw query for the service.
"""

from __future__ import annotations

import bisect
import heapq
import re
import tomllib
from collections import OrderedDict, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from rapidfuzz import fuzz, process
from rapidfuzz.distance import OSA

from bot.catalog import vocabulary
from bot.catalog.context import (
    EDITION_WORDS,
    KIND_WORDS,
    Context,
    named_edition,
    read_context,
    without_edition,
)
from bot.catalog.known import bare
from bot.catalog.model import Hit
from bot.catalog.normalize import normalize, rule_number
from bot.catalog.shorthand import EMPTY as NO_SHORTHAND
from bot.catalog.shorthand import Grammar
from bot.catalog.things import dataset_priority, faction_key, name_key

MAX_QUERY_CHARS = 200  # a longer query is clipped: names are short and FTS gets at most 12 words
SHORT_KEEP = 300  # names kept per one/two-letter prefix
FUZZY_POOL = 600  # names scored with WRatio: those sharing the most typo-tolerant words with the query
AUTOCOMPLETE_FUZZY_POOL = 150  # per keystroke fewer: WRatio over the pool is most of a typo's cost

KIND_BONUS = {"rule": 1.0, "stratagem": 0.9, "datasheet": 0.8, "ability": 0.5, "detachment": 0.6,
              "enhancement": 0.45, "weapon": 0.3, "keyword": 0.2}
PREFERRED_EDITION_BONUS = 4.0
INCOMPLETE_PENALTY = 3.0
ALIAS_VARIANT_PENALTY = 1.0
PARAMETER_PENALTY = 1.0  # "sustained hits 2" read as "sustained hits"
TYPO_PENALTY = 4.0  # a reading with a misspelt word corrected: behind any literal name match
GUESS_PENALTY = 7.5  # ... that only begins a name (prefix, token tiers): below CONFIDENT_SCORE, offered not answered
PLURAL_SCORE = 99.0
CORE_NAME_SCORE = 97.0
# Generic tails of unit names that players leave out ("intercessors", "leman russ", "riptide").
GENERIC_TAILS = ("squad", "battle tank", "battlesuit", "battlesuits")
OUTRIGHT_SCORE = 98.0  # a reading this close to a name (after its penalty) names it: no eager fuzzy pass
MAX_CORRECTED_WORDS = 4
MAX_READINGS = 12  # readings of one query searched (each is a pass over the name tiers)
AUTOCOMPLETE_FUZZY_BELOW = 80.0  # autocomplete runs the fuzzy tier only when no name has the typed words
NUMBER_SCORE = 101.0  # a rule number ("24.33", "rule 13.08") or the rules a shorthand names: above any name
SECTION_SCORE = 80.0  # the section of a sub-section number the rules do not have: offered (a picker), not answered
NUMBER_STEP = 0.5  # each further rule a shorthand names ranks a little lower (a picker, not a confident answer)
MENTION_SCORE = 85.5  # an entry a question names (+1 per word of the mention): above its full-text hits
MAX_MENTION_WORDS = 16  # a question is read for mentions in its first words (bounded work)
KIND_WORD_BONUS = 3.0  # "morty datasheet": entries of the kind named by the query's last word rank first
KIND_WORD_PENALTY = 2.0  # the query read with that last word as part of the name
CONTEXT_PENALTY = 1.0  # the name read without the faction, kind or filler words around it ("ghaz stats")
CONTEXT_BONUS = 2.0  # entries of the faction or detachment named around the name ("thrill seekers ec")
CONFIDENT_SCORE = 88.0
CONFIDENT_MARGIN = 1.5
FUZZY_CONFIDENT_SCORE = 68.0
FUZZY_CONFIDENT_MARGIN = 4.0
FUZZY_CONFIDENT_RATIO = 85.0

_STOP_WORDS = frozenset({"i", "my", "me", "you", "your", "it", "its", "they", "them", "their", "this", "that", "these",
                         "those", "a", "an", "the", "of", "for", "to", "in", "on", "at", "by", "with", "from", "into",
                         "and", "or", "but", "not", "no", "if", "then", "than", "so", "as", "be", "been", "get", "gets",
                         "same", "one", "two", "twice", "again", "after", "before", "during", "while", "still",
                         "work", "works", "use", "used", "using", "over", "out", "up", "any", "all",
                         "can", "could", "does", "do", "did", "is", "are", "was", "how", "what", "when", "which",
                         "why", "where", "who", "should", "must", "may", "will", "would", "rule", "rules", "unit",
                         "units", "model", "models", "stratagem", "stratagems", "datasheet", "weapon", "weapons",
                         "ability", "abilities", "phase", "turn", "round", "enemy", "friendly", "army"})
# "falling back" names Fall Back; players ask in the -ing form
_GERUNDS = {"falling": "fall", "shooting": "shoot", "charging": "charge", "fighting": "fight", "moving": "move",
            "advancing": "advance", "embarking": "embark", "disembarking": "disembark", "piling": "pile",
            "consolidating": "consolidate", "rerolling": "reroll"}
_QUESTION_WORDS = {"stratagem", "stratagems", "datasheet", "unit", "units", "weapon", "weapons", "which", "what", "how", "where", "when", "does", "do", "can", "is", "are", "find", "search",
                   "mentions", "mention", "mentioning", "about", "rule", "rules", "text", "that", "with", "the",
                   "a", "an", "of", "for", "to", "in", "on", "any", "me", "show", "say", "says"}


@dataclass(slots=True)
class Record:
    rowid: int
    id: str
    dataset: str
    kind: str
    name: str
    edition: str
    faction: str | None
    source: str
    number: str | None
    incomplete: bool
    group: str  # the thing this entry belongs to: the id of the thing's primary entry
    priority: float
    detachment: str | None = None
    text_less: bool = False  # metadata without the rules text (wh40kdc's stratagems, enhancements, detachments)


@dataclass(frozen=True)
class Aliases:
    """`words` expand inside any query; `whole` only when they are the entire query. `names`: the meanings
    that are exact entry names from the player vocabulary (not rule words to look for among known names)."""

    words: dict[str, list[str]]
    whole: dict[str, list[str]]
    names: frozenset[str] = frozenset()
    factions: dict[str, str] = field(default_factory=dict)  # "ec" -> "emperors children" (bot/catalog/context.py)
    ambiguous: frozenset[str] = frozenset()  # vocabulary terms with several meanings: offered, never claimed

    def names_ambiguous(self, q: str) -> bool:
        """Whether normalised query `q` holds a vocabulary term players use for more than one thing."""
        padded = f" {q} "
        return any(f" {term} " in padded for term in self.ambiguous)


def load_aliases(path: Path, vocabulary_path: Path | None = None) -> Aliases:
    """`data/aliases.toml`: `[aliases]` and `[whole]` tables of abbreviation = expansion (or a list); plus the
    player vocabulary (`data/vocabulary.tsv`), read as word aliases where the alias table has no such word."""
    with open(path, "rb") as fh:
        raw = tomllib.load(fh)

    def table(name: str) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for key, value in raw.get(name, {}).items():
            values = [value] if isinstance(value, str) else list(value)
            out[normalize(key)] = [normalize(v) for v in values]
        return out

    words, whole = table("aliases"), table("whole")
    names: set[str] = set()
    meanings: dict[str, list[str]] = {}
    for term in vocabulary.load(vocabulary_path) if vocabulary_path is not None else ():
        if term.term not in words and term.term not in whole:
            meanings.setdefault(term.term, []).append(normalize(term.target))
            names.add(normalize(term.target))
    words.update(meanings)
    factions = {normalize(k): faction_key(v) for k, v in raw.get("factions", {}).items()}
    ambiguous = frozenset(term for term, targets in meanings.items() if len(targets) > 1)
    return Aliases(words, whole, frozenset(names), factions, ambiguous)


class SearchIndex:
    """In-memory name index built from `CatalogStore.index_rows()`."""

    def __init__(self, rows: Iterable, aliases: Aliases, shorthand: Grammar = NO_SHORTHAND) -> None:
        self.aliases = aliases
        self.shorthand = shorthand
        self.records: list[Record] = []
        self.by_rowid: dict[int, int] = {}
        by_name: dict[str, list[int]] = defaultdict(list)
        by_alias: dict[str, list[int]] = defaultdict(list)
        self.by_number: dict[str, list[int]] = defaultdict(list)
        for row in rows:
            rec = Record(
                rowid=row["rowid"], id=row["id"], dataset=row["dataset"], kind=row["kind"], name=row["name"],
                edition=row["edition"], faction=row["faction"], source=row["source"], number=row["number"],
                # an empty table or missing text ranks the complete copy first; a datasheet that only
                # lacks its profile table (the Stompa seed page) stays first, linked to a full one
                incomplete=row["incomplete"] not in (None, "profiles"),
                group=row["thing"],
                priority=dataset_priority(row["dataset"]),
                detachment=row["detachment"] if isinstance(row["detachment"], str) else None,
                text_less=bool(row["metadata_only"]),
            )
            idx = len(self.records)
            self.records.append(rec)
            self.by_rowid[rec.rowid] = idx
            by_name[row["norm_name"]].append(idx)
            for alias in filter(None, (row["aliases"] or "").split("\n")):
                by_alias[normalize(alias)].append(idx)
            if rec.number:
                self.by_number[rec.number].append(idx)
        self.by_id = {rec.id: i for i, rec in enumerate(self.records)}
        by_key: dict[str, list[int]] = defaultdict(list)
        for name, idxs in by_name.items():  # norm_name is normalize(name), stored at import
            by_key[name_key(name)].extend(idxs)
        self.by_key = dict(by_key)  # plural and spacing folded, for "is this name loaded at all"
        factions: dict[str, dict[str, None]] = defaultdict(dict)
        detachments: dict[str, dict[str, None]] = defaultdict(dict)
        for rec in self.records:
            if rec.faction:
                factions[rec.group][rec.faction] = None
            if rec.detachment:
                detachments[rec.group][rec.detachment] = None
        self.thing_factions = {k: tuple(v) for k, v in factions.items()}
        # a detachment's stratagems and enhancements, by (edition, normalised detachment name)
        parts: dict[tuple[str, str], list[int]] = defaultdict(list)
        norm_detachment: dict[str, str] = {}
        for i, rec in enumerate(self.records):
            if rec.detachment and rec.detachment not in norm_detachment:
                norm_detachment[rec.detachment] = normalize(rec.detachment)
            if rec.detachment and rec.kind in ("stratagem", "enhancement"):
                parts[(rec.edition, norm_detachment[rec.detachment])].append(i)
        self.norm_detachment = norm_detachment
        self.detachment_parts = dict(parts)
        self.thing_detachments = {k: tuple(v) for k, v in detachments.items()}
        # what a query may say around a name (bot/catalog/context.py): factions as the data names them, plus
        # the players' abbreviations; every detachment's name
        self.faction_terms = {normalize(f): faction_key(f) for f in {rec.faction for rec in self.records} if f}
        self.faction_terms.update({f: f for f in set(self.faction_terms.values())})
        self.faction_terms.update(aliases.factions)
        self.detachment_names = sorted(set(norm_detachment.values()) | {
            normalize(rec.name) for rec in self.records if rec.kind == "detachment"})
        self.by_name = dict(by_name)
        self.name_kinds = {n: frozenset(self.records[i].kind for i in idxs) for n, idxs in self.by_name.items()}
        self.name_editions = {n: frozenset(self.records[i].edition for i in idxs) for n, idxs in self.by_name.items()}
        self.by_alias = dict(by_alias)
        self.names = sorted(n for n in self.by_name if n)
        # plural and spacing folded ("grenades" = "Grenade"); unit names without a generic tail
        self.by_name_key: dict[str, list[str]] = defaultdict(list)
        self.by_core_key: dict[str, list[str]] = defaultdict(list)
        for name in self.names:
            self.by_name_key[name_key(name)].append(name)
            if name.startswith("the ") and len(name) > 8:  # "sixty sixth seal" = "The Sixty-sixth Seal"
                self.by_name_key[name_key(name[4:])].append(name)
            if "datasheet" in self.name_kinds[name]:
                for tail in GENERIC_TAILS:
                    if name.endswith(" " + tail) and len(name) > len(tail) + 3:
                        self.by_core_key[name_key(name[: -len(tail) - 1])].append(name)
        self._corrections: OrderedDict[str, tuple[str, ...]] = OrderedDict()
        self._near: OrderedDict[str, tuple[str, ...]] = OrderedDict()
        self.by_compact: dict[str, list[str]] = defaultdict(list)
        token_names: dict[str, set[int]] = defaultdict(set)
        for name in self.names:
            self.by_compact[name.replace(" ", "")].append(name)
            if name.startswith("the ") and len(name) > 8:
                self.by_compact[name[4:].replace(" ", "")].append(name)
        self.compacts = sorted(self.by_compact)
        for i, name in enumerate(self.names):
            for tok in name.split():
                token_names[tok].add(i)
        self.tokens = sorted(token_names)
        self.token_names = dict(token_names)
        self.token_set = frozenset(token_names)
        self.tokens_by_length: dict[int, list[str]] = defaultdict(list)
        for tok in self.tokens:
            self.tokens_by_length[len(tok)].append(tok)
        # One- and two-letter queries match thousands of names; precompute their best (shortest) few.
        short: dict[str, set[int]] = defaultdict(set)
        for tok, ids in self.token_names.items():
            for n in (1, 2):
                if len(tok) >= n:
                    short[tok[:n]] |= ids
        self.short_token = {p: sorted(ids, key=lambda i: (len(self.names[i]), i))[:SHORT_KEEP]
                            for p, ids in short.items()}
        starts: dict[str, list[str]] = defaultdict(list)
        for name in self.names:
            for n in (1, 2):
                if len(name) >= n:
                    starts[name[:n]].append(name)
        self.short_prefix = {p: sorted(names, key=len)[:SHORT_KEEP] for p, names in starts.items()}

    # -- scoring of names --------------------------------------------------------------------
    def _name_scores(self, q: str, *, fuzzy: bool, fuzzy_limit: int) -> dict[str, float]:
        scores: dict[str, float] = {}

        def put(name: str, score: float) -> None:
            if score > scores.get(name, -1.0):
                scores[name] = score

        if q in self.by_name:
            put(q, 100.0)
        for name in self.by_compact.get(q.replace(" ", ""), ()):
            put(name, 100.0)  # the same name but for spaces/punctuation: "counter offensive" = "Counteroffensive"
        key = name_key(q)
        for name in self.by_name_key.get(key, ()):
            put(name, PLURAL_SCORE)  # "grenades" = "Grenade", "stompas" = "Stompa"
        for name in self.by_core_key.get(key, ()):
            put(name, CORE_NAME_SCORE)  # "leman russ" = "Leman Russ Battle Tank"
        # prefix: names starting with the query (bisect over the sorted names)
        if len(q) <= 2:
            shortest = self.short_prefix.get(q, [])
        else:
            lo = bisect.bisect_left(self.names, q)
            prefixed = []
            for name in self.names[lo:lo + 3000]:
                if not name.startswith(q):
                    break
                prefixed.append(name)
            shortest = heapq.nsmallest(SHORT_KEEP, prefixed, key=len)
        for name in shortest:  # shorter names score higher
            put(name, 90.0 + 9.0 * len(q) / len(name))
        if " " in q and len(q) > 4:  # the same, spaces aside: "wraith kni" -> Wraithknight, "tank bust" -> Tankbustas
            flat = q.replace(" ", "")
            lo = bisect.bisect_left(self.compacts, flat)
            for compact in self.compacts[lo:lo + 50]:
                if not compact.startswith(flat):
                    break
                for name in self.by_compact[compact]:
                    put(name, 89.0 + 9.0 * len(flat) / len(compact))
        # token: every query word is the prefix of a different word of the name, in any order
        words = q.split()
        if len(words) == 1 and len(q) <= 2:
            for i in self.short_token.get(q, ()):
                name = self.names[i]
                put(name, 80.0 + 9.0 * min(1.0, len(q) / max(1, len(name.replace(" ", "")))))
        elif words:
            candidate_sets = []
            for w in words:
                found: set[int] = set()
                for stem in {w, w[:-1] if len(w) > 3 and w.endswith("s") else w}:
                    lo = bisect.bisect_left(self.tokens, stem)
                    for tok in self.tokens[lo:lo + 300]:
                        if not tok.startswith(stem):
                            break
                        found |= self.token_names[tok]
                candidate_sets.append(found)
            common = set.intersection(*candidate_sets) if candidate_sets else set()
            if len(common) > 300:  # "b": keep the shortest names, which would score highest anyway
                common = set(heapq.nsmallest(300, common, key=lambda i: (len(self.names[i]), i)))
            for i in common:
                name = self.names[i]
                put(name, 80.0 + 9.0 * min(1.0, len(q.replace(" ", "")) / max(1, len(name.replace(" ", "")))))
        if fuzzy and len(q) >= 3:
            for name, score in self._fuzzy(q, fuzzy_limit):
                put(name, 0.8 * score)
        return scores

    def _fuzzy(self, q: str, limit: int, pool_size: int = FUZZY_POOL) -> list[tuple[str, float]]:
        """Typo-tolerant matching in two steps, to stay fast on tens of thousands of names.

        1. Each query word is matched (plain edit-distance ratio) against the distinct name words,
           so "gatla" finds "gatler" and "leathal" finds "lethal".
        2. Names containing any of those words are scored with WRatio against the whole query.
        Short catalogs (or queries without usable words) score every name directly.
        """
        words = [w for w in q.split() if len(w) >= 3 and w not in _QUESTION_WORDS][:3]
        if not words:
            return []
        counts: dict[int, int] = defaultdict(int)
        for w in words:
            seen: set[int] = set()
            for tok in self._near_tokens(w):
                seen |= self.token_names[tok]
            for i in seen:
                counts[i] += 1
        if len(self.names) <= 2000:
            pool = self.names
        else:
            # names sharing the most (fuzzy) words with the query first, shorter names first among equals
            ranked = heapq.nsmallest(pool_size, counts, key=lambda i: (-counts[i], len(self.names[i])))
            pool = [self.names[i] for i in ranked]
        return [(name, score) for name, score, _ in process.extract(q, pool, scorer=fuzz.WRatio, limit=limit,
                                                                   score_cutoff=60)]

    def _near_tokens(self, word: str) -> tuple[str, ...]:
        """The (at most 8) name words within a ratio of 72 of `word`, but for words in more than 600 names ("of",
        "the", "squad" say little about the name). Cached: a query's readings share words, and autocomplete asks
        again per keystroke; matching a word against every name word is most of the fuzzy tier's cost."""
        cached = self._near.get(word)
        if cached is None:
            cached = tuple(tok for tok, _score, _ in process.extract(word, self.tokens, scorer=fuzz.ratio, limit=8,
                                                                     score_cutoff=72)
                           if len(self.token_names[tok]) <= 600)
            self._near[word] = cached
            while len(self._near) > 4096:
                self._near.popitem(last=False)
        return cached

    def mentions(self, q: str) -> dict[int, float]:
        """Entries a question names ("how does *overwatch* work", "do *dev wounds* spill over", "can *pistols*
        shoot in combat"): each run of 1-4 words, through the alias table, matched by name. A run of two or
        more words may be the start of a longer name ("fall back" -> Fall Back Moves); a single word must be
        the whole name (plural folded) and no question or stop word; a run beginning or ending with a stop word
        must be a whole name ("for the greater good"). Scored MENTION_SCORE + words, above the
        full-text hits of a question (85 down), so what the question is about is offered first."""
        words = [_GERUNDS.get(w, w) for w in q.split()[:MAX_MENTION_WORDS]]
        # a word that starts no name word and is no alias cannot be part of a mention: skip runs holding one
        known = [w in self.aliases.words or w in self.aliases.whole or self._starts_a_token(w) for w in words]
        found: dict[int, float] = {}
        for n in range(min(4, len(words)), 0, -1):
            for i in range(len(words) - n + 1):
                run = words[i:i + n]
                if not all(known[i:i + n]) and " ".join(run) not in self.aliases.words:
                    continue  # ("rule of 3" is an alias although "3" starts no name)
                if run[0] in _STOP_WORDS or run[-1] in _STOP_WORDS:
                    # only a whole name may begin or end with a stop word ("tau *for the greater good* how")
                    names = [*self.by_name_key.get(name_key(" ".join(run)), ())] if n > 1 else []
                else:
                    names = self._names_in_run(" ".join(run))
                for name in names:
                    for idx in self.by_name[name]:
                        found[idx] = max(found.get(idx, 0.0), MENTION_SCORE + n)
        return found

    def _names_in_run(self, run: str) -> list[str]:
        """The names a run of question words (through the alias table) mentions: a single word only as a whole
        name (plural folded), a longer run also as the start of a longer name ("fall back" -> Fall Back Moves)."""
        names: list[str] = []
        for text, _penalty in self._alias_readings(run):
            if " " not in run and " " not in text:
                names += self.by_name_key.get(name_key(text), ())
            else:
                names += [name for name, score in self._name_scores(text, fuzzy=False, fuzzy_limit=0).items()
                          if score >= 93.0]
        return names

    def reading(self, query: str) -> str:
        """The query with its community shorthand read ("5+++" -> "feel no pain"); the query itself if none."""
        found = self.shorthand.read(query)
        return found.text if found is not None else query

    def variants(self, q: str) -> list[tuple[str, float]]:
        """Readings of a normalised query, with penalties: the query itself and its alias expansions ("dev
        wounds" -> "devastating wounds"), then the same without rule parameters ("sh1" -> "sustained hits
        1" -> "sustained hits", "anti infantry 4+" -> "anti"), then with misspelt words corrected
        ("overwach" -> "overwatch" -> "fire overwatch"). The literal query is always first."""
        out: list[tuple[str, float]] = []

        def add(readings: list[tuple[str, float]], penalty: float) -> None:
            for text, p in readings:
                if text and all(text != v for v, _ in out):
                    out.append((text, p + penalty))

        add(self._alias_readings(q), 0.0)
        context = self.context(q)
        if context.name != q:  # "thrill seekers ec" -> "thrill seekers", "ghaz stats" -> "ghaz" -> "ghazghkull thraka"
            add(self._alias_readings(context.name), CONTEXT_PENALTY)
        for text, _ in list(out):
            stripped = parameterless(text)
            if stripped != text:
                add(self._alias_readings(stripped), PARAMETER_PENALTY)
        if q not in self.aliases.whole and q not in self.aliases.words:  # an abbreviation says what it means
            for fixed in self.corrected(parameterless(q)):
                add(self._alias_readings(fixed), TYPO_PENALTY)
        return out[:MAX_READINGS]

    def readings(self, query: str) -> list[str]:
        """How the search reads a raw query, as `score` does: its shorthand read, an edition word taken out
        ("strat reserves 11e" is the abbreviation "strat reserves"), then its `variants`, the literal first."""
        return [text for text, _ in self.variants(self._read(query))]

    def _read(self, query: str) -> str:
        """A raw query as `score` reads its name: shorthand read, normalised, clipped, edition words off."""
        return without_edition(normalize(self.reading(query[:MAX_QUERY_CHARS * 4]))[:MAX_QUERY_CHARS])[0]

    def faction_named(self, query: str) -> str | None:
        """The faction a raw query names around its other words ("custodes ka'tah stances"), or None."""
        return self.context(self._read(query)).faction

    def context(self, q: str) -> Context:
        """The faction, kind, detachment, edition and filler words around the name in a normalised query (bot/
        catalog/context.py); none when the query is an abbreviation of its own ("strat reserves")."""
        if q in self.aliases.whole or q in self.aliases.words:
            return Context(q)
        return read_context(q, self.faction_terms, self.detachment_names)

    def fits_context(self, hit: Hit, query: str) -> bool:
        """Whether the words around the name in `query` agree with `hit`, when its name is not the query as
        typed: "thrill seekers ec" is answered with Thrill Seekers only if they are the Emperor's Children's, and
        "x strat" only with a stratagem. A name found by dropping words that disagree is offered, not answered."""
        q = self._read(query)
        context = self.context(q)
        idx = self.by_id.get(hit.id)
        if context.name == q or idx is None or name_key(q) in name_key(normalize(hit.name)):
            return True
        factions = {faction_key(f) for f in (hit.factions or (hit.faction,)) if f}
        if context.faction and context.faction not in factions:
            return False
        if context.kind and hit.kind != context.kind:
            return False
        return not context.detachment or self._in_context(self.records[idx], Context(q, detachment=context.detachment))

    def corrected(self, q: str) -> tuple[str, ...]:
        """Readings of `q` with each word that starts no name word (and is no abbreviation) replaced by the
        closest name words: one edit (a transposition counts as one) for 4-6 letters, two from 7 ("abbadon"). When
        several words are equally close ("torent": torrent, torment), each gives a reading, so neither is
        answered with confidence by accident. Empty when nothing needed correcting. Cached: autocomplete
        asks again per keystroke."""
        cached = self._corrections.get(q)
        if cached is not None:
            return cached
        readings = [q.split()]
        for i, w in enumerate(q.split()[:MAX_CORRECTED_WORDS]):
            if (len(w) < 4 or not w.isalpha() or w in self.token_set or w in self.aliases.words
                    or w in self.aliases.whole or self._starts_a_token(w)):
                continue
            limit = 1 if len(w) < 7 else 2
            found: list[tuple[int, int, str]] = []
            for n in range(len(w) - limit, len(w) + limit + 1):
                for tok, dist, _ in process.extract(w, self.tokens_by_length.get(n, ()), scorer=OSA.distance,
                                                    score_cutoff=limit, limit=5):
                    found.append((int(dist), -len(self.token_names[tok]), tok))
            if not found:
                continue
            nearest = min(found)[0]
            best = [tok for dist, _, tok in sorted(found) if dist == nearest][:3]
            readings = [[*r[:i], tok, *r[i + 1:]] for r in readings for tok in best][:4]
        fixed = tuple(" ".join(r) for r in readings if " ".join(r) != q)
        self._corrections[q] = fixed
        while len(self._corrections) > 4096:
            self._corrections.popitem(last=False)
        return fixed

    def _starts_a_token(self, w: str) -> bool:
        lo = bisect.bisect_left(self.tokens, w)
        return lo < len(self.tokens) and self.tokens[lo].startswith(w)

    def _alias_readings(self, q: str) -> list[tuple[str, float]]:
        """The text itself and its alias expansions: whole-query aliases, then word aliases in place."""
        out = [(q, 0.0)]
        for table in (self.aliases.whole, self.aliases.words):
            out.extend((v, ALIAS_VARIANT_PENALTY) for v in table.get(q, ()) if v != q)
        words = q.split()
        expanded: list[str] = []
        i = 0
        changed = False
        while i < len(words):
            for n in (3, 2, 1):
                key = " ".join(words[i:i + n])
                if len(words[i:i + n]) == n and key in self.aliases.words:
                    expanded.append(self.aliases.words[key][0])
                    i += n
                    changed = True
                    break
            else:
                expanded.append(words[i])
                i += 1
        if changed:
            joined = " ".join(expanded)
            if all(joined != v for v, _ in out):
                out.append((joined, ALIAS_VARIANT_PENALTY))
        return out

    # -- public ------------------------------------------------------------------------------
    def lookup(self, query: str, *, kinds: tuple[str, ...] | None = None, edition: str | None = None,
               prefer_edition: str | None = None, faction: str | None = None, limit: int = 10,
               fuzzy: bool = True, eager_fuzzy: bool = True) -> tuple[list[Hit], list[float], bool]:
        """Rank records by name. Returns (hits, final scores, question_like)."""
        rec_scores, prefer, question = self.score(query, limit=limit, fuzzy=fuzzy, prefer_edition=prefer_edition,
                                                  kinds=kinds, edition=edition, eager_fuzzy=eager_fuzzy)
        hits, finals, _matches = self.rank(rec_scores, kinds, edition, prefer, faction, limit,
                                           query_edition(query) is not None)
        return hits, finals, question

    def score(self, query: str, *, limit: int = 10, fuzzy: bool = True, prefer_edition: str | None = None,
              kinds: tuple[str, ...] | None = None, edition: str | None = None, eager_fuzzy: bool = True
              ) -> tuple[dict[int, float], str | None, bool]:
        """Tier scores per record index, the edition preference (a "10e" word in the query sets it),
        and whether the query reads like a question for the full-text search.

        Fuzzy matching runs when the cheap tiers found nothing strong; `eager_fuzzy` (search, not
        autocomplete) also runs it when they found fewer than three strong names, unless a reading named a
        name outright (OUTRIGHT_SCORE). Autocomplete runs it
        only when no name has the words typed so far (below AUTOCOMPLETE_FUZZY_BELOW). Only the best names
        that exist in the wanted kinds/edition are expanded to records, so a one-letter query stays cheap.
        """
        raw = (query or "")[: MAX_QUERY_CHARS * 4]
        numbers = [n] if (n := rule_number(raw.strip())) else []
        reading = self.shorthand.read(raw)
        if reading is not None:  # "5+++" -> "feel no pain"; "rule 13.08" -> 13.08 (see bot/catalog/shorthand.py)
            raw = reading.text
            numbers += [n for n in reading.numbers if n not in numbers]
        typed = normalize(raw)[:MAX_QUERY_CHARS]
        words = typed.split()
        q, typed_edition = without_edition(typed)
        kept_edition = typed_edition is not None
        if typed_edition is not None:  # an edition typed in the query ("blast 10e") beats the server default
            prefer_edition = typed_edition
        question = bool(words) and (words[0] in _QUESTION_WORDS and len(words) >= 3)
        literal, named_kind = q, None
        tail = q.split()
        if len(tail) >= 2 and tail[-1] in KIND_WORDS and tail[0] not in _QUESTION_WORDS:
            # "morty datasheet", "aoc strat": the last word says what kind of thing, not part of its name
            named_kind, q = KIND_WORDS[tail[-1]], " ".join(tail[:-1])
        rec_scores: dict[int, float] = {}
        for i, number in enumerate(numbers):  # a rule number named outright beats any name: most relevant first
            for idx in self.by_number.get(number, ()):
                rec_scores[idx] = max(rec_scores.get(idx, 0.0), NUMBER_SCORE - NUMBER_STEP * i)
            if number not in self.by_number and number.count(".") == 2:  # "13.08.01": no such sub-section
                for idx in self.by_number.get(number.rsplit(".", 1)[0], ()):
                    rec_scores[idx] = max(rec_scores.get(idx, 0.0), SECTION_SCORE)
        if not q:
            return rec_scores, prefer_edition, question
        variants = self.variants(q)
        if named_kind is not None:  # the words as typed still count, a little behind ("Rapid Ingress ability"?)
            variants.append((literal, KIND_WORD_PENALTY))
        context = self.context(q)  # the words around the name (its readings without them are in `variants`)
        named_kind = named_kind or context.kind
        if context.edition and not kept_edition:
            prefer_edition = context.edition
        name_scores: list[tuple[dict[str, float], float]] = []
        for variant, penalty in variants:
            for alias_idx in self.by_alias.get(variant, ()):
                s = 97.0 - penalty
                if s > rec_scores.get(alias_idx, -1.0):
                    rec_scores[alias_idx] = s
            found = self._name_scores(variant, fuzzy=False, fuzzy_limit=0)
            if penalty >= TYPO_PENALTY:  # a misspelt word corrected, then only the start of a name: a guess on a guess
                found = {n: sc if sc >= CORE_NAME_SCORE else sc - GUESS_PENALTY for n, sc in found.items()}
            name_scores.append((found, penalty))
        best = max((max(n.values()) for n, _ in name_scores if n), default=0.0)
        strong = sum(1 for n, _ in name_scores for v in n.values() if v >= 90)
        # per keystroke (autocomplete), words typed so far that start name words are enough: the fuzzy tier
        # (the slow tail) runs only when none do; a misspelt complete word is already read corrected
        # a name typed outright (a reading exact, spacing or plural aside, alias or context words read) needs no
        # typo tolerance for rivals: a fuzzy match scores <= 80 and can neither lead nor be a close rival
        outright = max((max(n.values()) - p for n, p in name_scores if n), default=0.0) >= OUTRIGHT_SCORE
        weak = best < (90 if eager_fuzzy else AUTOCOMPLETE_FUZZY_BELOW) or (
            eager_fuzzy and not outright and (strong < 3 or bool(rec_scores) and max(rec_scores.values()) < 90))
        if fuzzy and weak and len(q.replace(" ", "")) >= 4:
            # typo tolerance, only when the cheap tiers found little: the literal query and the
            # first alias reading (e.g. "dev wuonds" -> "devastating wuonds"); per keystroke the literal only
            for variant, penalty in variants[:2 if eager_fuzzy else 1]:
                pool = FUZZY_POOL if eager_fuzzy else AUTOCOMPLETE_FUZZY_POOL
                name_scores.append(({n: 0.8 * sc for n, sc in self._fuzzy(variant, max(30, limit * 4), pool)}, penalty))
        merged: dict[str, float] = {}
        for names, penalty in name_scores:
            for name, score in names.items():
                if kinds and not (self.name_kinds[name] & set(kinds)):
                    continue
                if edition and edition not in self.name_editions[name]:
                    continue
                if score - penalty > merged.get(name, -1.0):
                    merged[name] = score - penalty
        keep = max(limit * 8, 80) if eager_fuzzy else max(limit * 4, 60)  # autocomplete shows names only
        best_names = heapq.nlargest(keep, merged.items(), key=lambda kv: kv[1]) if len(merged) > keep \
            else merged.items()
        for name, s in best_names:
            for idx in self.by_name[name]:
                if s > rec_scores.get(idx, -1.0):
                    rec_scores[idx] = s
        if eager_fuzzy and looks_like_question(query):
            for idx, score in self.mentions(q).items():
                if score > rec_scores.get(idx, -1.0):
                    rec_scores[idx] = score
        if named_kind is not None:
            for idx in rec_scores:
                if self.records[idx].kind == named_kind:
                    rec_scores[idx] += KIND_WORD_BONUS
        if context.faction or context.detachment:
            for idx in rec_scores:
                if self._in_context(self.records[idx], context):
                    rec_scores[idx] += CONTEXT_BONUS
        return rec_scores, prefer_edition, question

    def _in_context(self, rec: Record, context: Context) -> bool:
        """Whether the faction or detachment a query names around the name is `rec`'s (or its thing's)."""
        if context.faction and context.faction in {faction_key(f) for f in self.thing_factions.get(rec.group, ())}:
            return True
        if context.detachment:
            return any(self.norm_detachment.get(d, "").startswith(context.detachment)
                       for d in self.thing_detachments.get(rec.group, ()))
        return False

    def rank(self, rec_scores: dict[int, float], kinds, edition, prefer_edition, faction, limit,
             typed_edition: bool = False) -> tuple[list[Hit], list[float], list[float]]:
        """Filter, add tie-break bonuses, collapse same-rule duplicates, and keep the best `limit`. Returns the
        hits, their final scores (tier score + tie-breaks: they order the hits) and their tier scores alone
        (how well the name matched: what confidence is judged on).

        The server's preferred edition lifts only entries that carry their rules text: wh40kdc's metadata
        (a stratagem's phase, an enhancement's cost) does not outrank the same name's complete text in the
        other edition. An edition typed in the query (`typed_edition`, "aoc 11e") lifts every entry of it."""
        ranked: list[tuple[float, float, Record]] = []
        faction_norm = faction_key(faction) if faction else None
        for idx, score in rec_scores.items():
            raw_score = score
            rec = self.records[idx]
            if kinds and rec.kind not in kinds:
                continue
            if edition and rec.edition != edition:
                continue
            if faction_norm and faction_key(rec.faction) != faction_norm:
                continue
            final = score + rec.priority
            if not kinds or len(kinds) > 1:
                final += KIND_BONUS.get(rec.kind, 0.0)
            if prefer_edition and not edition and rec.edition == prefer_edition and (typed_edition or not rec.text_less):
                final += PREFERRED_EDITION_BONUS
            if rec.incomplete or rec.text_less:  # the entry with its rules text first
                final -= INCOMPLETE_PENALTY
            ranked.append((final, raw_score, rec))
        # only the best few can be shown; duplicates of one rule collapse, so keep a generous margin
        ranked = heapq.nsmallest(max(limit * 12, 60), ranked, key=lambda t: (-t[0], t[2].name, t[2].id))
        seen_groups: set[str] = set()
        hits: list[Hit] = []
        raws: list[float] = []
        matches: list[float] = []
        for final, raw_score, rec in ranked:
            if rec.group in seen_groups:
                continue  # the same thing from another source, faction or detachment
            seen_groups.add(rec.group)
            hits.append(self.thing_hit(rec, round(min(final, 100.0), 2)))
            raws.append(final)
            matches.append(raw_score)
            if len(hits) >= limit:
                break
        return hits, raws, matches

    def thing_hit(self, rec: Record, score: float) -> Hit:
        """The hit for `rec`'s thing: its primary entry, with every faction and detachment it appears under."""
        primary = self.records[self.by_id.get(rec.group, self.by_id[rec.id])]
        factions = self.thing_factions.get(rec.group, ())
        return Hit(primary.id, primary.kind, primary.name, primary.edition, primary.source, score,
                   primary.faction or (factions[0] if factions else None), factions,
                   self.thing_detachments.get(rec.group, ()))

    def fulltext_scores(self, rows: list[tuple[int, float]], *, question: bool,
                        kind_hint: str | None = None) -> dict[int, float]:
        """Turn FTS rows (rowid, bm25), best first, into record scores: 85 down for questions, 60 down
        otherwise; a kind named in the question ("which *rule* mentions ...") gets +2."""
        top = 85.0 if question else 60.0
        out: dict[int, float] = {}
        for position, (rowid, _bm25) in enumerate(rows):
            idx = self.by_rowid.get(rowid)
            if idx is not None:
                bonus = 2.0 if kind_hint and self.records[idx].kind == kind_hint else 0.0
                out[idx] = top - 1.0 * position + bonus
        return out



def parameterless(q: str) -> str:
    """A normalised query without the parameters a rule is printed with: "sustained hits 2", "fnp 5+",
    "scouts 6", "deadly demise d6" -> the rule's name; "anti infantry 4+" / "anti-vehicle" -> "anti". A query of
    numbers alone is itself: "13 08" (typed "13-08") is no name "13" printed with a parameter, and "13" would
    prefix errata named after another rule ("13.09 - Change to First Bullet Point")."""
    words = bare(q).split()
    if len(words) > 1 and words[0] == "anti" and (len(words) == 2 or re.search(r"\d\+", q)):
        return "anti"  # printed Anti-KEYWORD X+: "anti grav repulsion" is a name of its own
    return " ".join(words) if re.search("[a-z]", q) else q


def query_edition(query: str) -> str | None:
    """The edition a query names ("tank shock 10e", "blast 11th"), or None: the answer must be that edition's
    or say that it is not loaded."""
    return named_edition(normalize((query or "")[:MAX_QUERY_CHARS]))


_ASKING = frozenset({"can", "could", "does", "do", "did", "is", "are", "how", "what", "when", "which", "why", "where",
                     "who", "if", "should", "must", "may", "will", "would", "whats", "hows", "cant", "wont"})


def looks_like_question(query: str) -> bool:
    """A sentence asked rather than a name typed: a "?", or three or more words opened by a question word."""
    words = normalize((query or "")[:MAX_QUERY_CHARS]).split()
    return "?" in (query or "")[:MAX_QUERY_CHARS] or (len(words) >= 3 and words[0] in _ASKING)


def kind_hint(query: str) -> str | None:
    """The kind a question names, if any ("which stratagem mentions hatchways" -> "stratagem")."""
    for word in normalize((query or "")[:MAX_QUERY_CHARS]).split()[:4]:
        if word in KIND_WORDS:
            return KIND_WORDS[word]
    return None


def fts_words(query: str) -> list[str]:
    """Words worth sending to FTS5: normalised, question words dropped, at most 12."""
    words = [w.strip("+") for w in normalize((query or "")[: MAX_QUERY_CHARS * 4]).split()]
    kept = [w for w in words if w and w not in _QUESTION_WORDS and w not in EDITION_WORDS]
    # crude stemming, as FTS5 matches the stem as a prefix: "opens" -> "open*", "tokens" -> "token*"
    stems = [w[:-1] if len(w) > 4 and w.endswith("s") and not w.endswith("ss") else w for w in kept]
    return (stems or [w for w in words if w])[:12]


# kinds that print the same rule: a 10e datasheet ability "Deep Strike" is the 11e core rule and keyword, whereas
# a 10e army rule and an 11e stratagem of one name ("Unflinching Determination") are two things to choose from
_FAMILY = {"rule": "rule", "keyword": "rule", "ability": "rule"}


def confident(query: str, scores: list[float], hits: list[Hit], matches: list[float] | None = None) -> bool:
    """Answer directly when the best hit is a strong match and clearly ahead of the next one.

    A name match (its tier score, `matches`, >= 88: the tie-breaks of the edition, kind and source order the
    hits but never make a weak match strong, so "toughness" is not answered with Multiple Toughness
    Characteristics) needs a small margin; a fuzzy-only match needs a wide margin *and* a name that is the
    query give or take a typo, so "leathal hits" answers but SQL or noise never does. The lead is measured both
    in the ranking and in name match alone, so a tie-break is never all of it ("engagement range": 11e
    Engagement led 10e Engagement Range only by the preferred edition's +4). The same rule in the other edition
    (plural folded) is not a rival: the edition preference already chose. A thing of another kind named alike
    (a 10e army rule and an 11e stratagem) is one: the name alone does not say which was meant.
    """
    if not hits:
        return False
    top = normalize(hits[0].name)
    same = name_key(top)  # "Wound Rolls" (11e) and "Wound Roll" (10e) are one rule
    # the same rule in the other edition, or its glossary definition (keywords.json), is not a rival; nor is a
    # FAQ entry when the answer is not one: a FAQ is shown with the entry it concerns (its errata buttons)
    quality = matches if matches is not None else scores
    family = _FAMILY.get(hits[0].kind, hits[0].kind)
    rivals = [k for k, h in enumerate(hits[1:], 1)
              if not (name_key(normalize(h.name)) == same and _FAMILY.get(h.kind, h.kind) == family
                      and (h.edition != hits[0].edition or h.kind != hits[0].kind))
              and not (h.kind == "faq" and hits[0].kind != "faq")]
    # by ranking and by name match alike: a tie-break (the edition, the kind) must not be the whole lead
    rival = max((max(scores[k], scores[0] - quality[0] + quality[k]) for k in rivals), default=None)
    margin = scores[0] - rival if rival is not None else 100.0
    if (matches[0] if matches else scores[0]) >= CONFIDENT_SCORE:
        return margin >= CONFIDENT_MARGIN
    q = normalize(query)
    return (scores[0] >= FUZZY_CONFIDENT_SCORE and margin >= FUZZY_CONFIDENT_MARGIN
            and fuzz.ratio(q, top) >= FUZZY_CONFIDENT_RATIO)


def holds_whole(reading: str, name: str) -> bool:
    """Every word of `reading` is a whole word of `name`, plural aside ("horde" of War Horde, not of Hordeslayer;
    "carnifex" of Carnifexes)."""
    words = set(normalize(name).split())
    return bool(reading.split()) and all(
        {w, w + "s", w + "es", w[:-1] if w.endswith("s") else w, w[:-2] if w.endswith("es") else w} & words
        for w in reading.split())


def only_begins(readings: list[str], hits: list[Hit]) -> bool:
    """Whether the top hit only begins a word of the query ("horde" -> Hordeslayer, by prefix) while another
    candidate holds the query's words whole (War Horde, by its words): the prefix tier ranks the first higher, but
    the query reads as either, so the player chooses. A FAQ entry, named by a whole question, is no such rival,
    and one only begun is not answered."""
    if not hits or any(holds_whole(r, hits[0].name) for r in readings):
        return False
    if hits[0].kind == "faq":  # a FAQ or errata header only begun ("talons of the emperor det"): never the claim
        return True
    return any(h.kind != "faq" and holds_whole(r, h.name) for h in hits[1:] for r in readings)


def _singular(word: str) -> str:
    return word[:-2] if word.endswith("es") and len(word) > 4 else word[:-1] if word.endswith("s") else word


def ends_a_unit(readings: list[str], hits: list[Hit]) -> bool:
    """Whether a datasheet among the candidates ends with the query's words while the top hit is no datasheet:
    "karnivore" is both the War Dog Karnivore's ability and, to players, the War Dog Karnivore; "hearthguard"
    both begins the Hearthguard Covenant detachment and ends Einhyr Hearthguard. The query reads as either,
    so the player chooses."""
    if not hits or hits[0].kind == "datasheet":
        return False
    for reading in readings:
        words = [_singular(w) for w in reading.split()]
        for h in hits[1:]:
            name = [_singular(w) for w in normalize(h.name).split()]
            if h.kind == "datasheet" and words and len(name) > len(words) and name[-len(words):] == words:
                return True
    return False


def looks_hostile(query: str) -> bool:
    """Only control characters, symbols or emoji: nothing a name could match."""
    return not re.search(r"[0-9A-Za-z]", normalize(query or ""))
