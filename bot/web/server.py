"""The live-board web server: static assets, one read-only page per view, and a server-sent event stream.

Routes (GET/HEAD only):
  /o/<token>/[view]   the page; views: board (default), scoreboard, banner, round, clocks, log
  /o/<token>/state    the current page model as JSON
  /o/<token>/events   server-sent events: one `state` message per committed change, a comment every 15 s,
                      and a last `revoked` message when the link is revoked or the game is gone
  /l/<token>/         a league's table (`/league overlay`), and /l/<token>/state its model as JSON (the page
                      polls it every 3 s; a revoked link's page clears itself)
  /static/<file>      the pages' scripts and style sheets (served from memory, never from a path)
Anything else, a malformed, unknown or revoked token alike: 404 with the same small body.

Every response carries a strict CSP (scripts only from this origin, no inline script or style
attribute), `X-Content-Type-Options: nosniff`, `Referrer-Policy: no-referrer`, no CORS headers, and
`Cache-Control: no-store`. Limits: request bodies are refused; connections are capped per address and in
all, must send their request headers within 10 s and in at most 32 KB (`guard.py`); open event streams
are capped per address and in all.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
import resource
import socket
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib import resources
from typing import Any

from aiohttp import web

from bot.errors import UserError
from bot.web import guard
from bot.web.feed import GameFeed
from bot.web.league_view import league_model
from bot.web.tokens import OverlayTokens

log = logging.getLogger("cogitator.web")

VIEWS = ("board", "scoreboard", "banner", "round", "clocks", "log")
HEARTBEAT_S = 15.0
RETRY_MS = 1000
STREAMS_MAX = 2000
STREAMS_PER_ADDRESS_MAX = 200
HEADER_LINES_MAX = 64
# Idle time allowed between two requests on a kept-alive connection (aiohttp's default is an hour).
KEEPALIVE_S = 15.0
# A page that stops reading its stream (a frozen browser source, a hostile client) is dropped once one write
# has waited this long; the buffers in front of it are kept small, so it holds little memory meanwhile.
STREAM_WRITE_TIMEOUT_S = 30.0
STREAM_SEND_BUFFER = 32 * 1024

SECURITY_HEADERS = {
    "Content-Security-Policy": ("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
                                "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "Cross-Origin-Resource-Policy": "same-origin",
    "X-Frame-Options": "DENY",
}
STATIC_TYPES = {"overlay.js": "text/javascript", "overlay.css": "text/css", "favicon.svg": "image/svg+xml",
                "league.js": "text/javascript", "league.css": "text/css"}
NOT_FOUND = "Not found\n"


@dataclass(frozen=True)
class WebSettings:
    port: int
    bind: str = "127.0.0.1"
    public_url: str | None = None
    streams_max: int = STREAMS_MAX
    streams_per_address_max: int = STREAMS_PER_ADDRESS_MAX
    connections_max: int = guard.CONNECTIONS_MAX
    connections_per_address_max: int = guard.CONNECTIONS_PER_ADDRESS_MAX
    header_timeout_s: float = guard.HEADER_TIMEOUT_S
    header_bytes_max: int = guard.HEADER_BYTES_MAX
    stream_write_timeout_s: float = STREAM_WRITE_TIMEOUT_S
    stream_send_buffer: int = STREAM_SEND_BUFFER

    @property
    def base_url(self) -> str:
        if self.public_url:
            return self.public_url.rstrip("/")
        host = f"[{self.bind}]" if ":" in self.bind else self.bind
        return f"http://{'127.0.0.1' if self.bind in ('0.0.0.0', '::') else host}:{self.port}"


# The pages: each file is its body; the head they share is static/head.html with the page's title and the
# name of its script and style sheet filled in.
PAGES = {"page.html": ("Cogitator live board", "overlay"), "league.html": ("Cogitator league table", "league")}


def _static_files() -> dict[str, bytes]:
    folder = resources.files("bot.web") / "static"
    files = {name: (folder / name).read_bytes() for name in STATIC_TYPES}
    head = (folder / "head.html").read_bytes()
    for page, (title, name) in PAGES.items():
        files[page] = (head.replace(b"{{title}}", title.encode()).replace(b"{{name}}", name.encode())
                       + (folder / page).read_bytes())
    return files


@web.middleware
async def _headers(request: web.Request, handler: Callable[..., Any]) -> web.StreamResponse:
    try:
        response = await handler(request)
    except web.HTTPException as error:  # the router's 404 and 405 (POST, PUT, ...): plain, small, same headers
        response = _not_found() if error.status == 404 else web.Response(
            status=error.status, text=f"{error.reason}\n", content_type="text/plain",
            headers={k: v for k, v in error.headers.items() if k == "Allow"})
    response.headers.update(SECURITY_HEADERS)
    return response


def _not_found() -> web.Response:
    return web.Response(status=404, text=NOT_FOUND, content_type="text/plain")


class WebServer:
    """The aiohttp application and its site, started and stopped with the bot."""

    def __init__(self, settings: WebSettings, *, tokens_of: Callable[[], OverlayTokens],
                 store_of: Callable[[], Any], add_routes: Callable[[web.Application], None] | None = None,
                 leagues_of: Callable[[], Any] | None = None) -> None:
        self.settings = settings
        self._add_routes = add_routes  # more routes on this server (the ops endpoints sharing its port)
        self._tokens_of = tokens_of
        self._leagues_of = leagues_of
        self._files = _static_files()
        self._in_flight = guard.AddressCounts()
        self.open_streams = 0
        # The server's own threads for database reads: a flood of pages can't starve the threads that
        # Discord commands use (asyncio's default executor).
        self._executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="web")
        self.feed = GameFeed(store_of, tokens_of=tokens_of, executor=self._executor)
        self._runner: web.AppRunner | None = None
        self._listener: asyncio.AbstractServer | None = None
        self._throttled = guard.Throttled(log)
        self.guard = guard.ConnectionGuard(lambda: self.settings, self._throttled)
        self._closing = asyncio.Event()
        self.port: int | None = None

    # ------------------------------------------------------------------ lifecycle
    def app(self) -> web.Application:
        app = web.Application(middlewares=[_headers, self._limit], client_max_size=1024,
                              handler_args={"max_field_size": 8190, "max_line_size": 8190,
                                            "max_headers": HEADER_LINES_MAX, "keepalive_timeout": KEEPALIVE_S})
        app.router.add_get("/static/{name}", self._static)
        app.router.add_get("/favicon.ico", self._favicon)
        app.router.add_get("/o/{token}/state", self._state)
        app.router.add_get("/o/{token}/events", self._events)
        app.router.add_get("/o/{token}/{view}", self._page)
        app.router.add_get("/o/{token}/", self._page)
        app.router.add_get("/l/{token}/state", self._league_state)
        app.router.add_get("/l/{token}/", self._league_page)
        if self._add_routes is not None:
            self._add_routes(app)
        return app

    async def start(self) -> None:
        self._runner, self._listener, self.port = await serve(self.app(), self.settings, self.guard, self._throttled,
                                                              handler_cancellation=True)  # a closed page ends its stream at once
        log.info("live board listening", extra={"bind": self.settings.bind, "port": self.port,
                                                "connections_max": min(self.settings.connections_max,
                                                                       self.guard.connections_max)})

    async def close(self) -> None:
        self._closing.set()
        self.feed.wake_all()
        await asyncio.sleep(0)  # let the woken streams finish their responses
        await self.feed.close()
        if self._listener is not None:
            self._listener.close()
            self._listener = None
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        self._executor.shutdown(wait=False, cancel_futures=True)

    def link(self, token: str, kind: str = "o") -> str:
        """The page of a token: a game's live board (`o`) or a league's table (`l`)."""
        base = self.settings.base_url
        if not self.settings.public_url and self.port:
            base = base.rsplit(":", 1)[0] + f":{self.port}"
        return f"{base}/{kind}/{token}/"

    # ------------------------------------------------------------------ handlers
    @web.middleware
    async def _limit(self, request: web.Request, handler: Callable[..., Any]) -> web.StreamResponse:
        """At most `streams_per_address_max` requests in progress per client address (an IPv6 /64 counts as
        one; an open page is one long request) and `streams_max` in all: a flood is answered 429 before any
        work is done."""
        address = guard.client_key(request.remote)
        if not self._in_flight.take(address, self.settings.streams_per_address_max, self.settings.streams_max):
            self.guard.refused("requests")
            return web.Response(status=429, text="Too many open pages\n", content_type="text/plain",
                                headers={"Retry-After": "10"})
        try:
            return await handler(request)
        finally:
            self._in_flight.give_back(address)

    async def _static(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        if name not in STATIC_TYPES:
            return _not_found()
        return web.Response(body=self._files[name], content_type=STATIC_TYPES[name])

    async def _favicon(self, request: web.Request) -> web.Response:
        return web.Response(body=self._files["favicon.svg"], content_type="image/svg+xml")

    async def _resolve(self, request: web.Request):  # noqa: ANN202 - Link | None
        token = request.match_info["token"]
        return await asyncio.get_running_loop().run_in_executor(self._executor, self._tokens_of().resolve, token)

    async def _page(self, request: web.Request) -> web.Response:
        view = request.match_info.get("view") or "board"
        if view not in VIEWS or await self._resolve(request) is None:
            return _not_found()
        html = self._files["page.html"].replace(b"{{view}}", view.encode())
        return web.Response(body=html, content_type="text/html", charset="utf-8")

    async def _league_model(self, request: web.Request) -> dict[str, Any] | None:
        """The league table a /l/ link shows, or None (unknown, revoked, malformed, or the league gone)."""
        if self._leagues_of is None:
            return None
        token = request.match_info["token"]

        def read() -> dict[str, Any] | None:
            found = self._tokens_of().resolve_league(token)
            if found is None:
                return None
            try:
                return league_model(self._leagues_of().standing(found[1], None, None, league_id=found[0]))
            except UserError:
                return None
        return await asyncio.get_running_loop().run_in_executor(self._executor, read)

    async def _league_page(self, request: web.Request) -> web.Response:
        token = request.match_info["token"]
        found = await asyncio.get_running_loop().run_in_executor(self._executor, self._tokens_of().resolve_league, token)
        if found is None or self._leagues_of is None:
            return _not_found()
        return web.Response(body=self._files["league.html"], content_type="text/html", charset="utf-8")

    async def _league_state(self, request: web.Request) -> web.Response:
        model = await self._league_model(request)
        if model is None:
            return _not_found()
        return web.Response(body=json.dumps(model, ensure_ascii=False).encode(), content_type="application/json")

    async def _state(self, request: web.Request) -> web.Response:
        link = await self._resolve(request)
        if link is None:
            return _not_found()
        box, payload = await self.feed.subscribe(link.game_id, link.channel_id, link.token_hash)
        self.feed.unsubscribe(link.game_id, box)
        if payload is None:
            return _not_found()
        return web.Response(body=_envelope(payload), content_type="application/json")

    async def _events(self, request: web.Request) -> web.StreamResponse:
        link = await self._resolve(request)
        if link is None:
            return _not_found()
        box, payload = await self.feed.subscribe(link.game_id, link.channel_id, link.token_hash)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "X-Accel-Buffering": "no"})
        response.headers.update(SECURITY_HEADERS)
        self.open_streams += 1
        try:
            await response.prepare(request)
            send = self._stream_sender(request, response)
            await send(f"retry: {RETRY_MS}\n\n".encode())
            while True:
                if payload is not None:
                    await send(b"event: state\ndata: " + _envelope(payload) + b"\n\n")
                else:
                    await send(b": ping\n\n")
                payload = await box.get(HEARTBEAT_S * random.uniform(0.75, 1.25))  # spread: no bursts of 1,000
                if self._closing.is_set():
                    break
                if box.ended:  # the link was revoked or the game is gone: the page clears itself, no reconnect
                    await send(b"event: revoked\ndata: {}\n\n")
                    break
        except ConnectionResetError:  # the page went away mid-write
            pass
        except TimeoutError:  # the page stopped reading: drop it (a live browser source reconnects by itself)
            self._throttled.warning("stalled-stream", "live board: a page of game %s stopped reading its stream; "
                                    "dropped after %.0f s", link.game_id, self.settings.stream_write_timeout_s)
            if request.transport is not None:
                request.transport.abort()
        finally:
            self.open_streams -= 1
            self.feed.unsubscribe(link.game_id, box)
        return response


    def _stream_sender(self, request: web.Request, response: web.StreamResponse) -> Callable[[bytes], Any]:
        """Writes to one page's stream with a deadline, through small buffers: a page that stops reading
        costs at most about `stream_send_buffer` twice (kernel and transport) until the deadline drops it."""
        size = self.settings.stream_send_buffer
        transport = request.transport
        if transport is not None:
            transport.set_write_buffer_limits(high=size)
            sock = transport.get_extra_info("socket")
            if sock is not None:
                with contextlib.suppress(OSError):
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, size)
        timeout = self.settings.stream_write_timeout_s

        async def send(data: bytes) -> None:
            async with asyncio.timeout(timeout):  # in this task: no extra task per write (as wait_for makes)
                await response.write(data)
        return send


async def serve(app: web.Application, settings: WebSettings, connection_guard: guard.ConnectionGuard,
                throttled: guard.Throttled, *, handler_cancellation: bool = False,
                ) -> tuple[web.AppRunner, asyncio.AbstractServer, int]:
    """Serve `app` on settings.bind:port through `connection_guard` (per-address and total connection caps,
    header deadline and size), as the live board does; the ops listener (bot.ops.server) serves the same way.
    Returns the runner, the listener and the port (the one chosen when settings.port is 0)."""
    files = _raise_open_files_limit()
    # Never let connections take the descriptors the bot needs for Discord and its databases.
    connection_guard.connections_max = max(1, files - guard.FD_RESERVE) if files else guard.CONNECTIONS_MAX
    runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=1.0,
                           handler_cancellation=handler_cancellation,
                           logger=guard.HttpErrorLog(logging.getLogger("cogitator.web.http"), throttled,
                                                     connection_guard.name))
    await runner.setup()
    assert runner.server is not None
    try:
        # Our own listener instead of web.TCPSite: each connection passes the guard before aiohttp sees it.
        listener = await asyncio.get_running_loop().create_server(
            connection_guard.factory(runner.server), settings.bind, settings.port, backlog=1024, reuse_address=True)
    except BaseException:
        await runner.cleanup()
        raise
    sockets = listener.sockets or []
    return runner, listener, (sockets[0].getsockname()[1] if sockets else settings.port)


def _envelope(payload: bytes) -> bytes:
    """The shared page model plus the server's clock, so a page counts a running clock down correctly."""
    return b'{"now":' + json.dumps(round(time.time(), 3)).encode() + b',"state":' + payload + b"}"


def _raise_open_files_limit() -> int | None:
    """Each open page is a socket: let the process use its hard limit of open files. Returns the limit."""
    with contextlib.suppress(ValueError, OSError):
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if hard == resource.RLIM_INFINITY or soft < hard:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard if hard != resource.RLIM_INFINITY else 65536, hard))
    with contextlib.suppress(ValueError, OSError):
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        return None if soft == resource.RLIM_INFINITY else int(soft)
    return None
