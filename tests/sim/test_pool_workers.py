"""The worker pool's own contract (bot/sim/pool.py, issue 22), with real worker processes, real sockets and
real signals: a worker that dies fails only its own request, big answers arrive whole without holding the
event loop, a job past its time has its worker killed and replaced, and nothing outlives `close`."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.ops.metrics import WORKER_DEATHS
from bot.sim import pool as pool_module
from bot.sim import wire
from bot.sim.pool import SimPool
from tests.sim import jobs

LIMIT = 384 * 2**20


@pytest.fixture
async def pool() -> AsyncIterator[SimPool]:
    started = SimPool(2, LIMIT, name="test")
    await asyncio.to_thread(started.start)
    yield started
    started.close()


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


async def _busy(pool: SimPool, count: int) -> list[int]:
    """The pids of the workers holding a job, once `count` of them do (a condition, not a delay)."""
    deadline = time.monotonic() + 60
    while len(pool.running_pids()) < count:
        assert time.monotonic() < deadline, "the jobs never reached their workers"
        await asyncio.sleep(0.002)
    return pool.running_pids()


def _deaths() -> float:
    return WORKER_DEATHS.labels("test")._value.get()


async def test_a_killed_worker_answers_died_for_its_own_request_only(pool: SimPool, tmp_path: Path) -> None:
    """SIGKILL to the worker of one request while another runs on the other worker: the first answers
    ("died",); the second keeps its worker (the same pid answers) and succeeds; the dead one is replaced."""
    deaths = _deaths()
    victim_job = asyncio.create_task(pool.call(jobs.pid_when, (str(tmp_path / "never"),), timeout=30))
    [victim] = await _busy(pool, 1)
    other_job = asyncio.create_task(pool.call(jobs.pid_when, (str(tmp_path / "go"),), timeout=30))
    [other] = [pid for pid in await _busy(pool, 2) if pid != victim]
    os.kill(victim, signal.SIGKILL)
    assert await victim_job == ("died",)
    assert not other_job.done()  # its gate is still shut: it is still running, not re-run or failed
    (tmp_path / "go").touch()
    assert await other_job == ("ok", other)
    assert pool.replacements == 1 and _deaths() == deaths + 1 and victim not in pool.pids()
    answers = await asyncio.gather(*(pool.call(os.getpid, (), timeout=30) for _ in range(2)))
    assert len(pool.pids()) == 2 and other in pool.pids() and all(kind == "ok" for kind, _ in answers)


async def test_the_kernel_refusing_memory_is_the_memory_outcome(pool: SimPool) -> None:
    """An mmap beyond the worker's limit fails with OSError ENOMEM (CI met it inside an import): answered
    ("memory",) like a MemoryError, while any other OSError still reaches the caller as the job's error."""
    assert await pool.call(jobs.mapped, (2 * LIMIT // 2**20,), timeout=30) == ("memory",)
    assert await pool.call(jobs.mapped, (1,), timeout=30) == ("ok", 2**20)
    with pytest.raises(FileNotFoundError):
        await pool.call(Path.read_bytes, (Path("/nonexistent/cogitator"),), timeout=30)


async def test_a_worker_that_died_idle_costs_no_request(pool: SimPool) -> None:
    """A worker killed while idle is found when a job is written to it: the job goes to a live worker."""
    for pid in pool.pids():
        os.kill(pid, signal.SIGKILL)
    while pool.alive():
        await asyncio.sleep(0.002)
    kind, pid = await pool.call(os.getpid, (), timeout=30)
    assert kind == "ok" and pid in pool.pids() and pool.replacements == 2


async def test_a_big_answer_arrives_whole_while_the_other_worker_answers(pool: SimPool) -> None:
    """8 MB (many socket buffers) from one worker and small answers from the other at the same time."""
    big = asyncio.create_task(pool.call(jobs.blob, (), timeout=30))
    small = [await pool.call(os.getpid, (), timeout=30) for _ in range(5)]
    kind, data = await big
    assert kind == "ok" and data == jobs.expected_blob()
    assert all(kind == "ok" for kind, _ in small)


def test_a_half_arrived_message_never_blocks_its_reader() -> None:
    """The bot's end reads what is there and returns: half a message gives 'not yet', without waiting for
    the rest (a reader that waited would hang here, so it runs in a thread with a bound)."""
    ours, theirs = socket.socketpair()
    with ours, theirs:
        ours.setblocking(False)
        inbox = wire.Inbox(ours.fileno())
        message = wire.encode({"png": jobs.expected_blob(1)})
        theirs.sendall(message[:1000])
        answers: list[tuple[bool, object]] = []
        reader = threading.Thread(target=lambda: answers.append(inbox.read()), daemon=True)
        reader.start()
        reader.join(timeout=30)
        assert answers == [(False, None)]
        sender = threading.Thread(target=theirs.sendall, args=(message[1000:],), daemon=True)
        sender.start()
        assert inbox.wait(30) == {"png": jobs.expected_blob(1)}
        sender.join(timeout=30)
        theirs.close()
        with pytest.raises(EOFError):
            inbox.wait(30)


async def test_a_job_deaf_to_its_alarm_has_its_worker_killed_and_replaced(
    pool: SimPool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pool_module, "GRACE_S", 0.2)
    deaths = _deaths()
    stuck = asyncio.create_task(pool.call(jobs.deaf, (30,), timeout=0.1))
    [victim] = await _busy(pool, 1)
    assert await stuck == ("timeout",)
    assert pool.replacements == 1 and _deaths() == deaths + 1 and victim not in pool.pids()
    deadline = time.monotonic() + 60
    while _running(victim) and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    assert not _running(victim)
    answers = await asyncio.gather(*(pool.call(os.getpid, (), timeout=30) for _ in range(2)))
    assert all(kind == "ok" for kind, _ in answers) and len(pool.pids()) == 2


async def test_requests_wait_for_a_free_worker_and_a_cancelled_one_frees_it(tmp_path: Path) -> None:
    """One worker: a second request waits in the loop until the first ends; a request whose caller gave up
    still lets its worker go back to the pool when its job ends."""
    single = SimPool(1, LIMIT, name="test")
    try:
        first = asyncio.create_task(single.call(jobs.pid_when, (str(tmp_path / "first"),), timeout=30))
        [pid] = await _busy(single, 1)
        second = asyncio.create_task(single.call(os.getpid, (), timeout=30))
        await asyncio.sleep(0)
        assert not second.done()
        first.cancel()
        (tmp_path / "first").touch()
        assert await second == ("ok", pid)
        assert single.replacements == 0 and single.running_pids() == []
    finally:
        single.close()


async def test_close_answers_running_and_waiting_requests_and_leaves_no_process(tmp_path: Path) -> None:
    single = SimPool(1, LIMIT, name="test")
    running = asyncio.create_task(single.call(jobs.pid_when, (str(tmp_path / "never"),), timeout=30))
    pids = await _busy(single, 1)
    waiting = asyncio.create_task(single.call(os.getpid, (), timeout=30))
    await asyncio.sleep(0)
    await asyncio.to_thread(single.close)  # from another thread, as the bot's shutdown may
    for request in (running, waiting):
        with pytest.raises(RuntimeError, match="closed"):
            await request
    assert [pid for pid in pids if _running(pid)] == [] and single.pids() == [] and single.alive() == 0
    with pytest.raises(RuntimeError, match="closed"):
        await single.call(os.getpid, (), timeout=30)


async def test_an_error_raised_by_a_job_is_raised_in_the_bot_with_the_workers_traceback(pool: SimPool) -> None:
    with pytest.raises(ValueError, match="invalid literal") as caught:
        await pool.call(int, ("x",), timeout=30)
    assert isinstance(caught.value.__cause__, pool_module.WorkerTraceback)
    assert "Traceback" in str(caught.value.__cause__)
    assert await pool.call(len, ("abc",), timeout=30) == ("ok", 3)  # the worker goes on


async def test_a_job_or_answer_that_cannot_cross_fails_alone(pool: SimPool) -> None:
    """Arguments that cannot be rebuilt in the worker, an answer that cannot be pickled back: that request
    raises, the worker (read in step, not killed) takes the next job."""
    with pytest.raises(ValueError, match="cannot be rebuilt"):
        await pool.call(len, (jobs.Unpicklable(),), timeout=30)
    with pytest.raises(TypeError, match="cannot be sent back"):
        await pool.call(jobs.unsendable, (), timeout=30)
    assert await pool.call(len, ("abc",), timeout=30) == ("ok", 3)
    assert pool.replacements == 0


async def test_what_a_worker_loaded_before_its_first_job_is_frozen_out_of_the_collectors_passes(
    pool: SimPool,
) -> None:
    """A full garbage collection in a warm worker walks only what it made since (not the ~30,000 objects of
    numpy, the engine and the warm-up), so a request that triggers one does not pay for them. (The army-list
    pool's dataset, loaded by its `warm`: tests/armies/test_reader.py.)"""
    await pool.call(os.getpid, (), timeout=30)
    kind, (frozen, walked) = await pool.call(jobs.gc_counts, (), timeout=30)
    assert kind == "ok" and frozen > 10_000 and walked < 2_000, (frozen, walked)
