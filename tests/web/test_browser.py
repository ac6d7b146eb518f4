"""The live board in a real browser: Debian's headless Chromium, driven by Playwright (no browser download).

A short game is played through the console, on SQLite and on PostgreSQL; after each step the page must
show it, including a change committed by a separate OS process on the same database, the end of the game,
a new game in the channel (the page stays on its own game) and revocation (the open page goes blank).
Also: no console error, the CSP blocks an injected inline script, hostile names display as text, and the
page comes back by itself after a bot restart. Screenshots of every view are saved as test artifacts.

Skipped where Chromium or Playwright is missing, except when COGITATOR_REQUIRE_BROWSER=1 (CI), where a
missing browser is a failure.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from bot.config import Settings
from bot.console.session import ConsoleSession
from tests.conftest import backend_settings
from tests.web import other_process
from tests.web.conftest import ALICE, BOB, open_page, overlay_link, start_game

ARTIFACTS = Path(os.environ.get("COGITATOR_ARTIFACTS", Path(__file__).resolve().parents[2] / "var" / "test-artifacts"))


@pytest.fixture
def fixed_port_settings(settings: Settings, db_target: Path | str) -> Settings:
    """On both state backends, with a fixed port, so the page's own reconnects find the restarted bot at
    the same address."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return dataclasses.replace(backend_settings(settings, db_target), web_port=port)


# The visible panels whose content is larger than the panel (cut off or spilling over the stream), and
# panels that leave the 1920x1080 canvas.
FITS = """() => Array.from(document.querySelectorAll('.panel')).filter((el) => {
    if (getComputedStyle(el).display === 'none') return false;
    const box = el.getBoundingClientRect();
    return el.scrollHeight > el.clientHeight + 1 || el.scrollWidth > el.clientWidth + 1
        || box.left < 0 || box.top < 0 || box.right > 1920 || box.bottom > 1080;
}).map((el) => el.id)"""


async def _text(page, selector: str) -> str:  # noqa: ANN001 - playwright Page
    return (await page.locator(selector).first.text_content() or "").strip()


async def _wait_seq_after(page, seq: int) -> None:  # noqa: ANN001
    await page.wait_for_function("(s) => Number(document.body.dataset.seq || 0) > s", arg=seq, timeout=5000)


async def _seq(page) -> int:  # noqa: ANN001
    return int(await page.evaluate("() => Number(document.body.dataset.seq || 0)"))


@pytest.mark.asyncio
async def test_live_board_in_chromium(browser, fixed_port_settings: Settings) -> None:  # noqa: ANN001
    async with ConsoleSession.opened(fixed_port_settings) as console:
        await _play_and_watch(console, browser, "postgresql" if fixed_port_settings.database_url else "sqlite")


async def _play_and_watch(console: ConsoleSession, browser, backend: str) -> None:  # noqa: ANN001
    hostile = "<b>Bobby</b> @everyone"
    await start_game(console, bob=hostile)
    link = await overlay_link(console)
    context = await browser.new_context(viewport={"width": 1920, "height": 1080})
    errors: list[str] = []
    page = await open_page(context, link, errors)

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

    # The clocks: started, the active player's time runs down on the page.
    before = await _seq(page)
    assert not (await console.send("/clock start minutes:30"))[0].ephemeral
    await _wait_seq_after(page, before)
    assert await page.locator("#clocks .p0.running").count() == 1
    assert (await _text(page, "#clocks .p0 .time")).startswith(("30:00", "29:5")), "counts down from 30 minutes"
    assert await _text(page, "#clocks .p1 .time") == "30:00"

    artifacts = ARTIFACTS / str(backend)
    artifacts.mkdir(parents=True, exist_ok=True)
    for view in ("", "scoreboard", "banner", "round", "clocks", "log"):
        view_page = await open_page(context, link + view, errors)
        await view_page.screenshot(path=str(artifacts / f"overlay-{view or 'board'}.png"), omit_background=True)
        assert await view_page.evaluate(FITS) == [], f"content spills out of its panel in view {view or 'board'}"
        await view_page.close()

    # A bot restart: the page reconnects by itself and shows changes made after it.
    await console.restart()
    await console.send(":as 222")
    before = await _seq(page)
    assert not (await console.send("/cp gain amount:1 force:true"))[0].ephemeral
    await page.wait_for_function("(s) => Number(document.body.dataset.seq || 0) > s", arg=before, timeout=10000)
    assert await _text(page, "#scoreboard .p1 .cp-value") == "2"
    assert await page.evaluate("() => document.body.dataset.connected") == "yes"

    # A change committed by a separate OS process (another shard) on the same database reaches the page.
    db = console.settings.database_url or console.settings.db_path
    before = await _seq(page)
    await other_process.run("vp_set", db, 1001, BOB, 9)
    await _wait_seq_after(page, before)
    assert await _text(page, "#scoreboard .p1 .vp-value") == "9"

    # Round 5 (another process plays the phases): the banner has a column per round and still fits.
    before = await _seq(page)
    await other_process.run("rounds", db, 1001, BOB, 5)
    # Many commits: the page may show one of the rounds on the way first, so wait for the last one.
    await page.wait_for_function(
        "() => (document.querySelector('#round .round-line')?.textContent || '').startsWith('Round 5 · ')",
        timeout=5000)
    assert await _seq(page) > before
    assert await page.locator("#banner thead th").all_text_contents() == ["", "", "R1", "R2", "R3", "R4", "R5",
                                                                         "Total"]
    banner = await context.new_page()
    await banner.goto(link + "banner")
    await banner.wait_for_function("() => document.body.dataset.seq !== undefined", timeout=5000)
    assert await banner.evaluate(FITS) == [], "five rounds fit the banner"
    await banner.screenshot(path=str(artifacts / "overlay-banner-round5.png"), omit_background=True)
    await banner.close()

    # The game ends: the page says so and its clocks stop.
    before = await _seq(page)
    assert not (await console.send("/game end"))[0].ephemeral
    await _wait_seq_after(page, before)
    assert await _text(page, "#round .round-line") == "Game finished"
    assert await page.locator("#clocks .running").count() == 0
    await page.screenshot(path=str(artifacts / "overlay-board-finished.png"), omit_background=True)

    # A new game in the same channel: the open page stays on its own (finished) game; a new link shows the new one.
    ended_at = await _seq(page)
    await console.send(f":as {ALICE}")
    replies = await console.send("/game start opponent:222 edition:11e faction:Orks opponent_faction:Necrons")
    assert not replies[0].ephemeral, replies[0].text()
    assert not (await console.send("/cp gain amount:3 force:true"))[0].ephemeral
    new_page = await open_page(context, await overlay_link(console), errors)
    assert await _text(new_page, "#scoreboard .p0 .faction") == "Orks"
    assert await _text(new_page, "#scoreboard .p0 .cp-value") == "4"
    await page.wait_for_timeout(500)  # several polls of the feed
    assert await _seq(page) == ended_at
    assert await _text(page, "#scoreboard .p0 .faction") == "Leagues of Votann"
    assert await _text(page, "#round .round-line") == "Game finished"

    # Revoking: both open pages (the old game's and the new one's) go blank and stop reconnecting.
    replies = await console.send("/game overlay revoke:true")
    assert replies[0].ephemeral and "Revoked 2" in replies[0].text(), replies[0].text()
    for revoked in (page, new_page):
        await revoked.wait_for_function("() => document.body.dataset.revoked === 'yes'", timeout=5000)
        assert (await revoked.locator("#overlay").inner_text()).strip() == ""
        assert await revoked.locator("#overlay *").count() == 0
    await page.wait_for_timeout(1500)
    assert await page.evaluate("() => document.body.dataset.connected") == "no", "no reconnect after revocation"
    reconnect_noise = [e for e in errors if "ERR_CONNECTION_REFUSED" in e or "events" in e]
    assert [e for e in errors if e not in reconnect_noise] == [], errors

    # Revoked while the page's server is down: the page finds out when it reconnects (a 404), and goes blank.
    last_page = await context.new_page()
    await last_page.goto(await overlay_link(console))
    await last_page.wait_for_function("() => document.body.dataset.connected === 'yes'", timeout=5000)
    await console.bot.web.close()
    console.bot.web = None
    await last_page.wait_for_function("() => document.body.dataset.connected === 'no'", timeout=5000)
    await other_process.run("revoke", db, 1001)
    await console.bot.start_web()
    await last_page.wait_for_function("() => document.body.dataset.revoked === 'yes'", timeout=10000)
    assert await last_page.locator("#overlay *").count() == 0
    await context.close()
