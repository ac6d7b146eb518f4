"""/sim unit: datasheets from the real catalog (seed pages + wh40kdc), through the console."""

from __future__ import annotations

import pytest

from bot.console.session import ConsoleSession

STOMPA = "11e:datasheet:seed.orks:stompa"


def answer(replies):
    assert [r.kind for r in replies] == ["defer", "followup"], [r.to_json() for r in replies]
    return replies[1]


def fields(reply) -> dict[str, str]:
    return {f["name"]: f["value"] for f in reply.embeds[0]["fields"]}


async def test_attacker_autocomplete_offers_datasheets(console: ConsoleSession) -> None:
    choices = await console.autocomplete("/sim unit attacker:stom", "attacker")
    assert 1 <= len(choices) <= 25
    # one choice per thing: its primary entry (the complete, most recent source), not the seed page
    assert {"name": "Stompa (Orks, 11e)", "value": "11e:datasheet:wh40kdc.orks:stompa"} in choices
    many = await console.autocomplete("/sim unit attacker:s", "attacker")
    assert len(many) <= 25
    assert all(len(c["name"]) <= 100 and len(c["value"]) <= 100 for c in many)


async def test_target_autocomplete_prefers_the_edition_option(console: ConsoleSession) -> None:
    choices = await console.autocomplete("/sim unit attacker:x edition:10e target:grim", "target")
    assert choices and choices[0]["name"] == "Grimnyr (Leagues of Votann, 10e)"


async def test_weapon_autocomplete_lists_the_loadout_first_then_options(console: ConsoleSession) -> None:
    choices = await console.autocomplete(f"/sim unit attacker:{STOMPA} weapon:", "weapon")
    values = [c["value"] for c in choices]
    assert "Supa-gatler - Aimed" in values and "Supa-gatler - Point Blank" in values and "Mega-choppa" in values
    assert len(choices) <= 25
    typed = await console.autocomplete(f"/sim unit attacker:{STOMPA} weapon:gatler", "weapon")
    assert [c["value"] for c in typed] == ["Supa-gatler - Aimed", "Supa-gatler - Point Blank"]
    boyz = await console.autocomplete("/sim unit attacker:Boyz weapon:", "weapon")
    names = [c["name"] for c in boyz]
    assert boyz and len(boyz) <= 25
    carried = [i for i, n in enumerate(names) if ", option" not in n]
    options = [i for i, n in enumerate(names) if ", option" in n]
    assert carried and options and max(carried) < min(options)  # what the models carry comes first
    assert await console.autocomplete("/sim unit weapon:", "weapon") == []


async def test_stompa_fires_its_loadout_three_big_shootas(console: ConsoleSession) -> None:
    reply = answer(await console.send(f"/sim unit attacker:{STOMPA} target:Boyz"))
    embed = reply.embeds[0]
    assert embed["title"] == "Stompa → Boyz"
    assert "3 × Big Shoota — A 3 · BS 5+ · S 5 · AP 0 · D 1" in embed["description"]
    assert "1 × Deffkannon and Supa-rokkits — A 12 · BS 5+ · S 14 · AP -3 · D D6+2" in embed["description"]
    assert "Point Blank" not in embed["description"] and "Mega-choppa" not in embed["description"]
    values = fields(reply)
    assert values["Expected kills"].endswith("of 10")  # Boyz: the datasheet's minimum
    assert "Supa-gatler: fired as Supa-gatler - Aimed" in values["Notes"]
    assert "3 big shootas" in values["Notes"]  # the loadout correction is stated
    assert embed["footer"] == "11th edition · Seed page: Orks – Stompa + wh40kdc 1.4.5 · exact"
    assert reply.files == ["sim.png"] and reply.file_data["sim.png"].startswith(b"\x89PNG")


async def test_one_weapon_fires_from_the_models_that_carry_it(console: ConsoleSession) -> None:
    reply = answer(
        await console.send(
            "/sim unit attacker:Boyz weapon:Shoota models:20 target:Intercessor Squad target_models:10 "
            "reroll_hits:ones edition:10e"
        )
    )
    embed = reply.embeds[0]
    # 20 Boyz are a Nob and 19 Boys; the Boys carry shootas (wh40kdc loadout), the Nob does not.
    assert "19 × Shoota" in embed["description"] and "10 × Intercessor Squad" in embed["description"]
    assert "hits: re-roll 1s" in embed["description"]
    assert embed["footer"].startswith("10th edition")
    assert fields(reply)["Expected kills"].endswith("of 10")
    assert "Boyz: 11e datasheet used with 10e rules" in fields(reply)["Notes"]


@pytest.mark.parametrize(
    ("line", "field_words"),
    [
        ("/sim unit attacker:qqqzzzxx target:Boyz", "`attacker`"),
        ("/sim unit attacker:Boyz weapon:Shoota target:qqqzzzxx", "`target`"),
        ("/sim unit attacker:Boyz weapon:lascannon target:Intercessor Squad", "no weapon `lascannon`"),
        ("/sim unit attacker:Boyz target:Boyz models:25", "10-20 models, not 25"),
        ("/sim unit attacker:Boyz target:Boyz target_models:5", "10-20 models, not 5"),
        ("/sim unit attacker:Boyz target:Boyz leader:Captain", "Captain may not lead Boyz"),
        ("/sim unit attacker:Intercessor Squad target:Boyz target_leader:Captain", "Warboss"),
        ("/sim unit attacker:Boyz target:Boyz weapon:30x Rokkit Launcha", "at most 1 × Rokkit Launcha"),
        ("/sim unit attacker:Boyz target:Boyz weapon:30x Choppa", "Only 9 models carry Choppa"),
    ],
)
async def test_bad_choices_get_ephemeral_errors(console: ConsoleSession, line: str, field_words: str) -> None:
    replies = await console.send(line)
    assert len(replies) == 1, [r.to_json() for r in replies]
    assert replies[0].ephemeral and replies[0].kind == "response"
    assert field_words in replies[0].embeds[0]["description"]


async def test_force_runs_an_impossible_request_and_says_so(console: ConsoleSession) -> None:
    reply = answer(await console.send("/sim unit attacker:Boyz target:Boyz models:25 leader:Captain force:true"))
    notes = fields(reply)["Notes"]
    assert "Captain leading Boyz is not in the data (forced)" in notes
    assert "25 models is outside the datasheet's 10-20 (forced)" in notes
    assert "24 × Shoota" in reply.embeds[0]["description"]  # 1 Nob + 24 Boys


async def test_wounds_lost_finishes_a_damaged_model_first(console: ConsoleSession) -> None:
    base = "/sim unit attacker:Boyz weapon:Shoota models:10 target:Intercessor Squad target_models:5"
    fresh = fields(answer(await console.send(base)))
    damaged_reply = answer(await console.send(base + " wounds_lost:1"))
    damaged = fields(damaged_reply)
    # One Intercessor (W2) already down a wound dies to any unsaved wound: P(wipe) goes up.
    assert float(damaged["Expected kills"].split("**")[1]) > float(fresh["Expected kills"].split("**")[1])
    assert "one model already down 1 W" in damaged_reply.embeds[0]["description"]
    [error] = await console.send(base + " wounds_lost:2")
    assert error.ephemeral and "`wounds_lost`" in error.embeds[0]["description"]


async def test_a_target_without_a_profile_table_borrows_the_linked_datasheets(console: ConsoleSession) -> None:
    """The Stompa seed page prints no M/T/Sv/W table; the catalog links it to the wh40kdc Stompa."""
    replies = await console.send(f"/sim unit attacker:Boyz weapon:Shoota target:{STOMPA}")
    assert [r.kind for r in replies] == ["defer", "followup"]
    text = replies[-1].text()
    assert "T 14" in text and "W 30" in text


async def test_a_seed_page_loadout_fires_the_witchfire_once(console: ConsoleSession) -> None:
    """The 10e Grimnyr seed page: "1 Grimnyr", "2 CORVs*", "The Grimnyr is equipped with: Ancestral Wrath;
    ancestral ward stave.", "Every CORV is equipped with: Autoch-pattern bolter; close combat weapon."."""
    text = answer(await console.send("/sim unit attacker:10e:datasheet:seed.leagues-of-votann:grimnyr "
                                     "target:Boyz")).text()
    assert "1 × Ancestral Wrath – witchfire" in text and "2 × Autoch-pattern bolter" in text
    assert "composition and loadout text" in text


async def test_faction_option_settles_a_name_several_factions_share(console: ConsoleSession) -> None:
    factions = await console.autocomplete("/sim unit attacker:x target:y faction:grey", "faction")
    assert [c["value"] for c in factions] == ["Grey Knights"]
    line = "/sim unit attacker:Land Raider Crusader target:Boyz"
    (refused,) = await console.send(line)
    assert refused.ephemeral and "Did you mean" in refused.text()
    reply = answer(await console.send(line + " faction:Grey Knights"))
    assert reply.embeds[0]["title"].startswith("Land Raider Crusader → Boyz")
    planner = console.bot.services.sim_planner
    assert planner.datasheet("Land Raider Crusader", "11e", "attacker", "Grey Knights").faction == "Grey Knights"
    assert planner.datasheet("Boyz", "11e", "target", "Grey Knights").faction == "Orks"  # not theirs: as usual
    choices = await console.autocomplete("/sim unit faction:Grey Knights attacker:land raider", "attacker")
    assert choices[0]["name"].startswith("Land Raider") and "Grey Knights" in choices[0]["name"]
    assert any("Adeptus Astartes" in c["name"] for c in choices)  # the other factions' follow
