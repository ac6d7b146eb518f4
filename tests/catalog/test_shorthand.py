"""Community shorthand (data/shorthand.toml, bot/catalog/shorthand.py): read as what it means, routed to the rule."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.catalog.service import Catalog
from bot.catalog.shorthand import MAX_INPUT_CHARS, ShorthandError, load
from bot.config import DATA_ROOT

GRAMMAR = load(DATA_ROOT / "shorthand.toml")


@pytest.mark.parametrize("query, text, numbers, says", [
    ("5+++", "feel no pain", (), "Feel No Pain 5+"),
    ("4++", "invulnerable save", ("05.04", "02.02"), "a 4+ invulnerable save"),
    ("4++ invuln", "invulnerable save", ("05.04", "02.02"), "a 4+ invulnerable save"),
    ("2+ save", "saving throw", ("05.04", "05.03"), "a 2+ armour save"),
    ("Sv 3+", "saving throw", ("05.04", "05.03"), "a 3+ armour save"),
    ("T12", "toughness", ("05.02", "02.02"), "Toughness 12"),
    ("ap-2", "armour penetration", ("05.04", "02.04"), "AP 2"),
    ("rule 13.08", "", ("13.08",), "rule 13.08"),
    ("core 09.07", "", ("09.07",), "rule 09.07"),
    ("Core 9.7", "", ("09.07",), "rule 09.07"),
    ("24.33", "", ("24.33",), "rule 24.33"),
    ("does 5+++ work against mortal wounds", "does feel no pain work against mortal wounds", (),
     "Feel No Pain 5+"),
    ("core 09.07 and 5+++", "and feel no pain", ("09.07",), "rule 09.07"),
    ("ws3+", "hit roll", ("05.01", "02.04"), "a hit roll of 3+ (WS/BS 3+)"),
    ("BS 4+", "hit roll", ("05.01", "02.04"), "a hit roll of 4+ (WS/BS 4+)"),
    ("Ld6+", "leadership roll", ("01.06", "02.02"), "Leadership 6+"),
    ("oc2", "objective control", ("14.02", "02.02"), "OC 2"),
    ("M10", "move", ("03.01", "02.02"), 'Move 10"'),
    ('m6"', "move", ("03.01", "02.02"), 'Move 6"'),
    ("rr1s", "re-roll", ("01.05.02",), "re-rolls of 1s"),
])
def test_shorthand_is_read_as_what_it_means(query: str, text: str, numbers: tuple, says: str) -> None:
    reading = GRAMMAR.read(query)
    assert reading is not None, query
    assert (reading.text, reading.numbers) == (text, numbers)
    assert says in [meaning for _typed, meaning in reading.said]


@pytest.mark.parametrize("query", ["feel no pain", "5+", "t'au", "tau", "at12", "t", "fnp 5+", "rule 1.999",
                                   "deadly demise d6", "rapid fire 2", "13.8.1.4", "x4++y", "", "m", "m 6", "bs",
                                   "oc", "ldr", "lm10", "ws", "rr"])
def test_words_that_are_not_shorthand_stay_as_typed(query: str) -> None:
    assert GRAMMAR.read(query) is None


@given(st.text(max_size=3000))
def test_any_text_reads_without_error_and_bounded(text: str) -> None:
    reading = GRAMMAR.read(text)
    assert reading is None or len(reading.text) <= MAX_INPUT_CHARS * 4


@pytest.mark.parametrize("body, message", [
    ('[[shorthand]]\npattern = "(x"\nreads = "a"\nsays = "a"\n', "shorthand #1: bad pattern"),
    ('[[shorthand]]\npattern = "x"\nsays = "a"\n', "shorthand #1: missing 'reads'"),
    ('[[shorthand]]\npattern = "x"\nreads = "a"\nsays = "a"\nrules = ["5.4"]\n', "'5.4' is not a rule number"),
    ('[[shorthand]]\npattern = "x"\nreads = ""\nsays = "a"\nnumber = "n"\n', "number group 'n' is not in"),
])
def test_a_malformed_grammar_is_refused_with_the_rule_named(tmp_path: Path, body: str, message: str) -> None:
    path = tmp_path / "shorthand.toml"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(ShorthandError, match=message):
        load(path)


def _answer(catalog: Catalog, query: str) -> tuple[str, str, str | None]:
    resolution = catalog.resolve(query)
    assert resolution.confident and resolution.best is not None, (query, resolution.candidates[:3])
    return resolution.best.name, resolution.best.edition, resolution.best.data.get("number")


def test_shorthand_routes_to_the_rule(small_catalog: Catalog) -> None:
    assert _answer(small_catalog, "5+++")[:2] == ("Feel No Pain", "11e")
    assert _answer(small_catalog, "core 09.07")[:2] == ("Fall-back Move", "11e")
    assert _answer(small_catalog, "rule 24.12")[:2] == ("Feel No Pain", "11e")
    assert _answer(small_catalog, "section 5.2")[:2] == ("Wound Rolls", "11e")
    # several rules define it: offered in order, the defining rule first
    assert [h.name for h in small_catalog.resolve("T12").candidates[:1]] == ["Wound Rolls"]
    assert "Invulnerable Saves" in [h.name for h in small_catalog.resolve("4++").candidates[:3]]
    assert "Saving Throw" in [h.name for h in small_catalog.resolve("2+ save").candidates[:3]]
