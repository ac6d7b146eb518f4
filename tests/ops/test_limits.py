"""The ops port gets the live board's connection limits (bot.web.guard) over real sockets: a flood from one
address, idle and byte-by-byte connections, long paths and huge headers. Refusals are counted in
`cogitator_web_refused_total{listener="ops"}`; the bot keeps answering throughout."""

from __future__ import annotations

import asyncio
import dataclasses

import aiohttp
import pytest

from bot.console.session import ConsoleSession
from bot.web import guard
from tests.ops.conftest import get, ops_url
from tests.web.test_limits import closed_by_server, connect, no_tracebacks, raw


def shrink(console: ConsoleSession, **limits: float) -> None:
    server = console.bot.ops_server
    server.settings = dataclasses.replace(server.settings, **limits)


def refused(text: str, reason: str) -> float:
    line = f'cogitator_web_refused_total{{listener="ops",reason="{reason}"}} '
    return float(next(row for row in text.splitlines() if row.startswith(line)).split()[-1])


async def test_flood_slowloris_and_long_paths(ops_console: ConsoleSession, http: aiohttp.ClientSession,
                                              caplog: pytest.LogCaptureFixture) -> None:
    port = ops_console.bot.ops_server.port
    _, before = await get(http, ops_url(ops_console, "/metrics"))
    shrink(ops_console, connections_per_address_max=10, header_timeout_s=0.5)
    held = [await connect(port) for _ in range(10)]  # open and send nothing
    surplus = [await connect(port) for _ in range(5)]
    for reader, _ in surplus:
        assert (await closed_by_server(reader, 2.0)).startswith(b"HTTP/1.1 429 ")
    slow_reader, slow_writer = held[0]

    async def slowloris() -> None:
        with pytest.raises(ConnectionError):
            for byte in b"GET /healthz HTTP/1.1\r\nHost: a\r\n" * 20:
                slow_writer.write(bytes([byte]))
                await slow_writer.drain()
                await asyncio.sleep(0.02)
    trickle = asyncio.create_task(slowloris())
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(local_addr=("127.0.0.2", 0))) as other, \
            other.get(ops_url(ops_console, "/healthz")) as response:
        assert response.status == 200, "another address is still answered"
    assert (await ops_console.send("/help"))[0].text()
    for reader, _ in held:
        assert await closed_by_server(reader, 3.0) == b""
    await asyncio.wait_for(trickle, 3.0)
    for _, writer in held + surplus:
        writer.close()

    long_path = b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"
    answer = await raw(port, long_path)
    assert answer.startswith((b"HTTP/1.0 400 ", b"HTTP/1.1 400 ")) and len(answer) < 1000, "aiohttp's 8 KB line limit"
    huge = b"GET /metrics HTTP/1.1\r\nHost: a\r\n" + b"".join(b"X-%d: %s\r\n" % (i, b"a" * 7800)
                                                               for i in range(13)) + b"\r\n"
    assert (await raw(port, huge)) in (b"", guard.TOO_LARGE)

    shrink(ops_console, connections_per_address_max=guard.CONNECTIONS_PER_ADDRESS_MAX)
    code, after = await get(http, ops_url(ops_console, "/metrics"))
    assert code == 200
    assert refused(after, "connections") - refused(before, "connections") >= 5
    assert refused(after, "slow") - refused(before, "slow") >= 1
    assert refused(after, "large") - refused(before, "large") >= 1
    no_tracebacks(caplog)


async def test_concurrent_scrapes_share_one_build(ops_console: ConsoleSession, http: aiohttp.ClientSession) -> None:
    """A flood of /metrics requests builds the text once per wave, not once per request."""
    ops = ops_console.bot.ops
    checked = ops.ready
    release = asyncio.Event()

    async def held() -> dict[str, bool]:  # the build waits here until every request has asked for it
        await release.wait()
        return await checked()
    ops.ready = held  # type: ignore[method-assign]
    before = ops.builds
    scrapes = [asyncio.create_task(ops.scrape()) for _ in range(40)]
    await asyncio.sleep(0)  # each task runs to its first wait
    release.set()
    texts = await asyncio.gather(*scrapes)
    assert ops.builds - before == 1 and len(set(texts)) == 1
    ops.ready = checked  # type: ignore[method-assign]
    code, text = await get(http, ops_url(ops_console, "/metrics"))
    assert code == 200 and ops.builds - before == 2, "the next scrape builds afresh"
