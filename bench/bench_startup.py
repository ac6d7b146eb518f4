"""Start-up time and idle memory of `python -m bot run` (issue 20: neither may grow).

    .venv/bin/python bench/bench_startup.py [--runs 5]

Each run starts a real bot against tests/fakediscord (a catalog built once, no imported datasets) and
times it from exec until its gateway session is ready and its commands are synced; the catalog and the
simulation workers (forkserver warmed with the engine and one chart) load before it connects, so this
is the whole start. Two seconds later, idle, it reads memory from /proc: the bot process's RSS, and the
PSS sum of the bot, the forkserver and the workers (PSS splits pages shared copy-on-write, so the sum
is what the tree really holds). Medians over the runs; the machine is shared, so compare runs made
back to back.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests import procs  # noqa: E402
from tests.e2e.botproc import REPO, BotProcess  # noqa: E402
from tests.fakediscord import FakeDiscord  # noqa: E402


def _pss_mb(pid: int) -> float:
    try:
        rollup = Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()
    except OSError:
        return 0.0
    return next((int(line.split()[1]) / 1024 for line in rollup if line.startswith("Pss:")), 0.0)


def one_run(work: Path, data: Path, db: Path) -> tuple[float, float, float, int]:
    fake = FakeDiscord().start()
    bot = BotProcess(fake, work, data=data, db=db)
    try:
        started = time.perf_counter()
        bot.start()
        fake.wait_for_commands(timeout=120)
        fake.wait_for_sessions([(0, 1)], timeout=120)
        ready = time.perf_counter() - started
        time.sleep(2.0)
        tree = procs.tree(bot.pid)
        rss = procs.memory(bot.pid) / 2**20
        return ready, rss, sum(_pss_mb(pid) for pid in tree), len(tree)
    finally:
        bot.stop()
        fake.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-startup-"))
    data, db = work / "data", work / "state.db"
    env = {"COGITATOR_DATA": str(data), "COGITATOR_DB": str(db), "PATH": "/usr/bin:/bin", "COGITATOR_LOG_LEVEL": "WARNING"}
    subprocess.run([sys.executable, "-m", "bot", "catalog", "build"], cwd=REPO, env=env, check=True, capture_output=True)
    runs = [one_run(work, data, db) for _ in range(args.runs)]
    for ready, rss, pss, count in runs:
        print(f"  ready {ready:5.2f} s   bot RSS {rss:6.1f} MB   tree PSS {pss:6.1f} MB ({count} processes)")
    print(f"start-up to ready (median of {len(runs)}): {statistics.median(r[0] for r in runs):.2f} s")
    print(f"idle RSS of the bot process (median): {statistics.median(r[1] for r in runs):.1f} MB")
    print(f"idle PSS of bot + forkserver + workers (median): {statistics.median(r[2] for r in runs):.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
