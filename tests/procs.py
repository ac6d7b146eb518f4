"""Processes for tests and benches: a process and the ones it started, read from Linux /proc (a bot's
memory, its simulation workers), and Python processes started together to race on one database."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def status(pid: int) -> dict[str, str]:
    """/proc/PID/status as a dict ("VmRSS": "123 kB", "PPid": "1", ...); empty when the process is gone."""
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError:
        return {}
    return {k: v.strip() for k, _, v in (line.partition(":") for line in lines)}


def memory(pid: int, key: str = "VmRSS") -> int:
    """A memory figure of the process in bytes (VmRSS, VmHWM, VmSize); 0 when the process is gone."""
    return int(status(pid).get(key, "0 kB").split()[0]) * 1024


def descendants(root: int) -> list[int]:
    """Every process `root` started, however deep: children first, then theirs."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (parent := status(int(entry.name)).get("PPid")):
            parents[int(entry.name)] = int(parent)
    found: list[int] = []
    frontier = {root}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier}
        found += sorted(frontier)
    return found


def tree(root: int) -> list[int]:
    """`root` and every process it started."""
    return [root, *descendants(root)]


def spawn(code: str, *args: str) -> subprocess.Popen:
    """A Python process running `code` (dedented) from the repository root, with pipes for a race."""
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), *args], cwd=REPO, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def race(procs: list[subprocess.Popen], timeout: float = 120) -> list[str]:
    """Start processes at the same moment: wait until each printed "ready", then tell all "go". Returns what
    each printed after "ready"; a process that fails fails the test with its standard error."""
    for proc in procs:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    outs = []
    for proc in procs:
        out, err = proc.communicate(timeout=timeout)
        assert proc.returncode == 0, err
        outs.append(out)
    return outs
