"""/strat use searches like /rule: abbreviations and spellings players type resolve to the catalog stratagem."""

from __future__ import annotations

from bot.console.session import ConsoleSession

START = "/game start opponent:222 edition:11e faction:Orks opponent_faction:Leagues of Votann starting_cp:3"


async def test_crr_and_command_reroll_are_accepted_and_autocompleted(console: ConsoleSession) -> None:
    await console.send(":as 111")
    await console.send(START)
    choices = await console.autocomplete("/strat use name:crr", "name")
    assert choices and choices[0]["name"].startswith("Command Re-roll")
    replies = await console.send("/strat use name:CRR")
    text = " ".join(e.get("description") or "" for r in replies for e in r.embeds) + " ".join(
        r.content for r in replies)
    assert "uses Command Re-roll for 1CP" in text
    replies = await console.send("/strat use name:command reroll")
    text = " ".join(r.content for r in replies) + " ".join(e.get("description") or "" for r in replies
                                                           for e in r.embeds)
    assert "already used Command Re-roll" in text  # found by name; refused only by the once-per-phase rule
