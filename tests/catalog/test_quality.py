"""Search quality on the labelled set: at least 150 realistic queries, top-1 accuracy >= 95%."""

from __future__ import annotations

from bot.catalog.service import Catalog

from .labelled_queries import QUERIES
from .quality import evaluate


def test_the_labelled_set_is_large_and_varied() -> None:
    assert len(QUERIES) >= 150
    assert len({q[0] for q in QUERIES}) >= 140
    kinds = {q[3] for q in QUERIES}
    assert {"rule", "stratagem", "datasheet", "weapon", "ability", "detachment", "enhancement"} <= kinds
    assert any(q[0].replace(".", "").isdigit() for q in QUERIES)  # rule numbers
    assert {q[2] for q in QUERIES} >= {None, "10e", "11e"}


def test_top1_accuracy_is_at_least_95_percent(full_catalog: Catalog) -> None:
    outcome = evaluate(full_catalog, baseline=False)  # the baseline comparison is printed by the bench
    report = "\n".join(f"  {q!r}: expected {e}, got {g}" for q, e, g in outcome.misses)
    assert outcome.accuracy >= 0.95, f"top-1 accuracy {outcome.accuracy:.1%}; misses:\n{report}"
