"""Honest misses on the embedded data (seeds + wh40kdc): a known rule that is not loaded is said to be
missing, with how to load it; answers from the other edition say so in the body."""

from __future__ import annotations

from bot.console.session import ConsoleSession
from tests.catalog.labelled_queries import QUERIES
from tests.catalog.player_queries import PLAYER_QUERIES


def only(replies: list) -> object:
    visible = [r for r in replies if r.embeds or r.content]
    assert len(visible) == 1, visible
    return visible[0]


async def test_fnp_is_known_but_not_loaded(console: ConsoleSession) -> None:
    reply = only(await console.send("/rule query:fnp"))
    embed = reply.embeds[0]
    assert reply.ephemeral and embed["title"] == "Not in the loaded data"
    assert "**Feel No Pain** is a core ability" in embed["description"]
    assert "python -m bot data update" in embed["description"]
    assert not reply.components  # no "did you mean" menu of look-alikes


async def test_a_typo_of_a_known_rule_and_a_detachment_are_honest_too(console: ConsoleSession) -> None:
    # (War Horde used to be a miss here; detachments are entries now: tests/rules/test_detachments.py)
    for line, name in (("/rule query:feel no pian", "Feel No Pain"), ("/rule query:scouts", "Scouts")):
        embed = only(await console.send(line)).embeds[0]
        assert embed["title"] == "Not in the loaded data", line
        assert f"**{name}**" in embed["description"]


async def test_the_other_editions_rule_says_so_in_the_body(console: ConsoleSession) -> None:
    embed = only(await console.send("/rule query:deep strike")).embeds[0]
    assert embed["footer"].startswith("10th edition")
    assert embed["description"].startswith("**10th edition answer:** no 11th edition entry of this name is loaded.")


async def test_an_abbreviation_never_answers_a_look_alike(console: ConsoleSession) -> None:
    """"oc" (objective control) used to answer the Occulus bolt carbine with confidence."""
    embed = only(await console.send("/rule query:oc")).embeds[0]
    assert "Occulus" not in (embed.get("title") or "")


async def test_a_datasheet_query_is_not_answered_with_a_rule_miss(console: ConsoleSession) -> None:
    embed = only(await console.send("/datasheet name:ghaz")).embeds[0]
    assert embed["title"] == "Ghazghkull Thraka"


def test_the_player_set_is_large_and_apart_from_the_tuning_set() -> None:
    assert len(PLAYER_QUERIES) >= 150
    assert len({(q, c) for q, c, *_ in PLAYER_QUERIES}) == len(PLAYER_QUERIES)
    tuning = {q.casefold() for q, *_ in QUERIES}
    overlap = [q for q, *_ in PLAYER_QUERIES if q.casefold() in tuning]
    # players type the common names the same way ("fnp", "blast"); most rows are still new phrasings
    assert len(PLAYER_QUERIES) - len(overlap) >= 100
