"""Local HTTP servers on real loopback sockets, for tests and benches that stand in for an upstream (the
rules and points sources, Discord): only the network edge is faked, the client code runs unchanged.

`serving(app)` runs an aiohttp application on 127.0.0.1 at a port the system picks; `file_app(files)`
serves named bytes as the upstreams do (ETag, 304 on If-None-Match, 404 for the rest).
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from aiohttp import web


def etag(body: bytes) -> str:
    """A strong ETag for a file: a hash of its bytes, so a changed file gets a new one."""
    return '"' + hashlib.sha1(body).hexdigest()[:16] + '"'


def file_app(files: dict[str, bytes], prefix: str = "/") -> web.Application:
    """GET `prefix` + name: the file, with its ETag; 304 when the request already has that ETag."""
    tags = {name: etag(body) for name, body in files.items()}

    async def handle(request: web.Request) -> web.Response:
        name = request.match_info["name"]
        if name not in files:
            raise web.HTTPNotFound()
        if request.headers.get("If-None-Match") == tags[name]:
            return web.Response(status=304, headers={"ETag": tags[name]})
        return web.Response(body=files[name], headers={"ETag": tags[name]})

    app = web.Application()
    app.router.add_get(prefix + "{name:.+}", handle)
    return app


async def start(app: web.Application, **runner_options: Any) -> tuple[web.AppRunner, int]:
    """Serve `app` on 127.0.0.1 at a free port: (the runner, whose `cleanup()` stops it; the port)."""
    runner = web.AppRunner(app, **runner_options)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    try:
        await site.start()
    except BaseException:
        await runner.cleanup()
        raise
    return runner, site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]


@asynccontextmanager
async def serving(app: web.Application) -> AsyncIterator[str]:
    """`app` served while the block runs; yields its base URL, `http://127.0.0.1:PORT`."""
    runner, port = await start(app)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()
