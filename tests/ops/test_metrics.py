"""/metrics over real HTTP: valid Prometheus text (prometheus-client's own parser, and promtool where it is
installed), every name prefixed `cogitator_`, commands counted by name and outcome, store and game-event
counts, no secret or user text in any answer, and no new series however many distinct queries arrive."""

from __future__ import annotations

import dataclasses
import shutil
import subprocess

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families

from bot.config import Settings
from bot.console.session import ConsoleSession
from tests.ops.conftest import get, ops_settings, ops_url, ready_console
from tests.web.conftest import start_game

TOKEN = "MTAxMjM0NTY3ODkwMTIzNDU2Nw.GhIjKl.secret-token-part_never-shown"
USER_TEXT = "zq-user-words-never-in-metrics"


def samples(text: str) -> dict[tuple[str, tuple], float]:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def value(text: str, name: str, **labels: str) -> float:
    return samples(text).get((name, tuple(sorted(labels.items()))), 0.0)


async def scrape(console: ConsoleSession, http: aiohttp.ClientSession) -> str:
    code, text = await get(http, ops_url(console, "/metrics"))
    assert code == 200
    return text


async def test_valid_text_prefixed_names_and_outcomes(ops_console: ConsoleSession, http: aiohttp.ClientSession,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    before = await scrape(ops_console, http)
    await ops_console.send("/rule query:lethal hits")
    await ops_console.send("/sim custom attacker:not a profile target:T4")  # refused: the user is told why

    def broken(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("a bug")
    monkeypatch.setattr(ops_console.bot.services.catalog, "resolve", broken)
    replies = await ops_console.send("/rule query:lethal hits")
    assert "Something went wrong" in replies[0].text()
    await start_game(ops_console)
    after = await scrape(ops_console, http)

    families = list(text_string_to_metric_families(after))
    assert families and all(f.name.startswith("cogitator_") for f in families), [f.name for f in families]
    for outcome in ("ok", "error"):
        assert value(after, "cogitator_commands_total", command="rule", outcome=outcome) \
            == value(before, "cogitator_commands_total", command="rule", outcome=outcome) + 1
    assert value(after, "cogitator_commands_total", command="sim custom", outcome="refused") == 1 + value(
        before, "cogitator_commands_total", command="sim custom", outcome="refused")
    assert value(after, "cogitator_command_duration_seconds_count", command="rule") >= 2
    assert value(after, "cogitator_store_events_written_total") >= 1 + value(before, "cogitator_store_events_written_total")
    assert value(after, "cogitator_store_query_duration_seconds_count", backend="sqlite", op="write") >= 1
    for name in ("cogitator_process_resident_memory_bytes", "cogitator_process_open_fds",
                 "cogitator_process_cpu_seconds_total", "cogitator_ready", "cogitator_event_loop_lag_seconds"):
        assert (name, ()) in samples(after), name
    assert value(after, "cogitator_catalog_entries", source="seeds", edition="11e") > 0
    assert value(after, "cogitator_catalog_data_age_seconds", source="seeds") >= 0
    if shutil.which("promtool"):
        checked = subprocess.run(["promtool", "check", "metrics"], input=after, capture_output=True, text=True,
                                 timeout=60)
        assert (checked.returncode, checked.stdout + checked.stderr) == (0, ""), "promtool's lint finds nothing"


async def test_no_token_password_or_user_text(settings: Settings, http: aiohttp.ClientSession) -> None:
    session = await ready_console(ops_settings(dataclasses.replace(settings, token=TOKEN)))
    try:
        await session.send(":as 918273645546372819")
        await session.send(f"/rule query:{USER_TEXT}")
        await session.send(f"/sim custom attacker:{USER_TEXT} target:T4")
        answers = [await get(http, ops_url(session, path)) for path in ("/healthz", "/readyz", "/metrics")]
        for _, text in answers:
            assert TOKEN not in text and "secret-token-part" not in text and USER_TEXT not in text
            assert "918273645546372819" not in text, "no user id"
    finally:
        await session.close()


async def test_distinct_queries_add_no_series(ops_console: ConsoleSession, http: aiohttp.ClientSession) -> None:
    """Labels are command names only: a flood of different queries (and of unknown option text) leaves the
    set of series as it was after the first of each kind."""
    async def unknown(name: str) -> str:
        """A command the tree does not know (a stale or hostile client names anything it likes)."""
        payload = ops_console.discord.interaction(2, ops_console._actor(None),
                                                  data={"id": "1", "name": name, "type": 1, "options": []})
        return (await ops_console._dispatch(payload, name))[0].text()

    for line in ("/rule query:warm up", "/sim custom attacker:warm target:T4"):
        await ops_console.send(line)
    assert "outdated or unknown" in await unknown("warm-up-name")
    before = set(samples(await scrape(ops_console, http)))
    assert ("cogitator_commands_total", (("command", "unknown"), ("outcome", "refused"))) in before
    for i in range(500):
        await ops_console.send(f"/rule query:distinct query {i} {i * 7919}")
        if i % 50 == 0:
            await ops_console.send(f"/sim custom attacker:x{i} target:T{i}")
            await unknown(f"no-such-command-{i}")
    after = set(samples(await scrape(ops_console, http)))
    assert after == before, after ^ before
