"""Ops fixtures: a console bot with its ops listener on a free loopback port, and an HTTP client."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator

import aiohttp
import pytest

from bot.config import Settings
from bot.console.session import ConsoleSession


def ops_settings(settings: Settings, **changes: object) -> Settings:
    """Port 0: the system picks a free port. Simulations in threads unless a test wants the worker pool."""
    return dataclasses.replace(settings, ops_port=0, **{"sim_workers": 0, **changes})


async def ready_console(settings: Settings) -> ConsoleSession:
    """A console whose catalog is loaded (as `python -m bot run` loads it before connecting)."""
    import asyncio

    session = await ConsoleSession.open(settings)
    assert session.bot is not None
    await asyncio.to_thread(lambda: session.bot.services.catalog)
    return session


@pytest.fixture
async def ops_console(settings: Settings) -> AsyncIterator[ConsoleSession]:
    session = await ready_console(ops_settings(settings))
    try:
        yield session
    finally:
        await session.close()


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    # A connection per request: none is kept open between them (the limits tests count connections).
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True)) as client:
        yield client


def ops_url(console: ConsoleSession, path: str) -> str:
    assert console.bot is not None and console.bot.ops_server is not None
    return f"http://127.0.0.1:{console.bot.ops_server.port}{path}"


async def get(http: aiohttp.ClientSession, url: str) -> tuple[int, str]:
    async with http.get(url) as response:
        return response.status, await response.text()
