"""A bot killed with SIGKILL takes its worker processes with it (the simulation pool's and the army-list
pool's, and the forkserver they came from): real processes, a real SIGKILL."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BOT = """
import json, multiprocessing.forkserver as fs, os, signal, sys
from bot.config import Settings
from bot.services import Services
if __name__ == "__main__":
    services = Services(Settings(token=None, db_path=sys.argv[1] + "/state.db", data_dir=sys.argv[1]))
    services.simulation.start()
    services.army_reader.start()
    pids = services.simulation.pool.pids() + services.army_reader.pool.pids() + [fs._forkserver._forkserver_pid]
    print(json.dumps(pids), flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
"""


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")  # a zombie has ended; reaping it is its new parent's business


def test_workers_end_with_a_bot_killed_with_sigkill(tmp_path: Path) -> None:
    script = tmp_path / "killed_bot.py"  # not bot.py: it would hide the bot package
    script.write_text(BOT)
    env = {k: v for k, v in os.environ.items() if not k.startswith("COGITATOR_")} | {"PYTHONPATH": str(ROOT)}
    out = tmp_path / "out.txt"
    with out.open("wb") as handle:  # a file, not a pipe: workers that outlive the bot would hold a pipe open
        done = subprocess.run([sys.executable, str(script), str(tmp_path)], cwd=ROOT, env=env, stdout=handle,
                              stderr=subprocess.STDOUT, timeout=120)
    assert done.returncode == -9, out.read_text()
    # Its one line of pids (the resource tracker may write warnings to the same file).
    pids = json.loads(next(line for line in out.read_text().splitlines() if line.startswith("[")))
    assert len(pids) == 4 and all(pid > 0 for pid in pids)  # two simulation workers, a list worker, the forkserver
    deadline = time.monotonic() + 60
    while any(_running(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.1)  # waiting for a condition, not ordering: the kernel ends them as soon as it can
    left = [pid for pid in pids if _running(pid)]
    for pid in left:  # never leave them behind, even when the test fails
        os.kill(pid, 9)
    assert left == [], f"still running after the bot was killed: {left}"
