"""Start the real bot (`python -m bot run`) as a subprocess pointed at the fake Discord."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.fakediscord import FakeDiscord

REPO = Path(__file__).resolve().parents[2]


class BotProcess:
    """One bot process; its JSON log lines (stderr) land in a file for assertions and post-mortems."""

    def __init__(self, fake: FakeDiscord, workdir: Path, *, name: str = "bot", db: Path | None = None,
                 data: Path | None = None, args: list[str] | None = None, env: dict[str, str] | None = None,
                 wrapper: list[str] | None = None) -> None:
        self.fake = fake
        self.name = name
        self.db = db or workdir / "state.db"
        self.data = data or workdir / "data"
        self.log_path = workdir / f"{name}.log"
        self.args = args or []
        self.extra_env = env or {}
        self.wrapper = wrapper or []  # a command that execs the bot, e.g. prlimit with its limits
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> BotProcess:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("COGITATOR_", "DISCORD_"))}
        env |= self.fake.env() | {
            "COGITATOR_DB": str(self.db), "COGITATOR_DATA": str(self.data), "COGITATOR_LOG_LEVEL": "INFO",
            "PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "1",
        } | self.extra_env
        self._log = open(self.log_path, "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen([*self.wrapper, sys.executable, "-m", "bot", "run", *self.args], cwd=REPO, env=env,
                                     stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT)
        return self

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def terminate(self, timeout: float = 10.0) -> tuple[int | None, float]:
        """SIGTERM; returns (exit code or None if it had to be killed, seconds until exit)."""
        assert self.proc is not None
        if self.proc.poll() is not None:
            return self.proc.returncode, 0.0
        started = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        try:
            code: int | None = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
            code = None
        elapsed = time.monotonic() - started
        self._log.close()
        return code, elapsed

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.terminate()
        if not self._log.closed:
            self._log.close()

    def logs(self) -> list[dict[str, Any]]:
        out = []
        for line in self.log_path.read_text(errors="replace").splitlines():
            try:
                out.append(json.loads(line))
            except ValueError:
                out.append({"raw": line})
        return out

    def log_text(self, tail: int = 60) -> str:
        lines = self.log_path.read_text(errors="replace").splitlines()
        return "\n".join(lines[-tail:])

    def local_ports(self) -> set[int]:
        """TCP ports of this process's sockets (Linux /proc), to attribute requests to a process."""
        inodes = set()
        for fd in Path(f"/proc/{self.pid}/fd").iterdir():
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
        ports = set()
        for table in ("/proc/net/tcp", "/proc/net/tcp6"):
            try:
                rows = Path(table).read_text().splitlines()[1:]
            except OSError:
                continue
            for row in rows:
                cols = row.split()
                if len(cols) > 9 and cols[9] in inodes:
                    ports.add(int(cols[1].rsplit(":", 1)[1], 16))
        return ports
