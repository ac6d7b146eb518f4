"""Regression tests for what the console fuzz (test_console_fuzz.py) found, each through the real tree."""

from __future__ import annotations

from bot.console.session import ConsoleSession
from tests.fakediscord.validate import choices_problems
from tests.fuzz.harness import FIXTURES, _has_surrogate, reply_problems

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


async def test_every_unit_of_an_imported_list_can_be_named_in_a_command(console: ConsoleSession, tmp_path) -> None:
    """Found: a list's unit names were kept as written, so a name with a bidi override or a zero-width mark
    (which typed names lose) or longer than the tracker's 80 characters was imported but could never be
    damaged, destroyed or attached: even the bot's own autocomplete choice was refused."""
    from tests.fuzz import hostile

    text = (FIXTURES / "votann_gw_app.txt").read_text(encoding="utf-8")
    names = ["\u202eK\u00e2hl\u200b", "W" * 5000, "Grim\ufeffnyr", "@everyone <@&1> ```"]
    listed = tmp_path / "list.txt"
    listed.write_text(hostile._inject((text, names, None, None)), encoding="utf-8")
    await console.send(START)
    imported = await console.send(f"/army import file:@{listed}")
    assert_clean(imported)
    assert "kept as" in imported[1].text()  # the changed names are reported
    choices = await console.autocomplete("/unit destroyed unit:", "unit")
    assert len(choices) >= 8
    for choice in choices:
        replies = await console.send(f"/unit destroyed unit:{choice['value']}")
        assert_clean(replies)
        assert not replies[0].ephemeral, (choice, replies[0].text())


async def test_oathband_destroyed_offers_only_units_it_accepts(console: ConsoleSession) -> None:
    """Found: /oathband destroyed offered both players' units, and an own unit chosen without mine:true was
    refused as "not in Bob's army list". It now offers the side `mine` names (default: the enemy's)."""
    await console.send(START)
    await console.send(f"/army import file:@{FIXTURES / 'votann_gw_app.txt'}")
    await console.send(f"/army import file:@{FIXTURES / 'orks_gw_wtc.txt'}", user=222)
    enemy = await console.autocomplete("/oathband destroyed unit:", "unit")
    own = await console.autocomplete("/oathband destroyed mine:true unit:", "unit")
    assert enemy and own and {c["value"] for c in enemy}.isdisjoint({c["value"] for c in own})
    assert any(c["value"].startswith("Boyz") for c in enemy) and any(c["value"] == "Kâhl" for c in own)
    for line in (f"/oathband destroyed unit:{enemy[0]['value']}", f"/oathband destroyed unit:{own[0]['value']} mine:true"):
        replies = await console.send(line)
        assert_clean(replies)
        assert not replies[0].ephemeral, (line, replies[0].text())


async def test_an_entry_id_of_the_other_edition_is_looked_up_by_its_name(console: ConsoleSession) -> None:
    """Found: an autocomplete id picked before `edition:` was changed was read as text, so the answer was
    "Nothing in the catalog matches **11e:rule:seed.core:lethal-hits**" (a raw id, and no answer)."""
    (choice, *_) = await console.autocomplete("/rule edition:11e query:lethal hits", "query")
    assert choice["value"].startswith("11e:rule:")
    replies = await console.send(f"/rule query:{choice['value']} edition:10e")
    assert_clean(replies)
    answer = replies[0]
    assert not answer.ephemeral and answer.embeds[0]["title"] == "Lethal Hits"
    assert "10th edition" in (answer.embeds[0]["footer"] or ""), answer.embeds[0]["footer"]
