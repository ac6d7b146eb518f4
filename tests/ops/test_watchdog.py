"""systemd's notification protocol against a real unix datagram socket: READY=1, WATCHDOG=1 every half
interval from the event loop, and no WATCHDOG=1 at all while the loop is blocked (so systemd, which restarts a
unit silent for WatchdogSec, restarts a hung bot); pings resume when the loop does."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.ops.sdnotify import Notifier

REPO = Path(__file__).resolve().parents[2]
WATCHDOG_USEC = 200_000  # WatchdogSec=0.2 s here: a ping every 0.1 s


@pytest.fixture
def notify_socket(tmp_path: Path) -> Iterator[tuple[socket.socket, str]]:
    path = str(tmp_path / "notify")
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind(path)
        sock.settimeout(30)  # a bound on each wait, never an expectation about timing
        yield sock, path


def messages(sock: socket.socket, until: str) -> list[str]:
    """Every notification line received until one equals `until` (inclusive)."""
    out: list[str] = []
    while until not in out:
        out.extend(sock.recv(4096).decode().split("\n"))
    return out


def test_pings_stop_while_the_loop_is_blocked(notify_socket: tuple[socket.socket, str]) -> None:
    sock, path = notify_socket
    block_s = 2 * 2 * WATCHDOG_USEC / 1e6  # blocked for 2 x WatchdogSec, as the target says
    env = {**os.environ, "NOTIFY_SOCKET": path, "WATCHDOG_USEC": str(WATCHDOG_USEC), "PYTHONPATH": str(REPO)}
    driver = subprocess.Popen([sys.executable, "-m", "tests.ops.watchdog_driver", str(block_s)], cwd=REPO, env=env)
    try:
        before = messages(sock, "READY=1")
        while before.count("WATCHDOG=1") < 3:
            before.extend(sock.recv(4096).decode().split("\n"))
        driver.send_signal(signal.SIGUSR1)
        messages(sock, "STATUS=blocking")
        during = messages(sock, "STATUS=unblocked")
        assert "WATCHDOG=1" not in during, during
        after = messages(sock, "WATCHDOG=1")
        assert after[-1] == "WATCHDOG=1", "the pings resume with the loop"
        driver.send_signal(signal.SIGTERM)
        assert "STOPPING=1" in messages(sock, "STOPPING=1")
        assert driver.wait(30) == 0
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait()


def test_no_socket_no_watchdog_and_abstract_addresses() -> None:
    env: dict[str, str] = {"WATCHDOG_USEC": "5000000"}
    quiet = Notifier.from_environment(env)
    assert (quiet.address, quiet.watchdog_s) == (None, 5.0) and not quiet.send("READY=1") and env == {}
    other = Notifier.from_environment({"NOTIFY_SOCKET": "/x", "WATCHDOG_USEC": "5000000", "WATCHDOG_PID": "1"})
    assert other.watchdog_s is None, "the watchdog of another process"
    name = f"cogitator-test-{os.getpid()}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind("\0" + name)
        sock.settimeout(30)
        notifier = Notifier.from_environment({"NOTIFY_SOCKET": "@" + name})
        notifier.ready()
        notifier.ready()  # once only
        assert sock.recv(4096) == b"READY=1\nSTATUS=connected to Discord"
        assert notifier.send("WATCHDOG=1") and sock.recv(4096) == b"WATCHDOG=1"
    gone = Notifier("/nonexistent/notify", None)
    assert not gone.send("READY=1") and not gone.send("READY=1"), "a missing socket is logged once, never raised"
