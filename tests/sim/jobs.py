"""Jobs for the pool's tests (tests/sim/test_pool_workers.py), run in real worker processes: module-level so
the pool can send them by name."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

BLOB_MB = 8


def pid_when(gate: str) -> int:
    """Wait (at most 60 s) until the file `gate` exists, then answer this worker's pid: a job that stays
    running until the test lets it end, whatever the machine's speed."""
    deadline = time.monotonic() + 60
    while not Path(gate).exists() and time.monotonic() < deadline:
        time.sleep(0.002)
    return os.getpid()


def blob(megabytes: int = BLOB_MB) -> bytes:
    """A result far larger than a socket's buffer, whose every byte can be checked."""
    return expected_blob(megabytes)


def expected_blob(megabytes: int = BLOB_MB) -> bytes:
    return bytes(range(256)) * (megabytes * 4096)


def deaf(seconds: float) -> int:
    """Sleep with the worker's alarm blocked, as a job stuck inside C code would: only a kill stops it."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
    time.sleep(seconds)
    return os.getpid()


def explode() -> None:
    """Raises where it is called: as the reconstructor of `Unpicklable`, in the worker reading the job."""
    raise ValueError("this argument cannot be rebuilt here")


class Unpicklable:
    """Pickles fine in the bot, fails to unpickle in the worker."""

    def __reduce__(self) -> tuple:
        return (explode, ())


def unsendable() -> object:
    """An answer that cannot be pickled back."""
    return lambda: None


def gc_counts() -> tuple[int, int]:
    """(objects frozen out of the garbage collector's passes, objects a full pass would walk) in this worker."""
    import gc

    return gc.get_freeze_count(), len(gc.get_objects())


def mapped(megabytes: int) -> int:
    """Map `megabytes` of anonymous memory: beyond the worker's address-space limit the kernel refuses the
    mmap (OSError ENOMEM, not MemoryError), as it refuses an import's directory listing near the limit."""
    import mmap

    with mmap.mmap(-1, megabytes * 2**20) as area:
        return len(area)
