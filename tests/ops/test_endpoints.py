"""The ops endpoints (contract 11) over real HTTP: /healthz, /readyz naming the failed check, the store
going away (a real PostgreSQL server stopped and started again), the sim pool losing its workers, the
live board's port shared, and the public-address warning."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import os
import re
import signal
import socket
import time

import aiohttp
import pytest

from bot.config import Settings
from bot.console.session import ConsoleSession
from tests.ops.conftest import get, ops_settings, ops_url, ready_console
from tests.pgserver import start_or_skip


async def until(http: aiohttp.ClientSession, url: str, status: int, *, within: float = 60.0) -> dict:
    """Polls `url` until it answers `status` (bounded: fails after `within` s); returns the JSON body."""
    deadline = time.monotonic() + within
    while True:
        code, text = await get(http, url)
        if code == status:
            return json.loads(text)
        assert time.monotonic() < deadline, f"{url} still answers {code}: {text}"
        await asyncio.sleep(0.1)


async def test_health_and_ready(ops_console: ConsoleSession, http: aiohttp.ClientSession) -> None:
    assert await get(http, ops_url(ops_console, "/healthz")) == (200, '{"ok": true}')
    code, text = await get(http, ops_url(ops_console, "/readyz"))
    assert code == 200, text
    assert json.loads(text) == {"ready": True, "checks": {"discord": True, "store": True, "catalog": True,
                                                          "sim_pool": True}}
    async with http.head(ops_url(ops_console, "/readyz")) as response:
        assert response.status == 200
    async with http.post(ops_url(ops_console, "/readyz")) as response:
        assert response.status == 405
    code, text = await get(http, ops_url(ops_console, "/nothing-here"))
    assert code == 404 and len(text) < 100


async def test_not_ready_names_the_catalog_until_it_is_loaded(settings: Settings, http: aiohttp.ClientSession) -> None:
    session = await ConsoleSession.open(ops_settings(settings))
    try:
        body = await until(http, ops_url(session, "/readyz"), 503)
        assert body["failed"] == ["catalog"] and body["checks"]["catalog"] is False
        await asyncio.to_thread(lambda: session.bot.services.catalog)
        assert (await until(http, ops_url(session, "/readyz"), 200))["ready"] is True
    finally:
        await session.close()


async def test_not_ready_when_the_sim_workers_are_gone(settings: Settings, http: aiohttp.ClientSession) -> None:
    session = await ready_console(ops_settings(settings, sim_workers=1))
    try:
        body = await until(http, ops_url(session, "/readyz"), 503)
        assert body["failed"] == ["sim_pool"], "the pool starts on the first /sim or at `run`"
        simulation = session.bot.services.simulation
        await asyncio.to_thread(simulation.start)
        await until(http, ops_url(session, "/readyz"), 200)
        for pid in simulation.pool.pids():
            os.kill(pid, signal.SIGKILL)
        body = await until(http, ops_url(session, "/readyz"), 503)
        assert body["failed"] == ["sim_pool"]
    finally:
        await session.close()


async def test_store_outage_and_return_on_postgresql(settings: Settings, http: aiohttp.ClientSession) -> None:
    """A real server stopped: /readyz turns 503 naming the store, without the URL or its password; started
    again: 200, with no restart of the bot."""
    server = start_or_skip()
    try:
        url = server.url().replace("cogitator@", "cogitator:pw-never-shown@")
        session = await ready_console(ops_settings(settings, database_url=url))
        try:
            await until(http, ops_url(session, "/readyz"), 200)
            await asyncio.to_thread(server.pause)
            body = await until(http, ops_url(session, "/readyz"), 503)
            assert body["failed"] == ["store"]
            _, text = await get(http, ops_url(session, "/readyz"))
            _, metrics = await get(http, ops_url(session, "/metrics"))
            for answer in (text, metrics):
                # the port as a number of its own (":5432", "port 5432"), not digits inside a float such as
                # the process start time 1.79629257745e+09, which once matched a port of 57745
                assert "pw-never-shown" not in answer
                assert re.search(rf"(?<![\d.]){server.port}(?![\d.e])", answer) is None
            assert 'cogitator_ready_check{check="store"} 0.0' in metrics
            await asyncio.to_thread(server.resume)
            assert (await until(http, ops_url(session, "/readyz"), 200))["ready"] is True
        finally:
            await session.close()
    finally:
        server.stop()


async def test_shares_the_live_boards_port(settings: Settings, http: aiohttp.ClientSession) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    session = await ready_console(dataclasses.replace(settings, web_port=port, ops_port=port, sim_workers=0))
    try:
        assert session.bot.ops_server is None, "no second listener"
        assert await get(http, f"http://127.0.0.1:{port}/healthz") == (200, '{"ok": true}')
        code, _ = await get(http, f"http://127.0.0.1:{port}/readyz")
        assert code == 200
        code, text = await get(http, f"http://127.0.0.1:{port}/metrics")
        assert code == 200 and "cogitator_web_open_pages 0.0" in text
    finally:
        await session.close()


async def test_a_public_address_is_logged(settings: Settings, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="cogitator.ops")
    session = await ConsoleSession.open(ops_settings(settings, ops_bind="0.0.0.0"))
    try:
        assert any("non-loopback" in r.getMessage() for r in caplog.records)
    finally:
        await session.close()
    caplog.clear()
    session = await ConsoleSession.open(ops_settings(settings))
    try:
        assert not any("non-loopback" in r.getMessage() for r in caplog.records)
    finally:
        await session.close()


async def test_health_fails_when_the_loop_lags(ops_console: ConsoleSession, http: aiohttp.ClientSession) -> None:
    """A loop that ran its last timer over a second late is not healthy (a hung one does not answer at all)."""
    ops = ops_console.bot.ops
    ops._ticker.cancel()  # hold the measurement still: the lag as last measured
    ops.loop_lag = 1.5
    assert await get(http, ops_url(ops_console, "/healthz")) == (503, '{"ok": false}')
    ops.loop_lag = 0.1
    assert await get(http, ops_url(ops_console, "/healthz")) == (200, '{"ok": true}')
