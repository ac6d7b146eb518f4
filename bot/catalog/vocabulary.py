"""The player vocabulary (`data/vocabulary.tsv`): nicknames and acronyms for well-known entries ("morty" is
Mortarion, "pbc" the Plagueburst Crawler, "aoc" Armour of Contempt), each with its target, kind, faction and
editions. Data, not code: the search reads each term like a word alias (bot/catalog/search.py). A term players
use for two things ("abby": Abaddon, or the Abominant) has a line for each; the search then offers both and
claims neither."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from bot.catalog.model import EDITIONS, KINDS
from bot.catalog.normalize import normalize

COLUMNS = ("term", "target", "kind", "faction", "editions")
MAX_TERMS = 5000  # a file this long is a mistake, not a vocabulary


class VocabularyError(ValueError):
    """A malformed vocabulary line; names the file and line."""


@dataclass(frozen=True)
class Term:
    term: str  # normalised, as matched against queries
    target: str  # the entry's name as printed
    kind: str
    faction: str
    editions: tuple[str, ...]


def load(path: Path) -> list[Term]:
    """Every term of the file, in order; a missing file is an empty vocabulary."""
    if not path.exists():
        return []
    terms: list[Term] = []
    seen: dict[tuple[str, str], int] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        where = f"{path.name}, line {number}"
        cells = [c.strip() for c in line.split("\t")]
        if len(cells) != len(COLUMNS):
            raise VocabularyError(f"{where}: {len(cells)} columns; want {len(COLUMNS)}: {', '.join(COLUMNS)}")
        term, target, kind, faction, editions = cells
        key = normalize(term)
        if not key or not normalize(target):
            raise VocabularyError(f"{where}: the term and the target need letters or digits")
        if kind not in KINDS:
            raise VocabularyError(f"{where}: kind {kind!r} is not one of {', '.join(KINDS)}")
        eds = tuple(editions.split())
        if not eds or any(e not in EDITIONS for e in eds):
            raise VocabularyError(f"{where}: editions {editions!r}; want 10e, 11e or both")
        meaning = (key, normalize(target))
        if meaning in seen:
            raise VocabularyError(f"{where}: {term!r} is already defined on line {seen[meaning]}")
        seen[meaning] = number
        terms.append(Term(key, target, kind, faction, eds))
        if len(terms) > MAX_TERMS:
            raise VocabularyError(f"{where}: more than {MAX_TERMS} terms")
    return terms
