"""A local stand-in for Discord (API v10): REST, the gateway websocket and interaction webhooks.

`FakeDiscord` runs an aiohttp server on 127.0.0.1 in a background thread with its own event loop,
so synchronous tests (and the benchmark) drive it with plain method calls. Everything the bot
sends is recorded in `requests`; interactions are tracked as `InteractionRecord`s.

What is implemented (the parts of Discord discord.py uses for this bot):
- `GET /gateway/bot`, `/gateway`, `/users/@me`, `/oauth2/applications/@me`, `/applications/@me`
- `GET/PUT /applications/{id}/commands` and `/applications/{id}/guilds/{gid}/commands`, validated
  with Discord's limits (a bad command list gets 400 Invalid Form Body, as on Discord)
- the gateway: HELLO, IDENTIFY (with shards), heartbeat/ACK, READY, GUILD_CREATE, dispatch with
  sequence numbers, RESUME with replay of missed events, INVALID_SESSION, zlib-stream compression
- `POST /interactions/{id}/{token}/callback` types 4-9, with the 3-second deadline, "already
  acknowledged" errors and `with_response` bodies
- webhook follow-ups (`POST /webhooks/{app}/{token}`), `GET/PATCH/DELETE .../messages/{id|@original}`,
  JSON or multipart with attachments
- the CDN: files users attach to a command (`GET /attachments/upload/{id}/{name}`)
- rate limits on demand: the next N matching requests get 429 with `retry_after`
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import threading
import time
import uuid
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSMsgType, web

from tests import localserver
from tests.fakediscord import payloads as P
from tests.fakediscord.validate import choices_problems, command_problems, message_problems

API = "/api/v10"
CALLBACK_DEADLINE_S = 3.0  # Discord's limit for the initial response to an interaction
CALLBACK_TYPES = {1: "pong", 4: "message", 5: "defer", 6: "defer_update", 7: "update", 8: "autocomplete", 9: "modal"}
# Discord close codes the fake uses.
CLOSE_UNKNOWN_ERROR = 4000
CLOSE_AUTH_FAILED = 4004
CLOSE_INVALID_SHARD = 4010
ADMINISTRATOR = 1 << 3


class FakeDiscordError(AssertionError):
    """Something a Discord client would have refused to send, or the bot never answered."""


@dataclass
class Recorded:
    """One HTTP request the bot made, and what the fake answered."""

    at: float
    method: str
    path: str
    query: dict[str, str]
    body: Any
    files: dict[str, bytes]
    status: int = 0
    peer_port: int | None = None
    authorization: str | None = None


@dataclass
class Callback:
    at: float
    type: int
    data: dict[str, Any]
    files: dict[str, bytes]
    status: int


@dataclass
class InteractionRecord:
    """An interaction the fake dispatched and everything the bot answered to it."""

    id: int
    token: str
    payload: dict[str, Any]
    shard: int
    session_id: str
    sent_at: float = 0.0  # monotonic, once the frame was written (or buffered while disconnected)
    attempts: list[Recorded] = field(default_factory=list)  # every callback POST, including rejected ones
    callbacks: list[Callback] = field(default_factory=list)  # accepted initial responses (at most one)
    followups: list[dict[str, Any]] = field(default_factory=list)  # message payloads as stored
    edits: list[dict[str, Any]] = field(default_factory=list)
    original_message_id: int | None = None
    files: dict[str, bytes] = field(default_factory=dict)  # every attachment sent for this interaction

    @property
    def callback(self) -> Callback | None:
        return self.callbacks[0] if self.callbacks else None

    @property
    def latency(self) -> float | None:
        """Seconds from INTERACTION_CREATE written to the accepted callback received."""
        return self.callback.at - self.sent_at if self.callback else None

    @property
    def answer_latency(self) -> float | None:
        """Seconds until the user sees the answer: the callback, or after a deferral the first edit/follow-up."""
        if self.callback is None:
            return None
        if self.callback.type not in (5, 6) or (self.callback.type == 6 and not self.edits + self.followups):
            return self.latency
        times = [m["_at"] for m in self.edits + self.followups]
        return min(times) - self.sent_at if times else None

    def messages(self) -> list[dict[str, Any]]:
        """Every message body the bot produced: the response or final edit, then follow-ups."""
        out = []
        if self.callback and self.callback.type in (4, 7):
            out.append(self.callback.data)
        out += self.edits
        out += self.followups
        return out

    def text(self) -> str:
        """All readable text of every message, flattened (for assertions)."""
        parts: list[str] = []
        for body in self.messages():
            parts.append(body.get("content") or "")
            for embed in body.get("embeds") or []:
                parts += [embed.get("title") or "", embed.get("description") or ""]
                for f in embed.get("fields") or []:
                    parts += [f.get("name") or "", f.get("value") or ""]
                parts.append((embed.get("footer") or {}).get("text") or "")
        return "\n".join(p for p in parts if p)


@dataclass
class _Conn:
    ws: web.WebSocketResponse
    request: web.Request
    compressor: Any = None
    session: Session | None = None
    heartbeats: int = 0

    async def send(self, frame: dict[str, Any]) -> None:
        text = json.dumps(frame, separators=(",", ":"))
        if self.compressor is not None:
            data = self.compressor.compress(text.encode()) + self.compressor.flush(zlib.Z_SYNC_FLUSH)
            await self.ws.send_bytes(data)
        else:
            await self.ws.send_str(text)


@dataclass
class Session:
    id: str
    shard: tuple[int, int]
    intents: int
    identify: dict[str, Any]
    seq: int = 0
    buffer: list[dict[str, Any]] = field(default_factory=list)
    conn: _Conn | None = None
    resumes: int = 0
    invalidated: bool = False


@dataclass
class _RateLimit:
    method: str
    pattern: re.Pattern[str]
    remaining: int
    retry_after: float
    is_global: bool


class FakeDiscord:
    """The fake Discord. `start()` it, give the bot `env()`, then `slash(...)` and inspect records."""

    def __init__(self, *, guilds: Iterable[P.Guild] | None = None, heartbeat_interval_ms: int = 41_250,
                 callback_deadline: float = CALLBACK_DEADLINE_S) -> None:
        self.application_id = 424_242_424_242_424_242
        self.token = P.fake_token(self.application_id)
        self.bot_user = P.user(self.application_id, "Cogitator", bot=True)
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.callback_deadline = callback_deadline
        self.guilds: dict[int, P.Guild] = {g.id: g for g in (guilds or default_guilds())}
        self.members: dict[int, P.Member] = {111: P.Member(111, "Alice"), 222: P.Member(222, "Bob")}
        self.requests: list[Recorded] = []
        self.global_commands: list[dict[str, Any]] = []
        self.guild_commands: dict[int, list[dict[str, Any]]] = {}
        self.command_puts: list[Recorded] = []
        self.sessions: dict[str, Session] = {}
        self.identifies: list[dict[str, Any]] = []
        self.resumes: list[dict[str, Any]] = []
        self.interactions: dict[int, InteractionRecord] = {}
        self.messages: dict[int, dict[str, Any]] = {}
        self.gateway_closes: list[tuple[str | None, int | None]] = []  # (session id, close code from the bot)
        self.gateway_received: list[dict[str, Any]] = []  # every frame the bot sent (tokens redacted)
        self.heartbeats = 0
        self._by_token: dict[str, InteractionRecord] = {}
        self._rate_limits: list[_RateLimit] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._changed: asyncio.Condition | None = None
        self.port = 0
        self.uploads: dict[str, bytes] = {}  # attachment id -> the bytes a user attached to a command
        # messages the bot posted to a channel itself (POST /channels/{id}/messages), in order
        self.channel_posts: list[tuple[int, dict[str, Any]]] = []
        self.deleted_channels: set[int] = set()  # answer 404 Unknown Channel, as after a deletion
        self.forbidden_channels: set[int] = set()  # answer 403 Missing Permissions (no Send Messages there)

    # ------------------------------------------------------------------ lifecycle (test thread)
    def start(self) -> FakeDiscord:
        started = threading.Event()
        errors: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self._serve())
            except BaseException as error:  # surfaced to start()
                errors.append(error)
                started.set()
                return
            started.set()
            loop.run_forever()
            loop.run_until_complete(self._shutdown())
            loop.close()

        self._thread = threading.Thread(target=run, name="fake-discord", daemon=True)
        self._thread.start()
        started.wait(10)
        if errors:
            raise errors[0]
        return self

    def stop(self) -> None:
        if self._loop and self._thread:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
            self._thread = None

    def __enter__(self) -> FakeDiscord:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def api_base(self) -> str:
        return self.base_url + API

    @property
    def gateway_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/gateway"

    @property
    def resume_gateway_url(self) -> str:
        # A different path from the initial gateway, so tests can see the bot resumes where READY told it to.
        return f"ws://127.0.0.1:{self.port}/gateway-resume"

    def env(self) -> dict[str, str]:
        """Environment for a bot process that should talk to this fake."""
        return {"DISCORD_TOKEN": self.token, "COGITATOR_DISCORD_API_BASE": self.api_base,
                "COGITATOR_DISCORD_GATEWAY_URL": self.gateway_url}

    def call(self, coro: Any, timeout: float = 30.0) -> Any:
        """Run a coroutine on the fake's loop and wait for its result (from the test thread)."""
        assert self._loop is not None, "start() the fake first"
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    def wait_until(self, predicate: Callable[[], bool], timeout: float = 30.0, what: str = "condition") -> None:
        """Block until `predicate()` (evaluated on the fake's loop after each change) is true.

        Gives up early when `self.watchdog()` returns a reason (e.g. the bot process died).
        """
        async def waiter() -> None:
            assert self._changed is not None
            async with self._changed:
                await asyncio.wait_for(self._changed.wait_for(predicate), 0.5)

        deadline = time.monotonic() + timeout
        while True:
            try:
                self.call(waiter(), 10)
                return
            except TimeoutError:
                pass
            reason = self.watchdog()
            if reason:
                raise FakeDiscordError(f"gave up waiting for {what}: {reason}")
            if time.monotonic() > deadline:
                raise FakeDiscordError(f"timed out after {timeout:.0f} s waiting for {what}")

    def watchdog(self) -> str | None:
        """Override or assign: returns why waiting is pointless (None to keep waiting)."""
        return None

    # ------------------------------------------------------------------ server
    async def _serve(self) -> None:
        self._changed = asyncio.Condition()
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_get("/gateway", self._gateway)
        app.router.add_get("/gateway-resume", self._gateway)
        app.router.add_route("*", API + "/{tail:.*}", self._rest)
        app.router.add_get("/attachments/upload/{id}/{name}", self._upload)
        self._runner, self.port = await localserver.start(app, access_log=None, handle_signals=False)

    async def _upload(self, request: web.Request) -> web.StreamResponse:
        """The CDN: a file a user attached to a command (what `Attachment.read()` downloads)."""
        data = self.uploads.get(request.match_info["id"])
        if data is None:
            return web.json_response({"message": "Unknown attachment", "code": 0}, status=404)
        return web.Response(body=data, content_type="application/octet-stream")

    async def _shutdown(self) -> None:
        for session in self.sessions.values():
            if session.conn is not None:
                with contextlib.suppress(Exception):
                    await session.conn.ws.close(code=1001)
        if self._runner is not None:
            await self._runner.cleanup()

    async def _notify(self) -> None:
        assert self._changed is not None
        async with self._changed:
            self._changed.notify_all()

    # ------------------------------------------------------------------ REST
    async def _rest(self, request: web.Request) -> web.StreamResponse:
        path = "/" + request.match_info["tail"]
        body, files = await _read_body(request)
        peer = request.transport.get_extra_info("peername") if request.transport else None
        rec = Recorded(time.monotonic(), request.method, path, dict(request.query), body, files,
                       peer_port=peer[1] if peer else None, authorization=request.headers.get("Authorization"))
        self.requests.append(rec)
        m = re.fullmatch(r"/interactions/(\d+)/[^/]+/callback", path)
        if m and int(m.group(1)) in self.interactions:
            self.interactions[int(m.group(1))].attempts.append(rec)  # rate-limited attempts count too
        try:
            limited = self._take_rate_limit(request.method, path)
            if limited is not None:
                response = _rate_limited(limited)
            else:
                response = await self._route(request.method, path, body, files, rec)
        except web.HTTPException as error:
            response = error
        rec.status = response.status
        await self._notify()
        return response

    async def _route(self, method: str, path: str, body: Any, files: dict[str, bytes], rec: Recorded) -> web.StreamResponse:
        m = re.fullmatch(r"/interactions/(\d+)/([^/]+)/callback", path)
        if m and method == "POST":
            return self._callback(int(m.group(1)), m.group(2), body, files, rec)
        m = re.fullmatch(r"/webhooks/(\d+)/([^/]+)(?:/messages/(@original|\d+))?", path)
        if m:
            return self._webhook(method, int(m.group(1)), m.group(2), m.group(3), body, files)
        # Everything else is bot-authenticated.
        if rec.authorization != f"Bot {self.token}":
            return _error(401, 0, "401: Unauthorized")
        if method == "GET" and path in ("/gateway/bot", "/gateway"):
            data: dict[str, Any] = {"url": self.gateway_url}
            if path == "/gateway/bot":
                data |= {"shards": 1, "session_start_limit": {"total": 1000, "remaining": 999, "reset_after": 14_400_000,
                                                               "max_concurrency": 1}}
            return _json(data)
        if method == "GET" and path == "/users/@me":
            return _json(self.bot_user)
        m = re.fullmatch(r"/channels/(\d+)(/messages)?", path)
        if m:
            return self._channel(method, int(m.group(1)), bool(m.group(2)), body)
        if method == "GET" and path in ("/oauth2/applications/@me", "/applications/@me"):
            return _json(self._application())
        m = re.fullmatch(r"/applications/(\d+)(?:/guilds/(\d+))?/commands", path)
        if m:
            if int(m.group(1)) != self.application_id:
                return _error(403, 20012, "You are not authorized to perform this action on this application")
            guild_id = int(m.group(2)) if m.group(2) else None
            if guild_id is not None and guild_id not in self.guilds:
                return _error(403, 50001, "Missing Access")
            if method == "GET":
                return _json(self._commands(guild_id))
            if method == "PUT":
                problems = command_problems(body)
                if problems:
                    return _error(400, 50035, "Invalid Form Body", problems)
                self.command_puts.append(rec)
                stored = [self._store_command(c, guild_id) for c in body]
                if guild_id is None:
                    self.global_commands = stored
                else:
                    self.guild_commands[guild_id] = stored
                return _json(stored)
        return _error(404, 0, f"404: Not Found ({method} {path})")

    def _channel_payload(self, channel_id: int) -> dict[str, Any] | None:
        """A guild's text channel as Discord describes it, None when there is none (or it was deleted)."""
        if channel_id in self.deleted_channels:
            return None
        for guild in self.guilds.values():
            if guild.channel_id == channel_id:
                return next(c for c in guild.create_payload()["channels"]) | {"guild_id": str(guild.id)}
        return None

    def _channel(self, method: str, channel_id: int, messages: bool, body: Any) -> web.Response:
        """GET a channel, or POST a message to it as the bot (points news): 404 and 403 as Discord answers."""
        channel = self._channel_payload(channel_id)
        if channel is None:
            return _error(404, 10003, "Unknown Channel")
        if not messages and method == "GET":
            return _json(channel)
        if messages and method == "POST":
            if channel_id in self.forbidden_channels:
                return _error(403, 50013, "Missing Permissions")
            message_id = P.snowflake()
            data = P.message(message_id, channel_id, self.bot_user, body or {}, {}, base_url=self.base_url)
            data["type"] = 0
            self.channel_posts.append((channel_id, body or {}))
            return _json(data)
        return _error(405, 0, "405: Method Not Allowed")

    def _application(self) -> dict[str, Any]:
        return {"id": str(self.application_id), "name": "Cogitator", "icon": None, "description": "",
                "summary": "", "type": None, "bot_public": True, "bot_require_code_grant": False,
                "verify_key": "0" * 64, "flags": 0, "owner": P.user(111, "Alice"), "team": None,
                "rpc_origins": [], "terms_of_service_url": None, "privacy_policy_url": None,
                "interactions_endpoint_url": None, "redirect_uris": [], "tags": [], "install_params": None,
                "custom_install_url": None, "approximate_guild_count": len(self.guilds),
                "bot": self.bot_user, "integration_types_config": {"0": {}}}

    def _commands(self, guild_id: int | None) -> list[dict[str, Any]]:
        return self.global_commands if guild_id is None else self.guild_commands.get(guild_id, [])

    def _store_command(self, command: dict[str, Any], guild_id: int | None) -> dict[str, Any]:
        existing = {c["name"]: c for c in self._commands(guild_id)}
        old = existing.get(command["name"])
        stored = {
            "type": 1, "options": [], "default_member_permissions": None, "nsfw": False,
            "contexts": None, "integration_types": [0], **command,
            "id": old["id"] if old else str(P.snowflake()),
            "application_id": str(self.application_id), "version": str(P.snowflake()),
        }
        if guild_id is not None:
            stored["guild_id"] = str(guild_id)
        return stored

    # ------------------------------------------------------------------ interaction callbacks and webhooks
    def _callback(self, interaction_id: int, token: str, body: Any, files: dict[str, bytes], rec: Recorded) -> web.Response:
        record = self.interactions.get(interaction_id)
        if record is None or record.token != token:
            return _error(404, 10062, "Unknown interaction")
        if record.callbacks:
            return _error(400, 40060, "Interaction has already been acknowledged.")
        if rec.at - record.sent_at > self.callback_deadline:
            return _error(404, 10062, "Unknown interaction")  # what Discord answers after the 3 s window
        if not isinstance(body, dict) or body.get("type") not in CALLBACK_TYPES:
            return _error(400, 50035, "Invalid Form Body", ["type: not a callback type"])
        kind = body["type"]
        data = body.get("data") or {}
        itype = record.payload["type"]
        allowed = {2: {4, 5, 9}, 3: {4, 5, 6, 7, 9}, 4: {8}, 5: {4, 5, 6, 7}}.get(itype, set())
        if kind not in allowed:
            return _error(400, 40043, f"Interaction of type {itype} cannot be answered with callback type {kind}")
        problems = choices_problems(data.get("choices")) if kind == 8 else message_problems(data) if kind in (4, 7) else []
        if problems:
            return _error(400, 50035, "Invalid Form Body", problems)
        record.callbacks.append(Callback(rec.at, kind, data, files, 200))
        record.files |= files
        flags = int(data.get("flags") or 0)
        interaction = {"id": str(interaction_id), "type": itype, "response_message_loading": kind == 5,
                       "response_message_ephemeral": bool(flags & P.EPHEMERAL)}
        resource: dict[str, Any] = {"type": kind}
        if kind in (4, 5):
            message_id = P.snowflake()
            stored = dict(data, flags=flags | (P.LOADING if kind == 5 else 0))
            message = self._store_message(message_id, record, stored, files)
            record.original_message_id = message_id
            interaction["response_message_id"] = str(message_id)
            resource["message"] = message
        elif kind == 7:
            target = int(record.payload["message"]["id"])
            old = self.messages.get(target, record.payload["message"])
            message = dict(old, **{k: v for k, v in data.items() if v is not None})
            self.messages[target] = message
            record.original_message_id = target
            resource["message"] = message
        elif kind == 6 and "message" in record.payload:
            record.original_message_id = int(record.payload["message"]["id"])
        if rec.query.get("with_response") not in ("1", "true", "True"):
            return web.Response(status=204)
        return _json({"interaction": interaction, "resource": resource})

    def _store_message(self, message_id: int, record: InteractionRecord, body: dict[str, Any],
                       files: dict[str, bytes]) -> dict[str, Any]:
        message = P.message(message_id, int(record.payload["channel_id"]), self.bot_user, body, files,
                            interaction_id=record.id, base_url=self.base_url)
        self.messages[message_id] = message
        return message

    def _webhook(self, method: str, app_id: int, token: str, target: str | None, body: Any,
                 files: dict[str, bytes]) -> web.Response:
        record = self._by_token.get(token)
        if app_id != self.application_id or record is None:
            return _error(404, 10015, "Unknown Webhook")
        if not record.callbacks:
            return _error(404, 10015, "Unknown Webhook")  # no follow-ups before the interaction is acknowledged
        body = body if isinstance(body, dict) else {}
        if method == "POST" and target is None:
            problems = message_problems(body)
            if problems:
                return _error(400, 50035, "Invalid Form Body", problems)
            original = self.messages.get(record.original_message_id or 0)
            if record.callback.type == 5 and original is not None and int(original.get("flags") or 0) & P.LOADING:
                # Discord: the first follow-up after a deferral replaces the "thinking…" message.
                message = self._store_message(int(original["id"]), record, body, files)
            else:
                message = self._store_message(P.snowflake(), record, body, files)
            record.followups.append(dict(body, _message_id=message["id"], _files=sorted(files), _at=time.monotonic()))
            record.files |= files
            return _json(message)
        if target is None:
            return _error(405, 0, "405: Method Not Allowed")
        message_id = record.original_message_id if target == "@original" else int(target)
        if message_id is None or message_id not in self.messages:
            return _error(404, 10008, "Unknown Message")
        if method == "GET":
            return _json(self.messages[message_id])
        if method == "DELETE":
            self.messages.pop(message_id)
            return web.Response(status=204)
        if method == "PATCH":
            problems = message_problems(body)
            if problems:
                return _error(400, 50035, "Invalid Form Body", problems)
            old = self.messages[message_id]
            merged = dict(old, **{k: v for k, v in body.items() if v is not None and k != "attachments"})
            merged["flags"] = int(old.get("flags") or 0) & ~P.LOADING
            if files or "attachments" in body:
                kept = {a.get("filename"): b"" for a in old.get("attachments", [])
                        if any(str(x.get("id")) == str(a.get("id")) for x in body.get("attachments") or [])}
                merged["attachments"] = P.message(message_id, 0, self.bot_user, {}, kept | files,
                                                  base_url=self.base_url)["attachments"]
            self.messages[message_id] = merged
            record.edits.append(dict(body, _message_id=str(message_id), _files=sorted(files), _at=time.monotonic()))
            record.files |= files
            return _json(merged)
        return _error(405, 0, "405: Method Not Allowed")

    # ------------------------------------------------------------------ rate limits on demand
    def rate_limit(self, method: str, path_regex: str, *, count: int = 1, retry_after: float = 0.3,
                   is_global: bool = False) -> None:
        """Answer the next `count` requests matching (method, path) with 429 and `retry_after`."""
        limit = _RateLimit(method.upper(), re.compile(path_regex), count, retry_after, is_global)
        self.call(self._add_rate_limit(limit))

    async def _add_rate_limit(self, limit: _RateLimit) -> None:
        self._rate_limits.append(limit)

    def _take_rate_limit(self, method: str, path: str) -> _RateLimit | None:
        for limit in self._rate_limits:
            if limit.remaining > 0 and limit.method == method and limit.pattern.search(path):
                limit.remaining -= 1
                return limit
        return None

    # ------------------------------------------------------------------ gateway
    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(autoping=True, max_msg_size=16 * 1024 * 1024)
        await ws.prepare(request)
        compressor = zlib.compressobj() if request.query.get("compress") == "zlib-stream" else None
        conn = _Conn(ws, request, compressor)
        await conn.send({"op": 10, "d": {"heartbeat_interval": self.heartbeat_interval_ms}, "s": None, "t": None})
        try:
            async for msg in ws:
                if msg.type is not WSMsgType.TEXT:
                    continue
                frame = json.loads(msg.data)
                op, data = frame.get("op"), frame.get("d")
                redacted = dict(data, token="<redacted>") if isinstance(data, dict) and "token" in data else data
                self.gateway_received.append({"op": op, "d": redacted, "at": time.monotonic()})
                if op == 1:
                    conn.heartbeats += 1
                    self.heartbeats += 1
                    await conn.send({"op": 11, "d": None, "s": None, "t": None})
                elif op == 2:
                    await self._identify(conn, data)
                elif op == 6:
                    await self._resume(conn, data)
                # op 3 (presence) and others are accepted silently.
                await self._notify()
        finally:
            session = conn.session
            if session is not None and session.conn is conn:
                session.conn = None
            self.gateway_closes.append((session.id if session else None, ws.close_code))
            await self._notify()
        return ws

    async def _identify(self, conn: _Conn, data: dict[str, Any]) -> None:
        self.identifies.append(dict(data, token="<redacted>"))
        if data.get("token") != self.token:
            await conn.ws.close(code=CLOSE_AUTH_FAILED, message=b"Authentication failed.")
            return
        shard_id, shard_count = data.get("shard") or [0, 1]
        if not 0 <= shard_id < shard_count:
            await conn.ws.close(code=CLOSE_INVALID_SHARD, message=b"Invalid shard.")
            return
        session = Session(uuid.uuid4().hex, (shard_id, shard_count), int(data.get("intents") or 0), data)
        session.conn = conn
        conn.session = session
        self.sessions[session.id] = session
        guilds = self.guilds_of_shard(shard_id, shard_count)
        await self._dispatch(session, "READY", {
            "v": 10, "user": self.bot_user, "guilds": [{"id": str(g.id), "unavailable": True} for g in guilds],
            "session_id": session.id, "session_type": "normal", "resume_gateway_url": self.resume_gateway_url,
            "shard": [shard_id, shard_count], "application": {"id": str(self.application_id), "flags": 0},
            "private_channels": [], "relationships": [], "presences": [], "guild_join_requests": [],
            "geo_ordered_rtc_regions": [], "user_settings": {}, "auth_session_id_hash": "",
        })
        for guild in guilds:
            await self._dispatch(session, "GUILD_CREATE", guild.create_payload())

    async def _resume(self, conn: _Conn, data: dict[str, Any]) -> None:
        self.resumes.append({"session_id": data.get("session_id"), "seq": data.get("seq"),
                             "path": conn.request.path})
        session = self.sessions.get(data.get("session_id") or "")
        if session is None or session.invalidated or data.get("token") != self.token:
            await conn.send({"op": 9, "d": False, "s": None, "t": None})
            return
        if session.conn is not None and session.conn is not conn:
            with contextlib.suppress(Exception):
                await session.conn.ws.close(code=CLOSE_UNKNOWN_ERROR)
        session.conn = conn
        conn.session = session
        session.resumes += 1
        last = int(data.get("seq") or 0)
        for frame in session.buffer:
            if frame["s"] > last:
                await conn.send(frame)
        await self._dispatch(session, "RESUMED", {})

    async def _dispatch(self, session: Session, event: str, data: dict[str, Any]) -> None:
        """Send a DISPATCH with the next sequence number; buffered for replay if the bot is away."""
        session.seq += 1
        frame = {"op": 0, "t": event, "s": session.seq, "d": data}
        session.buffer.append(frame)
        del session.buffer[:-500]
        if session.conn is not None and not session.conn.ws.closed:
            with contextlib.suppress(ConnectionError, RuntimeError):
                await session.conn.send(frame)

    def guilds_of_shard(self, shard_id: int, shard_count: int) -> list[P.Guild]:
        return [g for g in self.guilds.values() if P.shard_of(g.id, shard_count) == shard_id]

    def session_for_guild(self, guild_id: int | None) -> Session:
        """The newest live (non-invalidated) session whose shard owns the guild (DMs go to shard 0)."""
        candidates = [s for s in self.sessions.values()
                      if not s.invalidated and (P.shard_of(guild_id, s.shard[1]) if guild_id else 0) == s.shard[0]]
        if not candidates:
            raise FakeDiscordError(f"no bot session owns guild {guild_id}")
        return candidates[-1]

    # ------------------------------------------------------------------ controls for tests
    def wait_for_sessions(self, shards: Iterable[tuple[int, int]] = ((0, 1),), timeout: float = 60.0) -> None:
        """Wait until every given (shard_id, shard_count) has identified and received its guilds."""
        wanted = set(shards)

        def ready() -> bool:
            live = {s.shard for s in self.sessions.values() if s.conn is not None and not s.invalidated}
            return wanted <= live
        self.wait_until(ready, timeout, f"bot sessions for shards {sorted(wanted)}")

    def wait_for_commands(self, timeout: float = 60.0, guild_id: int | None = None) -> list[dict[str, Any]]:
        self.wait_until(lambda: bool(self._commands(guild_id)), timeout, "command sync")
        return self._commands(guild_id)

    def drop(self, shard: tuple[int, int] = (0, 1), *, mode: str = "abort") -> Session:
        """Cut the gateway connection of a shard: `abort` the TCP stream, or `close` with code 4000."""
        return self.call(self._drop(shard, mode))

    async def _drop(self, shard: tuple[int, int], mode: str) -> Session:
        session = next(s for s in reversed(list(self.sessions.values()))
                       if s.shard == shard and s.conn is not None and not s.invalidated)
        conn = session.conn
        assert conn is not None
        session.conn = None
        if mode == "abort":
            transport = conn.request.transport
            if transport is not None:
                transport.abort()
        else:
            await conn.ws.close(code=CLOSE_UNKNOWN_ERROR, message=b"Unknown error")
        await self._notify()
        return session

    def request_reconnect(self, shard: tuple[int, int] = (0, 1)) -> Session:
        """Send op 7 RECONNECT (Discord does this when a gateway node restarts): the bot must resume."""
        return self.call(self._request_reconnect(shard))

    async def _request_reconnect(self, shard: tuple[int, int]) -> Session:
        session = next(s for s in reversed(list(self.sessions.values()))
                       if s.shard == shard and s.conn is not None and not s.invalidated)
        assert session.conn is not None
        await session.conn.send({"op": 7, "d": None, "s": None, "t": None})
        return session

    def invalidate(self, shard: tuple[int, int] = (0, 1)) -> Session:
        """Send INVALID_SESSION (not resumable): the bot must identify again from scratch."""
        return self.call(self._invalidate(shard))

    async def _invalidate(self, shard: tuple[int, int]) -> Session:
        session = next(s for s in reversed(list(self.sessions.values()))
                       if s.shard == shard and s.conn is not None and not s.invalidated)
        session.invalidated = True
        assert session.conn is not None
        await session.conn.send({"op": 9, "d": False, "s": None, "t": None})
        await self._notify()
        return session

    def set_permissions(self, user_id: int, *extra: int) -> None:
        member = self.members.setdefault(user_id, P.Member(user_id, f"user{user_id}"))
        for bit in extra:
            member.permissions |= bit

    # ------------------------------------------------------------------ sending interactions
    def find_command(self, path: str, guild_id: int | None) -> tuple[dict[str, Any], list[str]]:
        """The registered command for '/game start' style paths (guild commands shadow global ones)."""
        words = path.lstrip("/").split()
        pool = (self.guild_commands.get(guild_id, []) if guild_id else []) + self.global_commands
        command = next((c for c in pool if c["name"] == words[0] and c.get("type", 1) == 1), None)
        if command is None:
            raise FakeDiscordError(f"/{words[0]} is not a registered command (registered: "
                                   f"{sorted(c['name'] for c in pool)})")
        return command, words[1:]

    def build_command_data(self, path: str, options: dict[str, Any] | None, *, guild_id: int | None,
                           focused: str | None = None, user_id: int | None = 111) -> dict[str, Any]:
        """Interaction `data` exactly as a Discord client builds it from the *registered* command schema.

        Raises FakeDiscordError for what the client itself would refuse: unknown options, a missing
        required option, a value of the wrong type or outside its choices/limits.
        """
        command, subpath = self.find_command(path, guild_id)
        contexts = command.get("contexts")
        if guild_id is None and (command.get("dm_permission") is False
                                 or contexts is not None and not {1, 2} & set(contexts)):
            raise FakeDiscordError(f"/{command['name']} is only available in servers")
        if guild_id is not None and command.get("default_member_permissions") is not None and user_id is not None:
            needed = int(command["default_member_permissions"])
            have = self.members.setdefault(user_id, P.Member(user_id, f"user{user_id}")).permissions
            if not have & ADMINISTRATOR and have & needed != needed:
                raise FakeDiscordError(f"the client hides /{command['name']} from user {user_id} (permissions)")
        level = command.get("options") or []
        chain: list[dict[str, Any]] = []
        for word in subpath:
            sub = next((o for o in level if o["name"] == word and o["type"] in (1, 2)), None)
            if sub is None:
                raise FakeDiscordError(f"/{path}: no subcommand {word!r}")
            chain.append(sub)
            level = sub.get("options") or []
        if any(o["type"] in (1, 2) for o in level):
            raise FakeDiscordError(f"/{path} needs a subcommand: {[o['name'] for o in level]}")
        given = dict(options or {})
        out: list[dict[str, Any]] = []
        resolved: dict[str, dict[str, Any]] = {}
        if focused is not None and not any(spec["name"] == focused for spec in level):
            raise FakeDiscordError(f"/{path}: no option {focused!r} to type into")
        for spec in level:
            name = spec["name"]
            if name == focused:  # the client always sends the option being typed, even when still empty
                out.append({"name": name, "type": spec["type"], "value": str(given.pop(name, "")), "focused": True})
                continue
            if name not in given:
                if spec.get("required") and focused is None:
                    raise FakeDiscordError(f"/{path}: option {name} is required")
                continue
            value = given.pop(name)
            out.append({"name": name, "type": spec["type"], "value": self._option_value(path, spec, value, resolved, guild_id)})
        if given:
            raise FakeDiscordError(f"/{path}: unknown options {sorted(given)}")
        for sub in reversed(chain):
            out = [{"name": sub["name"], "type": sub["type"], "options": out}]
        data = {"id": command["id"], "name": command["name"], "type": 1, "options": out}
        if command.get("guild_id"):
            data["guild_id"] = command["guild_id"]
        if resolved:
            data["resolved"] = resolved
        return data

    def _option_value(self, path: str, spec: dict[str, Any], value: Any, resolved: dict[str, Any],
                      guild_id: int | None) -> Any:
        kind, name = spec["type"], spec["name"]
        if kind == 3:
            value = str(value)
            if spec.get("min_length") is not None and len(value) < spec["min_length"] or \
                    spec.get("max_length") is not None and len(value) > spec["max_length"]:
                raise FakeDiscordError(f"/{path}: {name} length outside the allowed range")
        elif kind == 4:
            if isinstance(value, bool) or not isinstance(value, int):
                raise FakeDiscordError(f"/{path}: {name} must be an integer")
        elif kind == 10:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise FakeDiscordError(f"/{path}: {name} must be a number")
        elif kind == 5:
            if not isinstance(value, bool):
                raise FakeDiscordError(f"/{path}: {name} must be true or false")
        elif kind in (6, 9):
            uid = int(value)
            member = self.members.setdefault(uid, P.Member(uid, f"user{uid}"))
            resolved.setdefault("users", {})[str(uid)] = P.user(uid, member.name)
            if guild_id:
                resolved.setdefault("members", {})[str(uid)] = member.payload(with_user=False)
            value = str(uid)
        elif kind == 7:  # Discord resolves a channel option to a partial channel with the user's permissions
            value = str(int(value))
            channel = self._channel_payload(int(value))
            if channel is not None:
                resolved.setdefault("channels", {})[value] = {
                    k: channel[k] for k in ("id", "type", "name", "parent_id", "nsfw", "position")} | {
                    "permissions": str(P.MEMBER_PERMISSIONS)}
        elif kind == 11:  # an attachment: (file name, bytes), uploaded as the client does, served on /attachments
            filename, data = value
            attachment_id = str(P.snowflake())
            self.uploads[attachment_id] = bytes(data)
            url = f"{self.base_url}/attachments/upload/{attachment_id}/{filename}"
            resolved.setdefault("attachments", {})[attachment_id] = {
                "id": attachment_id, "filename": filename, "size": len(data), "url": url, "proxy_url": url,
                "content_type": "application/octet-stream", "ephemeral": True}
            value = attachment_id
        if kind in (4, 10) and (spec.get("min_value") is not None and value < spec["min_value"]
                                or spec.get("max_value") is not None and value > spec["max_value"]):
            raise FakeDiscordError(f"/{path}: {name}={value} outside [{spec.get('min_value')}, {spec.get('max_value')}]")
        choices = spec.get("choices") or []
        if choices and value not in [c["value"] for c in choices]:
            raise FakeDiscordError(f"/{path}: {name}={value!r} is not one of the choices")
        return value

    def interaction_payload(self, itype: int, data: dict[str, Any], *, user_id: int, guild_id: int | None,
                            channel_id: int | None = None, message: dict[str, Any] | None = None) -> dict[str, Any]:
        interaction_id = P.snowflake()
        guild = self.guilds.get(guild_id) if guild_id else None
        if guild_id and guild is None:
            raise FakeDiscordError(f"the bot is not in guild {guild_id}")
        channel = channel_id or (guild.channel_id if guild else 9001)
        member = self.members.setdefault(user_id, P.Member(user_id, f"user{user_id}"))
        payload: dict[str, Any] = {
            "id": str(interaction_id), "application_id": str(self.application_id), "type": itype,
            "token": f"fake-{uuid.uuid4().hex}", "version": 1, "data": data, "channel_id": str(channel),
            "locale": "en-US", "app_permissions": str((1 << 53) - 1 & ~(1 << 3)), "entitlements": [],
            "authorizing_integration_owners": {"0": str(guild_id or 0)}, "attachment_size_limit": 10 * 1024 * 1024,
        }
        if guild is not None:
            payload |= {"guild_id": str(guild.id), "guild_locale": "en-US",
                        "guild": {"id": str(guild.id), "locale": "en-US", "features": []},
                        "channel": {"id": str(channel), "type": 0, "name": "battle-report", "guild_id": str(guild.id),
                                    "position": 0, "permission_overwrites": [], "nsfw": False, "parent_id": None},
                        "member": member.payload(), "context": 0}
        else:
            payload |= {"user": P.user(user_id, member.name), "context": 1,
                        "channel": {"id": str(channel), "type": 1, "recipients": [P.user(user_id, member.name)]}}
        if message is not None:
            payload["message"] = message
        return payload

    def send_interaction(self, payload: dict[str, Any]) -> InteractionRecord:
        return self.call(self._send_interaction(payload))

    async def _send_interaction(self, payload: dict[str, Any]) -> InteractionRecord:
        guild_id = int(payload["guild_id"]) if payload.get("guild_id") else None
        session = self.session_for_guild(guild_id)
        record = InteractionRecord(int(payload["id"]), payload["token"], payload, session.shard[0], session.id)
        self.interactions[record.id] = record
        self._by_token[record.token] = record
        record.sent_at = time.monotonic()  # before writing: the answer may arrive before the write returns
        await self._dispatch(session, "INTERACTION_CREATE", payload)
        return record

    def slash(self, path: str, options: dict[str, Any] | None = None, *, user_id: int = 111,
              guild_id: int | None = None, channel_id: int | None = None, followups: int = 0,
              timeout: float = 30.0) -> InteractionRecord:
        """Invoke a slash command as a user would and wait for the answer (and `followups` follow-ups)."""
        guild_id = self.default_guild_id if guild_id is None else (guild_id or None)
        data = self.build_command_data(path, options, guild_id=guild_id, user_id=user_id)
        record = self.send_interaction(self.interaction_payload(2, data, user_id=user_id, guild_id=guild_id,
                                                                channel_id=channel_id))
        self.wait_answered(record, followups=followups, timeout=timeout)
        return record

    def autocomplete(self, path: str, options: dict[str, Any], focused: str, *, user_id: int = 111,
                     guild_id: int | None = None, timeout: float = 30.0) -> tuple[list[dict[str, Any]], InteractionRecord]:
        """Type into an autocomplete option; returns the choices the bot offered."""
        guild_id = self.default_guild_id if guild_id is None else (guild_id or None)
        data = self.build_command_data(path, options, guild_id=guild_id, focused=focused, user_id=user_id)
        record = self.send_interaction(self.interaction_payload(4, data, user_id=user_id, guild_id=guild_id))
        self.wait_answered(record, timeout=timeout)
        assert record.callback is not None
        return list(record.callback.data.get("choices") or []), record

    def click(self, message: dict[str, Any], custom_id: str, *, values: list[str] | None = None,
              user_id: int = 111, followups: int = 0, timeout: float = 30.0) -> InteractionRecord:
        """Press a button (or choose in a select menu) on a message the bot sent."""
        component = next((c for row in message.get("components") or [] for c in row.get("components") or []
                          if c.get("custom_id") == custom_id), None)
        if component is None:
            raise FakeDiscordError(f"no component {custom_id!r} on message {message.get('id')}")
        if component.get("disabled"):
            raise FakeDiscordError(f"component {custom_id!r} is disabled")
        data: dict[str, Any] = {"custom_id": custom_id, "component_type": component["type"]}
        if component["type"] == 3:
            data["values"] = list(values or [])
        guild_id = None
        channel_id = int(message["channel_id"])
        for guild in self.guilds.values():
            if guild.channel_id == channel_id:
                guild_id = guild.id
        record = self.send_interaction(self.interaction_payload(3, data, user_id=user_id, guild_id=guild_id,
                                                                channel_id=channel_id, message=message))
        self.wait_answered(record, followups=followups, timeout=timeout)
        return record

    def wait_answered(self, record: InteractionRecord, *, followups: int = 0, timeout: float = 30.0) -> None:
        """Wait for the accepted initial callback (and, after a deferral, the edit or follow-ups)."""
        def done() -> bool:
            cb = record.callback
            if cb is None:
                return False
            if cb.type == 5 and not record.edits and not record.followups:
                return False
            return len(record.followups) >= followups
        self.wait_until(done, timeout, f"an answer to interaction {record.payload['type']} "
                                       f"{record.payload['data'].get('name') or record.payload['data'].get('custom_id')}")

    @property
    def default_guild_id(self) -> int:
        return next(iter(self.guilds))

    def message(self, message_id: int | str) -> dict[str, Any]:
        return self.messages[int(message_id)]


def default_guilds() -> list[P.Guild]:
    """Two guilds on different shards of a 2-shard bot: shard (id >> 22) % 2 is 0 and 1."""
    return [P.Guild((1000 << 22) | 501, "Shard Zero Gaming Club", (1000 << 22) | 1001, 111),
            P.Guild((1001 << 22) | 502, "Shard One Gaming Club", (1001 << 22) | 1002, 222)]


async def _read_body(request: web.Request) -> tuple[Any, dict[str, bytes]]:
    files: dict[str, bytes] = {}
    if request.content_type.startswith("multipart/"):
        body: Any = None
        reader = await request.multipart()
        async for part in reader:
            data = await part.read()  # type: ignore[union-attr]
            if part.name == "payload_json":  # type: ignore[union-attr]
                body = json.loads(data)
            elif part.filename:  # type: ignore[union-attr]
                files[part.filename] = bytes(data)  # type: ignore[union-attr]
        return body, files
    raw = await request.read()
    if not raw:
        return None, files
    try:
        return json.loads(raw), files
    except ValueError:
        return raw.decode(errors="replace"), files


_RATE_HEADERS = {"X-RateLimit-Limit": "5", "X-RateLimit-Remaining": "4", "X-RateLimit-Reset-After": "1.0",
                 "X-RateLimit-Bucket": "fake-bucket", "Via": "1.1 google"}


def _json(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    # Exactly "application/json" (no charset): discord.py compares the header verbatim before parsing.
    headers = headers or (_RATE_HEADERS | {"X-RateLimit-Reset": f"{time.time() + 1:.3f}"})
    return web.Response(body=json.dumps(data).encode(), status=status,
                        headers=headers | {"Content-Type": "application/json"})


def _error(status: int, code: int, message: str, problems: list[str] | None = None) -> web.Response:
    body: dict[str, Any] = {"code": code, "message": message}
    if problems:
        body["errors"] = {"_errors": [{"code": "INVALID", "message": p} for p in problems]}
    return _json(body, status)


def _rate_limited(limit: _RateLimit) -> web.Response:
    headers = {"Retry-After": f"{max(1, round(limit.retry_after))}", "X-RateLimit-Limit": "5",
               "X-RateLimit-Remaining": "0", "X-RateLimit-Reset-After": f"{limit.retry_after:.3f}",
               "X-RateLimit-Bucket": "fake-bucket", "X-RateLimit-Scope": "global" if limit.is_global else "user",
               "Via": "1.1 google"}
    if limit.is_global:
        headers["X-RateLimit-Global"] = "true"
    body = {"message": "You are being rate limited.", "retry_after": limit.retry_after, "global": limit.is_global}
    return _json(body, 429, headers)
