"""Files written under a hidden temporary name first, `.NAME.partial-PID`, then renamed or linked into place.

A process killed while writing one (kill -9, a power cut) leaves it behind, with SQLite's `-journal`
beside it: full-size copies that no glob for the finished names (`cogitator-*.db`) ever matches.
Whoever writes such files next removes the ones whose writer is gone (`remove_stale`), so the nightly
backup also cleans up after a killed one. The PID is the writer's: a live process of that PID keeps its
file (a reused PID only delays the cleanup to a later run).
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path

_PARTIAL = re.compile(r"\..+\.partial-(?P<pid>\d+)(?:-journal|-wal|-shm)?")


def partial_path(dest: Path) -> Path:
    """Where this process writes `dest` before it is complete."""
    return dest.with_name(f".{dest.name}.partial-{os.getpid()}")


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    except OverflowError:
        return False
    return True


def remove_stale(folder: Path) -> list[str]:
    """Remove the partial files (and their SQLite side files) in `folder` whose writing process is gone;
    return their names. A folder that cannot be listed is left alone."""
    removed: list[str] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        match = _PARTIAL.fullmatch(entry.name)
        if match is None or _alive(int(match["pid"])):
            continue
        with contextlib.suppress(FileNotFoundError, IsADirectoryError, PermissionError):
            os.unlink(entry.path)
            removed.append(entry.name)
    return sorted(removed)
