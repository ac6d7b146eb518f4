"""The words of a question that rank passages (bot/catalog/answers.py): folded like the passages, without the
words every question shares, each player's word followed by the rules' words for it (data/rules_words.toml:
query expansion, "tank" -> vehicle), and the kind of thing and the faction the question names anywhere in it
(the scoped ranking's collection: "the ork *strat* where dead boyz still swing").
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from bot.catalog import context
from bot.catalog.normalize import normalize
from bot.catalog.passages import MAX_WORDS, index_words
from bot.catalog.spelling import base_form

RULES_WORDS_FILE = "rules_words.toml"  # players' words for the rules' words (query expansion), in the data root
MAX_QUESTION_CHARS = 300  # a question is clipped here (players' questions are one or two sentences)
# the kinds a question can point at by a word anywhere in it ("the ork *strat* where dead boyz still swing")
SCOPE_KINDS = {word: kind for word, kind in context.KIND_WORDS.items() if kind in ("stratagem", "enhancement")} | {
    "relic": "enhancement", "relics": "enhancement"}
MIN_SCOPE_FACTION = 3  # a faction abbreviation this short ("am", "de", "ts") is a word of the sentence, not a faction

# English function words and the words every question about the game shares: they rank nothing
STOP_WORDS = frozenset("""
a an the of for to in on at by with from into onto and or but not no nor if then than so as be been being am is are
was were do does did doing done can could would should shall will may might must have has had having i me my mine we
us our you your it its they them their this that these those there here what which who whom whose when where why how
whats hows cant wont dont doesnt isnt arent any all some each every both either neither just only also too very
about against between through under again further once more most other such own same get gets got getting
something anything thing things way ok okay please thanks guys anyone someone need want know work works happen
happens mean means actually really still even basically literally anyway ever
he him his she her hers s ve ll havent hasnt wasnt werent wouldnt couldnt shouldnt since
""".split())  # noqa: SIM905 - a word list reads better as words


KIND_WORDS = {"strat": "stratagem", "strats": "stratagems"}  # players' word for what the rules spell out
EDITION_WORDS = frozenset(context.EDITION_WORDS) | {"edition"}  # a question's edition words rank nothing


def query_words(text: str, rules_words: dict[str, list[str]] | None = None) -> list[str]:
    """The words of a question worth ranking by: folded like the passages, stop words dropped, bounded; with
    `rules_words`, each player's word is followed by the rules' words for it ("tank" -> vehicle)."""
    words = re.findall(r"\w+", index_words(text[:MAX_QUESTION_CHARS]))
    kept: list[str] = []
    for word in words:
        word = KIND_WORDS.get(word, word)  # "strat" -> "stratagem", as the rules spell it
        if word not in STOP_WORDS and word not in kept and not word.isdigit() and word not in EDITION_WORDS:
            kept.append(word)
            rules = (rules_words or {}).get(word) or (rules_words or {}).get(base_form(word), ())
            kept += [w for w in rules if w not in kept]
    return kept[:MAX_WORDS]


def load_rules_words(path: Path) -> dict[str, list[str]]:
    """data/rules_words.toml: players' words and the rules' words for them (none when the file is absent)."""
    if not path.exists():
        return {}
    with open(path, "rb") as fh:
        table = tomllib.load(fh).get("words", {})
    words = {normalize(k): [normalize(w) for w in v] for k, v in table.items() if isinstance(v, list)}
    return words | {base_form(k): v for k, v in words.items() if base_form(k) not in words}


def scope(reading: str, faction_terms: dict[str, str]) -> tuple[str | None, str | None]:
    """The kind of thing (stratagem, enhancement) and the faction (its key, from `faction_terms`) a question
    names anywhere in it: the collection it asks about."""
    words = normalize(reading).split()
    kind = next((SCOPE_KINDS[w] for w in words if w in SCOPE_KINDS), None)
    for n in (3, 2, 1):
        for i in range(len(words) - n + 1):
            run = " ".join(words[i:i + n])
            if run in faction_terms and len(run) >= MIN_SCOPE_FACTION:
                return kind, faction_terms[run]
    return kind, None
