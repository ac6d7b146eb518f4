"""The parsed-snapshot cache of `GameStore` (tracker commands with two armies loaded): the stored snapshot
stays byte-for-byte the fold of the log, a change made by another store (process) is never served stale,
and callers can never alter the cached state through what they are given."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.armies.parse import parse_list
from bot.games import commands as gc
from bot.games import events
from bot.games.snapshots import dump_json
from bot.games.store import GameStore

FIXTURES = Path(__file__).parent.parent / "fixtures" / "armies"
CH = 1001
ALICE, BOB = 111, 222


@pytest.fixture
def store(db_target: Path | str):
    s = GameStore(db_target)
    yield s
    s.close()


def stored_snapshot(store: GameStore) -> str:
    with store.storage.read() as conn:
        return conn.execute("SELECT state FROM games WHERE channel_id = ?", (CH,)).fetchone()["state"]


def folded_text(store: GameStore) -> str:
    """The snapshot text a re-fold of the whole log gives (what `verify` compares with)."""
    with store.storage.read() as conn:
        game_id = conn.execute("SELECT id FROM games WHERE channel_id = ?", (CH,)).fetchone()["id"]
    log = store.events(game_id)
    state = events.fold(events.effective(log))
    state.seq = log[-1]["seq"]
    return dump_json(state.to_dict())


def army(name: str) -> dict:
    return parse_list((FIXTURES / name).read_bytes(), filename=name, edition="11e").to_dict()


def two_armies(store: GameStore) -> None:
    store.start(CH, 501, user_id=ALICE, user_name="Alice", opponent_id=BOB, opponent_name="Bob", edition="11e",
                faction="Leagues of Votann", opponent_faction="Orks")
    store.act(CH, gc.import_army, ALICE, army("votann_gw_app.txt"))
    store.act(CH, gc.import_army, BOB, army("orks_gw_wtc.txt"))


def test_snapshot_text_is_the_fold_of_the_log_after_every_command(store: GameStore) -> None:
    two_armies(store)
    assert stored_snapshot(store) == folded_text(store)
    steps = [lambda: store.act(CH, gc.damage, BOB, "Killa Kans", wounds=7),
             lambda: store.act(CH, gc.judgement, ALICE, "Stompa", 1, remove=False),
             lambda: store.act(CH, gc.riled, BOB, "Killa Kans", "end-of-this-turn"),
             lambda: store.undo(CH, ALICE),
             lambda: store.act(CH, gc.next_phase, ALICE),
             lambda: store.act(CH, gc.damage, ALICE, "Hearthkyn Warriors #1", wounds=1),
             lambda: store.act(CH, gc.import_army, BOB, store.require(CH).army(1)),  # the same list again
             lambda: store.undo(CH, BOB),
             lambda: store.act(CH, gc.clear_army, BOB),
             lambda: store.act(CH, gc.import_army, BOB, army("orks_gw_wtc.txt"))]
    for i, step in enumerate(steps * 4):  # past a checkpoint (every 32 effective events)
        step()
        assert stored_snapshot(store) == folded_text(store), i
        assert store.verify(CH), i


def test_a_change_by_another_store_is_never_served_stale(db_target: Path | str) -> None:
    first, second = GameStore(db_target), GameStore(db_target)
    try:
        two_armies(first)
        first.act(CH, gc.judgement, ALICE, "Stompa", 1, remove=False)  # `first` now holds the state cached
        second.act(CH, gc.judgement, ALICE, "Stompa", 1, remove=False)  # as another process would
        assert first.require(CH).find_unit(1, "Stompa").judgement == 2
        r = first.act(CH, gc.damage, BOB, "Killa Kans", wounds=7)
        assert r.state.find_unit(1, "Stompa").judgement == 2
        second.undo(CH, ALICE)
        assert first.require(CH).find_unit(1, "Killa Kans").models_left == 3
        assert first.verify(CH) and second.verify(CH)
    finally:
        first.close()
        second.close()


def test_states_handed_out_are_copies(store: GameStore) -> None:
    two_armies(store)
    given = store.require(CH)
    given.find_unit(1, "Stompa").judgement = 2
    given.players[0].cp = 99
    given.units.clear()
    r = store.act(CH, gc.judgement, ALICE, "Stompa", 1, remove=False)
    assert r.state.find_unit(1, "Stompa").judgement == 1 and r.state.players[0].cp != 99
    r.state.find_unit(1, "Stompa").judgement = 0
    r.state.players[1].once_used.append("waaagh")
    again = store.require(CH)
    assert again.find_unit(1, "Stompa").judgement == 1 and again.players[1].once_used == []
    assert stored_snapshot(store) == folded_text(store)
