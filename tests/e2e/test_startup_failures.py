"""The real bot process when Discord says no or cannot be reached: one clear line, no traceback, no token."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

from tests.e2e.botproc import REPO
from tests.fakediscord import FakeDiscord
from tests.fakediscord.payloads import fake_token


def run_bot(env: dict[str, str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("COGITATOR_", "DISCORD_"))}
    base |= {"COGITATOR_DB": str(tmp_path / "state.db"), "COGITATOR_DATA": str(tmp_path / "data"),
             "COGITATOR_SYNC": "false"}
    return subprocess.run([sys.executable, "-m", "bot", "run"], cwd=REPO, env=base | env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=120)


def assert_one_clear_line(run: subprocess.CompletedProcess[str], code: int, words: str, token: str) -> None:
    assert run.returncode == code, run.stderr[-2000:]
    assert "Traceback" not in run.stderr + run.stdout
    assert run.stderr.strip().splitlines()[-1].startswith(f"cogitator: {words}")
    assert token not in run.stderr + run.stdout


def test_a_token_discord_rejects_stops_with_exit_2(tmp_path: Path) -> None:
    fake = FakeDiscord().start()
    try:
        wrong = fake_token(fake.application_id + 1)  # well-formed, but not this application's
        env = fake.env() | {"DISCORD_TOKEN": wrong}
        assert_one_clear_line(run_bot(env, tmp_path), 2, "Discord rejected DISCORD_TOKEN", wrong)
    finally:
        fake.stop()


def test_an_unreachable_discord_stops_with_exit_1(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a loopback port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    token = fake_token(424242)
    env = {"DISCORD_TOKEN": token, "COGITATOR_DISCORD_API_BASE": f"http://127.0.0.1:{port}/api/v10",
           "COGITATOR_DISCORD_GATEWAY_URL": f"ws://127.0.0.1:{port}/gateway"}
    assert_one_clear_line(run_bot(env, tmp_path), 1, "cannot reach Discord", token)
