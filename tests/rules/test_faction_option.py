"""faction: narrows /rule, /datasheet and /stratagem to one army, with autocomplete of the factions."""

from __future__ import annotations

from bot.console.session import ConsoleSession


async def test_faction_picks_one_of_two_distinct_datasheets(console: ConsoleSession) -> None:
    (reply,) = [r for r in await console.send("/datasheet name:land raider crusader faction:Grey Knights")
                if r.embeds]
    embed = reply.embeds[0]
    assert embed["title"] == "Land Raider Crusader"
    assert any("Faction: Grey Knights" in f["value"] for f in embed["fields"])


async def test_faction_autocomplete_lists_matching_factions(console: ConsoleSession) -> None:
    choices = await console.autocomplete("/stratagem name:armour faction:grey", "faction")
    assert {"name": "Grey Knights", "value": "Grey Knights"} in choices
    assert all("grey" in c["name"].casefold() for c in choices)
