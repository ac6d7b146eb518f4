"""The words players put around a name (bot/catalog/context.py): kind, faction, detachment, edition and filler
words at either end are read off; the name is what remains, and the literal query is still searched first."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.catalog.context import Context, named_edition, read_context, without_edition
from bot.catalog.service import Catalog

FACTIONS = {"ec": "emperors children", "emperors children": "emperors children", "nids": "tyranids",
            "guard": "astra militarum", "leagues of votann": "leagues of votann", "votann": "leagues of votann"}
DETACHMENTS = sorted(["green tide", "gladius task force", "war horde", "oathband", "mercenary oathband",
                      "in the emperors name"])


@pytest.mark.parametrize("query, expected", [
    ("thrill seekers ec", Context("thrill seekers", faction="emperors children")),
    ("ghaz stats", Context("ghaz")),
    ("rapid regen strat nids", Context("rapid regen", kind="stratagem", faction="tyranids")),
    ("mob mentality green tide", Context("mob mentality", detachment="green tide")),
    ("combat doctrines gladius", Context("combat doctrines", detachment="gladius")),
    ("get stuck in war horde rule", Context("get stuck in", detachment="war horde")),
    ("mozrog skragbad new edition", Context("mozrog skragbad", edition="11e")),
    ("votann yaegirs", Context("yaegirs", faction="leagues of votann")),
    ("strat tank shock", Context("tank shock", kind="stratagem")),
    # the words joining an edition go with it, and "in the" names no detachment ("in the emperors name")
    ("farseekers rule in the new edition", Context("farseekers", edition="11e")),
    ("the avatar of khaine", Context("avatar of khaine")),
    # what is left names a detachment of its own: "oathband" is not read off "mercenary oathband"
    ("mercenary oathband rule", Context("mercenary oathband")),
    ("brandfast oathband", Context("brandfast", detachment="oathband")),
])
def test_the_words_around_a_name_are_read_off(query: str, expected: Context) -> None:
    assert read_context(query, FACTIONS, DETACHMENTS) == expected


@pytest.mark.parametrize("query", ["custodian guard", "stats", "guard", "war", "the tide", "lethal hits"])
def test_a_name_is_never_emptied_and_short_words_are_no_detachment(query: str) -> None:
    context = read_context(query, FACTIONS, DETACHMENTS)
    assert context.name and set(context.name.split()) <= set(query.split())
    assert context.detachment is None


@given(st.lists(st.sampled_from(["ec", "stats", "strat", "rule", "new", "edition", "green", "tide", "x", "y"]),
                max_size=12))
def test_any_words_leave_a_name_made_of_them(words: list[str]) -> None:
    context = read_context(" ".join(words), FACTIONS, DETACHMENTS)
    assert (context.name == "") == (not words)
    assert f" {context.name} " in f" {' '.join(words)} "  # a run of the query's own words, in order


def test_editions_named_in_words() -> None:
    assert named_edition("tank shock 10th") == "10e"
    assert named_edition("sagitaur new edition") == "11e"
    assert named_edition("old ed overwatch") == "10e"
    assert named_edition("overwatch") is None


def test_edition_words_are_taken_off_a_name_one_way() -> None:
    """score, readings and fits_context (bot/catalog/search.py) all read a query's name through this."""
    assert without_edition("blast 10e") == ("blast", "10e")
    assert without_edition("11th strat reserves 10e") == ("strat reserves", "11e")  # the first one named
    assert without_edition("lethal hits") == ("lethal hits", None)
    assert without_edition("mercenary oathband rule in 11e") == ("mercenary oathband rule", "11e")
    assert without_edition("get stuck in") == ("get stuck in", None)  # "in" joins no edition here
    assert without_edition("10e") == ("10e", None)  # nothing but an edition: kept as the name searched
    assert without_edition("") == ("", None)


def test_on_the_small_catalog(small_catalog: Catalog) -> None:
    """The name without the words around it is answered outright; the literal query keeps its own name."""
    for query, name, edition in (("auric mantle custodes", "Auric Mantle", "10e"),
                                 ("auric mantle stats", "Auric Mantle", "10e"),
                                 ("shield host custodes", "Shield Host", "10e"),
                                 ("stompa points", "Stompa", "11e"),
                                 ("war horde orks", "War Horde", "11e"),
                                 ("war horde rule in 11e", "War Horde", "11e"),
                                 ("stompa in the new edition", "Stompa", "11e"),
                                 ("custodian guard", "Custodian Guard", "11e")):
        resolution = small_catalog.resolve(query)
        assert resolution.confident and resolution.best is not None, query
        assert (resolution.best.name, resolution.best.edition) == (name, edition), query
    # a faction named around the name that is not the answer's: offered, never claimed
    assert not small_catalog.resolve("auric mantle nids").confident
