"""Army lists are read in a worker process (issue 19, Build 1): real worker processes with a real address-space
cap, real files; at most one list per user and two per server at a time, the rest told to wait."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.armies import reader as reader_module
from bot.armies.errors import ListError
from bot.armies.reader import ArmyReader, warm_worker
from bot.console.session import ConsoleSession
from bot.errors import UserError
from bot.sim.pool import SimPool
from tests.armies.test_limits import NAMES_A_LIMIT
from tests.fuzz import hostile_lists
from tests.sim import jobs

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "armies"
START = "/game start opponent:222 edition:11e faction:Leagues of Votann opponent_faction:Orks"


@pytest.fixture
def reader() -> Iterator[ArmyReader]:
    army_reader = ArmyReader(lambda: SimPool(1, reader_module.WORKER_MB * 2**20, name="army-list", warm=warm_worker))
    yield army_reader
    army_reader.close()


async def test_a_list_is_read_in_a_worker_process(reader: ArmyReader, tmp_path: Path) -> None:
    army = await reader.read((FIXTURES / "votann_gw_app.txt").read_bytes(), filename=None, edition="11e", user=1)
    assert len(army.units) == 9 and army.faction == "Leagues of Votann"
    assert reader.pool is not None and reader.pool.pids() and os.getpid() not in reader.pool.pids()
    # Its dataset, loaded as it started, is out of the garbage collector's passes (bot.sim.worker.freeze_warm).
    kind, (frozen, walked) = await reader.pool.call(jobs.gc_counts, (), timeout=30)
    assert kind == "ok" and frozen > 100_000 and walked < 20_000, (frozen, walked)
    # The worker read the bytes of a real file, and refused the audit's 4.8 MB list by its line count.
    name, data = hostile_lists.boyz_flood()
    (tmp_path / name).write_bytes(data)
    with pytest.raises(ListError, match="more than 3,000 lines; the limit is 3,000"):
        await reader.read((tmp_path / name).read_bytes(), filename=name, edition="11e", user=1)
    with pytest.raises(ListError, match="nests deeper than 64 levels"):
        await reader.read(hostile_lists.listforge_deep()[1], filename=None, edition="11e", user=1)
    assert reader.limits.in_flight == 0  # every refusal released its place
    again = await reader.read((FIXTURES / "orks_newrecruit.json").read_bytes(), filename="list.json", edition="10e")
    assert again.edition == "10e" and any("10e datasheet" in d.message for d in again.diagnostics)


async def test_a_list_that_outgrows_its_worker_fails_alone() -> None:
    """A worker capped below what the dataset needs: the list is refused in words and the worker replaced."""
    tight = ArmyReader(lambda: SimPool(1, 120 * 2**20, name="army-list", warm=warm_worker))
    try:
        with pytest.raises(ListError, match="needed more than"):
            await tight.read((FIXTURES / "votann_gw_app.txt").read_bytes(), filename=None, edition="11e")
        assert tight.limits.in_flight == 0
    finally:
        tight.close()


async def test_one_list_per_user_and_two_per_server_at_a_time(reader: ArmyReader) -> None:
    data = (FIXTURES / "orks_gw_wtc.txt").read_bytes()
    with reader.limits.admit(user=1, guild=10):
        with pytest.raises(UserError, match="Your previous army list is still being read"):
            await reader.read(data, filename=None, edition="11e", user=1, guild=11)
        assert len((await reader.read(data, filename=None, edition="11e", user=2, guild=10)).units) == 7
        with reader.limits.admit(user=2, guild=10), pytest.raises(UserError, match="2 army lists are being read in "
                                                                                "this server"):
            await reader.read(data, filename=None, edition="11e", user=3, guild=10)
    with contextlib.ExitStack() as stack:
        for i in range(reader_module.MAX_PENDING):
            stack.enter_context(reader.limits.admit(user=1000 + i, guild=2000 + i))
        with pytest.raises(UserError, match=f"reading {reader_module.MAX_PENDING} army lists right now"):
            await reader.read(data, filename=None, edition="11e", user=99, guild=99)
    assert reader.limits.in_flight == 0
    assert len((await reader.read(data, filename=None, edition="11e", user=1, guild=10)).units) == 7


async def test_the_audits_lists_through_the_console(console: ConsoleSession, tmp_path: Path) -> None:
    """/army import of each hostile shape answers a refusal naming its limit; nothing is stored, nothing logged."""
    await console.send(START)
    for name, data in hostile_lists.all_shapes():
        path = tmp_path / name
        path.write_bytes(data)
        reply = (await console.send(f"/army import file:@{path}"))[-1]
        assert reply.ephemeral and any(words in reply.text() for words in NAMES_A_LIMIT), (name, reply.text())
    assert console.bot.services.games.require(1001).armies == {}
    done = (await console.send(f"/army import file:@{FIXTURES / 'votann_gw_app.txt'}"))[1]
    assert "Alice — Leagues of Votann · 1995 pts" in done.text()
