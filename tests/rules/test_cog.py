"""/rule, /datasheet, /stratagem and /settings edition through the real command tree (console harness)."""

from __future__ import annotations

import re

import pytest

from bot.console.session import ConsoleSession


def only(replies: list) -> object:
    assert len(replies) == 1, [r.to_json() for r in replies]
    return replies[0]


async def test_confident_match_answers_directly_with_edition_and_source(console: ConsoleSession) -> None:
    reply = only(await console.send("/rule query:lethal hits"))
    assert reply.kind == "response" and not reply.ephemeral
    embed = reply.embeds[0]
    assert embed["title"] == "24.23 Lethal Hits"
    assert "automatically wound the target" in embed["description"]
    assert embed["footer"].startswith("11th edition · Seed page: Orks – Stompa")
    old = only(await console.send("/rule query:lethal hits edition:10e")).embeds[0]
    assert old["footer"].startswith("10th edition · ") and "automatically wounds the target" in old["description"]


async def test_abbreviations_and_typos(console: ConsoleSession) -> None:
    assert only(await console.send("/rule query:dev wounds")).embeds[0]["title"].endswith("Devastating Wounds")
    # a numbered core stratagem's title carries its number, as a core rule's does
    assert only(await console.send("/stratagem name:CRR")).embeds[0]["title"] == "15.02 Command Re-roll"
    sheet = only(await console.send("/datasheet name:stompa"))
    assert sheet.embeds[0]["title"] == "Stompa"


async def test_autocomplete_shows_edition_and_answers_by_id(console: ConsoleSession) -> None:
    choices = await console.autocomplete("/rule query:leth", "query")
    assert 0 < len(choices) <= 25
    assert all(re.search(r" · (10e|11e) · ", c["name"]) for c in choices)
    assert choices[0]["name"].startswith("Lethal Hits · 11e")
    reply = only(await console.send(f"/rule query:{choices[0]['value']}"))
    assert reply.embeds[0]["title"].endswith("Lethal Hits")
    tenth = await console.autocomplete("/rule query:leth edition:10e", "query")
    assert tenth and all(" · 10e · " in c["name"] for c in tenth)
    many = await console.autocomplete("/datasheet name:a", "name")
    assert len(many) == 25 and all(" · Datasheet" in c["name"] for c in many)
    assert len(await console.autocomplete("/stratagem name:", "name")) <= 25


async def test_ambiguous_query_offers_a_picker_only_the_asker_can_use(console: ConsoleSession) -> None:
    reply = only(await console.send("/stratagem name:command re-roll edition:10e"))
    assert reply.embeds[0]["title"] == "Did you mean…"
    select = reply.components[0]
    assert select["type"] == "select" and select["custom_id"] == f"rules:pick:{console.user_id}"
    values = [o["value"] for o in select["options"]]
    assert "10e:stratagem:seed.core:command-re-roll" in values
    assert "10e:stratagem:seed.boarding-actions:command-re-roll" in values
    refused = only(await console.click(select["custom_id"], values=[values[0]], user=222))
    assert refused.ephemeral and "Only the person who asked" in refused.content
    chosen = only(await console.click(select["custom_id"], values=["10e:stratagem:seed.core:command-re-roll"]))
    assert chosen.kind == "update" and chosen.embeds[0]["title"] == "Command Re-roll"
    assert "Core – Battle Tactic" not in chosen.embeds[0]["description"]  # the page's header line is not text
    assert chosen.embeds[0]["description"].startswith("**1CP** · Battle Tactic · Core")


async def test_long_text_paginates_with_buttons(console: ConsoleSession) -> None:
    reply = only(await console.send("/rule query:leader edition:10e"))
    embed = reply.embeds[0]
    assert embed["footer"].endswith("page 1/2")
    buttons = {c["label"]: c for c in reply.components}
    assert buttons["◀ Previous"]["disabled"] and not buttons["Next ▶"]["disabled"]
    turned = only(await console.click(buttons["Next ▶"]["custom_id"], user=222))  # anyone may read on
    assert turned.kind == "update" and turned.embeds[0]["footer"].endswith("page 2/2")
    assert turned.embeds[0]["description"] != embed["description"]
    await console.restart()  # the buttons carry their state in the custom_id
    back = next(c for c in turned.components if c["label"] == "◀ Previous")
    again = only(await console.click(back["custom_id"]))
    assert again.embeds[0]["footer"].endswith("page 1/2")


async def test_datasheet_tables_fit_a_phone(console: ConsoleSession) -> None:
    reply = only(await console.send("/datasheet name:grimnyr edition:10e"))
    embed = reply.embeds[0]
    assert embed["footer"] == "10th edition · Seed page: Leagues of Votann – Grimnyr"
    table = embed["description"]
    assert table.startswith("```") and "Grimnyr" in table and "Corv" in table
    assert all(len(line) <= 36 for line in table.splitlines())
    fields = {f["name"]: f["value"] for f in embed["fields"]}
    assert "Ancestral Wrath – focused witchfire** [HAZARDOUS, PSYCHIC]" in fields["Ranged weapons"]
    assert '`  24" A6 BS2+ S6 AP-2 D D3`' in fields["Ranged weapons"]
    assert "Melee" in fields["Melee weapons"]
    assert "Points (Seed page: Leagues of Votann – Grimnyr): 3 models: 65" in fields["Unit"]
    assert "PSYKER" in fields["Keywords"]
    stompa = only(await console.send("/datasheet name:stompa edition:11e")).embeds[0]
    ranged = next(f["value"] for f in stompa["fields"] if f["name"] == "Ranged weapons")
    assert "LETHAL HITS: non-MONSTER/VEHICLE, SUSTAINED HITS 1" in ranged


async def test_no_match_is_ephemeral_with_suggestions(console: ConsoleSession) -> None:
    reply = only(await console.send("/rule query:zzqqxxv"))
    assert reply.ephemeral and reply.embeds[0]["title"] == "No match"
    near = only(await console.send("/datasheet name:grimmmnyyyrr stompy"))
    assert near.ephemeral or near.embeds[0]["title"] in ("Did you mean…", "Grimnyr", "Stompa")


@pytest.mark.parametrize("query", [
    "'; DROP TABLE entries; --", "🙂🙂🙂", "\x01\x02", "x" * 10_000, "NEAR(lethal hits)", "\"unterminated",
    "lethal* AND NOT hits", "*", "<@111> @everyone",
])
async def test_hostile_queries_get_a_friendly_answer(console: ConsoleSession, query: str) -> None:
    for reply in await console.send(f"/rule query:{query}"):
        text = reply.text()
        assert "Something went wrong" not in text
        assert "@everyone" not in text or "\\@everyone" in text or "@\u200beveryone" in text
        assert reply.kind in ("response", "client")


async def test_settings_edition_needs_manage_server_and_changes_the_default(console: ConsoleSession) -> None:
    refused = only(await console.send("/settings edition edition:10e"))
    assert refused.ephemeral
    console.set_permissions(console.user_id, "manage_guild")
    done = only(await console.send("/settings edition edition:10e"))
    assert not done.ephemeral and "10th edition" in done.embeds[0]["description"]
    reply = only(await console.send("/rule query:lethal hits"))
    assert reply.embeds[0]["footer"].startswith("10th edition")
    choices = await console.autocomplete("/rule query:leth", "query")
    assert choices[0]["name"].startswith("Lethal Hits · 10e")
    await console.restart()
    assert only(await console.send("/rule query:lethal hits")).embeds[0]["footer"].startswith("10th edition")


async def test_empty_table_links_to_the_complete_rule(imports_console: ConsoleSession) -> None:
    reply = only(await imports_console.send("/rule query:11e:rule:seed.core:wound-roll"))
    embed = reply.embeds[0]
    assert "empty in the source page" in embed["description"]
    assert "05.02 Wound Rolls" in embed["fields"][0]["value"]
    button = next(c for c in reply.components if c["label"] == "Show complete rule")
    shown = only(await imports_console.click(button["custom_id"]))
    assert shown.ephemeral and shown.embeds[0]["title"] == "05.02 Wound Rolls"
    assert "TWICE (or more than twice)" in shown.embeds[0]["description"]
    assert shown.embeds[0]["footer"].startswith("11th edition · game-datacards core rules")


async def test_an_id_of_another_kind_is_read_as_text(console: ConsoleSession) -> None:
    replies = await console.send("/datasheet name:11e:rule:seed.core:lethal-hits")
    assert all(r.embeds[0].get("title") != "24.23 Lethal Hits" for r in replies if r.embeds)


async def test_metadata_only_answer_points_to_the_full_text(console: ConsoleSession) -> None:
    reply = only(await console.send("/stratagem name:fire overwatch edition:11e"))
    embed = reply.embeds[0]
    assert embed["footer"].startswith("11th edition · wh40kdc")
    assert "metadata only" in embed["description"]
    field = next(f for f in embed["fields"] if f["name"] == "Full text")
    assert "edition:10e" in field["value"]


async def test_a_datasheet_without_profiles_links_to_a_full_one(console: ConsoleSession) -> None:
    """The seed page prints no profile table; the Stompa is one thing with wh40kdc's complete datasheet,
    which is shown, and the seed page is listed among its sources."""
    reply = only(await console.send("/datasheet name:stompa edition:11e"))
    embed = reply.embeds[0]
    assert embed["footer"].startswith("11th edition · wh40kdc")
    assert "30  6+ 12" in embed["description"]  # W 30, Ld 6+, OC 12
    sources = next(f["value"] for f in embed["fields"] if f["name"] == "Sources")
    assert "Seed page: Orks – Stompa" in sources and "wh40kdc" in sources
    button = next(c for c in reply.components if c["label"] == "Show full datasheet") \
        if any(c.get("label") == "Show full datasheet" for c in reply.components) else None
    assert button is None  # nothing more complete to point to


async def test_an_empty_table_points_to_the_other_editions_complete_rule(imports_console: ConsoleSession) -> None:
    """The 10e seed's wound table is empty and no 10e source has it: point to the 11e rule, never copy it."""
    (reply,) = await imports_console.send("/rule query:wound roll edition:10e")
    embed = reply.embeds[0]
    assert embed["footer"].startswith("10th edition")
    fields = {f["name"]: f["value"] for f in embed["fields"]}
    assert "edition:11e" in fields["Full table"] and "game-datacards" in fields["Full table"]
    assert "2+" not in (embed["description"] or "")  # nothing invented in the 10e text


async def test_fire_overwatch_prints_its_cost_once(console: ConsoleSession) -> None:
    for line in ("/stratagem name:fire overwatch", "/stratagem name:fire overwatch edition:10e"):
        embed = only(await console.send(line)).embeds[0]
        assert embed["title"] == "Fire Overwatch"
        assert embed["description"].count("1CP") == 1, embed["description"]


async def test_grimnyr_composition_and_loadout_are_separate_lines(console: ConsoleSession) -> None:
    embed = only(await console.send("/datasheet name:grimnyr edition:10e")).embeds[0]
    unit = next(f["value"] for f in embed["fields"] if f["name"] == "Unit")
    assert ".;" not in unit
    assert "▪ 2 CORVs*\n▪ The Grimnyr is equipped with: Ancestral Wrath; ancestral ward stave.\n▪ Every CORV" in unit


async def test_stompa_page_without_a_table_shows_the_linked_profiles(console: ConsoleSession) -> None:
    embed = only(await console.send("/datasheet name:stompa edition:11e")).embeds[0]
    assert "prints no profile table" not in embed["description"]
    assert embed["description"].startswith("```") and " 30 " in embed["description"].split("```")[1]
    # the seed page itself, asked by id, borrows the linked table and says whose it is
    seed = only(await console.send("/datasheet name:11e:datasheet:seed.orks:stompa")).embeds[0]
    assert "prints no profile table" not in seed["description"] and " 30 " in seed["description"]
    assert "*Profiles from wh40kdc" in seed["description"] and "this page prints none.*" in seed["description"]
