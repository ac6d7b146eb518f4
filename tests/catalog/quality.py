"""Top-1 accuracy of the catalog search on the labelled set, and of a plain rapidfuzz baseline."""

from __future__ import annotations

from dataclasses import dataclass

from rapidfuzz import fuzz, process

from bot.catalog.normalize import normalize
from bot.catalog.service import Catalog

from .labelled_queries import QUERIES


@dataclass
class Outcome:
    total: int
    correct: int
    baseline_correct: int
    misses: list[tuple[str, str, str]]  # (query, expected, got)
    baseline_misses: list[tuple[str, str, str]]

    @property
    def accuracy(self) -> float:
        return self.correct / self.total

    @property
    def baseline_accuracy(self) -> float:
        return self.baseline_correct / self.total


def evaluate(catalog: Catalog, *, baseline: bool = True) -> Outcome:
    """Run every labelled query as the slash commands do (kind filter, edition filter, 11e preferred)."""
    names = sorted({rec.name for rec in catalog.index.records})
    correct = baseline_correct = 0
    misses: list[tuple[str, str, str]] = []
    baseline_misses: list[tuple[str, str, str]] = []
    for query, kind, edition, exp_kind, exp_name, exp_edition in QUERIES:
        expected = f"{exp_name} ({exp_kind}, {exp_edition or 'any edition'})"
        hits = catalog.search(query, kind=kind, edition=edition, limit=1, prefer_edition="11e")
        top = hits[0] if hits else None
        if top and top.kind == exp_kind and normalize(top.name) == normalize(exp_name) and (
                exp_edition is None or top.edition == exp_edition):
            correct += 1
        else:
            misses.append((query, expected, f"{top.name} ({top.kind}, {top.edition})" if top else "nothing"))
        if not baseline:
            continue
        # the baseline only sees names, so it is scored on the name alone (a generous reading)
        found = process.extractOne(query, names, scorer=fuzz.WRatio)
        if found and normalize(found[0]) == normalize(exp_name):
            baseline_correct += 1
        else:
            baseline_misses.append((query, expected, found[0] if found else "nothing"))
    return Outcome(len(QUERIES), correct, baseline_correct, misses, baseline_misses)
