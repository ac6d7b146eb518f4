"""A process and the ones it started, read from Linux /proc: for the tests and benches that watch a bot's
process tree from outside (its memory, its simulation workers)."""

from __future__ import annotations

from pathlib import Path


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
