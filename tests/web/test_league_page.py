"""`/league overlay`: the league table page over real sockets and in Debian's headless Chromium, on both
backends. Same security as game links: unguessable hashed tokens, only members with Manage Server make or
revoke them, unknown and revoked links answer the same 404, strict headers, names shown as text only, and a
revoked link's open page clears itself."""

from __future__ import annotations

import re

import aiohttp

from bot.console.session import ConsoleSession
from bot.web.server import SECURITY_HEADERS
from tests.web.conftest import ALICE, BOB, open_page

LEAGUE_LINK = re.compile(r"http://127\.0\.0\.1:\d+/l/[A-Za-z0-9_-]{43}/")
HOSTILE = "<b>Bobby</b> @everyone"


async def _send(console: ConsoleSession, line: str, user: int = ALICE) -> str:
    """Run a line; a public answer is expected, except from /league overlay (always only for the asker)."""
    replies = await console.send(line, user=user)
    assert replies and replies[0].ephemeral == line.startswith("/league overlay"), replies[0].text()
    return replies[0].text()


async def _league_with_link(console: ConsoleSession) -> str:
    console.names[BOB] = HOSTILE
    console.set_permissions(ALICE, "manage_guild")
    await _send(console, "/league create name:Autumn League")
    await _send(console, "/league join faction:Orks")
    await _send(console, "/league join faction:Necrons", user=BOB)
    text = await _send(console, "/league overlay", user=BOB)
    assert "Manage Server" in text
    text = await _send(console, "/league overlay")
    found = LEAGUE_LINK.search(text)
    assert found, text
    return found.group(0)


async def test_league_links_over_http(web_console: ConsoleSession, http: aiohttp.ClientSession) -> None:
    link = await _league_with_link(web_console)
    async with http.get(link) as response:
        assert response.status == 200 and "league.js" in await response.text()
        for name, value in SECURITY_HEADERS.items():
            assert response.headers.get(name) == value, name
    async with http.get(link + "state") as response:
        model = await response.json()
    assert [p["name"] for p in model["players"]] == ["Alice", HOSTILE] and model["league"] == "Autumn League"
    unknown = re.sub(r"/l/[^/]+/", "/l/" + "A" * 43 + "/", link)
    game_style = link.replace("/l/", "/o/")  # a league token is not a game token, nor the other way round
    bodies = set()
    for url in (unknown, unknown + "state", game_style, game_style + "state", link + "board"):
        async with http.get(url) as response:
            assert response.status == 404, url
            bodies.add(await response.text())
    await _send(web_console, "/league overlay revoke:true")
    for url in (link, link + "state"):
        async with http.get(url) as response:
            assert response.status == 404
            bodies.add(await response.text())
    assert len(bodies) == 1, "revoked, unknown and wrong-kind links can't be told apart"


async def test_league_table_in_chromium(web_console: ConsoleSession, browser) -> None:  # noqa: ANN001
    link = await _league_with_link(web_console)
    context = await browser.new_context(viewport={"width": 1920, "height": 1080})
    errors: list[str] = []
    page = await open_page(context, link, errors)
    assert await page.locator("#title").text_content() == "Autumn League"
    rows = await page.locator("tbody tr").all_text_contents()
    assert len(rows) == 2 and "Alice" in rows[0] and HOSTILE in rows[1]
    assert await page.locator("tbody b").count() == 0, "names are text, never markup"

    seq = int(await page.evaluate("() => Number(document.body.dataset.seq)"))
    for line in ("/game start opponent:222 edition:10e faction:Orks opponent_faction:Necrons", "/vp add amount:30",
                 "/game end league:Autumn League"):
        await _send(web_console, line)
    await _send(web_console, "/league confirm result:1", user=BOB)
    await page.wait_for_function("(s) => Number(document.body.dataset.seq) > s", arg=seq, timeout=10000)
    first = await page.locator("tbody tr").first.locator("td").all_text_contents()
    assert first == ["1", "Alice", "Orks", "1", "1-0-0", "30/0", "1516"]

    await _send(web_console, "/league overlay revoke:true")
    await page.wait_for_function("() => document.body.dataset.gone === '1'", timeout=10000)
    assert await page.locator("tbody tr").count() == 0
    assert errors == [] or all("404" in e for e in errors), errors  # the last poll's 404 is the only complaint
    await context.close()
