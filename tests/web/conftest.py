"""Live-board fixtures: a console bot with its web server on a free loopback port, and an HTTP client."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from bot.config import Settings
from bot.console.session import ConsoleSession
from tests.conftest import backend_settings

ALICE, BOB = 111, 222
LINK = re.compile(r"http://127\.0\.0\.1:\d+/o/[A-Za-z0-9_-]{43}/")


@pytest.fixture
def web_settings(settings: Settings, db_target: Path | str) -> Settings:
    """On both state backends; port 0: the system picks a free port."""
    return dataclasses.replace(backend_settings(settings, db_target), web_port=0)


@pytest.fixture
async def web_console(web_settings: Settings) -> AsyncIterator[ConsoleSession]:
    session = await ConsoleSession.open(web_settings)
    try:
        yield session
    finally:
        await session.close()


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as client:
        yield client


async def start_game(console: ConsoleSession, *, alice: str = "Alice", bob: str = "Bob") -> None:
    for line in (f":as {BOB}", f":name {bob}", f":as {ALICE}", f":name {alice}",
                 "/game start opponent:222 edition:11e faction:Leagues of Votann opponent_faction:Orks"):
        replies = await console.send(line)
        assert not line.startswith("/") or not replies[0].ephemeral, replies[0].text()


async def overlay_link(console: ConsoleSession) -> str:
    replies = await console.send("/game overlay")
    assert replies[0].ephemeral, "the link is only for the asker"
    found = LINK.search(replies[0].text())
    assert found, replies[0].text()
    return found.group(0)
