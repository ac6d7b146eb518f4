"""The player vocabulary (data/vocabulary.tsv, bot/catalog/vocabulary.py): every row checked against the data,
malformed files refused with the line named, and nicknames answered with the entry they mean."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.catalog.model import is_detachment_entry
from bot.catalog.normalize import normalize
from bot.catalog.service import Catalog
from bot.catalog.things import faction_key, name_key
from bot.catalog.vocabulary import VocabularyError, load
from bot.config import DATA_ROOT

TERMS = load(DATA_ROOT / "vocabulary.tsv")


def test_the_vocabulary_covers_many_factions() -> None:
    assert len(TERMS) >= 300
    assert len({faction_key(t.faction) for t in TERMS}) >= 20


def test_every_target_exists_as_described_and_no_term_shadows_an_entry(full_catalog: Catalog) -> None:
    index = full_catalog.index
    wrong = []
    for t in TERMS:
        recs = [index.records[i] for i in index.by_key.get(name_key(normalize(t.target)), ())]
        recs = [r for r in recs if r.kind == t.kind and (t.kind != "detachment" or is_detachment_entry(r.id))]
        if not recs or {r.edition for r in recs} != set(t.editions):
            wrong.append(f"{t.term} -> {t.target} ({t.kind}, {t.editions}): editions {sorted({r.edition for r in recs})}")
        elif faction_key(t.faction) not in {faction_key(r.faction) for r in recs if r.faction}:
            wrong.append(f"{t.term} -> {t.target}: not listed under {t.faction}")
        if index.by_key.get(name_key(t.term)):
            wrong.append(f"{t.term} is itself an entry's name")
    assert not wrong, "\n".join(wrong)


def test_a_term_may_mean_two_things_but_not_say_one_twice(tmp_path: Path) -> None:
    path = tmp_path / "vocabulary.tsv"
    path.write_text("abby\tAbominant\tdatasheet\tGenestealer Cults\t10e 11e\n"
                    "abby\tAbaddon The Despoiler\tdatasheet\tChaos Space Marines\t10e 11e\n", encoding="utf-8")
    assert [t.target for t in load(path)] == ["Abominant", "Abaddon The Despoiler"]


@pytest.mark.parametrize("line, message", [
    ("morty\tMortarion\tdatasheet\tDeath Guard", "line 2: 4 columns"),
    ("morty\tMortarion\tunit\tDeath Guard\t10e", "line 2: kind 'unit'"),
    ("morty\tMortarion\tdatasheet\tDeath Guard\t9e", "line 2: editions '9e'"),
    ("!!!\tMortarion\tdatasheet\tDeath Guard\t10e", "line 2: the term and the target need letters"),
    ("pbc\tPlagueburst Crawler\tdatasheet\tDeath Guard\t10e", "line 2: 'pbc' is already defined on line 1"),
])
def test_a_malformed_line_is_refused_with_its_number(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "vocabulary.tsv"
    path.write_text(f"PBC\tPlagueburst Crawler\tdatasheet\tDeath Guard\t10e 11e\n{line}\n", encoding="utf-8")
    with pytest.raises(VocabularyError, match=message):
        load(path)


@pytest.mark.parametrize("query, name", [("morty", "Mortarion"), ("pbc", "Plagueburst Crawler"),
                                         ("zoeys", "Zoanthropes"), ("GUO", "Great Unclean One"),
                                         ("twc", "Thunderwolf Cavalry"), ("ndk", "Nemesis Dreadknight")])
def test_a_nickname_answers_the_entry_it_means(small_catalog: Catalog, query: str, name: str) -> None:
    resolution = small_catalog.resolve(query)
    assert resolution.confident and resolution.best is not None and resolution.best.name == name


def test_a_nickname_inside_a_longer_name_does_not_hide_that_name(small_catalog: Catalog) -> None:
    """"bobby" is Roboute Guilliman, but a query that is another entry's name still finds that entry."""
    hits = small_catalog.search("scions of guilliman", limit=3)
    assert hits and normalize(hits[0].name) == "scions of guilliman"
