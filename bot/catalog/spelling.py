"""A question's typos corrected against the words of the rules passages (issue 21: players' own words).

The name search corrects typos in names, but a question's other words reached FTS5 as typed: "can i use the same
stratagm twice", "battleshcoked", "transprot", "devestating" matched nothing, and the question was answered from
its remaining words. A word the passages do not hold is read as the passages' word closest to it (rapidfuzz's
normalised Indel similarity, at least MIN_SIMILARITY; the word held by more passages on a tie), as a word added
to the question, the typed one kept. Short words (under MIN_LENGTH letters: "swap" is not "snap") and a regular
inflection of a word the passages hold ("saved" for "save") are left alone. Bounded: the vocabulary is built
with the catalog (passages.py), a word is compared with the words of about its length only, and corrections are
cached up to CACHE words.
"""

from __future__ import annotations

from collections import defaultdict

from rapidfuzz import fuzz, process

MIN_LENGTH = 5
MIN_SIMILARITY = 85.0  # chosen on the tuning sets: 80 and 85 tie; 85 is the stricter
CACHE = 4096


def base_form(word: str) -> str:
    """The word without a regular inflection ("stacking", "stacked", "stacks" -> "stack"): a crude suffix strip,
    enough for a lookup key (one line of rules_words.toml serves every form a player types; an inflected word of
    the passages is no typo)."""
    for suffix in ("ing", "ed", "es", "s"):
        stem = word[: -len(suffix)]
        if word.endswith(suffix) and len(stem) >= 3 and not word.endswith("ss"):
            return stem[:-1] if len(stem) > 3 and stem[-1] == stem[-2] and stem[-1] not in "aeioulsfz" else stem
    return word


class Speller:
    def __init__(self, vocabulary: dict[str, int]) -> None:
        self.vocabulary = vocabulary
        self._by_length: dict[int, list[str]] = defaultdict(list)
        for word in vocabulary:
            self._by_length[len(word)].append(word)
        self._known: dict[str, str | None] = {}

    def correct(self, word: str) -> str | None:
        """The passages' word `word` is a typo of, or None (a known word, too short, or nothing close)."""
        if word in self._known:
            return self._known[word]
        fixed = self._closest(word)
        if len(self._known) >= CACHE:
            self._known.clear()
        self._known[word] = fixed
        return fixed

    def _closest(self, word: str) -> str | None:
        if len(word) < MIN_LENGTH or not word.isascii() or not word.isalpha() or self._inflected(word):
            return None
        candidates = [w for n in range(len(word) - 2, len(word) + 3) for w in self._by_length.get(n, ())]
        found = process.extract(word, candidates, scorer=fuzz.ratio, score_cutoff=MIN_SIMILARITY, limit=10)
        if not found:
            return None
        best = max(score for _w, score, _i in found)
        return max((w for w, score, _i in found if score == best), key=lambda w: (self.vocabulary[w], w))

    def _inflected(self, word: str) -> bool:
        """Whether the passages hold `word` itself or the word it inflects ("saved": save; "stacking": stack)."""
        stem = base_form(word)
        return word in self.vocabulary or stem in self.vocabulary or stem + "e" in self.vocabulary
