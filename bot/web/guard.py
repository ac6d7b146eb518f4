"""Connection limits of the live board, below HTTP: how many sockets one address (and everyone) may hold,
how long a connection may take to send its request headers, and how large those headers may be.

aiohttp alone keeps a connection that sends nothing, or sends its headers one byte at a time, for its
keep-alive timeout (an hour by default), accepts connections until the process runs out of file
descriptors (then the bot can't open its database or reach Discord), and buffers up to 128 header lines
of 8 KB each. Each connection passes through `_Guarded` first, which refuses it when its address or the
process is at its limit and closes it when its headers are late or too large. Refusals cost a few bytes
and no aiohttp state. Malformed requests are logged as throttled single lines, never as tracebacks.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import time
from collections.abc import Callable
from typing import Any

from aiohttp.http_exceptions import HttpProcessingError

from bot.ops.metrics import WEB_REFUSED

log = logging.getLogger("cogitator.web")

CONNECTIONS_MAX = 4000
CONNECTIONS_PER_ADDRESS_MAX = 256
HEADER_TIMEOUT_S = 10.0
HEADER_BYTES_MAX = 32 * 1024
# File descriptors kept for the bot itself (Discord, databases, logs) when the open-files limit is low.
FD_RESERVE = 256

_END = b"\r\n\r\n"
REFUSED = b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 10\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
TOO_LARGE = (b"HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")


def client_key(address: str | None) -> str:
    """What the per-address limits count: an IPv4 address, or an IPv6 /64 (one subscriber's usual
    allocation: stepping through its 2^64 addresses gains nothing)."""
    if not address:
        return "?"
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network(f"{ip}/64", strict=False))
    return str(ip)


class Throttled:
    """At most one log line per kind and interval; the next one says how many were left out."""

    def __init__(self, logger: logging.Logger, every_s: float = 60.0) -> None:
        self._log = logger
        self._every = every_s
        self._last: dict[str, float] = {}
        self._skipped: dict[str, int] = {}

    def warning(self, kind: str, message: str, *args: Any) -> None:
        now = time.monotonic()
        if now - self._last.get(kind, -self._every) < self._every:
            self._skipped[kind] = self._skipped.get(kind, 0) + 1
            return
        self._last[kind] = now
        skipped = self._skipped.pop(kind, 0)
        self._log.warning(message + (f" ({skipped} more since the last such line)" if skipped else ""), *args)


class HttpErrorLog(logging.LoggerAdapter):
    """aiohttp's request-error logger: a malformed request (bad request line, header too long, invalid
    characters) is the client's fault and becomes one throttled line; anything else keeps its traceback."""

    def __init__(self, logger: logging.Logger, throttled: Throttled, name: str = "live board") -> None:
        super().__init__(logger, {})
        self._throttled = throttled
        self._name = name

    def exception(self, msg: object, *args: object, exc_info: Any = True, **kwargs: Any) -> None:
        if isinstance(exc_info, HttpProcessingError):
            first = str(exc_info.message).strip().splitlines()[0][:100] if exc_info.message else ""
            self._throttled.warning("bad-request", "%s: malformed request from %s refused (%s: %s)", self._name,
                                    args[0] if args else "?", type(exc_info).__name__, first)
            return
        super().exception(msg, *args, exc_info=exc_info, **kwargs)


class AddressCounts:
    """How many of something (connections, requests in flight) each client address holds, and in all."""

    def __init__(self) -> None:
        self._by_address: dict[str, int] = {}
        self.total = 0

    def of(self, address: str) -> int:
        return self._by_address.get(address, 0)

    def take(self, address: str, per_address_max: int, total_max: int) -> bool:
        """Counts one more for `address` unless it, or everyone, is at the limit."""
        if self.total >= total_max or self.of(address) >= per_address_max:
            return False
        self._by_address[address] = self.of(address) + 1
        self.total += 1
        return True

    def give_back(self, address: str) -> None:
        self.total -= 1
        left = self._by_address[address] - 1
        if left:
            self._by_address[address] = left
        else:
            del self._by_address[address]


class ConnectionGuard:
    """Counts open connections per client address and in all; makes the guarded protocol factory."""

    def __init__(self, limits: Callable[[], Any], throttled: Throttled, listener: str = "board") -> None:
        self.limits = limits  # the server's current WebSettings (read per connection, so tests can shrink them)
        self.throttled = throttled
        self.listener = listener  # whose connections these are, for the log and `cogitator_web_refused`
        self._counts = AddressCounts()
        self.connections_max = CONNECTIONS_MAX

    def factory(self, inner: Callable[[], asyncio.Protocol]) -> Callable[[], asyncio.Protocol]:
        return lambda: _Guarded(self, inner)

    def admit(self, address: str) -> bool:
        limits = self.limits()
        if self._counts.take(address, limits.connections_per_address_max,
                             min(limits.connections_max, self.connections_max)):
            return True
        self.refused("connections")
        self.throttled.warning("connections", "%s: connection from %s refused (%d open from it, %d in all)",
                               self.name, address, self._counts.of(address), self.total)
        return False

    def refused(self, reason: str) -> None:
        WEB_REFUSED.labels(self.listener, reason).inc()

    @property
    def name(self) -> str:
        """The listener in words, for log lines."""
        return "live board" if self.listener == "board" else f"{self.listener} listener"

    def release(self, address: str) -> None:
        self._counts.give_back(address)

    @property
    def total(self) -> int:
        return self._counts.total

    def open_from(self, address: str) -> int:
        return self._counts.of(address)


class _Guarded(asyncio.Protocol):
    """One connection: admitted or refused at once, then handed to aiohttp while its headers are in time
    and in size. Only the first request has a header deadline here; later requests on a kept-alive
    connection are bounded by aiohttp's keep-alive timeout, which closes a connection idle between requests."""

    __slots__ = ("_guard", "_inner_factory", "_inner", "_transport", "_address", "_timer", "_pending", "_tail", "_open")

    def __init__(self, guard: ConnectionGuard, inner_factory: Callable[[], asyncio.Protocol]) -> None:
        self._guard = guard
        self._inner_factory = inner_factory
        self._inner: asyncio.Protocol | None = None
        self._transport: asyncio.Transport | None = None
        self._address: str | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._pending = 0  # bytes of the request head being received (since the last head's blank line)
        self._tail = b""
        self._open = True

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        peer = transport.get_extra_info("peername")
        address = client_key(str(peer[0]) if peer else None)
        if not self._guard.admit(address):
            transport.write(REFUSED)
            transport.close()
            return
        self._address, self._transport = address, transport
        limits = self._guard.limits()
        self._timer = asyncio.get_running_loop().call_later(limits.header_timeout_s, self._late)
        self._inner = self._inner_factory()
        self._inner.connection_made(transport)

    def _late(self) -> None:
        self._timer = None
        if self._transport is not None:
            self._guard.refused("slow")
            self._guard.throttled.warning("slow", "%s: connection from %s closed: no complete request headers in "
                                          "%.1f s", self._guard.name, self._address,
                                          self._guard.limits().header_timeout_s)
            self._transport.abort()

    def data_received(self, data: bytes) -> None:
        if self._inner is None or not self._open:
            return
        if self._over_limit(data):
            assert self._transport is not None
            limit = self._guard.limits().header_bytes_max
            self._guard.refused("large")
            self._guard.throttled.warning("large", "%s: connection from %s closed: request headers over %d bytes",
                                          self._guard.name, self._address, limit)
            self._open = False
            self._transport.write(TOO_LARGE)
            self._transport.close()
            return
        self._inner.data_received(data)

    def _over_limit(self, data: bytes) -> bool:
        """Counts every byte of each request head, from its first byte to its closing blank line, however
        the reads cut it: a whole head in one read counts as much as the same head byte by byte."""
        limit = self._guard.limits().header_bytes_max
        seen = self._tail + data
        start = len(self._tail)  # where this read's bytes begin in `seen`
        end = seen.find(_END)
        while end >= 0:
            if self._pending + end + len(_END) - start > limit:
                return True
            self._pending, start = 0, end + len(_END)
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            end = seen.find(_END, start)
        self._pending += len(seen) - start
        self._tail = seen[max(start, len(seen) - len(_END) + 1):]  # a blank line may span two reads
        return self._pending > limit

    def eof_received(self) -> bool | None:
        return self._inner.eof_received() if self._inner is not None else None

    def pause_writing(self) -> None:
        if self._inner is not None:
            self._inner.pause_writing()

    def resume_writing(self) -> None:
        if self._inner is not None:
            self._inner.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._address is not None:
            self._guard.release(self._address)
            self._address = None
        self._transport = None
        inner, self._inner = self._inner, None
        if inner is not None:
            inner.connection_lost(exc)
