"""Where the bot finds Discord: the REST base URL and the gateway URL.

TEST HOOK. In production nothing here is set and discord.py talks to discord.com as usual. The
end-to-end tests (tests/e2e) start a local fake Discord (tests/fakediscord) and point the *real*
`python -m bot run` process at it with two environment variables:

    COGITATOR_DISCORD_API_BASE      e.g. http://127.0.0.1:8123/api/v10
    COGITATOR_DISCORD_GATEWAY_URL   e.g. ws://127.0.0.1:8123/gateway

They are read from the environment only (never from a file or a command), because redirecting the
bot sends its token to that address. Plain http/ws is accepted only for a loopback host; anything
else must be https/wss. The URL is read with yarl, the parser discord.py's HTTP client (aiohttp) uses
itself: a second parser (urllib's `urlsplit`) reads `http://evil.com\\@127.0.0.1/` as a loopback host
while the client would connect to evil.com. Credentials in the URL are refused outright.
"""

from __future__ import annotations

import ipaddress
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass

import yarl

from bot.errors import ConfigError

log = logging.getLogger("cogitator.endpoints")

API_BASE_ENV = "COGITATOR_DISCORD_API_BASE"
GATEWAY_ENV = "COGITATOR_DISCORD_GATEWAY_URL"
DISCORD_API_BASE = "https://discord.com/api/v10"
DISCORD_GATEWAY = "wss://gateway.discord.gg/"


@dataclass(frozen=True)
class Endpoints:
    api_base: str | None  # None: discord.py's default
    gateway: str | None

    @property
    def overridden(self) -> bool:
        return bool(self.api_base or self.gateway)


def _is_loopback(host: str | None) -> bool:
    if not host:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _check(name: str, raw: str, secure: str, plain: str) -> str:
    if any(ch.isspace() for ch in raw) or "\x00" in raw:
        raise ConfigError(f"{name} must be a URL without spaces")
    try:
        parts = yarl.URL(raw)  # the HTTP client's own parser, so both agree on the host
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number in range
    except (ValueError, TypeError):
        raise ConfigError(f"{name} is not a valid URL: {raw[:80]!r}") from None
    if parts.scheme not in (secure, plain) or not parts.host:
        raise ConfigError(f"{name} must be a {secure}:// URL (or {plain}:// to a loopback address), got {raw[:80]!r}")
    if parts.user is not None or parts.password is not None or "@" in (parts.raw_authority or ""):
        raise ConfigError(f"{name} must not carry a user name or password")
    if parts.scheme == plain and not _is_loopback(parts.host):
        raise ConfigError(f"{name}: unencrypted {plain}:// is only allowed to a loopback address (the bot token travels there)")
    if parts.query_string or parts.fragment or "?" in raw or "#" in raw:
        raise ConfigError(f"{name} must not carry a query or fragment")
    return raw


def read_endpoints(env: Mapping[str, str] | None = None) -> Endpoints:
    """Validate the override variables; unset or empty means the real Discord."""
    env = os.environ if env is None else env
    api = env.get(API_BASE_ENV, "").strip()
    gateway = env.get(GATEWAY_ENV, "").strip()
    return Endpoints(
        api_base=_check(API_BASE_ENV, api, "https", "http").rstrip("/") if api else None,
        gateway=_check(GATEWAY_ENV, gateway, "wss", "ws") if gateway else None,
    )


def apply_endpoints(env: Mapping[str, str] | None = None) -> Endpoints:
    """Point discord.py at the configured endpoints (no-op when none is set). Returns what was applied.

    discord.py keeps the REST base on `Route.BASE` (shared by the HTTP client and the webhook adapter
    that sends interaction callbacks and follow-ups), and the gateway on
    `DiscordWebSocket.DEFAULT_GATEWAY`, used when the shard count is fixed and after an
    INVALID_SESSION. Without a fixed shard count the gateway URL comes from `GET /gateway/bot`,
    which is answered by whatever the API base points at.
    """
    endpoints = read_endpoints(env)
    if not endpoints.overridden:
        return endpoints
    import discord.gateway
    import discord.http
    import discord.webhook.async_

    if endpoints.api_base:
        discord.http.Route.BASE = endpoints.api_base
        discord.webhook.async_.Route.BASE = endpoints.api_base  # the same class today; explicit in case it forks
    if endpoints.gateway:
        discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(endpoints.gateway)
    log.warning("Discord endpoints overridden (test hook)",
                extra={"api_base": endpoints.api_base or DISCORD_API_BASE, "gateway": endpoints.gateway or DISCORD_GATEWAY})
    return endpoints
