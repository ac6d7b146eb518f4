"""The live board's connection limits over real sockets: idle and slow connections, many connections from
one address, huge headers and malformed requests. The bot keeps answering Discord throughout."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import socket
import time

import aiohttp
import pytest

from bot.console.session import ConsoleSession
from bot.web import guard
from bot.web.server import NOT_FOUND
from tests.web.conftest import overlay_link, start_game


def shrink(console: ConsoleSession, **limits: float) -> None:
    web = console.bot.web
    web.settings = dataclasses.replace(web.settings, **limits)


async def connect(port: int, source: str = "127.0.0.1") -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))


async def closed_by_server(reader: asyncio.StreamReader, within: float) -> bytes:
    """What the server sent before closing the connection (a reset is a close too: the server aborts
    connections whose bytes may still be arriving); fails if it stays open longer than `within`."""
    try:
        return await asyncio.wait_for(reader.read(), within)
    except ConnectionResetError:
        return b""


async def raw(port: int, request: bytes) -> bytes:
    """Sends `request` in one write; returns all the server answered before closing (it may close first)."""
    return await raw_pieces(port, [request], pause=0.0)


async def raw_pieces(port: int, pieces: list[bytes], *, pause: float = 0.01) -> bytes:
    """Sends each piece as its own write, waiting for the server to have read it (it may close meanwhile)."""
    reader, writer = await connect(port)
    try:
        for piece in pieces:
            writer.write(piece)
            await writer.drain()
            if pause:
                await asyncio.sleep(pause)
    except ConnectionError:
        pass
    try:
        return await asyncio.wait_for(reader.read(), 5.0)
    except ConnectionError:
        return b""
    finally:
        writer.close()


def no_tracebacks(caplog: pytest.LogCaptureFixture) -> None:
    assert [r.getMessage() for r in caplog.records if r.exc_info] == []


@pytest.mark.asyncio
async def test_idle_slow_and_surplus_connections_are_bounded(web_console: ConsoleSession,
                                                             caplog: pytest.LogCaptureFixture) -> None:
    await start_game(web_console)
    link = await overlay_link(web_console)
    port = web_console.bot.web.port
    shrink(web_console, connections_per_address_max=20, header_timeout_s=0.5)
    guard = web_console.bot.web.guard

    held = [await connect(port) for _ in range(20)]  # open and send nothing
    await asyncio.sleep(0.05)
    assert guard.open_from("127.0.0.1") == 20
    surplus = [await connect(port) for _ in range(10)]
    for reader, _ in surplus:  # refused at once, with a status line, before aiohttp sees them
        assert (await closed_by_server(reader, 2.0)).startswith(b"HTTP/1.1 429 ")
    slow_reader, slow_writer = held[0]

    async def slowloris() -> None:
        with pytest.raises(ConnectionError):
            for byte in b"GET /o/x/ HTTP/1.1\r\nHost: a\r\n" * 20:
                slow_writer.write(bytes([byte]))
                await slow_writer.drain()
                await asyncio.sleep(0.02)
    trickle = asyncio.create_task(slowloris())

    # Another address still gets its page, and the bot still answers Discord, while 127.0.0.1 is full.
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(local_addr=("127.0.0.2", 0))) as other, \
            other.get(link + "state") as response:
        assert response.status == 200
    replies = await web_console.send("/cp gain amount:1 force:true")
    assert not replies[0].ephemeral

    for reader, _ in held:  # the header deadline closes idle and byte-by-byte connections alike
        assert await closed_by_server(reader, 3.0) == b""
    await asyncio.wait_for(trickle, 3.0)
    for _, writer in held + surplus:
        writer.close()
    await asyncio.sleep(0.05)
    assert guard.total == 0 and guard.open_from("127.0.0.1") == 0
    async with aiohttp.ClientSession() as again, again.get(link + "state") as response:
        assert response.status == 200, "the address is admitted again once its connections are gone"
    no_tracebacks(caplog)
    assert any("no complete request headers" in r.getMessage() for r in caplog.records)


@pytest.mark.asyncio
async def test_huge_and_malformed_requests(web_console: ConsoleSession, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    await start_game(web_console)
    link = await overlay_link(web_console)
    port = web_console.bot.web.port
    token = link.split("/o/")[1].strip("/")
    ok = f"GET /o/{token}/state HTTP/1.1\r\nHost: a\r\nConnection: close\r\n".encode()

    # Many lines each under aiohttp's 8 KB: refused by the total (32 KB) before they are buffered.
    # The 431 is best effort: closing with the rest of the headers unread may reset the connection first.
    many = ok + b"".join(b"X-%d: %s\r\n" % (i, b"a" * 8000) for i in range(40)) + b"\r\n"
    assert (await raw(port, many)) in (b"", guard.TOO_LARGE)
    assert any("request headers over 32768 bytes" in r.getMessage() for r in caplog.records)
    # The same total counted however it arrives: a 100 KB head (13 lines, each under aiohttp's limits) in
    # one send (before: a 200), in pieces, split inside its closing blank line; pipelined small requests
    # in one send are counted per request.
    huge = ok + b"".join(b"X-%d: %s\r\n" % (i, b"a" * 7800) for i in range(13)) + b"\r\n"
    assert len(huge) > 96_000
    assert (await raw(port, huge)) in (b"", guard.TOO_LARGE), "one send"
    for cut in (1000, len(huge) - 2, len(huge) - 1):
        assert (await raw_pieces(port, [huge[:cut], huge[cut:]])) in (b"", guard.TOO_LARGE), cut
    assert (await raw_pieces(port, [huge[i:i + 7000] for i in range(0, len(huge), 7000)])) in (b"", guard.TOO_LARGE)
    keep = f"GET /o/{token}/state HTTP/1.1\r\nHost: a\r\n".encode() + b"X-A: " + b"a" * 4000 + b"\r\n\r\n"
    answers = await raw(port, keep * 10 + ok + b"\r\n")
    assert answers.count(b"HTTP/1.1 200 ") == 11, "ten 4 KB heads in one send are ten heads, not one 40 KB head"
    # One line over 8 KB, or more than 64 lines: aiohttp's 400.
    assert (await raw(port, ok + b"X-Big: " + b"a" * 9000 + b"\r\n\r\n")).startswith(b"HTTP/1.0 400 ")
    lines = ok + b"".join(b"X-%d: a\r\n" % i for i in range(70)) + b"\r\n"
    assert (await raw(port, lines)).startswith(b"HTTP/1.0 400 ")
    # Under all limits: served.
    assert (await raw(port, ok + b"".join(b"X-%d: %s\r\n" % (i, b"a" * 500) for i in range(30)) + b"\r\n")
            ).startswith(b"HTTP/1.1 200 ")
    for target in (b"/o/\x00/", "/o/é/".encode(), b"/o/" + b"A" * 10000 + b"/", b"\xff\xfe", b"/o/ x/"):
        answer = await raw(port, b"GET " + target + b" HTTP/1.1\r\nHost: a\r\n\r\n")
        assert answer.startswith((b"HTTP/1.0 400 ", b"HTTP/1.1 400 ")), (target, answer[:80])
    for target in (b"/o/..%2f..%2fpyproject.toml", b"/o/%252e%252e/", b"/static\\..\\page.html",
                   b"/static/%2e%2e%5cpage.html", b"/o/" + b"%C3%A4" * 43 + b"/", b"/o/%00/"):
        answer = await raw(port, b"GET " + target + b" HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
        assert answer.startswith(b"HTTP/1.1 404 ") and answer.endswith(NOT_FOUND.encode()), (target, answer[:80])

    no_tracebacks(caplog)
    assert any("malformed request" in r.getMessage() for r in caplog.records), "said once, in one line"
    assert not (await web_console.send("/cp gain amount:1 force:true"))[0].ephemeral


def test_the_unit_of_the_per_address_limits() -> None:
    assert guard.client_key("127.0.0.1") == "127.0.0.1"
    assert guard.client_key("::ffff:10.1.2.3") == "10.1.2.3", "an IPv4 client seen through an IPv6 socket"
    same = {guard.client_key(a) for a in ("2001:db8:1:2::1", "2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::9%eth0")}
    assert same == {"2001:db8:1:2::/64"}
    assert guard.client_key("2001:db8:1:3::1") != guard.client_key("2001:db8:1:2::1")
    assert guard.client_key(None) == "?" and guard.client_key("not an address") == "not an address"


@pytest.mark.asyncio
async def test_a_page_that_stops_reading_is_dropped(web_console: ConsoleSession,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    """A stream whose reader never reads fills its small buffers; the next write past the deadline drops it."""
    await start_game(web_console)
    link = await overlay_link(web_console)
    web = web_console.bot.web
    shrink(web_console, stream_write_timeout_s=0.5, stream_send_buffer=4096)
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 2048)  # before connecting, so the window stays small
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", web.port))
    path = link.split(str(web.port), 1)[1] + "events"
    sock.send(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    try:
        for step in range(400):  # each change is a state message of a few KB; the page reads none of them
            await web_console.send("/cp gain amount:1 force:true")
            await asyncio.sleep(0.12)  # the feed sends the newest state once per 100 ms tick
            if web.open_streams == 0 and step > 2:
                break
        assert web.open_streams == 0, "the stalled page still holds its stream"
    finally:
        sock.close()
    replies = await web_console.send("/cp gain amount:1 force:true")
    assert not replies[0].ephemeral, "the bot still answers"
    no_tracebacks(caplog)
    assert any("stopped reading its stream" in r.getMessage() for r in caplog.records)


@pytest.mark.asyncio
async def test_header_shapes_fuzz(web_console: ConsoleSession, caplog: pytest.LogCaptureFixture) -> None:
    """Generated heads and cuts (tests/fuzz/hostile.py): a head over the cap is refused however it is cut,
    one within it is served; sent from a thread with blocking sockets while this loop serves them."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from tests.fuzz.hostile import request_head

    await start_game(web_console)
    link = await overlay_link(web_console)
    port = web_console.bot.web.port
    limit = web_console.bot.web.settings.header_bytes_max
    target = "/o/" + link.split("/o/")[1] + "state"
    seen = {"refused": 0, "served": 0}

    def send(head: bytes, cuts: list[int]) -> bytes:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            try:
                for begin, end in zip([0, *cuts], [*cuts, len(head)], strict=True):
                    sock.sendall(head[begin:end])
                    time.sleep(0.002)
            except OSError:
                pass  # refused mid-way: the server closed first
            answer = b""
            try:
                while chunk := sock.recv(65536):
                    answer += chunk
            except ConnectionResetError:
                pass
            return answer

    @settings(max_examples=60, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.data())
    def check(data: st.DataObject) -> None:
        head, cuts = data.draw(request_head(target))
        answer = send(head, cuts)
        if len(head) > limit:
            assert answer in (b"", guard.TOO_LARGE), (len(head), cuts, answer[:60])
            seen["refused"] += 1
        else:
            assert answer.startswith(b"HTTP/1.1 200 "), (len(head), cuts, answer[:60])
            seen["served"] += 1

    await asyncio.to_thread(check)
    assert seen["refused"] and seen["served"], seen
    no_tracebacks(caplog)
