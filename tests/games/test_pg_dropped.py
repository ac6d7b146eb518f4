"""A dropped PostgreSQL connection (pg_terminate_backend, a server restart) against a real server: the
next read or change reconnects once and answers; a server that stays away gets one clear sentence, never
"Something went wrong" or a traceback; a change cut off mid-way saves nothing."""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import Iterator

import pytest

from bot.console.session import ConsoleSession
from bot.games import commands as gc
from bot.games.store import GameStore
from bot.storage.base import StorageUnavailable
from tests.conftest import backend_settings


@pytest.fixture
def database(pg_server) -> Iterator[str]:  # noqa: ANN001
    """A database of its own, so terminating its sessions or closing it to connections touches no other test."""
    import psycopg

    name = f"d_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_server.url(), autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    try:
        yield name
    finally:
        with psycopg.connect(pg_server.url(), autocommit=True) as admin:
            admin.execute(f"ALTER DATABASE {name} ALLOW_CONNECTIONS true")
            admin.execute(f"DROP DATABASE {name} WITH (FORCE)")


def drop_sessions(pg_server, database: str, *, refuse_new: bool = False) -> int:  # noqa: ANN001
    """pg_terminate_backend on every session of `database`; optionally refuse new ones (a server 'away')."""
    import psycopg

    with psycopg.connect(pg_server.url(), autocommit=True) as admin:
        if refuse_new:
            admin.execute(f"ALTER DATABASE {database} ALLOW_CONNECTIONS false")
        rows = admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s "
                             "AND pid <> pg_backend_pid()", (database,)).fetchall()
    return len(rows)


def allow(pg_server, database: str) -> None:  # noqa: ANN001
    import psycopg

    with psycopg.connect(pg_server.url(), autocommit=True) as admin:
        admin.execute(f"ALTER DATABASE {database} ALLOW_CONNECTIONS true")


def test_reads_and_changes_reconnect_once_after_a_drop(pg_server, database: str) -> None:  # noqa: ANN001
    store = GameStore(pg_server.url(database))
    try:
        store.start(5, 1, user_id=111, user_name="A", opponent_id=222, opponent_name="B", edition="11e",
                    faction="Orks", opponent_faction="Orks")
        before = store.export(5)
        assert drop_sessions(pg_server, database) >= 1
        assert store.export(5) == before, "a read on the dropped connection reconnects and answers"
        assert drop_sessions(pg_server, database) >= 1
        store.act(5, gc.cp_gain, 111, 1)  # a change: BEGIN found the drop before anything ran
        assert store.export(5)["players"][0]["cp"] == before["players"][0]["cp"] + 1

        def drop_mid_change(state, user_id):  # noqa: ANN001, ANN202 - the server goes away inside the change
            drop_sessions(pg_server, database)
            return gc.cp_gain(state, user_id, 3)
        middle = store.export(5)
        with pytest.raises(StorageUnavailable):
            store.act(5, drop_mid_change, 111)
        assert store.export(5) == middle, "nothing of the cut-off change was saved"

        drop_sessions(pg_server, database, refuse_new=True)
        with pytest.raises(StorageUnavailable) as refused:
            store.export(5)
        with pytest.raises(StorageUnavailable):
            store.act(5, gc.cp_gain, 111, 1)
        assert "nothing was saved" in str(refused.value) and refused.value.detail
        allow(pg_server, database)
        store.act(5, gc.cp_gain, 111, 1)
        assert store.verify(5)
    finally:
        store.close()


def test_a_socket_that_fails_before_libpq_notices_reconnects_too(pg_server, database: str) -> None:  # noqa: ANN001
    """A drop can surface as psycopg's "connection socket closed" (an OSError in its wait) while libpq still
    reports the connection as fine, so `broken` is False: a CI run under load met it at a change's BEGIN right
    after pg_terminate_backend and answered "Something went wrong". Closing the socket under psycopg's feet
    produces exactly that; the read and the change still reconnect once and answer."""
    store = GameStore(pg_server.url(database))
    try:
        store.start(6, 1, user_id=111, user_name="A", opponent_id=222, opponent_name="B", edition="11e",
                    faction="Orks", opponent_faction="Necrons")
        before = store.export(6)
        os.close(store.storage._local.conn.pgconn.socket)
        assert store.export(6) == before
        os.close(store.storage._local.conn.pgconn.socket)
        store.act(6, gc.cp_gain, 111, 1)
        assert store.export(6)["players"][0]["cp"] == before["players"][0]["cp"] + 1
    finally:
        store.close()


@pytest.mark.asyncio
async def test_commands_answer_after_a_drop_and_while_the_server_is_away(
        settings, pg_server, database: str, caplog: pytest.LogCaptureFixture) -> None:  # noqa: ANN001
    console = await ConsoleSession.open(backend_settings(settings, pg_server.url(database)))
    try:
        for line in (":as 222", ":name Bob", ":as 111", ":name Alice",
                     "/game start opponent:222 edition:11e faction:Orks opponent_faction:Necrons"):
            await console.send(line)
        drop_sessions(pg_server, database)
        status = (await console.send("/game status"))[0]
        assert not status.ephemeral and "Alice" in status.text(), status.text()
        drop_sessions(pg_server, database)
        gained = (await console.send("/cp gain amount:1 force:true"))[0]
        assert not gained.ephemeral, gained.text()

        drop_sessions(pg_server, database, refuse_new=True)
        for line in ("/game status", "/cp gain amount:1 force:true"):
            reply = (await console.send(line))[0]
            assert reply.ephemeral and "could not be reached" in reply.text(), reply.text()
            assert "went wrong" not in reply.text().lower()
        allow(pg_server, database)
        assert not (await console.send("/game status"))[0].ephemeral
    finally:
        await console.close()
    assert [r.getMessage() for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR] == []
