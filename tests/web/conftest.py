"""Live-board fixtures: a console bot with its web server on a free loopback port, an HTTP client, and
Debian's headless Chromium through Playwright (skipped where missing, unless COGITATOR_REQUIRE_BROWSER=1)."""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from bot.config import Settings
from bot.console.session import ConsoleSession
from tests.conftest import backend_settings

ALICE, BOB = 111, 222
LINK = re.compile(r"http://127\.0\.0\.1:\d+/o/[A-Za-z0-9_-]{43}/")
CHROMIUM = os.environ.get("COGITATOR_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _require_browser() -> None:
    missing = None
    try:
        import playwright.async_api  # noqa: F401
    except ImportError:
        missing = "Playwright for Python is not installed"
    if missing is None and not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        missing = f"Chromium is not installed at {CHROMIUM} (apt-get install chromium)"
    if missing:
        if os.environ.get("COGITATOR_REQUIRE_BROWSER") == "1":
            pytest.fail(f"browser tests are required here: {missing}")
        pytest.skip(missing)


@pytest.fixture
async def browser() -> AsyncIterator[object]:
    _require_browser()
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        chromium = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            await chromium.close()


@pytest.fixture
def web_settings(settings: Settings, db_target: Path | str) -> Settings:
    """On both state backends; port 0: the system picks a free port."""
    return dataclasses.replace(backend_settings(settings, db_target), web_port=0)


@pytest.fixture
async def web_console(web_settings: Settings) -> AsyncIterator[ConsoleSession]:
    async with ConsoleSession.opened(web_settings) as session:
        yield session


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


async def open_page(context, link: str, errors: list[str]):  # noqa: ANN001, ANN201 - playwright objects
    """A new page of `context` on `link`, once it shows its first state; its console errors and uncaught
    exceptions are added to `errors`."""
    page = await context.new_page()
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    await page.goto(link)
    await page.wait_for_function("() => document.body.dataset.seq !== undefined", timeout=5000)
    return page
