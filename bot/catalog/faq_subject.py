"""What a FAQ entry is about, for a name query that matched its header (issue 21).

"oom army rule" matches the header "Oath of Moment, Army Rules" and "berekh stornbrow" the header "Berekh
Stornbröw, Relentless Avalanche Ability" (the datasheet is spelled Berehk): the player named the thing, not the
ruling. The FAQ entry's own targets (game-datacards' `faqs.json`, kept in its data) say which thing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rapidfuzz import fuzz

from bot.catalog.model import FAQ_TARGET_KINDS, Entry, Hit
from bot.catalog.normalize import normalize
from bot.catalog.things import name_key

if TYPE_CHECKING:
    from bot.catalog.search import SearchIndex

RULE_LIKE = {"rule", "ability"}  # an army rule is a rule in one edition's data and an ability in the other's
# how closely a query must name a FAQ entry's subject to be answered with it: a typo ("berekh" for Berehk) passes
SUBJECT_NAMED_RATIO = 90


def faq_subject(index: SearchIndex, faq: Entry | None, readings: list[str], hits: list[Hit], sure: bool,
                edition: str | None, wanted: set[str]) -> tuple[list[Hit], bool]:
    """The candidates with the thing FAQ entry `faq` (the top hit) is about first, and whether it is claimed.

    The thing leads, answered as confidently as the header was named, and the FAQ entry follows it (it is shown
    with the thing too, among its errata). A target of another edition than the one asked for ("10th ed waaagh
    army rule" and the 11e FAQ "Waaagh! Army Rule") is looked up in the asked one. When no target is loaded, or
    the query does not name it ("talons of the emperor det" begins the header "Talons of the Emperor
    Detachment, Taloned Pincer Stratagem, ...", about the stratagem), the FAQ entry is offered, never claimed.
    A target that is not a mapping (a damaged catalog) is none."""
    subjects: list[Hit] = []
    targets = faq.data.get("targets") if faq is not None else None
    for target in targets if isinstance(targets, list) else []:
        if not isinstance(target, dict):
            continue
        subject = normalize(str(target.get("name") or ""))
        if max((fuzz.partial_ratio(subject, r) for r in readings), default=0) < SUBJECT_NAMED_RATIO:
            continue
        kinds = set(FAQ_TARGET_KINDS.get(target.get("type"), ()))
        if kinds & RULE_LIKE:
            kinds |= RULE_LIKE
        recs = [index.records[i] for i in index.by_key.get(name_key(subject), ())]
        recs = [r for r in recs if r.kind in kinds & wanted and (edition is None or r.edition == edition)]
        recs.sort(key=lambda r: (r.edition != hits[0].edition, r.incomplete, -r.priority))  # unasked: its own first
        if recs and all(h.id != recs[0].group for h in subjects):
            subjects.append(index.thing_hit(recs[0], hits[0].score))
    if not subjects:
        return hits, False
    rest = [h for h in hits if all(h.id != s.id for s in subjects)]
    return subjects + rest, sure and len(subjects) == 1
