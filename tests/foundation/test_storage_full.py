"""A full disk at run time (issue 9, Build 4): the user reads "storage is full: nothing was saved",
never "Something went wrong", and the game log stays consistent. SQLite's own `max_page_count`
makes the real SQLITE_FULL error that a full disk gives (every connection of the state database
gets the cap, through the real bot.db.connect)."""

from __future__ import annotations

import sqlite3

import pytest

from bot import db
from bot.console.session import ConsoleSession
from bot.storage.check import StorageError, check_state_database
from tests.games.fakes import FakeCatalog


@pytest.fixture
def capped(monkeypatch: pytest.MonkeyPatch) -> list[sqlite3.Connection]:
    """Every state connection opened from now on, so the test can fill the 'disk' at will."""
    conns: list[sqlite3.Connection] = []
    real = db.connect

    def connect(path, **kwargs):  # noqa: ANN001, ANN202
        conn = real(path, **kwargs)
        if conns and conns[0] is FULL:
            cap(conn)
        conns.append(conn)
        return conn

    monkeypatch.setattr(db, "connect", connect)
    return conns


FULL: sqlite3.Connection = sqlite3.connect(":memory:")  # a marker: connections opened later are capped too


def cap(conn: sqlite3.Connection) -> None:
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count = {pages}")


def fill_disk(conns: list[sqlite3.Connection]) -> None:
    for conn in conns:
        cap(conn)
    conns.insert(0, FULL)


async def test_full_disk_answers_storage_is_full_and_saves_nothing(settings, capped, monkeypatch) -> None:
    from bot.services import Services

    catalog = FakeCatalog()
    monkeypatch.setattr(Services, "catalog", property(lambda self: catalog))
    console = await ConsoleSession.open(settings)
    try:
        await console.send("/game start opponent:222 faction:Orks opponent_faction:Necrons edition:11e")
        before = console.bot.services.games.export(console.channel_id)
        fill_disk(capped)
        texts = []
        for _ in range(40):  # until the log needs a page the 'disk' does not have
            for reply in await console.send("/game next"):
                texts.append((reply.ephemeral, reply.text()))
        full = [t for eph, t in texts if "Storage is full: nothing was saved" in t]
        assert full, (len(capped), texts[-1:])
        assert not any("Something went wrong" in t for _, t in texts)
        assert all(eph for eph, t in texts if "Storage is full" in t)
        after = console.bot.services.games.export(console.channel_id)
        assert after is not None and before is not None
        assert console.bot.services.games.verify(console.channel_id)
    finally:
        await console.close()


def test_start_up_check_names_a_full_disk(tmp_path) -> None:
    path = tmp_path / "state.db"
    check_state_database(path)
    conn = sqlite3.connect(path)
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.close()
    # the probe writes a fresh table: with no page to spare that is SQLITE_FULL, as on a full disk
    original = db.connect

    def capped_connect(p, **kw):  # noqa: ANN001, ANN202
        c = original(p, **kw)
        c.execute(f"PRAGMA max_page_count = {pages}")
        return c

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(db, "connect", capped_connect)
        with pytest.raises(StorageError, match=r"cannot be used: the disk is full"):
            check_state_database(path)


def test_every_state_namespace_is_known_to_the_start_up_check() -> None:
    """A feature that adds migrations must list them in bot.db.STATE_SCHEMAS, or the start-up check
    and `restore` would not see a newer database of that feature."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "bot"
    used = set()
    for path in root.rglob("*.py"):
        used |= set(re.findall(r"\.migrate\(\s*\"(\w+)\"", path.read_text(encoding="utf-8")))
    assert used and used <= set(db.STATE_SCHEMAS), used - set(db.STATE_SCHEMAS)
    assert set(db.state_schemas()) == set(db.STATE_SCHEMAS)
