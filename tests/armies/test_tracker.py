"""Army lists in the game tracker: import as an event (undo), units with models and wounds, ambiguity,
ownership, and which faction rule belongs to whom."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.armies import faction_rules
from bot.armies.parse import parse_list
from bot.errors import UserError
from bot.games import commands as gc
from bot.games.commands import AmbiguousUnit, SoftRuleError
from bot.games.store import GameStore

FIXTURES = Path(__file__).parent.parent / "fixtures" / "armies"
CH = 1001
ALICE, BOB = 111, 222


def army(name: str, edition: str = "11e") -> dict:
    return parse_list((FIXTURES / name).read_bytes(), filename=name, edition=edition).to_dict()


@pytest.fixture
def store(tmp_path: Path):
    s = GameStore(tmp_path / "g.db")
    yield s
    s.close()


def start(store: GameStore, edition: str = "11e", alice: str = "Leagues of Votann", bob: str = "Orks") -> None:
    store.start(CH, 501, user_id=ALICE, user_name="Alice", opponent_id=BOB, opponent_name="Bob", edition=edition,
                faction=alice, opponent_faction=bob)


def test_import_is_an_event_that_undo_reverts(store: GameStore) -> None:
    start(store)
    r = store.act(CH, gc.import_army, ALICE, army("votann_gw_app.txt"))
    assert "imports a Leagues of Votann army: 9 units, 1995 pts" in r.outcome.message
    state = store.require(CH)
    names = [u.name for u in state.units_of(0)]
    assert names[:5] == ["Kâhl", "Grimnyr", "Einhyr Champion", "Hearthkyn Warriors #1", "Hearthkyn Warriors #2"]
    warriors = state.find_unit(0, "Hearthkyn Warriors #1")
    assert (warriors.models, warriors.models_left, warriors.wounds, warriors.unlisted) == (10, 10, 1, False)
    assert state.find_unit(0, "Kâhl").leading == "Hearthkyn Warriors #1"
    store.undo(CH, ALICE)
    assert store.require(CH).units == [] and store.require(CH).army(0) is None
    assert store.verify(CH)


def test_snapshot_grows_under_20_kb_per_army(store: GameStore) -> None:
    start(store)
    before = len(json.dumps(store.require(CH).to_dict()))
    store.act(CH, gc.import_army, ALICE, army("votann_gw_app.txt"))
    store.act(CH, gc.import_army, BOB, army("orks_gw_wtc.txt"))
    after = len(json.dumps(store.require(CH).to_dict(), ensure_ascii=False).encode())
    assert (after - before) / 2 < 20 * 1024


def test_damage_rolls_over_models_and_destroys(store: GameStore) -> None:
    start(store)
    store.act(CH, gc.import_army, BOB, army("orks_gw_wtc.txt"))
    store.act(CH, gc.damage, BOB, "Killa Kans", wounds=7)  # W5 each: one Kan dead, the next lost 2
    kans = store.require(CH).find_unit(1, "Killa Kans")
    assert (kans.models_left, kans.wounds_lost) == (2, 2)
    store.act(CH, gc.damage, BOB, "Killa Kans", models_left=1, wounds_lost=4)
    r = store.act(CH, gc.damage, BOB, "Killa Kans", wounds=1)
    kans = store.require(CH).find_unit(1, "Killa Kans")
    assert (kans.models_left, kans.destroyed, kans.destroyed_round) == (0, True, 1)
    assert "destroyed" in r.outcome.message
    with pytest.raises(UserError, match="Wounds lost on the damaged model"):
        store.act(CH, gc.damage, BOB, "Stompa", wounds_lost=30)  # W30: 0-29
    with pytest.raises(UserError, match="not in Bob's army list"):
        store.act(CH, gc.damage, BOB, "Squiggoth", wounds=1)


def test_ambiguous_names_ask_which(store: GameStore) -> None:
    start(store)
    store.act(CH, gc.import_army, BOB, army("orks_gw_wtc.txt"))
    with pytest.raises(AmbiguousUnit, match=r"Which Boyz\? Boyz #1 · 10 models; Boyz #2 · 10 models; Boyz #3"):
        store.act(CH, gc.damage, BOB, "Boyz", wounds=1)
    store.act(CH, gc.damage, BOB, "boyz #2", wounds=3)
    assert store.require(CH).find_unit(1, "Boyz #2").label() == "Boyz #2 · 7/10 models"


def test_another_players_unit_is_refused_except_by_rules_that_target_enemies(store: GameStore) -> None:
    start(store)
    store.act(CH, gc.import_army, BOB, army("orks_gw_wtc.txt"))
    with pytest.raises(UserError, match="no unit called 'Stompa'"):
        store.act(CH, gc.damage, ALICE, "Stompa", wounds=1)  # Alice has no Stompa; Bob's is not hers to change
    store.act(CH, gc.judgement, ALICE, "Stompa", 1, remove=False)  # Judgement tokens target enemy units
    assert store.require(CH).find_unit(1, "Stompa").judgement == 1


def test_faction_rules_belong_to_their_faction(store: GameStore) -> None:
    start(store)
    with pytest.raises(SoftRuleError, match="belongs to Leagues of Votann armies; Bob plays Orks"):
        store.act(CH, gc.judgement, BOB, "Warriors", 1, remove=False)
    r = store.act(CH, gc.judgement, BOB, "Warriors", 1, remove=False, force=True)
    assert r.outcome.events[0]["forced"] and "forced" in r.outcome.message
    with pytest.raises(SoftRuleError, match="belongs to Orks armies"):
        store.act(CH, gc.waaagh, ALICE)
    with pytest.raises(SoftRuleError, match="Ruthless Efficiency is a 10e rule; this game is 11e"):
        store.act(CH, gc.oathband_mark, ALICE, "Boyz")


def test_oathband_needs_the_oathband_detachment(store: GameStore) -> None:
    start(store, edition="10e")
    store.act(CH, gc.import_army, ALICE, army("votann_battlescribe.ros", "10e"))  # Hearthband
    with pytest.raises(SoftRuleError, match="Oathband detachment's rule; Alice's army list has Hearthband"):
        store.act(CH, gc.oathband_mark, ALICE, "Boyz")
    store.act(CH, gc.import_army, ALICE, army("votann_gw_app.txt", "10e"))  # Needgaârd Oathband
    store.act(CH, gc.oathband_mark, ALICE, "Boyz")


def test_waaagh_riles_only_units_with_the_ability(store: GameStore) -> None:
    start(store, alice="Orks", bob="Leagues of Votann")
    r = store.act(CH, gc.waaagh, ALICE)
    assert "no army list loaded" in r.outcome.message
    store.undo(CH, ALICE)
    store.act(CH, gc.import_army, ALICE, army("orks_gw_wtc.txt"))
    store.act(CH, gc.import_army, BOB, army("votann_gw_app.txt"))
    r = store.act(CH, gc.waaagh, ALICE)
    assert "7 units with the Waaagh! ability" in r.outcome.message
    state = store.require(CH)
    assert all(state.riled(u) for u in state.units_of(0))
    assert not any(state.riled(u) for u in state.units_of(1))


def test_waaagh_ten_e_is_called_in_your_command_phase_until_your_next(store: GameStore) -> None:
    start(store, edition="10e", alice="Leagues of Votann", bob="Orks")
    with pytest.raises(SoftRuleError, match="start of your Command phase"):
        store.act(CH, gc.waaagh, BOB)
    for _ in range(5):
        store.act(CH, gc.next_phase, ALICE)
    r = store.act(CH, gc.waaagh, BOB)  # Bob's Command phase, round 1
    assert "until the start of your next Command phase" in r.outcome.message
    state = store.require(CH)
    assert state.players[1].waaagh_until == 3  # Bob's next turn


def test_riled_is_eleventh_edition_and_needs_the_ability(store: GameStore) -> None:
    start(store, edition="10e")
    with pytest.raises(SoftRuleError, match="Riled up .* is a 11e rule"):
        store.act(CH, gc.riled, BOB, "Boyz", "battle")


def test_destroyed_units_feed_ruthless_efficiency(store: GameStore) -> None:
    start(store, edition="10e")
    store.act(CH, gc.import_army, BOB, army("orks_gw_wtc.txt", "10e"))
    store.act(CH, gc.import_army, ALICE, army("votann_gw_app.txt", "10e"))
    store.act(CH, gc.oathband_mark, ALICE, "Stompa")
    store.act(CH, gc.unit_destroyed, BOB, "Stompa")
    with pytest.raises(UserError, match="already destroyed"):
        store.act(CH, gc.unit_destroyed, BOB, "Stompa")
    r = store.act(CH, gc.ruthless_claim, ALICE, 2)
    assert "Ruthless Efficiency" in r.outcome.message


def test_attach_changes_the_leader(store: GameStore) -> None:
    start(store)
    store.act(CH, gc.import_army, ALICE, army("votann_gw_app.txt"))
    with pytest.raises(UserError, match="Kâhl already leads Hearthkyn Warriors #1"):
        store.act(CH, gc.attach, ALICE, "Grimnyr", "Hearthkyn Warriors #1")
    store.act(CH, gc.attach, ALICE, "Kâhl", None)
    store.act(CH, gc.attach, ALICE, "Grimnyr", "Hearthkyn Warriors #1")
    state = store.require(CH)
    assert (state.find_unit(0, "Kâhl").leading, state.find_unit(0, "Grimnyr").leading) == (None, "Hearthkyn Warriors #1")


def test_export_adds_armies_and_unit_state(store: GameStore) -> None:
    start(store)
    store.act(CH, gc.import_army, ALICE, army("votann_gw_app.txt"))
    store.act(CH, gc.judgement, ALICE, "Gretchin", 1, remove=False)  # Bob has no list: a free-text unit
    data = store.export(CH)
    assert data["armies"][0]["player"] == ALICE and data["armies"][0]["faction"] == "Leagues of Votann"
    kahl = next(u for u in data["units"] if u["name"] == "Kâhl")
    assert {k: kahl[k] for k in ("datasheet_id", "models", "models_left", "wounds_lost", "leading", "destroyed",
                                 "unlisted")} == {
        "datasheet_id": "11e:datasheet:wh40kdc.leagues-of-votann:kahl", "models": 1, "models_left": 1,
        "wounds_lost": 0, "leading": "Hearthkyn Warriors #1", "destroyed": False, "unlisted": False}
    assert next(u for u in data["units"] if u["name"] == "Gretchin")["unlisted"] is True


def test_faction_rule_table_cites_every_rule() -> None:
    for row in faction_rules.table():
        assert row["source"] and row["faction"] in ("Leagues of Votann", "Orks")
