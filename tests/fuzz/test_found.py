"""Regression tests for what the console fuzz (test_console_fuzz.py) found, each through the real tree."""

from __future__ import annotations

from bot.console import ConsoleSession
from tests.fakediscord.validate import choices_problems
from tests.fuzz.harness import _has_surrogate, reply_problems

START = "/game start opponent:222 faction:Leagues of Votann opponent_faction:Orks edition:11e"


def assert_clean(replies) -> None:
    assert replies
    for reply in replies:
        assert reply_problems(reply) == [], (reply.kind, reply.text())


async def test_a_lone_surrogate_in_an_option_is_never_echoed(console: ConsoleSession) -> None:
    """Found: `/sim unit attacker:\\ud800` echoed the surrogate in its refusal, a body Discord cannot take
    (not encodable as UTF-8). Every string option is now cleaned before any command sees it."""
    replies = await console.send("/sim unit attacker:Boyz\ud800 target:\ud800")
    assert_clean(replies)
    assert "\ufffd" in replies[0].text() and replies[0].ephemeral
    await console.send(START)
    refused = await console.send("/judgement add unit:\ud800")
    assert_clean(refused)
    assert refused[0].ephemeral and "Unit name is empty" in refused[0].text()
    choices = await console.autocomplete("/datasheet name:Boy\udfff", "name")
    assert choices and choices_problems(choices) == []
    assert not any(_has_surrogate(c["name"] + str(c["value"])) for c in choices)


async def test_a_pasted_list_with_a_lone_surrogate_is_refused_clearly(console: ConsoleSession) -> None:
    """Found: a lone surrogate in the /army paste form raised UnicodeEncodeError ("Something went wrong")."""
    await console.send(START)
    (form,) = await console.send("/army paste")
    assert form.kind == "modal"
    replies = await console.submit({"army:paste:text": "Boyz (85 points)\ud800\n"})
    assert_clean(replies)
    assert replies[-1].ephemeral and "does not look like an army list" in replies[-1].text()


async def test_the_console_checks_default_permissions_of_the_acting_user(console: ConsoleSession) -> None:
    """Found while fuzzing: `send(line, user=...)` checked the session user's permissions, not the acting one's."""
    console.set_permissions(222, "manage_guild")
    (refused,) = await console.send("/settings edition edition:10e")
    assert refused.kind == "client" and "permission" in refused.content
    (done,) = await console.send("/settings edition edition:10e", user=222)
    assert done.kind == "response" and "10th edition" in done.text()
