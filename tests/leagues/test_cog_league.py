"""Leagues through the real command tree (the console), on both backends: a season from /league create to a
voided result, the Confirm button across a restart, and every refusal of the issue's bad-input list."""

from __future__ import annotations

import json
import re

from bot.console.interaction import Reply
from bot.console.session import ConsoleSession

ALICE, BOB, CAROL, DAVE = 111, 222, 333, 444


async def ok(console: ConsoleSession, line: str, user: int = ALICE) -> Reply:
    replies = await console.send(line, user=user)
    assert replies and not replies[0].ephemeral, f"{line!r}: {replies and replies[0].text()}"
    return replies[0]


async def refused(console: ConsoleSession, line: str, pattern: str, user: int = ALICE) -> Reply:
    replies = await console.send(line, user=user)
    assert replies and replies[0].ephemeral, f"{line!r} was not refused: {replies and replies[0].text()}"
    assert re.search(pattern, replies[0].text()), f"{line!r}: {replies[0].text()!r} !~ {pattern!r}"
    return replies[0]


async def play_game(console: ConsoleSession, opponent: int = BOB, *, vp: int = 30, end: str = "/game end") -> list[Reply]:
    """Alice (Orks) against `opponent` (Necrons): Alice scores `vp`, then `end` (typed by Alice)."""
    await ok(console, f"/game start opponent:{opponent} edition:10e faction:Orks opponent_faction:Necrons")
    if vp:
        await ok(console, f"/vp add amount:{vp}")
    return await console.send(end, user=ALICE)


def followup(replies: list[Reply]) -> Reply:
    return next(r for r in replies if r.kind == "followup")


def table(console: ConsoleSession, league: str = "Autumn League") -> dict:
    services = console.bot.services
    from bot.leagues.export import export_league

    found = services.leagues.find(501, league)
    return export_league(found, services.leagues.members(found), services.leagues.results(found))


async def test_a_season(console: ConsoleSession) -> None:
    console.names.update({CAROL: "Carol", DAVE: "Dave"})
    console.set_permissions(ALICE, "manage_guild")
    await ok(console, "/league create name:Autumn League battle_size:Strike Force season_end:2099-12-31")
    for user in (ALICE, BOB, CAROL):
        await ok(console, "/league join faction:Orks", user=user)
    await refused(console, "/league join", "already in Autumn League", user=BOB)
    await ok(console, "/league channel")

    replies = await play_game(console)
    offer = followup(replies)
    assert not offer.ephemeral and "Result #1" in offer.content and "Bob confirms" in offer.content
    assert offer.components[0]["custom_id"] == "league:confirm:1"
    assert table(console)["players"][0]["games"] == 0  # pending: not counted yet

    await refused(console, "/league confirm result:1", "You put this result forward", user=ALICE)
    await console.send(":click league:confirm:1", user=ALICE)
    assert table(console)["results"][0]["status"] == "pending"
    await console.restart()  # the button outlives the process that drew it
    pressed = await console.click("league:confirm:1", user=BOB)
    assert pressed[0].kind == "update" and "Confirmed by Bob" in pressed[0].content
    await refused(console, "/league confirm result:1", "already confirmed", user=BOB)

    data = table(console)
    assert [(p["name"], p["games"], p["wins"], p["losses"], p["rating"]) for p in data["players"]] == [
        ("Alice", 1, 1, 0, 1516.0), ("Bob", 1, 0, 1, 1484.0), ("Carol", 0, 0, 0, 1500.0)]
    result = data["results"][0]
    assert (result["winner"], result["vp"], result["factions"], result["battle_size"]) == (
        ALICE, {"111": 30, "222": 0}, {"111": "Orks", "222": "Necrons"}, "Strike Force")
    assert result["vp_by_category"]["111"] == {"primary": 0, "secondary": 0, "other": 30}
    assert result["link"] == "https://discord.com/channels/501/1001"

    shown = await ok(console, "/league table", user=CAROL)
    assert shown.files == ["league-table.png"] and shown.file_data["league-table.png"][:8] == b"\x89PNG\r\n\x1a\n"
    assert "1. Alice (Orks): 1 game, 1-0-0 W-D-L, VP 30 for 0 against, rating 1516" in shown.text()
    stats = await ok(console, "/league stats faction:necrons")
    assert "Necrons**: 1 game, win rate 0%" in stats.text()
    marked = await ok(console, "/league stats faction:**Orks** @everyone")
    assert marked.embeds[0]["title"] == "Autumn League: statistics of \\*\\*Orks\\*\\* @\u200beveryone"
    card = await ok(console, f"/league player user:{BOB}")
    assert card.files == ["rating-history.png"] and "1500 → 1484" in card.text()

    # A void needs Manage Server; it is logged with its reason and the table re-folds.
    await refused(console, "/league void result:1 reason:wrong score", "Manage Server", user=BOB)
    await ok(console, "/league void result:1 reason:wrong score")
    assert [p["games"] for p in table(console)["players"]] == [0, 0, 0]
    assert [p["rating"] for p in table(console)["players"]] == [1500.0] * 3
    # What the commands drew before the void is not shown again (their caches are keyed by the league's log).
    assert "Alice (Orks): 0 games" in (await ok(console, "/league table", user=CAROL)).text()
    assert "No confirmed games" in (await ok(console, "/league stats faction:Necrons")).text()
    log = console.bot.services.leagues.log(console.bot.services.leagues.find(501, "Autumn League"))
    assert log[-1]["type"] == "void" and log[-1]["data"] == {"result_id": 1, "reason": "wrong score"}
    assert log[-1]["actor_user"] == ALICE
    await refused(console, "/league confirm result:1", "voided", user=BOB)

    # The same game can't be put forward twice (it counted once, or was voided).
    await refused(console, "/league void result:1 reason:again", "already void")


async def test_refusals(console: ConsoleSession) -> None:
    console.names.update({CAROL: "Carol", DAVE: "Dave"})
    console.set_permissions(ALICE, "manage_guild")
    await refused(console, "/league join", "no league yet")
    await refused(console, "/league create name:Nope", "Manage Server", user=BOB)
    await refused(console, "/league create name:" + "x" * 2000, "too long: at most 40")
    await refused(console, "/league create name:@everyone league", "mention")
    await refused(console, f"/league create name:<@{BOB}> fans", "mention")
    await refused(console, "/league create name:bad\ud800name", "lone surrogate")
    await refused(console, "/league create name:a\u202eb", "control or invisible")
    await refused(console, "/league create name:x season_end:31/12/2026", "YYYY-MM-DD")
    await refused(console, "/league table", "no league yet")

    await ok(console, "/league create name:Autumn League")
    await ok(console, "/league create name:Winter League")
    await refused(console, "/league create name:autumn  LEAGUE", "already has a league called")
    await refused(console, "/league join", "several leagues: name one")
    await ok(console, "/league join league:Autumn League")
    await ok(console, "/league join league:Autumn League", user=BOB)
    await ok(console, "/league join league:Winter League", user=BOB)

    # A game between players who are not both in the league: the game ends, the result is refused.
    replies = await play_game(console, DAVE, end="/game end league:Autumn League")
    assert not replies[0].ephemeral and "Alice wins" in replies[0].text()
    note = followup(replies)
    assert note.ephemeral and "Dave is not in Autumn League" in note.text()
    replies = await play_game(console, BOB, end="/game end league:Winter League")
    assert "Alice is not in Winter League" in followup(replies).text()

    # An abandoned game never counts.
    replies = await play_game(console, BOB, end="/game end abandon:true league:Autumn League")
    assert followup(replies).ephemeral and "abandoned game never counts" in followup(replies).text()

    replies = await play_game(console, BOB, end="/game end league:Autumn League")
    assert "Result #1" in followup(replies).content
    await refused(console, "/league confirm result:1 league:Winter League", "belongs to Autumn League", user=BOB)
    await refused(console, "/league confirm result:1", "Only the players", user=CAROL)
    await refused(console, "/league confirm result:99", "no result #99")
    await ok(console, "/league confirm result:1", user=BOB)
    await refused(console, "/league confirm result:1", "already confirmed", user=BOB)
    assert [p["games"] for p in table(console)["players"]] == [1, 1]

    await ok(console, "/league close league:Winter League")
    await refused(console, "/league join league:Winter League", "closed", user=CAROL)
    await refused(console, "/league close league:Nowhere", "no league called Nowhere")
    for reply in await console.send("/league create name:\udbff\udbff"):
        json.dumps(reply.to_json(), ensure_ascii=False).encode("utf-8")  # nothing unencodable goes to Discord
