"""Fixtures for whole-process tests: a fake Discord and the real `python -m bot run` against it.

Tests here are synchronous: the fake runs its own event loop in a thread, the bot runs in a
subprocess, and the test thread drives both with blocking calls.
"""

from __future__ import annotations

import contextlib
import json
import logging
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.botproc import REPO, BotProcess
from tests.fakediscord import FakeDiscord, FakeDiscordError


@pytest.fixture(autouse=True)
def _restore_root_logging() -> Iterator[None]:
    """`bot.__main__.main()` installs its JSON handler on the root logger; undo that for later tests."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    discord_level = logging.getLogger("discord").level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    logging.getLogger("discord").setLevel(discord_level)


@pytest.fixture(scope="session")
def e2e_data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """COGITATOR_DATA shared by every bot process of the run, as on one host.

    The catalog is built once with the operator command, before any bot starts, exactly as
    docs/operations.md prescribes (a first build takes seconds, longer than Discord's 3 s window).
    """
    data = tmp_path_factory.mktemp("e2e-data")
    env = {"COGITATOR_DATA": str(data), "COGITATOR_DB": str(data / "unused.db"), "PATH": "/usr/bin:/bin",
           "COGITATOR_LOG_LEVEL": "WARNING"}
    done = subprocess.run([sys.executable, "-m", "bot", "catalog", "build"], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return data


def start_bots(fake: FakeDiscord, bots: list[BotProcess]) -> None:
    """Start the processes and make the fake give up early (with the logs) if one of them dies."""
    def watchdog() -> str | None:
        for bot in bots:
            if not bot.alive():
                return f"{bot.name} exited with {bot.proc.returncode if bot.proc else '?'}:\n{bot.log_text()}"
        return None

    fake.watchdog = watchdog  # type: ignore[method-assign]
    for bot in bots:
        bot.start()


@contextlib.contextmanager
def one_bot(workdir: Path, data: Path, **options: Any) -> Iterator[tuple[FakeDiscord, BotProcess]]:
    """A fake Discord and one unsharded bot (BotProcess `options` passed on), connected, commands synced;
    both stopped afterwards."""
    fake = FakeDiscord().start()
    bot = BotProcess(fake, workdir, data=data, **options)
    try:
        start_bots(fake, [bot])
        fake.wait_for_commands()
        fake.wait_for_sessions([(0, 1)])
        yield fake, bot
    finally:
        bot.stop()
        fake.stop()


@pytest.fixture(scope="module")
def single(tmp_path_factory: pytest.TempPathFactory, e2e_data_dir: Path) -> Iterator[tuple[FakeDiscord, BotProcess]]:
    """One fake Discord and one unsharded bot, connected and with its commands synced."""
    with one_bot(tmp_path_factory.mktemp("single"), e2e_data_dir) as running:
        yield running


def dump_on_failure(bot: BotProcess) -> str:
    return f"\n--- {bot.name} log tail ---\n{bot.log_text()}"


def export_game(db: Path, data: Path, channel_id: int) -> dict[str, Any]:
    """Contract 4, from another process while the bot may still be running (WAL readers)."""
    env = {"COGITATOR_DB": str(db), "COGITATOR_DATA": str(data), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-m", "bot", "game", "export", "--channel", str(channel_id)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise FakeDiscordError(f"game export failed ({done.returncode}): {done.stdout} {done.stderr}")
    return json.loads(done.stdout)


@pytest.fixture
def tiny_disk() -> Iterator[Path]:
    """A real 2 MB tmpfs, room for a bot to start (needs root and mount rights; skipped with the reason otherwise)."""
    mount = Path(tempfile.mkdtemp(prefix="cogitator-full-"))
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], capture_output=True,
                       text=True, check=False)
    if p.returncode != 0:
        mount.rmdir()
        pytest.skip(f"cannot mount a tiny tmpfs here ({p.stderr.strip()[:80]}); the SQLITE_FULL path is "
                    "covered by tests/foundation/test_storage_full.py")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=False)
        mount.rmdir()
