"""The live board in a real browser: Debian's headless Chromium, driven by Playwright (no browser download).

A short game is played through the console; after each step the page must show it. Also: no console
error, the CSP blocks an injected inline script, hostile names display as text, and the page comes back
by itself after a bot restart. Screenshots of every view are saved as test artifacts.

Skipped where Chromium or Playwright is missing, except when COGITATOR_REQUIRE_BROWSER=1 (CI), where a
missing browser is a failure.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.config import Settings
from bot.console import ConsoleSession
from tests.web.conftest import overlay_link, start_game

CHROMIUM = os.environ.get("COGITATOR_CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = Path(os.environ.get("COGITATOR_ARTIFACTS", Path(__file__).resolve().parents[2] / "var" / "test-artifacts"))
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
def fixed_port_settings(settings: Settings) -> Settings:
    """A fixed port, so the page's own reconnects find the restarted bot at the same address."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return dataclasses.replace(settings, web_port=port)


async def _text(page, selector: str) -> str:  # noqa: ANN001 - playwright Page
    return (await page.locator(selector).first.text_content() or "").strip()


async def _wait_seq_after(page, seq: int) -> None:  # noqa: ANN001
    await page.wait_for_function("(s) => Number(document.body.dataset.seq || 0) > s", arg=seq, timeout=5000)


async def _seq(page) -> int:  # noqa: ANN001
    return int(await page.evaluate("() => Number(document.body.dataset.seq || 0)"))


@pytest.mark.asyncio
async def test_live_board_in_chromium(browser, fixed_port_settings: Settings) -> None:  # noqa: ANN001
    console = await ConsoleSession.open(fixed_port_settings)
    try:
        await _play_and_watch(console, browser)
    finally:
        await console.close()


async def _play_and_watch(console: ConsoleSession, browser) -> None:  # noqa: ANN001
    hostile = "<b>Bobby</b> @everyone"
    await start_game(console, bob=hostile)
    link = await overlay_link(console)
    context = await browser.new_context(viewport={"width": 1920, "height": 1080})
    page = await context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    await page.goto(link)
    await page.wait_for_function("() => document.body.dataset.seq !== undefined", timeout=5000)

    assert await _text(page, "#scoreboard .p0 .name") == "Alice"
    assert await _text(page, "#scoreboard .p1 .name") == hostile, "hostile names are shown as text"
    assert await page.locator("#scoreboard b:text('Bobby')").count() == 0, "and never as markup"
    assert await _text(page, "#round .round-line") == "Round 1 · Alice · Command"
    assert await _text(page, "#scoreboard .p0 .cp-value") == "1"

    steps = [
        ("/cp gain amount:2 force:true", "#scoreboard .p0 .cp-value", "3"),
        ("/vp add amount:5", "#scoreboard .p0 .vp-value", "5"),
        ("/game next", "#round .round-line", "Round 1 · Alice · Movement"),
        ("/game undo", "#round .round-line", "Round 1 · Alice · Command"),
    ]
    for line, selector, expected in steps:
        before = await _seq(page)
        replies = await console.send(line)
        assert not replies[0].ephemeral, replies[0].text()
        await _wait_seq_after(page, before)
        assert await _text(page, selector) == expected, line
    log_lines = await page.locator("#log li").all_text_contents()
    assert 1 <= len(log_lines) <= 5

    # The CSP holds: an inline script injected into the page must not run.
    await page.evaluate("""() => { const s = document.createElement('script');
        s.textContent = 'document.body.dataset.inline = "ran"'; document.head.appendChild(s); }""")
    assert await page.evaluate("() => document.body.dataset.inline || ''") == ""
    csp_reports = [e for e in errors if "Content Security Policy" in e]
    errors[:] = [e for e in errors if "Content Security Policy" not in e]
    assert csp_reports, "the blocked inline script is reported by the browser"

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for view in ("", "scoreboard", "banner", "round", "clocks", "log"):
        view_page = await context.new_page()
        view_page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        await view_page.goto(link + view)
        await view_page.wait_for_function("() => document.body.dataset.seq !== undefined", timeout=5000)
        await view_page.screenshot(path=str(ARTIFACTS / f"overlay-{view or 'board'}.png"), omit_background=True)
        await view_page.close()

    # A bot restart: the page reconnects by itself and shows changes made after it.
    await console.restart()
    await console.send(":as 222")
    before = await _seq(page)
    assert not (await console.send("/cp gain amount:1 force:true"))[0].ephemeral
    await page.wait_for_function("(s) => Number(document.body.dataset.seq || 0) > s", arg=before, timeout=10000)
    assert await _text(page, "#scoreboard .p1 .cp-value") == "2"
    assert await page.evaluate("() => document.body.dataset.connected") == "yes"

    reconnect_noise = [e for e in errors if "ERR_CONNECTION_REFUSED" in e or "events" in e]
    assert [e for e in errors if e not in reconnect_noise] == [], errors
    await context.close()
