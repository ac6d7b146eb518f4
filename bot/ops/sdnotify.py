"""systemd's service notifications (sd_notify(3)), by the documented protocol: one datagram of
`NAME=value` lines to the unix socket named by `$NOTIFY_SOCKET` (a path, or `@name` in the abstract namespace).

The units are `Type=notify` with `WatchdogSec=`: the bot sends `READY=1` once it is connected, and
`WATCHDOG=1` every half watchdog interval from a task on its event loop, so a loop that hangs stops the pings
and systemd restarts the bot. No library: the protocol is a single sendto, the Python wrappers either need libsystemd
(systemd-python) or are unmaintained (sdnotify, last release 2017); tests run it against a real socket.

Outside systemd (no `$NOTIFY_SOCKET`) every call is a no-op.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from collections.abc import MutableMapping

log = logging.getLogger("cogitator.ops")


class Notifier:
    """The notification socket of this process, if systemd gave one, and its watchdog interval."""

    def __init__(self, address: str | None, watchdog_s: float | None) -> None:
        self.address = address
        self.watchdog_s = watchdog_s
        self._ready = False
        self._failed = False

    @classmethod
    def from_environment(cls, env: MutableMapping[str, str]) -> Notifier:
        """Reads and removes the variables (as sd_notify's unset_environment does), so the worker processes
        this bot starts never notify in its name. The watchdog applies only if `$WATCHDOG_PID` is unset or
        names this process."""
        address = env.pop("NOTIFY_SOCKET", None) or None
        usec, pid = env.pop("WATCHDOG_USEC", ""), env.pop("WATCHDOG_PID", "")
        watchdog_s = None
        if usec.isdigit() and int(usec) > 0 and (not pid or pid == str(os.getpid())):
            watchdog_s = int(usec) / 1_000_000
        return cls(address, watchdog_s)

    def send(self, *fields: str) -> bool:
        """One notification; False when there is no socket or it could not be sent (logged once)."""
        if not self.address:
            return False
        target = "\0" + self.address[1:] if self.address.startswith("@") else self.address
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
                sock.sendto("\n".join(fields).encode(), target)
        except OSError as error:
            if not self._failed:
                self._failed = True
                log.warning("systemd notification could not be sent", extra={"error": str(error)})
            return False
        return True

    def ready(self) -> None:
        """READY=1, once (Discord's `on_ready` comes again after a reconnect)."""
        if not self._ready:
            self._ready = True
            self.send("READY=1", "STATUS=connected to Discord")

    def stopping(self) -> None:
        self.send("STOPPING=1")

    async def watchdog_forever(self) -> None:
        """WATCHDOG=1 every half interval, from the event loop: when the loop hangs, the pings stop."""
        if not self.address or not self.watchdog_s:
            return
        while True:
            self.send("WATCHDOG=1")
            await asyncio.sleep(self.watchdog_s / 2)
