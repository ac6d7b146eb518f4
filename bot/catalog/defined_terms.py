"""The core rule that defines a term no entry is named after (issue 21: "armour penetration" answered "not in
the loaded data" on the full data, although 02.04 Weapons defines it). The 11e core rules print a term in bold
where they say what it is ("**Armour Penetration (AP)**: ..."); passages.defining finds those passages."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.catalog.model import Hit
    from bot.catalog.search import SearchIndex
    from bot.catalog.store import CatalogStore


def defining_rule(store: CatalogStore, index: SearchIndex, term: str, kinds: tuple[str, ...], edition: str | None,
                  prefer_edition: str | None) -> Hit | None:
    """The rule or glossary entry that defines `term` (a rule-like known name), of `edition` when one is asked,
    else the server's edition first."""
    if not set(kinds) & {"rule", "keyword"}:
        return None
    rows = store.passage_rows(store.passages_defining(term, edition))
    for passage in sorted(rows.values(), key=lambda p: (p.edition != prefer_edition, p.rowid)):
        idx = index.by_id.get(passage.entry_id)
        if idx is not None:
            return index.thing_hit(index.records[idx], 100.0)
    return None
