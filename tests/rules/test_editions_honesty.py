"""Editions and honesty (issue 21, item 6): a query naming an edition gets that edition or is told it is not
loaded and how to load it; on the embedded data a rule number, core-rules shorthand or question the full data
would answer says so with `data update`, never a silent "No match"; a question is never answered with a guess."""

from __future__ import annotations

from bot.console.session import ConsoleSession
from bot.render.answers import ANSWER_FOOTER


def only(replies: list) -> dict:
    visible = [r for r in replies if r.embeds or r.content]
    assert len(visible) == 1, visible
    return visible[0].embeds[0]


async def test_a_rule_number_on_the_embedded_data_says_the_core_rules_are_not_loaded(console: ConsoleSession) -> None:
    for line, name in (("/rule query:19.02", "Rule 19.02"), ("/rule query:rule 13.08", "Rule 13.08"),
                       ("/rule query:core 24.33", "Rule 24.33")):
        embed = only(await console.send(line))
        assert embed["title"] == "Not in the loaded data", line
        assert f"**{name}** is a core rules number of the 11th edition" in embed["description"]
        assert "python -m bot data update" in embed["description"]


async def test_core_rules_shorthand_on_the_embedded_data_says_so_too(console: ConsoleSession) -> None:
    embed = only(await console.send("/rule query:T12"))
    assert embed["title"] == "Not in the loaded data"
    assert "**Toughness 12** is a term of the 11th-edition core rules (05.02, 02.02)" in embed["description"]


async def test_an_edition_named_in_the_query_that_is_not_loaded_is_said(console: ConsoleSession) -> None:
    embed = only(await console.send("/rule query:tank shock 10e"))
    assert embed["footer"].startswith("11th edition")
    assert embed["description"].startswith("**11th edition answer:** no 10th edition entry of this name is loaded.")
    assert "python -m bot import wahapedia FOLDER" in embed["description"]
    embed = only(await console.send("/rule query:deep strike 11e"))
    assert embed["footer"].startswith("10th edition")
    assert "no 11th edition entry of this name is loaded" in embed["description"]
    assert "python -m bot data update" in embed["description"]


async def test_a_question_is_answered_from_the_rules_text_and_says_the_data_is_partial(
        console: ConsoleSession) -> None:
    """It used to answer a Thousand Sons stratagem that mentions falling back, with confidence; now it quotes the
    Fall Back rule of the seed pages in the server's edition (11e), lists the 10e one, and says the complete rules
    are not loaded."""
    reply = [r for r in await console.send("/rule query:can i shoot after falling back") if r.embeds][0]
    embed = reply.embeds[0]
    assert embed["footer"].startswith(ANSWER_FOOTER)
    assert "**09.07 Fall-back Move** · Rule · 11th edition" in embed["description"]
    assert "A unit cannot shoot or declare a charge in the same turn" in embed["description"]
    assert "Fall Back Moves (Rule, 10e)" in next(f["value"] for f in embed["fields"] if f["name"] == "Related")
    assert "python -m bot data update" in embed["description"]


async def test_a_question_on_the_complete_rules_cites_numbers_and_names_still_answer_as_before(
        imports_console: ConsoleSession) -> None:
    replies = await imports_console.send("/rule query:can i shoot after falling back?")
    reply = [r for r in replies if r.embeds][0]
    embed = reply.embeds[0]
    assert "**09.07 Fall-back Move** · Rule · 11th edition" in embed["description"]
    assert "data update" not in embed["description"]
    menu = [c for c in reply.components if c.get("type") == "select"][0]
    assert any(o["value"].startswith("11e:rule:") and o["value"].endswith(":fall-back-move") for o in menu["options"])
    embed = only(await imports_console.send("/rule query:lethal hits"))
    assert embed["title"] == "24.23 Lethal Hits"


async def test_no_match_on_the_embedded_data_is_never_silent(console: ConsoleSession) -> None:
    embed = only(await console.send("/rule query:99.99"))
    assert embed["title"] in ("No match", "Not in the loaded data")
    assert "python -m bot data update" in embed["description"]


async def test_with_the_complete_rules_loaded_numbers_answer_and_misses_add_no_hint(
        imports_console: ConsoleSession) -> None:
    embed = only(await imports_console.send("/rule query:core 09.07"))
    assert embed["title"].startswith("09.07 ") and embed["footer"].startswith("11th edition")
    embed = only(await imports_console.send("/rule query:99.99"))
    assert embed["title"] == "No match" and "data update" not in embed["description"]


async def test_a_word_no_name_comes_close_to_gets_the_closest_rules_not_no_match(
        imports_console: ConsoleSession) -> None:
    """"woods": no entry is named anything like it, but 13.05 Dense (terrain) holds the word ("woods" via the
    rules' words); with the complete rules loaded it is offered as the closest rule, unsure, instead of a silent
    No match. Words nothing holds still get No match."""
    embed = only(await imports_console.send("/rule query:woods"))
    assert "not sure" in embed["description"] and "13.05 Dense" in embed["description"]
    assert only(await imports_console.send("/rule query:zzqqxxv"))["title"] == "No match"


async def test_a_question_typed_without_a_question_word_is_answered_from_the_rules(
        imports_console: ConsoleSession) -> None:
    """"shooting after fall back" has no "?" and no question word: it went to the name search, whose menu offered
    entries sharing a word. It names no entry outright and reads as none of the candidates' names, so it is
    answered from the rules text; a misspelt name still gets the name search."""
    replies = await imports_console.send("/rule query:shooting after fall back")
    embed = [r for r in replies if r.embeds][0].embeds[0]
    assert embed["footer"].startswith(ANSWER_FOOTER)
    assert "**09.07 Fall-back Move** · Rule · 11th edition" in embed["description"]
    embed = only(await imports_console.send("/rule query:lethal hitz"))
    assert not (embed.get("footer") or "").startswith(ANSWER_FOOTER)
    assert "Lethal Hits" in (embed.get("title") or "") + (embed.get("description") or "")
