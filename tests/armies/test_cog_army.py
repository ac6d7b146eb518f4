"""/army and /unit through the real command tree: a file attachment, a pasted list in a form, autocomplete
that tells units apart, and the board with each unit's state."""

from __future__ import annotations

from pathlib import Path

from bot.console.session import ConsoleSession

FIXTURES = Path(__file__).parent.parent / "fixtures" / "armies"
START = "/game start opponent:222 edition:11e faction:Leagues of Votann opponent_faction:Orks"


async def test_import_a_file_and_undo_it(console: ConsoleSession) -> None:
    await console.send(START)
    replies = await console.send(f"/army import file:@{FIXTURES / 'votann_gw_app.txt'}")
    assert [r.kind for r in replies[:2]] == ["defer", "followup"]
    text = replies[1].text()
    assert "Alice — Leagues of Votann · 1995 pts" in text and "Hearthkyn Warriors #2" in text
    assert "Assumed Kâhl leads Hearthkyn Warriors" in text and not replies[1].ephemeral
    shown = (await console.send("/army show"))[0]
    assert shown.ephemeral and "9/9 units matched to datasheets" in shown.text()
    undo = (await console.send("/game undo"))[0]
    assert "Undo: Alice imports a Leagues of Votann army" in undo.text()
    assert "no army list" in (await console.send("/army show"))[0].text()


async def test_paste_a_list_in_the_form(console: ConsoleSession) -> None:
    await console.send(START)
    (form,) = await console.send("/army paste", user=222)
    assert form.kind == "modal" and form.components[0]["custom_id"] == "army:paste:text"
    replies = await console.send(f":submit army:paste:text=@{FIXTURES / 'orks_gw_wtc.txt'}", user=222)
    assert "Bob — Orks · 1990 pts" in replies[1].text() and "Bob imports a Orks army: 7 units" in replies[1].text()
    choices = await console.autocomplete("/unit damage unit:boy", "unit", user=222)
    assert [c["name"] for c in choices] == ["Weirdboy · 1 model, leads Boyz #1", "Boyz #1 · 10 models",
                                            "Boyz #2 · 10 models", "Boyz #3 · 10 models"]
    asked = (await console.send("/unit damage unit:Boyz wounds:2", user=222))[0]
    assert asked.ephemeral and "Which Boyz?" in asked.text()
    done = (await console.send("/unit damage unit:Boyz #2 wounds:3", user=222))[0]
    assert "Boyz #2: 7/10 models" in done.text()
    board = (await console.send("/game status"))[0].text()
    assert "Army: 7 units, 1990 pts · 1 damaged" in board and "Boyz #2 — 7/10" in board


async def test_refusals_are_clear_and_store_nothing(console: ConsoleSession, tmp_path: Path) -> None:
    no_game = (await console.send(f"/army import file:@{FIXTURES / 'votann_gw_app.txt'}"))[0]
    assert no_game.ephemeral and "game" in no_game.text().lower()
    await console.send(START)
    junk = tmp_path / "notes.txt"
    junk.write_text("Shopping list: milk, paint, more Boyz.\n")
    replies = await console.send(f"/army import file:@{junk}")
    assert replies[-1].ephemeral and "does not look like an army list" in replies[-1].text()
    outsider = (await console.send(f"/army import file:@{FIXTURES / 'votann_gw_app.txt'}", user=333))[0]
    assert outsider.ephemeral and "Only the players" in outsider.text()
    assert console.bot.services.games.require(1001).armies == {}
    missing = (await console.send("/army import file:@/no/such/file.txt"))[0]
    assert missing.kind == "client" and "cannot read" in missing.content


async def test_free_text_still_works_without_lists_and_shows_unlisted(console: ConsoleSession) -> None:
    await console.send(START)
    await console.send("/judgement add unit:Boyz")
    choices = await console.autocomplete("/judgement add unit:bo", "unit")
    assert choices[0] == {"name": "Boyz · unlisted", "value": "Boyz"}
    assert "Boyz (unlisted)" in (await console.send("/game status"))[0].text()


async def test_a_form_opened_before_a_restart_is_answered_after_it(console: ConsoleSession) -> None:
    """Found by the audit: a restart while the /army paste form was open left its submission unanswered and the
    pasted list lost. The form is handled by custom_id, whatever process opened it."""
    await console.send(START)
    (form,) = await console.send("/army paste", user=222)
    assert form.kind == "modal"
    await console.send(":restart")
    replies = await console.send(f":submit army:paste:text=@{FIXTURES / 'orks_gw_wtc.txt'}", user=222)
    assert any("Bob imports a Orks army: 7 units" in r.text() for r in replies)
    assert console.bot.services.games.require(1001).army(1) is not None


async def test_two_open_forms_are_both_answered(console: ConsoleSession) -> None:
    """Both players open the form before either submits: each submission is answered and imports its own list
    (discord.py keeps one form per custom_id; the first submission used to retire it for the other)."""
    await console.send(START)
    await console.send("/army paste", user=111)
    await console.send("/army paste", user=222)
    open_form = console._modal  # the console shows one form at a time; Bob's stays open on his screen
    alice = await console.submit({"army:paste:text": (FIXTURES / "votann_gw_app.txt").read_text()}, user=111)
    console._modal = open_form
    bob = await console.submit({"army:paste:text": (FIXTURES / "orks_gw_wtc.txt").read_text()}, user=222)
    assert any("Alice imports a Leagues of Votann army" in r.text() for r in alice)
    assert any("Bob imports a Orks army" in r.text() for r in bob)


async def test_an_unknown_form_says_to_paste_again(console: ConsoleSession) -> None:
    """A form this version no longer knows (an older release's, renamed since) is answered, never dropped."""
    await console.send(START)
    console._modal = {"custom_id": "army:paste-v0", "components": [
        {"type": 1, "components": [{"type": 4, "custom_id": "army:paste:text", "required": True}]}]}
    replies = await console.submit({"army:paste:text": "Boyz"}, user=222)
    assert replies and replies[-1].ephemeral
    assert "restarted" in replies[-1].text() and "paste" in replies[-1].text().lower()
