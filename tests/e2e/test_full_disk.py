"""A full disk, for real (a tiny tmpfs; skipped with the reason where it cannot be mounted): a bot that
started with room keeps answering reads once the disk fills, changes say "Storage is full" and save
nothing, and starting on the full disk says the disk is full, also for a WAL database (whose first
connection fails with SQLite's 'disk I/O error' while creating its shared-memory file)."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path

from bot.games.store import GameStore
from tests.e2e.botproc import REPO
from tests.e2e.test_state_db_startup import assert_refused, bot

CHANNEL, GUILD = 1001, 501  # the console's defaults


def make_game(path: Path) -> None:
    store = GameStore(path)  # WAL mode; its -wal and -shm go away when it closes
    store.start(CHANNEL, GUILD, user_id=111, user_name="Alice", opponent_id=222, opponent_name="Bob",
                edition="11e", faction="Orks", opponent_faction="Necrons")
    store.close()


def fill(folder: Path) -> None:
    with contextlib.suppress(OSError), open(folder / "filler", "wb") as fh:
        while True:
            fh.write(b"\0" * 4096)
            fh.flush()


def test_starting_on_a_full_disk_says_the_disk_is_full(tiny_disk: Path, tmp_path: Path) -> None:
    path = tiny_disk / "state.db"
    make_game(path)
    assert sorted(p.name for p in tiny_disk.iterdir()) == ["state.db"]
    fill(tiny_disk)
    for command in (["console"], ["run"]):
        assert_refused(bot(command, path, tmp_path), path, "the disk is full")


def test_reads_answer_and_changes_say_storage_is_full(tiny_disk: Path, e2e_data_dir: Path) -> None:
    path = tiny_disk / "state.db"
    make_game(path)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COGITATOR_", "DISCORD_"))}
    env |= {"COGITATOR_DB": str(path), "COGITATOR_DATA": str(e2e_data_dir), "COGITATOR_LOG_LEVEL": "WARNING"}
    console = subprocess.Popen([sys.executable, "-m", "bot", "console", "--json"], cwd=REPO, env=env,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def ask(line: str) -> tuple[bool, str]:
        assert console.stdin is not None and console.stdout is not None
        console.stdin.write(line + "\n")
        console.stdin.flush()
        reply = json.loads(console.stdout.readline())
        return reply["ephemeral"], json.dumps(reply["embeds"]) + reply["content"]

    try:
        assert not ask(":as 111")[0]  # the bot is up; no command has touched the state database yet
        fill(tiny_disk)
        ephemeral, status = ask("/game status")
        assert not ephemeral and "Alice" in status, status
        ephemeral, gained = ask("/cp gain amount:1 force:true")
        assert ephemeral and "Storage is full" in gained, gained
        ephemeral, status = ask("/game status")
        assert not ephemeral and "Alice" in status, status
    finally:
        assert console.stdin is not None and console.stderr is not None
        console.stdin.close()  # end of input: the console exits
        stderr = console.stderr.read()
        console.wait(timeout=60)
    assert console.returncode == 0 and "Traceback" not in stderr, stderr
    store = GameStore(path)
    try:
        assert store.verify(CHANNEL) and store.export(CHANNEL)["log"][-1]["type"] != "cp", "the change saved nothing"
    finally:
        store.close()
