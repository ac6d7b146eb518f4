"""Questions answered from the rules text (issue 21, items 1 and 2).

A question ("can i shoot after falling back") is answered from passages (bot/catalog/passages.py), ranked by
established methods instead of hand-set scores, and merged by reciprocal-rank fusion (Cormack et al., 2009):
  - lexical: FTS5's bm25() over the passages, the query read through the shorthand and the alias table;
  - semantic: cosine similarity of static word embeddings (bot/catalog/vectors.py), when the vectors load;
  - core: the same words over the core rules and glossary only, weighed among themselves (weighted up when the
    question names no entry and no faction, or names only units: then it asks about the rules every army shares);
  - scoped: the same words over the stratagems or enhancements and the faction the question names anywhere in
    it (bot/catalog/question_words.py: "the marine strat that makes the enemy ap worse");
  - asks: the rules and faction entries whose players' asks (bot/catalog/asks.py, document expansion from asks
    written blind to the code) share the question's words, each by its passage that ranks best lexically
    (weighted up like core when the question names no entry); they find a rule, they never make a claim;
  - named: the passages of the entries the question names (the name search's hits and its mention pass, one
    per core-rules chapter), then those of the named units' and detachments' own abilities, rules, stratagems
    and enhancements that share the question's words ("warboss +1 to hit" is asked about the Warboss's Might is Right).
A question naming an edition ("stealth in 10e") is answered from that edition; otherwise a rule found in both
editions is quoted in the server's edition first, and one rule is quoted once per edition (core rule before its
glossary entry). The answer quotes the sentences of the best passage that share the question's words, cites its
rule number and source, then lists related entries and the FAQ entries that concern them. It is `confident`
only when the named, lexical and core rankings lead with the same entry; otherwise it says "I'm not sure" and
shows the closest rules.

Every step is bounded: the question is clipped to MAX_QUESTION_CHARS and MAX_WORDS words, each ranker
returns at most POOL passages.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from rapidfuzz import fuzz

from bot.catalog.defined_terms import defining_rule
from bot.catalog.normalize import clean_text, fold, normalize
from bot.catalog.passages import CORE_KINDS, MAX_WORDS, Passage, index_words, sentences
from bot.catalog.question_words import (
    MAX_QUESTION_CHARS,
    RULES_WORDS_FILE,
    load_rules_words,
    query_words,
    scope,
)
from bot.catalog.search import looks_hostile, looks_like_question, query_edition
from bot.catalog.spelling import Speller
from bot.catalog.things import name_key

if TYPE_CHECKING:
    from bot.catalog.known import KnownNames
    from bot.catalog.model import Entry, Hit
    from bot.catalog.search import SearchIndex
    from bot.catalog.store import CatalogStore
    from bot.catalog.vectors import PassageVectors

POOL = 60  # passages each ranker contributes
# reciprocal-rank fusion's constant: the usual 60 fuses long rankings flatly (Battle-shock Rolls, ranked 57th,
# 7th, 2nd and 4th by four rankers, beat Command Re-roll, ranked 2nd and 1st by two); 2 to 20 all scored within
# 3 questions of each other on the tuning sets and the FAQ even ids (docs/architecture.md, sixth pass)
RRF_K = 20
SHOWN = 3  # passages quoted or listed
RELATED = 3
FAQS = 3
QUOTE_CHARS = 420  # the quoted sentences of the best passage
NAMED_HITS = 6  # entries the question names, from the name search
NAME_LIKE_RATIO = 80.0  # a query this close (rapidfuzz ratio) to a candidate's name was typed as that name
UNNAMED_CORE_WEIGHT = 1.0
UNNAMED_ASKS_WEIGHT = 1.0
# each ranking's weight in the fusion; asks chosen on the tuning sets only (docs/architecture.md, fourth pass)
WEIGHTS = {"lexical": 1.0, "core": 0.3, "semantic": 1.0, "named": 1.0, "asks": 0.5, "scoped": 0.7}
@dataclass(frozen=True)
class Quote:
    passage: Passage
    text: str  # the sentences quoted from it
    score: float  # fused score (higher is better)


@dataclass(frozen=True)
class Related:
    id: str
    kind: str
    name: str
    edition: str


@dataclass
class Answer:
    query: str
    question: bool
    passages: list[Quote] = field(default_factory=list)
    related: list[Related] = field(default_factory=list)
    faq: list[Related] = field(default_factory=list)
    confident: bool = False
    semantic: bool = False  # whether the semantic ranker took part

    def as_json(self) -> dict:
        """Contract 9 (`python -m bot lookup QUERY --answer --json`) for a question."""
        return {"query": self.query, "question": True, "confident": self.confident,
                "passages": [{"entry_id": q.passage.entry_id, "name": q.passage.name, "rule_number": q.passage.number,
                              "edition": q.passage.edition, "source": q.passage.source, "text": q.text,
                              "score": round(q.score, 5), "community_summary": q.passage.summary,
                              "other_numbers": q.passage.other_numbers or None} for q in self.passages],
                "related": [{"id": r.id, "kind": r.kind, "name": r.name, "edition": r.edition} for r in self.related],
                "faq": [{"id": f.id, "name": f.name} for f in self.faq]}


def fuse(rankings: list[list[int]], weights: list[float] | None = None) -> dict[int, float]:
    """Reciprocal-rank fusion: each ranking adds weight / (RRF_K + rank) to every item it ranks."""
    weights = weights or [1.0] * len(rankings)
    scores: dict[int, float] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + weight / (RRF_K + rank)
    return scores


def quote(passage: Passage, words: list[str]) -> str:
    """The passage's sentences that share the question's words (in their order), at most QUOTE_CHARS; the whole
    passage when it is that short."""
    text = passage.text.strip()
    if len(text) <= QUOTE_CHARS:
        return text
    stems = {w[:5] for w in words if len(w) >= 3}
    parts = sentences(text)
    scored = sorted(range(len(parts)), key=lambda i: (-len(stems & {w[:5] for w in re.findall(
        r"\w+", index_words(parts[i]))}), i))
    chosen: list[int] = []
    size = 0
    for i in scored:
        if size + len(parts[i]) > QUOTE_CHARS and chosen:
            break
        chosen.append(i)
        size += len(parts[i]) + 1
    out = " ".join(parts[i] for i in sorted(chosen))
    return out if len(out) <= QUOTE_CHARS else out[:QUOTE_CHARS - 1].rstrip() + "…"


def reads_as_name(readings: list[str], candidates: list[Hit]) -> bool:
    """Whether a query not shaped as a question was typed as a name: one of its readings (as typed, or with its
    shorthand, aliases and the words around the name read) is within NAME_LIKE_RATIO of one of the name search's
    first candidates, or every word of it starts a word of one that is no FAQ (a shortened name: "steeljacks melee" for Ironkin
    Steeljacks with Melee Weapons, "yaegirs" for Hernkyn Yaegirs). The evidence is the name search's own
    candidates, so no word list decides it: "dev wounds spill over" holds words no candidate's name has and is
    answered from the rules text; "armor of contempt" or "ork warboss" is a (misspelt or qualified) name and
    keeps the name search's menu."""
    names = [(normalize(h.name), h.kind != "faq") for h in candidates[:3]]  # a FAQ's name is a whole question
    return any(fuzz.ratio(reading, name) >= NAME_LIKE_RATIO or (short and words_start_words(reading, name))
               for reading in readings[:3] for name, short in names)


def words_start_words(reading: str, name: str) -> bool:
    """Whether each word of `reading` starts a different word of `name`, in any order."""
    left = name.split()
    for word in reading.split():
        found = next((i for i, w in enumerate(left) if w.startswith(word)), None)
        if found is None:
            return False
        del left[found]
    return bool(reading.split())


def rule_key(name: str) -> str:
    """A passage's name as one rule across editions and sources ("2. Battle-shock" = "Battle-shock")."""
    return name_key(normalize(re.sub(r"^\d+\.\s+", "", name)))


def one_rule_once(order: list[int], found: dict[int, Passage], prefer: str | None) -> list[int]:
    """`order` with each rule's passages brought together where the rule first ranks, the preferred edition's
    and the numbered core rule's first (then the glossary's): "sustained hits 2 on a crit" quotes 24.36 of the
    server's edition, not the 10e text that happened to score a little higher."""
    groups: dict[str, list[int]] = {}
    for rowid in order:
        if rowid in found:
            groups.setdefault(rule_key(found[rowid].name), []).append(rowid)
    out: list[int] = []
    for rowid in order:
        if rowid not in found:
            continue
        group = groups.pop(rule_key(found[rowid].name), None)
        if group is not None:
            out += sorted(group, key=lambda r: (prefer is not None and found[r].edition != prefer,
                                                found[r].kind == "faq", found[r].number is None, order.index(r)))
    return out


class Catalog(Protocol):
    """What answering needs of bot.catalog.service.Catalog (which holds the Answerer: no import back)."""

    store: CatalogStore
    index: SearchIndex
    data_root: Path
    known: KnownNames

    def named(self, query: str, *, edition: str | None = ..., limit: int = ...) -> list[Hit]: ...

    def errata_for(self, entry_id: str) -> list[Entry]: ...


class Answerer:
    """Answers questions over one catalog's passages (and its passage vectors, when they load)."""

    def __init__(self, catalog: Catalog, vectors: PassageVectors | None = None) -> None:
        self.catalog = catalog
        self.vectors = vectors
        self.rules_words = load_rules_words(catalog.data_root / RULES_WORDS_FILE)
        self._editions_of: tuple[object, set[str]] = (None, set())
        self._speller_of: tuple[object, Speller] = (None, Speller({}))

    def rankings(self, query: str, *, edition: str | None = None,
                 use: tuple[str, ...] = ("lexical", "core", "semantic", "named", "asks", "scoped"),
                 ) -> dict[str, list[int]]:
        """Each ranker's passage rowids, best first (the bench compares them one by one)."""
        return self._rank(query, edition, use)[0]

    def _rank(self, query: str, edition: str | None, use: tuple[str, ...],
              prefer_edition: str | None = None) -> tuple[dict[str, list[int]], bool]:
        """The rankings, and whether the entries the question names are units only (the player's units are the
        setting of the question, not its subject). `prefer_edition`: the server's, when the question names none."""
        index = self.catalog.index
        reading = index.reading(query)
        words = query_words(reading, self.rules_words)
        for variant, _penalty in index.variants(normalize(reading))[1:3]:  # "dev wounds" -> devastating wounds
            words += [w for w in query_words(variant, self.rules_words) if w not in words]
        fixed = [f for w in words if (f := self._speller().correct(w)) is not None]  # "stratagm" -> stratagem
        words += [w for w in query_words(" ".join(fixed), self.rules_words) if w not in words]
        out: dict[str, list[int]] = {}
        units_only = False
        if "lexical" in use:
            out["lexical"] = [r for r, _ in self.catalog.store.passage_search(words[:MAX_WORDS], limit=POOL,
                                                                              edition=edition)]
        if "core" in use:  # the same words in the core rules and glossary only: the rules every army shares
            out["core"] = [r for r, _ in self.catalog.store.passage_search(words[:MAX_WORDS], limit=POOL,
                                                                           edition=edition, core=True)]
        if "asks" in use:  # the rules whose players' asks share the question's words (bot/catalog/asks.py)
            entries = self.catalog.store.passage_asks(words[:MAX_WORDS], limit=POOL, edition=edition)
            by_entry = self.catalog.store.passage_ids(entries)
            lex_rank = {r: i for i, r in enumerate(out.get("lexical", []))}
            out["asks"] = [min(by_entry[e], key=lambda r: (lex_rank.get(r, POOL), r)) for e in entries if e in by_entry]
        if "scoped" in use:  # the same words among the stratagems (or enhancements) of the faction the question
            # names, ranked among themselves: "the marine strat that makes the enemy ap worse" is Armour of Contempt
            kind, faction = scope(reading, self.catalog.index.faction_terms)
            if kind or faction:
                out["scoped"] = [r for r, _ in self.catalog.store.passage_search(
                    words[:MAX_WORDS], limit=POOL, edition=edition, kinds=(kind,) if kind else None, faction=faction)]
        if "semantic" in use and self.vectors is not None:
            out["semantic"] = self.vectors.search(reading, limit=POOL, edition=edition)
        if "named" in use:
            out["named"], units_only = self._named(query, edition, out.get("lexical", []), prefer_edition)
        return out, units_only

    def _named(self, query: str, edition: str | None, lexical: list[int],
               prefer_edition: str | None = None) -> tuple[list[int], bool]:
        """Passages of the entries the question names, in the name search's order; of each entry its passage
        that ranks best lexically, else its first. And whether those entries, FAQ aside, are all datasheets
        (their own abilities, ranked after them, do not count: "my trukk blew up, what happens to the boyz
        inside" named the Trukk and the Boyz, and their Grot Riggers and Bodyguard only share words)."""
        named = [h.id for h in self.catalog.named(query, edition=edition, limit=NAMED_HITS)]
        index = self.catalog.index
        # the name search reads mentions only in a question-shaped query: "ghaz invuln" names Ghazghkull too
        mentioned = index.mentions(normalize(index.reading(query)))
        for idx in sorted(mentioned, key=lambda i: (-mentioned[i], i)):
            rec = index.records[idx]
            if edition is None or rec.edition == edition:
                thing = index.thing_hit(rec, 0.0).id
                if thing not in named:
                    named.append(thing)
        named += [e for e in self._defining(query, edition, prefer_edition) if e not in named]
        named = named[:NAMED_HITS * 2]
        if edition is None and prefer_edition:
            named = [e for e in named if not self._other_editions_own_rule(e, prefer_edition)]
        named = self._without_others_abilities(named, fold(query))
        if not named:
            return [], False
        keys = {e: self._member_key(e) for e in named}
        members = self.catalog.store.passage_members(list(keys.values()))
        parts = {e: [m for m in members.get(keys[e], ()) if m not in named] for e in named}
        by_entry = self.catalog.store.passage_ids(named + [m for ms in parts.values() for m in ms])
        lex_rank = {r: i for i, r in enumerate(lexical)}
        out = []
        kinds: set[str] = set()
        chapters: set[str] = set()
        for entry_id in named:
            rows = by_entry.get(entry_id, [])
            # one core-rules chapter named once: "max points in strategic reserves" named 20.00 Strategic
            # Reserves, 20.01.01 Reserves and 20.01.02 Strategic Reserves at the End of the Battle, which then
            # outranked the answer, 20.01 (first by the core and asks rankings, third lexically)
            number = index.records[index.by_id[entry_id]].number if entry_id in index.by_id else None
            chapter = number.split(".")[0] if number else None
            if rows and chapter not in chapters:
                out.append(min(rows, key=lambda r: (lex_rank.get(r, POOL), r)))
                kinds.add(index.records[index.by_id[entry_id]].kind if entry_id in index.by_id else "")
                if chapter:
                    chapters.add(chapter)
        # then the named units' and detachments' own rules that share the question's words, best first
        own = [min(by_entry[m], key=lambda r: lex_rank.get(r, POOL)) for e in named for m in parts[e] if m in by_entry]
        ranked = out + sorted({r for r in own if r in lex_rank and r not in out}, key=lex_rank.__getitem__)
        return ranked, kinds - {"faq"} == {"datasheet"}

    def _defining(self, query: str, edition: str | None, prefer_edition: str | None) -> list[str]:
        """The core rules that define the known terms a question names and no entry is named after ("what is
        *armour penetration*": 02.04 Weapons prints it in bold where it says what it is; defined_terms.py)."""
        index = self.catalog.index
        words = normalize(index.reading(query)).split()[:MAX_WORDS * 2]
        out: list[str] = []
        for size in (3, 2, 1):
            for start in range(len(words) - size + 1):
                key = name_key(" ".join(words[start:start + size]))
                for known in self.catalog.known.by_key.get(key, ()) if key not in index.by_key else ():
                    hit = defining_rule(self.catalog.store, index, known.name, known.kinds, edition, prefer_edition)
                    if hit is not None and hit.id not in out:
                        out.append(hit.id)
        return out

    def _other_editions_own_rule(self, entry_id: str, prefer_edition: str) -> bool:
        """Whether `entry_id` is a core rule of the other edition that the server's edition has no rule of that
        name for: not named by a question naming no edition, whose word merely is its name ("can i put two
        *characters* in one squad" on an 11e server named 10e's Characters; it still ranks by its words). 10e's
        Normal Moves stays named: it leads to 11e's Normal Move (one_rule_once)."""
        index = self.catalog.index
        idx = index.by_id.get(entry_id)
        if idx is None or index.records[idx].kind != "rule" or index.records[idx].edition == prefer_edition:
            return False
        same = index.by_key.get(rule_key(index.records[idx].name), ())
        return not any(index.records[i].edition == prefer_edition and index.records[i].kind in CORE_KINDS
                       for i in same)

    def _without_others_abilities(self, named: list[str], query: str) -> list[str]:
        """A unit's own ability named by one word is named through its unit: "can i *split* my melee attacks"
        does not ask about the Blue Horrors' Split, nor "after the *bodyguard* squad is dead" about the Boyz'
        Bodyguard. A longer name ("might is right") is the player's own words for it, unit or not."""
        index = self.catalog.index
        units = {fold(index.records[index.by_id[e]].name) for e in named
                 if e in index.by_id and index.records[index.by_id[e]].kind == "datasheet"}
        kept = []
        for entry_id in named:
            idx = index.by_id.get(entry_id)
            if idx is not None and index.records[idx].kind == "ability" and " " not in normalize(index.records[idx].name):
                entry = self.catalog.store.get(entry_id)
                holders = entry.data.get("datasheets") if entry is not None else None
                holders = [h for h in holders if isinstance(h, str)] if isinstance(holders, list) else []
                if holders and not any(fold(h) in units or fold(h) in query for h in holders):
                    continue
            kept.append(entry_id)
        return kept

    def _member_key(self, entry_id: str) -> tuple[str, str]:
        index = self.catalog.index
        idx = index.by_id.get(entry_id)
        return (index.records[idx].edition, fold(index.records[idx].name)) if idx is not None else ("", "")

    def answer(self, query: str, *, edition: str | None = None, prefer_edition: str | None = None,
               use: tuple[str, ...] = ("lexical", "core", "semantic", "named", "asks", "scoped")) -> Answer:
        """The answer to `query` from the passages of `edition` (or the edition the query names); without one,
        a rule found in both editions is quoted in `prefer_edition` first (the server's edition)."""
        query = clean_text(query or "")[:MAX_QUESTION_CHARS]
        result = Answer(query, looks_like_question(query))
        if not query.strip() or looks_hostile(query):
            return result
        typed = query_edition(query)  # "stealth in 10e": that edition's rules answer, when they are loaded
        if edition is None and typed is not None and typed in self._editions():
            edition = typed
        ranked, units_only = self._rank(query, edition, use, prefer_edition)
        result.semantic = "semantic" in ranked
        weights = dict(WEIGHTS)
        if not ranked.get("named") and self.catalog.index.faction_named(query) is None:
            # the question names no entry and no faction ("custodes ka'tah stances" asks about the Custodes'
            # rules): it asks about the rules every army shares
            weights["core"] = UNNAMED_CORE_WEIGHT
            weights["asks"] = UNNAMED_ASKS_WEIGHT
        elif ranked.get("named") and units_only:
            # "my leman russ wants to fire into combat with my cadians": the player's units are the setting, the
            # rules every army shares are the answer (asks stay as they are: weighting them up too lost FAQ ids)
            weights["core"] = UNNAMED_CORE_WEIGHT
        fused = fuse(list(ranked.values()), [weights[name] for name in ranked])
        order = sorted(fused, key=lambda r: (-fused[r], r))
        found = self.catalog.store.passage_rows(order[:POOL])
        words = query_words(self.catalog.index.reading(query))
        seen: set[str] = set()
        shown: set[tuple[str, str]] = set()
        for rowid in one_rule_once(order[:POOL], found, edition or prefer_edition):
            passage = found[rowid]
            rule = (rule_key(passage.name), passage.edition)
            number = (passage.number, passage.edition) if passage.number else None
            if passage.entry_id in seen or (passage.kind != "faq" and (rule in shown or number in shown)):
                # the glossary's Sustained Hits after the core rule's, the keyword Dense after 13.05 Dense Terrain:
                # the same rule, said once
                continue
            seen.add(passage.entry_id)
            shown.update(key for key in (rule, number) if key)
            # the same rule already quoted in the other edition is listed, not quoted again: its three quotes
            # are three rules ("lethals + dev wounds" quotes Lethal Hits, not Devastating Wounds twice)
            again = any(q.passage.edition != passage.edition and rule_key(q.passage.name) == rule[0]
                        for q in result.passages)
            if passage.kind == "faq":
                if len(result.faq) < FAQS:
                    result.faq.append(Related(passage.entry_id, passage.kind, passage.name, passage.edition))
            elif len(result.passages) < SHOWN and not again and not (
                    # one unit quoted: "my leman russ wants to shoot into combat" named three Leman Russ sheets,
                    # which filled the quotes; the player's unit is the setting, the rules are the answer
                    passage.kind == "datasheet" and any(q.passage.kind == "datasheet" for q in result.passages)):
                result.passages.append(Quote(passage, quote(passage, words), fused[rowid]))
            elif len(result.related) < RELATED:
                result.related.append(Related(passage.entry_id, passage.kind, passage.name, passage.edition))
        self._linked_faq(result)
        result.confident = self._agree(ranked, result, found) and not self._other_edition_first(
            result, edition or prefer_edition)
        return result

    @staticmethod
    def _other_edition_first(result: Answer, wanted: str | None) -> bool:
        """The other edition's rule quoted before a rule of the same kind of the edition asked for (the server's,
        when the question names none): which of the two answers is not clear ("10 man squad down to 5, half
        strength?" quoted 10e's Below Half-strength before 11e's Starting Strength and Half-Strength)."""
        if not result.passages or wanted is None:
            return False
        top = result.passages[0].passage
        return top.edition != wanted and any(q.passage.edition == wanted and q.passage.kind == top.kind
                                             for q in result.passages[1:])

    def _speller(self) -> Speller:
        """The typo corrector over the passages' words (made again when an import swaps the search index)."""
        index = self.catalog.index
        if self._speller_of[0] is not index:
            self._speller_of = (index, Speller(self.catalog.store.passage_vocabulary()))
        return self._speller_of[1]

    def _editions(self) -> set[str]:
        """The editions the catalog holds (remembered per search index: an import swaps the index)."""
        index = self.catalog.index
        if self._editions_of[0] is not index:
            self._editions_of = (index, {rec.edition for rec in index.records})
        return self._editions_of[1]

    def hits(self, result: Answer) -> list[Hit]:
        """Every entry the answer shows (passages, related, FAQ), as hits to open from a menu."""
        index = self.catalog.index
        ids = [q.passage.entry_id for q in result.passages] + [r.id for r in result.related + result.faq]
        out: list[Hit] = []
        for entry_id in dict.fromkeys(ids):
            idx = index.by_id.get(entry_id)
            if idx is not None:
                out.append(index.thing_hit(index.records[idx], 0.0))
        return out

    def _linked_faq(self, result: Answer) -> None:
        """The FAQ and errata linked to the quoted entries come before FAQ passages that only share words."""
        linked: list[Related] = []
        for q in result.passages:
            for faq in self.catalog.errata_for(q.passage.entry_id):
                if all(f.id != faq.id for f in linked):
                    linked.append(Related(faq.id, faq.kind, faq.name, faq.edition))
        rest = [f for f in result.faq if all(f.id != x.id for x in linked)]
        result.faq = (linked + rest)[:FAQS]

    @staticmethod
    def _agree(ranked: dict[str, list[int]], result: Answer, found: dict[int, Passage]) -> bool:
        """Confident only when every ranking leads with the best passage's entry: the question names it (named),
        its words pick it among all passages (lexical) and among the shared core rules (core). Measured on the
        tuning sets (blind tuning questions, our own, FAQ even ids), two of three agreeing was wrong one time in
        six ("can i still shoot if i fell back" named and worded like a 10e stratagem); all three, once in 21.
        Players' asks (the "asks" ranking) help find a rule; they are no evidence that it answers."""
        if not result.passages:
            return False
        best = result.passages[0].passage.entry_id
        tops = [ranked.get(k, [])[:1] for k in ("named", "lexical", "core")]
        return all(top and top[0] in found and found[top[0]].entry_id == best for top in tops)
