"""Players' own words: a question's typos read as the rules passages' words (bot/catalog/spelling.py), and a term the
core rules define answered by the rule that defines it (passages.defining)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.catalog import spelling
from bot.catalog.answers import Answerer
from bot.catalog.service import Catalog
from bot.catalog.spelling import Speller

WORDS = {"stratagem": 900, "strategic": 40, "snap": 30, "save": 800, "saves": 300, "window": 2, "wind": 10,
         "transport": 120, "transports": 60, "battleshocked": 20, "devastating": 90}


@pytest.mark.parametrize(("typed", "read"), [
    ("stratagm", "stratagem"), ("transprot", "transport"), ("battleshcoked", "battleshocked"),
    ("devestating", "devastating"), ("windo", "window"),
])
def test_a_typo_reads_as_the_closest_word_of_the_passages(typed: str, read: str) -> None:
    assert Speller(WORDS).correct(typed) == read


@pytest.mark.parametrize("typed", [
    "swap",  # short words are left alone: "swap" is not "snap"
    "saved",  # an inflection of a word the passages hold is no typo
    "stratagem",  # a known word
    "qwertyuiop",  # nothing close
    "übermensch",  # not ASCII: the passages' words are folded to ASCII
])
def test_words_that_are_no_typos_are_left_alone(typed: str) -> None:
    assert Speller(WORDS).correct(typed) is None


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60))
def test_any_word_is_corrected_to_a_passage_word_or_left_alone(word: str) -> None:
    fixed = Speller(WORDS).correct(word)
    assert fixed is None or fixed in WORDS


def test_the_corrections_remembered_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spelling, "CACHE", 8)
    speller = Speller(WORDS)
    for i in range(50):
        speller.correct(f"word{i}xx")
    assert len(speller._known) <= 8


def test_the_catalog_keeps_the_passages_words_with_their_counts(small_catalog: Catalog) -> None:
    vocabulary = small_catalog.store.passage_vocabulary()
    assert vocabulary["transport"] >= 1 and vocabulary["stratagem"] >= vocabulary["stratagems"] >= 1
    assert all(word.isascii() and word.isalpha() for word in vocabulary)


def test_a_question_with_a_typo_is_answered_as_spelled_right(small_catalog: Catalog,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """ "how close do my guys need to be to get back in the transprot" (blind questions 8) quoted Fall-back Move
    and Engagement Range: "transprot" matched no passage."""
    query = "how close do my guys need to be to get back in the transprot"

    def numbers() -> list[str]:
        return [q.passage.number or "" for q in small_catalog.answer(query, prefer_edition="11e").passages]

    assert any(n.startswith("18.") for n in numbers())
    monkeypatch.setattr(Answerer, "_speller", lambda self: Speller({}))
    assert not any(n.startswith("18.") for n in numbers())


def test_a_term_the_core_rules_define_is_found_where_they_print_it_in_bold() -> None:
    import sqlite3

    from bot.catalog import passages

    conn = sqlite3.connect(":memory:")
    passages.create(conn)
    rows = [("r1", "rule", "Weapons", "02.04", "11e", "**Armour Penetration (AP)**: Presented as a modifier."),
            ("r2", "rule", "Save Rolls", "05.03", "11e", "Subtract the armour penetration of the attack."),
            ("a1", "ability", "Tank Hunters", None, "11e", "**Armour Penetration** improves by 1.")]
    conn.executemany("INSERT INTO passages (entry_id, kind, name, number, edition, source, text, title, words) "
                     "VALUES (?, ?, ?, ?, ?, 'gdc', ?, '', '')", rows)
    assert passages.defining(conn, "armour penetration") == [1]  # bold, in the core rules; not a unit's ability
    assert passages.defining(conn, "armour penetration", "10e") == []
    assert passages.defining(conn, "50%_%") == []  # LIKE's wildcards in a term match nothing


def test_a_known_term_no_entry_is_named_after_answers_with_the_rule_that_defines_it(full_catalog: Catalog) -> None:
    """Issue 21: "armour penetration" answered "not in the loaded data" although 02.04 Weapons defines it (so do
    "objective control" 02.02 and "ballistic skill" 02.04): the alias table knows the term, no entry is named so."""
    for term, number in (("armour penetration", "02.04"), ("objective control", "02.02"), ("ballistic skill", "02.04")):
        found = full_catalog.resolve(term, prefer_edition="11e")
        assert found.missing is None and found.confident, term
        assert found.best is not None and full_catalog.index.records[full_catalog.index.by_id[found.best.id]].number \
            == number, term


def test_a_question_about_a_defined_term_quotes_the_rule_that_defines_it(full_catalog: Catalog,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """"what is armour penetration" quoted a Dreadnought, 10e's Invulnerable Saves and a Saving Throw, never
    02.04 Weapons, where the term is defined: the rule that defines a term the question names is named by it."""
    def numbers(query: str) -> list[str | None]:
        return [q.passage.number for q in full_catalog.answer(query, prefer_edition="11e").passages]

    assert "02.04" in numbers("what is armour penetration")
    assert "02.02" in numbers("what is objective control")
    monkeypatch.setattr(Answerer, "_defining", lambda self, query, edition, prefer: [])
    assert "02.04" not in numbers("what is armour penetration")
