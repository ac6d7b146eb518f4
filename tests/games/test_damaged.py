"""A damaged stored game heals from its event log, or is refused with one way out (issue 19, item 4).

On both backends, through the real command tree: a damaged snapshot is rebuilt from the log (a warning is
logged, `verify` passes after); when the log can't be read either, every game command of the channel says
so and names `/game end abandon:true`, which works, and `/game start` works after it.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from bot.console.session import ConsoleSession
from bot.games.store import DAMAGED_ACTIVE, DAMAGED_ENDED, GameStore
from bot.storage.base import Storage

CH = 1001
START = "/game start opponent:222 edition:10e faction:Leagues of Votann opponent_faction:Orks"
PLAY = [START, "/cp gain amount:1", "/vp add amount:5", "/game next", "/judgement add unit:Boyz", "/game next",
        "/game undo", "/game next"]
# Every game command of a channel that reads its game (the ones that only start one are tested apart).
COMMANDS = ["/game status", "/game next", "/cp gain amount:1", "/cp spend amount:1", "/vp add amount:1",
            "/game log", "/game score", "/game undo", "/army show", "/judgement add unit:Boyz", "/game end"]


@pytest.fixture
async def console(settings) -> Any:  # noqa: ANN001 - both backends (tests/games/conftest.py)
    session = await ConsoleSession.open(settings)
    try:
        yield session
    finally:
        await session.close()


def store_of(console: ConsoleSession) -> GameStore:
    return console.bot.services.games


async def play(console: ConsoleSession, lines: list[str]) -> None:
    for line in lines:
        replies = await console.send(line)
        assert replies and not replies[0].ephemeral, f"{line}: {replies[0].text() if replies else None}"


def raw_write(storage: Storage, sql: str, params: tuple = ()) -> None:
    """Write around the log's append-only triggers, as damage on disk would: the test's stand-in for a bad
    sector, never something the bot does."""
    if storage.dialect == "sqlite":
        conn = sqlite3.connect(storage.path)  # type: ignore[attr-defined]
        triggers = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'").fetchall()
        for name, _ in triggers:
            conn.execute(f"DROP TRIGGER {name}")
        conn.execute(sql, params)
        for _, text in triggers:
            conn.execute(text)
        conn.commit()
        conn.close()
        return
    with storage.transaction() as conn:
        conn.execute("ALTER TABLE game_events DISABLE TRIGGER USER")
        conn.execute(sql, params)
        conn.execute("ALTER TABLE game_events ENABLE TRIGGER USER")


def game_id(console: ConsoleSession) -> int:
    found = store_of(console).active(CH)
    assert found is not None
    return found[0]


def cps(console: ConsoleSession) -> list[int]:
    data = store_of(console).export(CH)
    assert data is not None
    return [p["cp"] for p in data["players"]]


def without_clock(data: dict[str, Any] | None) -> dict[str, Any]:
    assert data is not None
    return {k: v for k, v in data.items() if k != "clock"}


def stale_snapshot(console: ConsoleSession) -> str:
    """The snapshot as it was one event ago (a lost write): parses, but is behind the log."""
    store = store_of(console)
    with store.storage.read() as conn:
        text = conn.execute("SELECT state FROM games WHERE id = ?", (game_id(console),)).fetchone()[0]
    data = json.loads(text)
    data["seq"] -= 1
    data["players"][0]["cp"] += 3
    return json.dumps(data)


def wrong_types(console: ConsoleSession) -> str:
    store = store_of(console)
    with store.storage.read() as conn:
        data = json.loads(conn.execute("SELECT state FROM games WHERE id = ?", (game_id(console),)).fetchone()[0])
    data["players"][1]["cp"] = "lots"
    data["units"] = [{"owner": 7, "name": "Boyz"}]
    return json.dumps(data)


DAMAGE = {
    "truncated": lambda c: '{"edition":"10e","players":[{"user_id":111,"na',
    "not json": lambda c: "\x01\x02\ufffd\ufffd ruined",
    "an array": lambda c: "[]",
    "wrong types": wrong_types,
    "stale": stale_snapshot,
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
async def test_a_damaged_snapshot_is_rebuilt_from_the_log(console: ConsoleSession, damage: str,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    await play(console, PLAY)
    before = store_of(console).export(CH)
    raw_write(store_of(console).storage, "UPDATE games SET state = ? WHERE id = ?",
              (DAMAGE[damage](console), game_id(console)))
    await console.send(":restart")  # no parsed copy in memory: the next command reads the damaged row
    assert not store_of(console).verify(CH)
    with caplog.at_level(logging.WARNING, logger="cogitator.games"):
        status = (await console.send("/game status"))[0]
    assert not status.ephemeral, status.text()
    assert any("rebuilt from its event log" in r.getMessage() for r in caplog.records)
    assert store_of(console).verify(CH)
    assert without_clock(store_of(console).export(CH)) == without_clock(before)
    await play(console, ["/cp gain amount:1 force:true"])
    assert cps(console) == [before["players"][0]["cp"] + 1, before["players"][1]["cp"]]
    assert store_of(console).verify(CH)


async def test_a_damaged_snapshot_heals_inside_a_change_too(console: ConsoleSession) -> None:
    """The first command after the damage is a change (it reads the snapshot in its own transaction)."""
    await play(console, PLAY)
    expected = cps(console)
    raw_write(store_of(console).storage, "UPDATE games SET state = 'garbage', last_seq = 2 WHERE id = ?",
              (game_id(console),))
    await console.send(":restart")
    await play(console, ["/vp add amount:2", "/game undo", "/cp gain amount:1 force:true"])
    assert cps(console) == [expected[0] + 1, expected[1]]
    assert store_of(console).verify(CH)


async def test_a_damaged_log_leaves_one_way_out(console: ConsoleSession) -> None:
    await play(console, PLAY)
    store = store_of(console)
    gid = game_id(console)
    raw_write(store.storage, "UPDATE games SET state = 'garbage' WHERE id = ?", (gid,))
    raw_write(store.storage, "UPDATE game_events SET body = ? WHERE game_id = ? AND seq = 3",
              ('{"type":"vp","actor":0,"summ', gid))
    await console.send(":restart")
    for line in COMMANDS:
        (answer,) = (await console.send(line))[:1]
        assert answer.ephemeral and answer.text() == DAMAGED_ACTIVE, f"{line}: {answer.text()}"
    refused = (await console.send(START))[0]
    assert refused.ephemeral and "already has a game" in refused.text()
    outsider = (await console.send("/game end abandon:true", user=333))[0]
    assert outsider.ephemeral and "Only a player" in outsider.text()
    (ended,) = await console.send("/game end abandon:true", user=222)
    assert not ended.ephemeral and "Game abandoned" in ended.text()
    score = (await console.send("/game score"))[0]
    assert score.ephemeral and score.text() == DAMAGED_ENDED
    history = (await console.send("/game history"))[0]
    assert "Something went wrong" not in history.text()
    await play(console, [START, "/cp gain amount:1", "/game status"])
    assert store_of(console).verify(CH)
    with store_of(console).storage.read() as conn:
        last = conn.execute("SELECT type, body FROM game_events WHERE game_id = ? ORDER BY seq DESC LIMIT 1",
                            (gid,)).fetchone()
    assert last[0] == "end" and json.loads(last[1])["data"] == {"status": "abandoned", "by": 222}


async def test_a_manager_can_abandon_a_game_whose_whole_log_is_damaged(console: ConsoleSession) -> None:
    await play(console, PLAY)
    store, gid = store_of(console), game_id(console)
    raw_write(store.storage, "UPDATE games SET state = 'x' WHERE id = ?", (gid,))
    raw_write(store.storage, "UPDATE game_events SET body = 'x', actor_user = NULL WHERE game_id = ?", (gid,))
    await console.send(":restart")
    player = (await console.send("/game end abandon:true"))[0]
    assert player.ephemeral and "Only a player or a member with Manage Channel" in player.text()
    console.set_permissions(333, "manage_channels")
    (ended,) = await console.send("/game end abandon:true", user=333)
    assert "Game abandoned" in ended.text()
    await play(console, [START])


async def test_game_verify_repair_rewrites_a_snapshot_that_parses_but_differs(console: ConsoleSession) -> None:
    """A bit flip can leave a snapshot that reads fine but says something else than the log: `verify`
    reports it and `--repair` rewrites it from the log."""
    await play(console, PLAY)
    store = store_of(console)
    with store.storage.read() as conn:
        text = conn.execute("SELECT state FROM games WHERE id = ?", (game_id(console),)).fetchone()[0]
    raw_write(store.storage, "UPDATE games SET state = ? WHERE id = ?",
              (text.replace('"name":"Alice"', '"name":"Alicf"'), game_id(console)))
    assert not store.verify(CH)
    assert store.repair(CH) is True
    assert store.verify(CH) and store.repair(CH) is False
    assert "Alicf" not in (await console.send("/game status"))[0].text()


def random_writes(path: Path, seed: int, count: int = 20, size: int = 8) -> None:
    """`count` writes of `size` random bytes at random offsets past the header page (a torn or misdirected
    write; damage to page 1 is what `quick_check` always catches)."""
    import random

    rng = random.Random(seed)
    length = path.stat().st_size
    with path.open("r+b") as file:
        for _ in range(count):
            file.seek(rng.randrange(4096, length - size))
            file.write(rng.randbytes(size))


@pytest.mark.parametrize("seed", range(3))
async def test_random_writes_into_the_database_file_heal_or_are_refused(tmp_path: Path, shared_data_dir: Path,
                                                                       seed: int) -> None:
    """The audit's 20 random 8-byte writes into a SQLite file with a played game and both armies (most of
    the file is snapshot text and event bodies). The start-up check refuses the file, or every command
    answers in words (never "Something went wrong") and, unless SQLite's own structures were hit (then
    commands say the database is damaged), the channel can be freed and used again. (With these seeds
    `quick_check` passes and both the snapshot and the armies' log entries are hit, as in the audit; the
    file's size varies by a few bytes with the timestamps, so the branch taken is not asserted.)"""
    from bot.config import Settings
    from bot.storage.base import StorageError
    from bot.storage.check import CORRUPT_MESSAGE, check_state_database

    fixtures = Path(__file__).parent.parent / "fixtures" / "armies"
    path = tmp_path / "state.db"
    settings = Settings(token=None, db_path=path, data_dir=shared_data_dir, log_level="WARNING",
                        sync_commands=False)
    console = await ConsoleSession.open(settings)
    try:
        await play(console, [START, f"/army import file:@{fixtures / 'votann_gw_app.txt'}", *PLAY[1:]])
        assert not (await console.send(f"/army import file:@{fixtures / 'orks_gw_wtc.txt'}", user=222))[-1].ephemeral
    finally:
        await console.close()
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    random_writes(path, seed)
    try:
        check_state_database(path)
    except StorageError as error:
        assert str(path) in str(error)
        return
    console = await ConsoleSession.open(settings)
    console.set_permissions(111, "manage_channels")
    answers = []
    try:
        for line in [*COMMANDS[:-1], "/game end abandon:true", START, "/game status"]:
            replies = await console.send(line)
            assert replies, line
            text = replies[0].text()
            assert "Something went wrong" not in text, f"seed {seed}, {line}: {text}"
            answers.append((line, replies[0].ephemeral, text))
        if all(text != CORRUPT_MESSAGE for _, _, text in answers):  # only stored values were hit (these seeds)
            assert [private for _, private, _ in answers[-3:]] == [False, False, False], answers[-3:]
    finally:
        await console.close()


def test_damage_sqlite_meets_at_run_time_is_answered_in_words(tmp_path: Path) -> None:
    """SQLITE_CORRUPT from a real damaged file (cut short) is the operator's problem, not an internal error:
    the user reads that the state database is damaged and nothing was saved."""
    from bot.client import user_message
    from bot.storage.check import CORRUPT_MESSAGE

    path = tmp_path / "cut.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t (x)")
        conn.executemany("INSERT INTO t VALUES (?)", [(b"x" * 1000,)] * 200)
    conn.close()
    with path.open("r+b") as file:
        file.truncate(path.stat().st_size // 2)
    reader = sqlite3.connect(path)
    with pytest.raises(sqlite3.DatabaseError) as caught:
        reader.execute("SELECT COUNT(*), SUM(LENGTH(x)) FROM t").fetchone()
    reader.close()
    assert user_message(caught.value) == (CORRUPT_MESSAGE, False)
