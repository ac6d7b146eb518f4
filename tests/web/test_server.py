"""The live board over real HTTP: links, 404s, headers, the event stream and its limits."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import socket
import time

import aiohttp
import pytest

from bot.config import Settings
from bot.console.session import ConsoleSession
from bot.errors import ConfigError
from bot.web.server import SECURITY_HEADERS
from bot.web.tokens import token_hash
from tests.web import other_process
from tests.web.conftest import ALICE, BOB, overlay_link, start_game

pytestmark = pytest.mark.asyncio


async def next_event(stream: aiohttp.StreamReader, timeout: float = 5.0) -> tuple[str, str]:
    """The next named event of an event stream and its data."""
    deadline = time.monotonic() + timeout
    event = None
    while True:
        line = await asyncio.wait_for(stream.readline(), max(0.01, deadline - time.monotonic()))
        text = line.decode().rstrip("\n")
        if text.startswith("event: "):
            event = text[7:]
        elif text.startswith("data: ") and event:
            return event, text[6:]


async def next_state(stream: aiohttp.StreamReader, timeout: float = 5.0) -> dict:
    """The next `state` message of an event stream (other events, comments and retry lines skipped)."""
    deadline = time.monotonic() + timeout
    while True:
        event, data = await next_event(stream, max(0.01, deadline - time.monotonic()))
        if event == "state":
            return json.loads(data)["state"]


async def test_page_state_and_headers(web_console: ConsoleSession, http: aiohttp.ClientSession) -> None:
    await start_game(web_console)
    link = await overlay_link(web_console)
    for view in ("", "scoreboard", "banner", "round", "clocks", "log"):
        async with http.get(link + view) as page:
            assert page.status == 200
            body = await page.text()
            assert f'data-view="{view or "board"}"' in body
            assert "<script>" not in body and "<style" not in body  # nothing inline for the CSP to allow
            for name, value in SECURITY_HEADERS.items():
                assert page.headers[name] == value
            assert "Access-Control-Allow-Origin" not in page.headers
    async with http.get(link + "state") as response:
        state = (await response.json())["state"]
    assert [p["name"] for p in state["players"]] == ["Alice", "Bob"]
    assert (state["round"], state["phase"], state["active"], state["status"]) == (1, "Command", "Alice", "active")
    assert len(state["log"]) <= 5


async def test_wrong_revoked_and_malformed_tokens_are_404(web_console: ConsoleSession,
                                                          http: aiohttp.ClientSession) -> None:
    await start_game(web_console)
    link = await overlay_link(web_console)
    base = link.split("/o/")[0]
    token = link.split("/o/")[1].strip("/")
    with web_console.bot.services.storage.read() as conn:
        stored = conn.execute("SELECT token_hash FROM overlay_tokens").fetchall()
    assert [r[0] for r in stored] == [token_hash(token)], "only the hash is stored"
    replies = await web_console.send("/game overlay revoke:true")
    assert replies[0].ephemeral and "Revoked 1" in replies[0].text()
    wrong = "A" * 43
    paths = [f"/o/{token}/", f"/o/{token}/events", f"/o/{token}/state", f"/o/{wrong}/", f"/o/{wrong}/events",
             "/o/short/", f"/o/{wrong}/unknown-view", "/static/../bot/config.py", "/static/page.html",
             "/static/%2e%2e/%2e%2e/pyproject.toml", "/", "/o/", "/etc/passwd"]
    bodies = set()
    for path in paths:
        async with http.get(base + path) as response:
            assert response.status == 404, path
            assert response.headers["X-Content-Type-Options"] == "nosniff"
            bodies.add(await response.text())
    assert len(bodies) == 1, "every miss looks the same"
    async with http.post(f"{base}/o/{wrong}/", data=b"x") as response:
        assert response.status in (404, 405)


async def test_link_needs_a_player_or_manage_channel(web_console: ConsoleSession) -> None:
    await start_game(web_console)
    await web_console.send(":as 333")
    replies = await web_console.send("/game overlay")
    assert replies[0].ephemeral and "Only the game's players" in replies[0].text()
    await web_console.send(":perms manage_channels")
    await overlay_link(web_console)


async def test_without_port_the_command_explains(console: ConsoleSession) -> None:
    await start_game(console)
    replies = await console.send("/game overlay")
    assert replies[0].ephemeral and "COGITATOR_WEB_PORT" in replies[0].text()


async def test_every_change_reaches_the_stream(web_console: ConsoleSession, http: aiohttp.ClientSession) -> None:
    await start_game(web_console)
    link = await overlay_link(web_console)
    async with http.get(link + "events") as stream:
        assert stream.headers["Content-Type"] == "text/event-stream"
        first = await next_state(stream.content)
        assert first["players"][0]["cp"] == 1
        for line, check in (("/cp gain amount:2 force:true", lambda s: s["players"][0]["cp"] == 3),
                            ("/game next", lambda s: s["phase"] == "Movement"),
                            ("/game undo", lambda s: s["phase"] == "Command"),
                            ("/vp add amount:4", lambda s: s["players"][0]["vp"] == 4)):
            started = time.monotonic()
            await web_console.send(line)
            state = await next_state(stream.content)
            assert check(state), (line, state)
            assert time.monotonic() - started < 2.0


async def test_an_open_page_waits_in_its_own_task(web_console: ConsoleSession, http: aiohttp.ClientSession) -> None:
    """A page waiting for its next update starts no task of its own: a task per wait would cost 1,000 tasks
    with 1,000 pages open, and a wait begun during a command looked like unfinished work to the console,
    which then waited for it (the browser test hung on `/game end` about one run in five)."""
    await start_game(web_console)
    link = await overlay_link(web_console)
    async with http.get(link + "events") as stream:
        await next_state(stream.content)
        for _ in range(3):
            assert not (await web_console.send("/cp gain amount:1 force:true"))[0].ephemeral
            await next_state(stream.content)
            await asyncio.sleep(0.05)
            waits = [t for t in asyncio.all_tasks() if getattr(t.get_coro(), "__qualname__", "") == "Event.wait"]
            assert waits == []


async def test_a_change_from_another_process_reaches_the_stream(web_console: ConsoleSession,
                                                               http: aiohttp.ClientSession) -> None:
    """The feed polls the database: a change committed by a separate OS process (another shard) shows up."""
    await start_game(web_console)
    link = await overlay_link(web_console)
    db = web_console.settings.database_url or web_console.settings.db_path
    async with http.get(link + "events") as stream:
        await next_state(stream.content)
        started = time.monotonic()
        await other_process.run("vp_set", db, 1001, BOB, 7)
        state = await next_state(stream.content)
        assert state["players"][1]["vp"] == 7
        assert time.monotonic() - started < 5.0  # the process start dominates; the bench measures latency


async def test_revoking_ends_open_pages(web_console: ConsoleSession, http: aiohttp.ClientSession) -> None:
    """A revoked link stops an open page at once (its stream ends with `revoked`), whichever process revoked
    it; the game's other pages, made with a newer link, keep going."""
    await start_game(web_console)
    first = await overlay_link(web_console)
    async with http.get(first + "events") as stream:
        await next_state(stream.content)
        replies = await web_console.send("/game overlay revoke:true")
        assert "Revoked 1" in replies[0].text()
        assert await next_event(stream.content) == ("revoked", "{}")
        assert await asyncio.wait_for(stream.content.read(), 2.0) == b"\n", "and the stream ends"
    second = await overlay_link(web_console)
    db = web_console.settings.database_url or web_console.settings.db_path
    async with http.get(second + "events") as stream:
        await next_state(stream.content)
        await other_process.run("revoke", db, 1001)
        assert await next_event(stream.content) == ("revoked", "{}")
    async with http.get(second + "events") as gone:
        assert gone.status == 404
    assert web_console.bot.web.feed.pages == 0


async def test_hostile_names_arrive_as_plain_data(web_console: ConsoleSession, http: aiohttp.ClientSession) -> None:
    hostile = '<img src=x onerror=alert(1)> @everyone </script>'
    await start_game(web_console, alice=hostile)
    link = await overlay_link(web_console)
    async with http.get(link + "state") as response:
        raw = await response.read()
    assert b"<img" not in raw and b"</script>" not in raw  # ensure_ascii + \u escapes: JSON, not markup
    assert json.loads(raw)["state"]["players"][0]["name"] == hostile


async def test_stream_limit_per_address(web_console: ConsoleSession, http: aiohttp.ClientSession) -> None:
    await start_game(web_console)
    link = await overlay_link(web_console)
    web = web_console.bot.web
    object.__setattr__(web.settings, "streams_per_address_max", 3)
    streams = [await http.get(link + "events") for _ in range(3)]
    try:
        async with http.get(link + "events") as refused:
            assert refused.status == 429
        assert web.open_streams == 3
    finally:
        for s in streams:
            s.close()
    await asyncio.sleep(0.2)
    assert web.open_streams == 0


async def test_the_page_follows_a_restart(web_console: ConsoleSession, http: aiohttp.ClientSession) -> None:
    await start_game(web_console)
    link = await overlay_link(web_console)
    await web_console.send(":restart")
    port = web_console.bot.web.port
    link = link.split("/o/")[0].rsplit(":", 1)[0] + f":{port}/o/" + link.split("/o/")[1]
    async with http.get(link + "state") as response:
        assert response.status == 200, "links survive a restart (the token is in the database)"
    await web_console.send(":as 222")
    assert (await web_console.send("/cp gain amount:1 force:true"))[0].ephemeral is False
    async with http.get(link + "state") as response:
        assert (await response.json())["state"]["players"][ALICE and 1]["cp"] == 2


@pytest.mark.parametrize("option, words", [("web_port", "the live board"), ("ops_port", "the ops endpoints")])
async def test_a_port_in_use_is_a_clear_configuration_error(settings: Settings, option: str, words: str) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(ConfigError, match=f"^{words} cannot listen on 127.0.0.1:{port}: "):
            session = await ConsoleSession.open(dataclasses.replace(settings, **{option: port}))
            await session.close()
