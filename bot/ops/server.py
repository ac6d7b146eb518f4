"""The ops listener (contract 11): `/healthz`, `/readyz` and `/metrics` over HTTP, GET/HEAD only.

`COGITATOR_OPS_PORT` turns it on, bound to `COGITATOR_OPS_BIND` (127.0.0.1 unless the operator says
otherwise; another address is logged as a warning, since the figures are for the operator's eyes). When the
port is the live board's, the routes join the board's server instead of opening a second one. Either way the
connections pass the live board's guard (bot.web.guard: per-address and total caps, header deadline and size),
so long paths, floods and slowloris connections cost the ops port what they cost the board.

- `/healthz`: 200 `{"ok": true}` while the event loop answers within a second (it runs on that loop, and the
  loop's last measured lag is under 1 s); 503 `{"ok": false}` otherwise.
- `/readyz`: 200 `{"ready": true, "checks": {...}}` when Discord (or the console) is connected, the store
  answers, the catalog is loaded and the /sim pool has a live worker; 503 with `"failed": [names]` otherwise.
- `/metrics`: the Prometheus text format (bot.ops.metrics, bot.ops.live).
"""

from __future__ import annotations

import ipaddress
import logging

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST

from bot.ops.live import Ops
from bot.web import guard
from bot.web.server import WebSettings, serve

log = logging.getLogger("cogitator.ops")


def add_routes(app: web.Application, ops: Ops) -> None:
    """The three endpoints on `app` (the ops listener's own, or the live board's)."""

    async def healthz(_request: web.Request) -> web.Response:
        ok = ops.healthy()
        return web.json_response({"ok": ok}, status=200 if ok else 503)

    async def readyz(_request: web.Request) -> web.Response:
        checks = await ops.ready()
        ready = all(checks.values())
        body: dict = {"ready": ready, "checks": checks}
        if not ready:
            body["failed"] = [name for name, passed in checks.items() if not passed]
        return web.json_response(body, status=200 if ready else 503)

    async def metrics(_request: web.Request) -> web.Response:
        response = web.Response(body=await ops.scrape())
        response.headers["Content-Type"] = CONTENT_TYPE_LATEST
        return response

    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
    app.router.add_get("/metrics", metrics)


def is_public(bind: str) -> bool:
    """True unless `bind` is a loopback address."""
    return not ipaddress.ip_address(bind).is_loopback


def warn_if_public(bind: str, port: int | None) -> None:
    if is_public(bind):
        log.warning("the ops endpoints (/healthz, /readyz, /metrics) listen on a non-loopback address: anyone who "
                    "can reach it reads the bot's figures; firewall it or bind 127.0.0.1",
                    extra={"bind": bind, "port": port})


@web.middleware
async def _plain_errors(request: web.Request, handler):  # noqa: ANN001, ANN202 - aiohttp's middleware shape
    """The router's 404 and 405 as a short plain text, like the live board's."""
    try:
        return await handler(request)
    except web.HTTPException as error:
        return web.Response(status=error.status, text=f"{error.reason}\n", content_type="text/plain",
                            headers={k: v for k, v in error.headers.items() if k == "Allow"})


class OpsServer:
    """The ops endpoints on a listener of their own."""

    def __init__(self, ops: Ops, *, port: int, bind: str = "127.0.0.1") -> None:
        self.ops = ops
        self.settings = WebSettings(port=port, bind=bind)
        self._throttled = guard.Throttled(log)
        self.guard = guard.ConnectionGuard(lambda: self.settings, self._throttled, listener="ops")
        self._runner: web.AppRunner | None = None
        self._listener = None
        self.port: int | None = None

    def app(self) -> web.Application:
        app = web.Application(middlewares=[_plain_errors], client_max_size=1024,
                              handler_args={"max_field_size": 8190, "max_line_size": 8190, "max_headers": 64,
                                            "keepalive_timeout": 15.0})
        add_routes(app, self.ops)
        return app

    async def start(self) -> None:
        warn_if_public(self.settings.bind, self.settings.port)
        self._runner, self._listener, self.port = await serve(self.app(), self.settings, self.guard, self._throttled)
        log.info("ops endpoints listening", extra={"bind": self.settings.bind, "port": self.port})

    async def close(self) -> None:
        if self._listener is not None:
            self._listener.close()
            self._listener = None
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
