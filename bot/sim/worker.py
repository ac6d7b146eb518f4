"""The body of a worker process (bot.sim.pool): its limits, its warm-up, and its life (`serve`): one job
after another (a simulation, or any job such as reading an army list) read from its own socket.

Only plain data crosses the process boundary (bot.sim.wire), as a tuple whose first item says what happened:
("ok", result, png) (`run`: ("ok", result)), ("user", message, field) for a refusal in words, ("memory",) when the request hit
the worker's address-space limit, ("timeout",) when it ran past its wall-clock limit. The worker
survives all four and takes the next request. Any other exception of the job comes back as ("raise", error,
worker's traceback), which the pool raises in the bot.

`limit_address_space` is also what bench/budget.py puts its measuring children under, so the budget
search measures requests the way the bot runs them.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import gc
import os
import resource
import select
import signal
import threading
import traceback
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from bot.sim import wire

# Before numpy loads: two single-threaded workers are the parallelism of a 2-core host, and BLAS threads
# would each reserve address space that counts against the worker's limit.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
os.environ.setdefault("MPLBACKEND", "Agg")

# A tiny request that touches the engine's caches and, with a plot, the chart's fonts.
WARM_REQUEST: dict[str, Any] = {
    "volley": [{"weapon": {"attacks": 2, "skill": 3, "strength": 4, "damage": 1}}],
    "target": {"models": 2, "toughness": 4, "save": 3, "wounds": 2},
}

# How much nicer than the worker a background job's thread is (`run_background`: a /sim matchup's jobs).
# Nice 10 weighs about a tenth of nice 0 in the kernel's scheduler, so on a busy host the bot's event loop (and a /sim another
# player is waiting for) runs first, and an idle host still gives the job every spare cycle.
BACKGROUND_NICE = 10

_limit_error: str | None = None  # why RLIMIT_AS could not be set in this worker, if it could not


class _Overtime(BaseException):
    """Raised by the SIGALRM handler in the worker's main thread (a BaseException, so that no
    `except Exception` on the way can take it for an error of the request)."""


def limit_address_space(limit_bytes: int) -> int:
    """Cap this process's address space (RLIMIT_AS) at `limit_bytes`, never above the inherited hard
    limit. An allocation beyond it raises MemoryError here instead of growing the process until the
    kernel's OOM killer ends it (and, under a cgroup limit, the bot with it). Returns the cap set."""
    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = limit_bytes if hard == resource.RLIM_INFINITY else min(limit_bytes, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    return cap


def warm_up() -> None:
    """One tiny simulation and plot: imports, caches and fonts loaded before the first real request."""
    import engine
    import engine.plot

    engine.plot.plot_models_killed(engine.simulate(WARM_REQUEST), title="warm-up")


def serve(conn: Connection, limit_bytes: int, warm: Callable[[], None] | None, owner: int | None) -> None:
    """A worker's whole life (the target of its process): set up (`initialise`), say it is ready with its pid
    and why its address-space limit could not be set (None when it is in place), then answer one job
    (function, timeout, args) after another, job(timeout, *args), until the pool closes its end."""
    initialise(limit_bytes, warm, owner)
    fd = conn.fileno()
    wire.send(fd, (os.getpid(), _limit_error))
    while True:
        try:
            message = wire.read_message(fd)
        except EOFError:  # the pool closed our socket, or the bot is gone
            return
        try:
            job, timeout, args = wire.decode(message)  # whole bytes: a job that cannot be unpickled fails alone
            outcome = job(timeout, *args)
        except Exception as error:  # noqa: BLE001 - the bot raises it, as if the job had run there
            outcome = ("raise", error, traceback.format_exc())
        try:
            data = wire.encode(outcome)
        except Exception as error:  # noqa: BLE001 - a result or an error that cannot be pickled
            data = wire.encode(("raise", TypeError(f"the job's answer cannot be sent back: {error}"), ""))
        wire.write(fd, data)


def initialise(limit_bytes: int, warm: Callable[[], None] | None = None, owner: int | None = None) -> None:
    """Runs once in each new worker, before its first job. Never raises: a worker that cannot set its
    limit still answers, and tells the pool why in its first message (the pool logs it once). `warm`
    loads what this pool's jobs need (under the limit, so it counts), e.g. wh40kdc's dataset for army
    lists. `owner` is the bot's pid: the worker ends when the bot does (`exit_with`)."""
    global _limit_error
    if owner is not None:
        exit_with(owner)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C in a terminal is for the bot, which stops the pool
    signal.signal(signal.SIGALRM, _overtime)
    # If the service's cgroup runs out of memory anyway, the kernel should end a worker, not the bot:
    # raising one's own OOM score needs no privilege.
    with contextlib.suppress(OSError):
        Path("/proc/self/oom_score_adj").write_text("500")
    try:
        limit_address_space(limit_bytes)
    except (OSError, ValueError) as error:  # e.g. EPERM from a seccomp filter that denies prlimit64
        _limit_error = f"{type(error).__name__}: {error}"
    if warm is not None:
        with contextlib.suppress(Exception):  # a cold worker still answers; its first job loads what it needs
            warm()
    freeze_warm()


def freeze_warm() -> None:
    """Move everything loaded so far (modules, caches, a warm pool's dataset) out of reach of the garbage
    collector's full passes (gc.freeze). Why: a full pass walks every tracked object, ~30,000 in a warm
    worker, 15-25 ms, which a request that triggers one pays at once (a p99 of a few ms otherwise);
    walking them would also write into pages shared copy-on-write with the forkserver. Garbage made while
    warming is collected first, so nothing collectable is frozen."""
    gc.collect()
    gc.freeze()


def exit_with(owner: int) -> None:
    """End this worker when process `owner` (the bot) ends, however it ends. Why: a worker sees its socket
    close only when it next reads it, so one busy with a long job would outlive a bot killed with SIGKILL
    (and keep the forkserver, which waits for its children). A daemon thread waits on the bot's pidfd (no
    polling). Without pidfds (not Linux, kernel < 5.3) the worker ends at its next read."""
    try:
        pidfd = os.pidfd_open(owner)
    except (AttributeError, OSError):
        return

    def wait() -> None:
        readable = select.poll()
        readable.register(pidfd, select.POLLIN)  # readable once the bot has exited
        readable.poll()
        os._exit(0)

    # A small stack: the thread's stack is address space, which counts against the worker's limit.
    previous = threading.stack_size(256 * 1024)
    try:
        threading.Thread(target=wait, name="exit-with-bot", daemon=True).start()
    finally:
        threading.stack_size(previous)


def _overtime(_signum: int, _frame: object) -> None:
    raise _Overtime


def compute(timeout: float, request: dict[str, Any], plot_title: str | None, with_plot: bool) -> tuple:
    """One simulation: simulate and plot under the wall-clock limit `timeout` (SIGALRM; the engine
    returns to Python between numpy calls, so it stops within a fraction of a second)."""
    from bot.sim.compute import compute as simulate_and_draw

    outcome = run(timeout, simulate_and_draw, request, plot_title, with_plot)
    return ("ok", *outcome[1]) if outcome[0] == "ok" else outcome


def run(timeout: float, job: Callable[..., Any], *args: Any) -> tuple:
    """Any job (a module-level function, pickled by name) under the wall-clock limit `timeout`:
    ("ok", its result), or the refusal, memory and timeout outcomes described above."""
    from bot.errors import UserError

    # Then every 0.1 s: an exception raised while Python runs a __del__ or a callback is swallowed.
    signal.setitimer(signal.ITIMER_REAL, timeout, 0.1)
    try:
        result = job(*args)
    except UserError as error:
        return ("user", error.message, error.field)
    except MemoryError:
        return ("memory",)
    except OSError as error:
        # At the address-space limit the kernel refuses an mmap, e.g. while an import lists a directory:
        # that is the same outcome as a MemoryError, not an error in the job.
        if error.errno != errno.ENOMEM:
            raise
        return ("memory",)
    except _Overtime:
        return ("timeout",)
    finally:
        with contextlib.suppress(_Overtime):  # the alarm may fire between the try and here
            signal.setitimer(signal.ITIMER_REAL, 0)
    return ("ok", result)


def run_background(timeout: float, job: Callable[..., Any], *args: Any) -> tuple:
    """`run`, with the job in a thread of this worker BACKGROUND_NICE nicer than it. Niceness belongs to a
    Linux thread and can only be raised without privilege, so the job gets a thread of its own: the
    worker's main thread stays at the bot's priority for the next interactive /sim."""
    return run(timeout, _in_niced_thread, job, *args)


def _in_niced_thread(job: Callable[..., Any], *args: Any) -> Any:
    """job(*args) in a new thread, BACKGROUND_NICE nicer; its result, or its exception raised here. When the
    wall-clock alarm stops this (main) thread, the job's thread is stopped the same way: an exception
    raised in it when it next runs Python (as the alarm does in the main thread); if it never does, the
    pool kills the worker `GRACE_S` later, as it does a main thread stuck in C code."""
    outcome: dict[str, Any] = {}
    started, finished = threading.Event(), threading.Event()

    def body() -> None:
        started.set()
        try:
            with contextlib.suppress(OSError):  # a host that refuses it: the job runs at the worker's priority
                os.nice(BACKGROUND_NICE)  # on Linux, of this thread only
            outcome["result"] = job(*args)
        except BaseException as error:  # noqa: BLE001 - handed to the main thread, which sorts it out
            outcome["error"] = error
        finally:
            finished.set()

    # Waits on an Event, not Thread.join: a join interrupted by the alarm marks a running thread stopped.
    thread = threading.Thread(target=body, name="background-job", daemon=True)
    try:
        thread.start()
        finished.wait()
    except _Overtime:
        with contextlib.suppress(_Overtime):  # the repeating alarm may fire once more before it is off
            signal.setitimer(signal.ITIMER_REAL, 0)
        started.wait()  # the alarm may have come while the thread was starting
        if not finished.is_set() and thread.ident is not None:
            # Once: a second one could land after the job, in the thread's own clean-up.
            ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident), ctypes.py_object(_Overtime))
        finished.wait()
        thread.join()
        raise
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["result"]
