"""A database written by an older release is consistent right after migrating (issue 19, item 11).

The fixture holds the rows an older release wrote (release b5ed2a6 played two games: one active, one
finished; its snapshots lack VP by round, secondaries, the mission and the clock). Loaded at that release's
schema on either backend, then opened by this version: `verify` passes at once, and play goes on.
"""

from __future__ import annotations

import json
from pathlib import Path

from bot.games import commands as gc
from bot.games.schema import MIGRATIONS, SNAPSHOT_SHAPE
from bot.games.store import GameStore, snapshot_matches
from bot.storage import open_storage
from bot.storage.base import Storage

FIXTURE = Path(__file__).parent.parent / "fixtures" / "games" / "release-b5ed2a6.json"
OLD_VERSION = 2  # the games migrations that release had


def load_old_release(storage: Storage) -> dict:
    data = json.loads(FIXTURE.read_text())
    storage.migrate("games", {dialect: steps[:OLD_VERSION] for dialect, steps in MIGRATIONS.items()})
    with storage.transaction() as conn:
        for table in ("games", "game_events", "game_checkpoints"):
            for row in data[table]:
                conn.execute(f"INSERT INTO {table} ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                             tuple(row.values()))
        if storage.dialect == "postgresql":  # rows came with their ids: the sequence continues after them
            conn.execute("SELECT setval(pg_get_serial_sequence('games', 'id'), (SELECT MAX(id) FROM games))")
    return data


def test_old_snapshots_are_rebuilt_by_the_migration(db_target: Path | str) -> None:
    storage = open_storage(db_target)
    data = load_old_release(storage)
    for game in data["games"]:  # the old rows as they are: what `verify` reported before this version
        log = [{**json.loads(e["body"]), "seq": e["seq"], "ts": e["ts"], "actor_user": e["actor_user"]}
               for e in data["game_events"] if e["game_id"] == game["id"]]
        assert not snapshot_matches(game["state"], log)
    store = GameStore(storage)
    try:
        assert store.verify(1001) and store.verify(1002)
        with storage.read() as conn:
            assert {r[0] for r in conn.execute("SELECT shape FROM games")} == {SNAPSHOT_SHAPE}
        vp = {(r["player"], r["round"]): r["other"] for r in store.export(1001)["vp_by_round"]}
        assert vp[(111, 1)] == 5 and vp[(222, 1)] == 4  # from the log's vp events, not the defaults
        store.act(1001, gc.vp_add, 111, 2)
        store.undo(1001, 111)
        store.undo(1001, 111)
        assert store.verify(1001)
        assert GameStore(storage).upgrade_snapshots() == 0  # done once; the next open finds nothing to do
    finally:
        store.close()
        storage.close()


def test_current_snapshots_from_before_the_format_column_are_only_marked(db_target: Path | str,
                                                                        caplog) -> None:  # noqa: ANN001
    """A database of the release just before `games.shape` holds snapshots in today's format: opening it
    marks them without re-folding a single log (a big database starts as fast as before)."""
    import logging

    store = GameStore(db_target)
    store.start(42, 1, user_id=111, user_name="Alice", opponent_id=222, opponent_name="Bob", edition="10e",
                faction="Orks", opponent_faction="Orks")
    store.act(42, gc.vp_add, 111, 3)
    with store.storage.transaction(42) as conn:
        conn.execute("UPDATE games SET shape = 0")
    store.close()
    with caplog.at_level(logging.INFO, logger="cogitator.games"):
        store = GameStore(db_target)
    try:
        (line,) = [r for r in caplog.records if r.getMessage() == "game snapshots upgraded"]
        assert (line.games, line.rebuilt) == (1, 0)
        assert store.verify(42)
        with store.storage.read() as conn:
            assert conn.execute("SELECT shape FROM games").fetchone()[0] == SNAPSHOT_SHAPE
    finally:
        store.close()
