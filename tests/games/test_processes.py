"""Whole-process tests: kill -9 in the middle of a command, and two processes racing on one channel."""

from __future__ import annotations

import os
import signal
import sqlite3
import time
from pathlib import Path

from bot.games import commands as gc
from bot.games.store import GameStore
from tests.procs import race, spawn

CH = 1001
ALICE, BOB = 111, 222


def _new_game(path: Path | str, edition: str = "11e", starting_cp: int = 0) -> None:
    store = GameStore(path)
    store.start(CH, 501, user_id=ALICE, user_name="Alice", opponent_id=BOB, opponent_name="Bob", edition=edition,
                faction="Orks", opponent_faction="Leagues of Votann", starting_cp=starting_cp)
    store.close()


RACER = """
import sys, time
from bot.games import commands as gc
from bot.games.store import GameStore
path, user = sys.argv[1], int(sys.argv[2])
store = GameStore(path)
print("ready", flush=True)
sys.stdin.readline()  # start together, so the two really interleave
pattern = [1, 1, -1, -1, 1]
for i in range(250):
    delta = pattern[i % 5]
    if delta > 0:
        store.act(1001, gc.cp_gain, user, 1)
    else:
        store.act(1001, gc.cp_spend, user, 1)
    time.sleep(0.002)  # commands arrive from people, not in a tight loop; lets the other writer in
store.close()
print("done")
"""


def test_two_processes_500_interleaved_cp_changes(db_target: Path | str) -> None:
    path = db_target
    _new_game(path)
    race([spawn(RACER, str(path), str(ALICE)), spawn(RACER, str(path), str(BOB))])
    store = GameStore(path)
    try:
        data = store.export(CH)
        # each process: 250 changes netting +50 on its own player, after the start's 1CP
        assert [p["cp"] for p in data["players"]] == [51, 51]
        log = data["log"]
        assert [e["seq"] for e in log] == list(range(1, 502))
        assert sum(e["user_id"] == ALICE for e in log[1:]) == 250
        assert sum(e["user_id"] == BOB for e in log[1:]) == 250
        users = [e["user_id"] for e in log[1:]]
        switches = sum(a != b for a, b in zip(users, users[1:], strict=False))
        assert switches > 20, f"the two processes did not interleave ({switches} switches)"
        assert store.verify(CH)
    finally:
        store.close()


LOOPER = """
import sys
from bot.errors import UserError
from bot.games import commands as gc
from bot.games import rules
from bot.games.store import GameStore
store = GameStore(sys.argv[1])
spec = rules.StratagemSpec("Command Re-roll", None, 1)
i = 0
while True:
    i += 1
    try:
        step = i % 7
        if step == 0:
            store.act(1001, gc.next_phase, 111)
        elif step == 1:
            store.act(1001, gc.cp_gain, 111, 1)
        elif step == 2:
            store.act(1001, gc.judgement, 111, f"Unit {i % 3}", 1, remove=False)
        elif step == 3:
            store.act(1001, gc.use_stratagem, 222, spec, f"Mob {i % 4}", force=True)
        elif step == 4:
            store.undo(1001, 222)
        elif step == 5:
            store.act(1001, gc.vp_add, 222, 1)
        else:
            store.act(1001, gc.shock, 222, f"Mob {i % 4}", clear=False)
    except UserError:
        pass
    if i == 5:
        print("running", flush=True)
"""


def _consistent(path: Path | str) -> dict:
    if isinstance(path, Path):
        conn = sqlite3.connect(path)
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        conn.close()
    store = GameStore(path)
    try:
        assert store.verify(CH)
        data = store.export(CH)
        seqs = [e["seq"] for e in data["log"]]
        assert seqs == list(range(1, len(seqs) + 1))
        store.act(CH, gc.cp_set, ALICE, 5)  # still usable
        assert store.verify(CH)
        return data
    finally:
        store.close()


def test_kill_9_at_random_moments_leaves_db_consistent(db_target: Path | str) -> None:
    path = db_target
    _new_game(path, "10e", starting_cp=20)
    for delay in (0.05, 0.13, 0.21, 0.34):
        proc = spawn(LOOPER, str(path))
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "running"
        time.sleep(delay)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        assert proc.returncode == -signal.SIGKILL
        _consistent(path)


MID_TRANSACTION = """
import os, sys, time
from bot.games import commands as gc
from bot.games import store as store_module
from bot.games.store import GameStore
original = store_module._insert_event
def slow_insert(conn, game_id, seq, ts, actor, ev):
    original(conn, game_id, seq, ts, actor, ev)
    if ev["type"] == "vp":
        print("inside", flush=True)  # the event row is written; the snapshot and COMMIT are not
        time.sleep(60)
store_module._insert_event = slow_insert
store = GameStore(sys.argv[1])
store.act(1001, gc.vp_add, 111, 7)
"""


def test_kill_9_inside_a_transaction_rolls_it_back(db_target: Path | str) -> None:
    path = db_target
    _new_game(path)
    before = GameStore(path)
    expected = before.export(CH)
    before.close()
    proc = spawn(MID_TRANSACTION, str(path))
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "inside"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    data = _consistent(path)
    assert data["players"][0]["vp"] == 0  # the killed command left no trace
    assert [e["type"] for e in data["log"]] == [e["type"] for e in expected["log"]]
