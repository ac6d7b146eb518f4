"""The tracker's service layer: clock, edition rules, invariants, undo and the event log."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.errors import UserError
from bot.games import commands as gc
from bot.games import events, rules
from bot.games import store as store_module
from bot.games.commands import SoftRuleError
from bot.games.store import GameStore
from tests.games.fakes import FakeCatalog

CH = 1001
ALICE, BOB = 111, 222
CATALOG = FakeCatalog()


def spec(name: str, edition: str) -> rules.StratagemSpec:
    res = CATALOG.resolve(name, kind="stratagem", edition=edition)
    assert res.best is not None
    return rules.StratagemSpec.from_entry(res.best)


@pytest.fixture
def store(db_target: Path | str):
    s = GameStore(db_target)
    yield s
    s.close()


def start(store: GameStore, edition: str = "10e", starting_cp: int = 0, channel: int = CH) -> None:
    store.start(channel, 501, user_id=ALICE, user_name="Alice", opponent_id=BOB, opponent_name="Bob",
                edition=edition, faction="Leagues of Votann", opponent_faction="Orks", starting_cp=starting_cp)


def nxt(store: GameStore, n: int = 1, user: int = ALICE) -> None:
    for _ in range(n):
        store.act(CH, gc.next_phase, user)


def cps(store: GameStore) -> tuple[int, int]:
    s = store.require(CH)
    return s.players[0].cp, s.players[1].cp


def test_start_gives_command_phase_cp(store: GameStore) -> None:
    start(store, starting_cp=3)
    state = store.require(CH)
    assert (state.round, state.active, state.phase) == (1, 0, "command")
    assert cps(store) == (4, 4)


def test_clock_order_and_command_phase_cp(store: GameStore) -> None:
    start(store)
    seen = []
    for _ in range(10):
        s = store.require(CH)
        seen.append((s.round, s.active, s.phase))
        nxt(store)
    assert seen[:6] == [(1, 0, "command"), (1, 0, "movement"), (1, 0, "shooting"), (1, 0, "charge"),
                        (1, 0, "fight"), (1, 1, "command")]
    s = store.require(CH)
    assert (s.round, s.active, s.phase) == (2, 0, "command")
    assert cps(store) == (3, 3)  # start + Bob's Command phase + round 2


def test_battle_ends_after_round_five(store: GameStore) -> None:
    start(store)
    nxt(store, 49)
    s = store.require(CH)
    assert (s.round, s.active, s.phase, s.over) == (5, 1, "fight", False)
    nxt(store)
    assert store.require(CH).over
    assert cps(store) == (10, 10)
    with pytest.raises(UserError, match="battle is over"):
        nxt(store)
    store.undo(CH, BOB)
    assert not store.require(CH).over


def test_cp_never_below_zero(store: GameStore) -> None:
    start(store)
    with pytest.raises(UserError, match="Not enough CP"):
        store.act(CH, gc.cp_spend, ALICE, 2)
    with pytest.raises(UserError, match="Not enough CP"):
        store.act(CH, gc.use_stratagem, ALICE, spec("Counter-offensive", "10e"), None)
    assert cps(store) == (1, 1)


def test_10e_extra_cp_cap_is_soft_and_ruthless_efficiency_is_exempt(store: GameStore) -> None:
    start(store, "10e")
    store.act(CH, gc.cp_gain, ALICE, 1)
    with pytest.raises(SoftRuleError, match="at most 1CP per battle round"):
        store.act(CH, gc.cp_gain, ALICE, 1)
    r = store.act(CH, gc.cp_gain, ALICE, 1, force=True)
    assert r.outcome.events[0]["forced"] and "at most 1CP" in r.outcome.events[0]["overrides"][0]
    store.act(CH, gc.oathband_mark, ALICE, "Boyz")
    with pytest.raises(UserError, match="destroyed"):
        store.act(CH, gc.ruthless_claim, ALICE, 2)
    store.act(CH, gc.destroyed, ALICE, "Boyz", mine=False)
    store.act(CH, gc.ruthless_claim, ALICE, 2)  # no cap warning: exempt
    assert cps(store) == (1 + 1 + 1 + 2, 1)
    with pytest.raises(UserError, match="once per battle"):
        store.act(CH, gc.ruthless_claim, ALICE, 1)
    # the cap counts per battle round: round 2 allows one more
    nxt(store, 10)
    store.act(CH, gc.cp_gain, ALICE, 1)


def test_11e_has_no_extra_cp_cap(store: GameStore) -> None:
    start(store, "11e")
    for _ in range(3):
        store.act(CH, gc.cp_gain, ALICE, 1)
    assert cps(store) == (4, 1)


def test_stratagem_costs_extra_sections_and_once_per_phase(store: GameStore) -> None:
    start(store, "11e", starting_cp=5)
    hi = spec("Heroic Intervention", "11e")  # your opponent's Charge phase
    assert hi.cp == 1 and hi.cp_extra == (1,) and hi.turn == "opponent" and hi.phases == ("charge",)
    with pytest.raises(SoftRuleError, match="used in your opponent's Charge phase; it is now your opponent's Command"):
        store.act(CH, gc.use_stratagem, BOB, hi, "Boyz")
    nxt(store, 3)  # Alice's Charge phase
    store.act(CH, gc.use_stratagem, BOB, hi, "Boyz", extra=True)
    assert cps(store) == (6, 4)
    with pytest.raises(SoftRuleError, match="already used Heroic Intervention this phase"):
        store.act(CH, gc.use_stratagem, BOB, hi, "Nobz")
    store.act(CH, gc.use_stratagem, BOB, hi, "Nobz", force=True)
    assert cps(store) == (6, 3)
    with pytest.raises(UserError, match="no section with an additional CP"):
        store.act(CH, gc.use_stratagem, BOB, spec("Command Re-roll", "11e"), None, extra=True)
    # 11e 15.01: the same unit cannot be targeted by two of your stratagems in one phase
    with pytest.raises(SoftRuleError, match="already targeted"):
        store.act(CH, gc.use_stratagem, BOB, spec("Command Re-roll", "11e"), "Boyz")
    nxt(store, 10)  # Alice's next Charge phase: both soft rules start afresh
    store.act(CH, gc.use_stratagem, BOB, hi, "Boyz")
    assert cps(store) == (8, 4)
    uses = store.export(CH)["stratagems_used"]
    assert [(u["name"], u["cp"], u["round"], u["phase"], u["unit"], u["forced"]) for u in uses] == [
        ("Heroic Intervention", 2, 1, "charge", "Boyz", False),
        ("Heroic Intervention", 1, 1, "charge", "Nobz", True),
        ("Heroic Intervention", 1, 2, "charge", "Boyz", False),
    ]


def test_stratagem_timing_is_a_soft_rule(store: GameStore) -> None:
    start(store, "10e", starting_cp=3)
    co = spec("Counter-offensive", "10e")  # Fight phase, either turn
    with pytest.raises(SoftRuleError, match="Counter-offensive is used in Fight phase"):
        store.act(CH, gc.use_stratagem, ALICE, co, None)
    r = store.act(CH, gc.use_stratagem, ALICE, co, None, force=True)
    assert "Fight phase" in r.outcome.events[0]["overrides"][0]
    nxt(store, 4)
    store.act(CH, gc.use_stratagem, BOB, co, None)  # the opponent's Fight phase is fine too


def test_battleshocked_units_and_insane_bravery(store: GameStore) -> None:
    start(store, "10e", starting_cp=3)
    store.act(CH, gc.shock, ALICE, "Hearthguard")
    with pytest.raises(SoftRuleError, match="battle-shocked"):
        store.act(CH, gc.use_stratagem, ALICE, spec("Command Re-roll", "10e"), "Hearthguard")
    ib = spec("Insane Bravery", "10e")
    assert ib.once_per_battle and ib.ignores_battleshock and ib.clears_battleshock
    store.act(CH, gc.use_stratagem, ALICE, ib, "Hearthguard")
    assert not store.require(CH).find_unit(0, "Hearthguard").shocked
    nxt(store)
    with pytest.raises(UserError, match="once per battle"):
        store.act(CH, gc.use_stratagem, ALICE, ib, "Hearthguard", force=True)
    # an opponent's battle-shocked unit is not protected from your stratagems
    store.act(CH, gc.shock, BOB, "Boyz")
    store.act(CH, gc.use_stratagem, ALICE, spec("Command Re-roll", "10e"), "Boyz")


def test_battleshock_expiry_10e_at_owner_command_phase(store: GameStore) -> None:
    start(store, "10e")
    nxt(store, 2)  # Alice's shooting
    store.act(CH, gc.shock, BOB, "Boyz")  # e.g. from an ability, in Alice's turn
    nxt(store, 3)  # Bob's Command phase begins: expires
    assert not store.require(CH).find_unit(1, "Boyz").shocked
    store.act(CH, gc.shock, BOB, "Boyz")  # failed test in his Command phase
    nxt(store, 5)  # Alice's round-2 Command phase: still shocked
    assert store.require(CH).find_unit(1, "Boyz").shocked
    nxt(store, 5)  # Bob's round-2 Command phase: gone
    assert not store.require(CH).find_unit(1, "Boyz").shocked


def test_battleshock_11e_persists_until_cleared(store: GameStore) -> None:
    start(store, "11e")
    store.act(CH, gc.shock, BOB, "Boyz")
    nxt(store, 10)
    assert store.require(CH).find_unit(1, "Boyz").shocked
    store.act(CH, gc.shock, BOB, "Boyz", clear=True)
    assert not store.require(CH).find_unit(1, "Boyz").shocked
    with pytest.raises(UserError, match="not battle-shocked"):
        store.act(CH, gc.shock, BOB, "Boyz", clear=True)


def test_riled_durations(store: GameStore) -> None:
    start(store, "11e")
    nxt(store, 2)  # Alice's shooting, turn 0
    store.act(CH, gc.riled, ALICE, "A", "end-of-this-turn", force=True)  # Alice plays Votann
    store.act(CH, gc.riled, ALICE, "B", "start-of-your-next-turn", force=True)
    store.act(CH, gc.riled, ALICE, "C", "end-of-next-turn", force=True)
    store.act(CH, gc.riled, BOB, "D", "start-of-your-next-turn")  # Bob's next turn is turn 1

    def riled() -> set[str]:
        s = store.require(CH)
        return {u.name for u in s.units if s.riled(u)}

    assert riled() == {"A", "B", "C", "D"}
    nxt(store, 3)  # Bob's Command phase (turn 1)
    assert riled() == {"B", "C"}
    nxt(store, 5)  # Alice's round-2 Command phase (turn 2)
    assert riled() == set()


def test_waaagh_once_per_battle_until_end_of_next_turn(store: GameStore) -> None:
    start(store, "11e")
    nxt(store, 5)  # Bob's Command phase, round 1
    store.act(CH, gc.riled, BOB, "Boyz", "end-of-this-turn")
    store.act(CH, gc.waaagh, BOB)
    store.act(CH, gc.judgement, ALICE, "Nobz", 1, remove=False)  # a unit first named after the Waaagh!
    s = store.require(CH)
    assert all(s.riled(u) for u in s.units_of(1))
    nxt(store, 5)  # Alice's turn (the next turn): still riled
    s = store.require(CH)
    assert all(s.riled(u) for u in s.units_of(1))
    nxt(store, 5)  # end of the next turn: Bob's round-2 Command phase
    s = store.require(CH)
    assert not any(s.riled(u) for u in s.units_of(1))
    with pytest.raises(UserError, match="once per battle"):
        store.act(CH, gc.waaagh, BOB, force=True)


def test_waaagh_outside_command_phase_is_soft(store: GameStore) -> None:
    start(store, "11e")
    nxt(store)
    with pytest.raises(SoftRuleError):
        store.act(CH, gc.waaagh, ALICE)
    r = store.act(CH, gc.waaagh, ALICE, force=True)
    assert r.outcome.events[0]["forced"]


def test_judgement_tokens_capped_at_two(store: GameStore) -> None:
    start(store)
    store.act(CH, gc.judgement, ALICE, "Boyz", 1, remove=False)
    r = store.act(CH, gc.judgement, ALICE, "boyz", 2, remove=False)
    assert "1 ignored" in r.outcome.message
    assert store.require(CH).find_unit(1, "Boyz").judgement == 2
    with pytest.raises(UserError, match="between 1 and 2"):
        store.act(CH, gc.judgement, ALICE, "Boyz", 3, remove=False)
    store.act(CH, gc.judgement, ALICE, "Boyz", 2, remove=True)
    with pytest.raises(UserError, match="cannot remove"):
        store.act(CH, gc.judgement, ALICE, "Boyz", 1, remove=True)
    with pytest.raises(UserError, match="no unit called"):
        store.act(CH, gc.judgement, ALICE, "Ghost unit", 1, remove=True)


def test_fuzzy_unit_names_match_existing_units(store: GameStore) -> None:
    start(store)
    store.act(CH, gc.judgement, ALICE, "Gretchin", 1, remove=False)
    store.act(CH, gc.judgement, ALICE, "gretchn", 1, remove=False)
    s = store.require(CH)
    assert [(u.name, u.judgement) for u in s.units] == [("Gretchin", 2)]


def test_permissions(store: GameStore) -> None:
    start(store)
    with pytest.raises(UserError, match="Only the players"):
        store.act(CH, gc.cp_gain, 333, 1)
    with pytest.raises(UserError, match="your own CP"):
        store.act(CH, gc.cp_spend, ALICE, 1, target_user=BOB)
    with pytest.raises(UserError, match="Only the players"):
        store.undo(CH, 333)
    with pytest.raises(UserError, match="Manage Channel"):
        store.end(CH, 333)
    # a player of another channel's game cannot touch this one, and vice versa
    store.start(2002, 501, user_id=444, user_name="Carol", opponent_id=555, opponent_name="Dan", edition="11e",
                faction="Orks", opponent_faction="Necrons")
    with pytest.raises(UserError, match="Only the players"):
        store.act(CH, gc.next_phase, 444)
    store.end(CH, 333, manager=True)
    assert store.state(CH) is None
    assert store.state(2002) is not None


def test_no_game_and_game_over(store: GameStore) -> None:
    with pytest.raises(UserError, match="no game"):
        store.act(CH, gc.next_phase, ALICE)
    with pytest.raises(UserError, match="no game"):
        store.undo(CH, ALICE)
    start(store)
    with pytest.raises(UserError, match="already has a game"):
        start(store)
    store.end(CH, ALICE)
    with pytest.raises(UserError, match="no game"):
        store.act(CH, gc.cp_gain, ALICE, 1)
    assert store.export(CH)["status"] == "finished"
    start(store)  # a new game in the same channel; the old one stays in the history
    assert len(store.history(CH)) == 1


@pytest.mark.parametrize("amount", [0, -1, 101, 10**12])
def test_bad_amounts(store: GameStore, amount: int) -> None:
    start(store)
    for cmd in (gc.cp_gain, gc.cp_spend, gc.vp_add):
        with pytest.raises(UserError, match="between"):
            store.act(CH, cmd, ALICE, amount)
    assert len(store.events(1)) == 1


def test_bad_start_options(store: GameStore) -> None:
    with pytest.raises(UserError, match="yourself"):
        store.start(CH, 1, user_id=ALICE, user_name="A", opponent_id=ALICE, opponent_name="A", edition="11e",
                    faction="x", opponent_faction="y")
    with pytest.raises(UserError, match="edition"):
        store.start(CH, 1, user_id=ALICE, user_name="A", opponent_id=BOB, opponent_name="B", edition="9e",
                    faction="x", opponent_faction="y")
    with pytest.raises(UserError, match="too long"):
        store.start(CH, 1, user_id=ALICE, user_name="A", opponent_id=BOB, opponent_name="B", edition="11e",
                    faction="x" * 2000, opponent_faction="y")
    with pytest.raises(UserError, match="starting_cp"):
        store.start(CH, 1, user_id=ALICE, user_name="A", opponent_id=BOB, opponent_name="B", edition="11e",
                    faction="x", opponent_faction="y", starting_cp=-1)


def test_undo_repeats_and_is_append_only(store: GameStore, tmp_path: Path) -> None:
    start(store)
    store.act(CH, gc.cp_gain, ALICE, 1)
    nxt(store)
    store.act(CH, gc.judgement, ALICE, "Boyz", 1, remove=False)
    store.undo(CH, BOB)
    store.undo(CH, ALICE)
    s = store.require(CH)
    assert (s.phase, s.units, cps(store)) == ("command", [], (2, 1))
    store.undo(CH, ALICE)
    assert cps(store) == (1, 1)
    with pytest.raises(UserError, match="Nothing to undo"):
        store.undo(CH, ALICE)
    log = store.export(CH)["log"]
    assert [e["type"] for e in log] == ["start", "cp", "next", "judgement", "undo", "undo", "undo"]
    assert [e["undone"] for e in log][:4] == [False, True, True, True]
    for tamper in ("DELETE FROM game_events", "UPDATE game_events SET type = 'x'"):
        with pytest.raises(Exception, match="append-only"), store.storage.transaction() as conn:
            conn.execute(tamper)  # refused by the database itself (triggers), on either backend
    assert store.verify(CH)


def test_state_survives_reopening(db_target: Path | str) -> None:
    s1 = GameStore(db_target)
    start(s1, "11e")
    s1.act(CH, gc.cp_gain, ALICE, 2)
    before = s1.export(CH)
    s1.close()
    s2 = GameStore(db_target)
    assert s2.export(CH) == before
    s2.close()


def test_spec_from_entry_reads_cp_extra_and_restrictions() -> None:
    hi = spec("Heroic Intervention", "11e")
    assert hi.cost("11e", extra=True) == 2 and hi.cost("11e", extra=False) == 1
    wide = rules.StratagemSpec("X", None, 1, cp_extra=(1, 1))
    assert wide.cost("11e", extra=True) == 2  # 15.01: never increased by more than 1
    assert wide.cost("10e", extra=True) == 3
    cr = spec("Command Re-roll", "10e")
    assert not cr.once_per_battle and not cr.ignores_battleshock


# ---- property tests -------------------------------------------------------------------------------

ACTIONS = st.lists(st.one_of(
    st.tuples(st.just("next"), st.sampled_from([ALICE, BOB])),
    st.tuples(st.just("gain"), st.sampled_from([ALICE, BOB]), st.integers(-3, 25), st.booleans()),
    st.tuples(st.just("spend"), st.sampled_from([ALICE, BOB]), st.integers(-3, 25)),
    st.tuples(st.just("strat"), st.sampled_from([ALICE, BOB]), st.sampled_from(["Insane Bravery", "Counteroffensive",
                                                                                 "Heroic Intervention"]),
              st.sampled_from([None, "Boyz", "Nobz", "x" * 81, "  "]), st.booleans(), st.booleans()),
    st.tuples(st.just("judge"), st.sampled_from([ALICE, BOB]), st.sampled_from(["Boyz", "Nobz", "**B**"]),
              st.integers(-1, 3), st.booleans()),
    st.tuples(st.just("shock"), st.sampled_from([ALICE, BOB]), st.sampled_from(["Boyz", "Nobz"]), st.booleans()),
    st.tuples(st.just("waaagh"), st.sampled_from([ALICE, BOB, 999]), st.booleans()),
    st.tuples(st.just("undo"), st.sampled_from([ALICE, BOB])),
), max_size=40)


def _do(store: GameStore, action: tuple) -> None:
    kind, user, *rest = action
    if kind == "next":
        store.act(CH, gc.next_phase, user)
    elif kind == "gain":
        store.act(CH, gc.cp_gain, user, rest[0], force=rest[1])
    elif kind == "spend":
        store.act(CH, gc.cp_spend, user, rest[0])
    elif kind == "strat":
        store.act(CH, gc.use_stratagem, user, spec(rest[0], "11e"), rest[1], force=rest[2], extra=rest[3])
    elif kind == "judge":
        store.act(CH, gc.judgement, user, rest[0], rest[1], remove=rest[2])
    elif kind == "shock":
        store.act(CH, gc.shock, user, rest[0], clear=rest[1])
    elif kind == "waaagh":
        store.act(CH, gc.waaagh, user, force=rest[0])
    elif kind == "undo":
        store.undo(CH, user)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(actions=ACTIONS)
def test_any_command_sequence_keeps_invariants_and_log(new_db_target: Callable[[], Path | str], actions: list) -> None:
    store = GameStore(new_db_target())
    saved, store_module.CHECKPOINT_EVERY = store_module.CHECKPOINT_EVERY, 3  # exercise undo from checkpoints
    try:
        store.start(CH, 1, user_id=ALICE, user_name="A", opponent_id=BOB, opponent_name="B", edition="11e",
                    faction="Orks", opponent_faction="Votann", starting_cp=1)
        for action in actions:
            with contextlib.suppress(UserError):
                _do(store, action)
            s = store.require(CH)
            assert all(p.cp >= 0 for p in s.players)
            assert all(0 <= u.judgement <= 2 for u in s.units)
            assert all(p.once_used.count("insane bravery") <= 1 for p in s.players)
        assert store.verify(CH)
        # undoing everything returns to the start exactly
        while True:
            try:
                store.undo(CH, ALICE)
            except UserError:
                break
        first = events.initial_state(store.events(1)[0])
        first.seq = store.require(CH).seq
        assert store.require(CH).to_dict() == first.to_dict()
        with store.storage.read() as conn:
            raw = json.loads(conn.execute("SELECT state FROM games").fetchone()[0])
        assert raw == store.require(CH).to_dict()
    finally:
        store_module.CHECKPOINT_EVERY = saved
        store.close()


def test_threads_on_one_channel_lose_no_update(store: GameStore) -> None:
    """The per-channel lock plus BEGIN IMMEDIATE: 8 threads x 40 changes, exact totals."""
    import threading

    start(store, "11e")

    def work(user: int) -> None:
        for i in range(40):
            if i % 4 == 3:
                store.act(CH, gc.cp_spend, user, 1)
            else:
                store.act(CH, gc.cp_gain, user, 1)

    threads = [threading.Thread(target=work, args=(ALICE if i % 2 else BOB,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert cps(store) == (1 + 4 * 20, 1 + 4 * 20)
    assert len(store.export(CH)["log"]) == 1 + 8 * 40
    assert store.verify(CH)


def test_undo_from_checkpoints_matches_full_replay(store: GameStore) -> None:
    """Long game: undo runs from checkpoints; the result must equal re-folding the whole log."""
    start(store, "11e", starting_cp=5)
    hi = spec("Heroic Intervention", "11e")
    for i in range(150):
        step = i % 6
        if step == 0:
            nxt(store)
        elif step == 1:
            store.act(CH, gc.cp_gain, ALICE, 1)
        elif step == 2:
            store.act(CH, gc.judgement, BOB, f"Unit {i % 5}", 1, remove=False, force=True)
        elif step == 3:
            store.act(CH, gc.use_stratagem, BOB, hi, f"Mob {i % 3}", force=True, cost=0)
        else:
            store.undo(CH, ALICE if i % 2 else BOB)
        assert store.verify(CH), i
    for _ in range(45):
        store.undo(CH, ALICE)
        assert store.verify(CH)
