"""The words players put around a name: "ghaz stats", "thrill seekers ec", "mob mentality green tide",
"rapid regen strat nids", "mozrog skragbad new edition".

At either end of a query they say which kind of thing (strat, datasheet), which faction (ec, nids, votann), which
detachment (green tide, gladius) or edition (10th, new edition) is meant, or nothing at all (stats, points). None
of them is part of the name. `read_context` takes them off, so the search can match the name alone (a reading
behind the literal query, which always comes first: "custodian guard" stays a name) and let the faction or
detachment order the hits.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

# the last word of "morty datasheet", "aoc strat": what kind of thing is asked for
KIND_WORDS = {"rule": "rule", "rules": "rule", "stratagem": "stratagem", "stratagems": "stratagem",
              "strat": "stratagem", "strats": "stratagem", "datasheet": "datasheet", "datasheets": "datasheet",
              "unit": "datasheet", "units": "datasheet", "weapon": "weapon", "weapons": "weapon",
              "ability": "ability", "abilities": "ability", "enhancement": "enhancement",
              "enhancements": "enhancement", "detachment": "detachment", "detachments": "detachment", "det": "detachment",
              "dets": "detachment"}
EDITION_WORDS = {"10e": "10e", "10th": "10e", "10ed": "10e", "tenth": "10e", "11e": "11e", "11th": "11e", "11ed": "11e",
                 "eleventh": "11e"}
# editions named in words; the current edition is the 11th
EDITION_PHRASES = {"new edition": "11e", "current edition": "11e", "latest edition": "11e", "new ed": "11e",
                   "old edition": "10e", "last edition": "10e", "previous edition": "10e", "old ed": "10e"}
# words that ask for the entry but name nothing in it
FILLER = frozenset({"stats", "stat", "statline", "statlines", "profile", "profiles", "points", "pts", "cost",
                    "sheet", "card", "datacard", "info", "entry", "edition", "ed", "edn", "rule", "rules",
                    "version", "text", "wording"})
# words that join an edition to the rest ("mercenary oathband rule in 11e", "tank shock in the new edition"):
# taken off with the edition they lead to; "the" and "a" also open a name ("the avatar of khaine")
JOINING = frozenset({"in", "the", "for", "of", "on", "a", "an", "from", "at"})
ARTICLES = frozenset({"the", "a", "an"})
MAX_PHRASE_WORDS = 3
MIN_DETACHMENT_WORD = 5  # one word taken as a detachment ("gladius") must be this long: "the", "war" are not


@dataclass(frozen=True)
class Context:
    name: str  # the query without its context words
    kind: str | None = None
    faction: str | None = None  # a faction key (bot/catalog/things.faction_key)
    detachment: str | None = None  # the normalised words naming a detachment (or the start of its name)
    edition: str | None = None


def named_edition(q: str) -> str | None:
    """The edition a normalised query names, by a word ("10th") or a phrase ("new edition")."""
    words = q.split()
    for word in words:
        if word in EDITION_WORDS:
            return EDITION_WORDS[word]
    for i in range(len(words) - 1):
        if (phrase := f"{words[i]} {words[i + 1]}") in EDITION_PHRASES:
            return EDITION_PHRASES[phrase]
    return None


def without_edition(q: str) -> tuple[str, str | None]:
    """A normalised query without its edition words, and the edition the first of them names ("blast 10e" ->
    ("blast", "10e")). A query of nothing but edition words is kept whole ("10e" is then what is searched)."""
    words = q.split()
    kept: list[str] = []
    for word in words:
        if word in EDITION_WORDS:
            while kept and kept[-1] in JOINING:  # "in 11e" goes with the "11e"
                kept.pop()
        else:
            kept.append(word)
    if not kept:
        return q, None
    edition = next((EDITION_WORDS[w] for w in words if w in EDITION_WORDS), None)
    return " ".join(kept), edition


def read_context(q: str, factions: dict[str, str], detachments: list[str]) -> Context:
    """`q` (normalised) without the context words at its ends; at least one word is always left.

    `factions` maps faction names and abbreviations (normalised) to faction keys; `detachments` is the sorted
    list of normalised detachment names: a run of words is a detachment when it is one of them or the start of
    one ("gladius" for Gladius Task Force)."""
    words = q.split()
    kind = faction = detachment = edition = None
    changed = True
    while changed and len(words) > 1:
        changed = False
        if _starts_detachment(" ".join(words), detachments):
            break  # what is left names a detachment ("mercenary oathband"): "oathband" alone is another one
        for at_end in (True, False):
            for n in range(min(MAX_PHRASE_WORDS, len(words) - 1), 0, -1):
                run = words[-n:] if at_end else words[:n]
                phrase = " ".join(run)
                if phrase in factions and faction is None:
                    faction = factions[phrase]
                elif phrase in EDITION_PHRASES:  # single words ("10th") are taken out before, by the search
                    edition = edition or EDITION_PHRASES[phrase]
                    while at_end and len(words) > n + 1 and words[-n - 1] in JOINING:
                        n += 1  # "in the new edition"
                elif n == 1 and (phrase in FILLER or not at_end and phrase in ARTICLES):
                    pass  # "rule" too: "get stuck in war horde rule" asks for a detachment's rule, not a core one
                elif n == 1 and phrase in KIND_WORDS and kind is None:
                    kind = KIND_WORDS[phrase]
                elif at_end and detachment is None and _starts_detachment(phrase, detachments):
                    detachment = phrase
                else:
                    continue
                words = words[:-n] if at_end else words[n:]
                changed = True
                break
            if len(words) <= 1:
                break
    return Context(" ".join(words), kind, faction, detachment, edition)


def _starts_detachment(phrase: str, detachments: list[str]) -> bool:
    if " " not in phrase and len(phrase) < MIN_DETACHMENT_WORD or all(w in JOINING for w in phrase.split()):
        return False  # "in the" begins a detachment's name but names none
    lo = bisect.bisect_left(detachments, phrase)
    return lo < len(detachments) and (detachments[lo] == phrase or detachments[lo].startswith(phrase + " "))
