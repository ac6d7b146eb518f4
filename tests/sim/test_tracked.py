"""/sim between tracked units: the list's loadout, models left, leaders, wounds lost and tracked state, through
the real console; `sim plan --channel` (contract 7); the list-as-fielded model (bot/units/listed.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.armies.parse import parse_list
from bot.console.session import ConsoleSession
from bot.games import commands as gc
from bot.games.store import GameStore
from bot.sim import tracked
from bot.units.listed import _deal, as_listed
from bot.units.model import Carried, ModelType, Profile, Unit

FIXTURES = Path(__file__).parent.parent / "fixtures" / "armies"
ROOT = Path(__file__).parent.parent.parent
START = "/game start opponent:222 edition:11e faction:Leagues of Votann opponent_faction:Orks"
ALICE, BOB = 111, 222


async def _armies(console: ConsoleSession) -> None:
    await console.send(START)
    await console.send(f"/army import file:@{FIXTURES / 'votann_gw_app.txt'}", user=ALICE)
    await console.send(f"/army import file:@{FIXTURES / 'orks_gw_wtc.txt'}", user=BOB)


def _game(tmp_path: Path, edition: str = "11e", channel: int = 1) -> GameStore:
    store = GameStore(tmp_path / "state.db")
    store.start(channel, 1, user_id=ALICE, user_name="Alice", opponent_id=BOB, opponent_name="Bob",
                edition=edition, faction="Leagues of Votann", opponent_faction="Orks")
    for user, name in ((ALICE, "votann_gw_app.txt"), (BOB, "orks_gw_wtc.txt")):
        store.act(channel, gc.import_army, user, parse_list((FIXTURES / name).read_bytes(), edition=edition).to_dict())
    return store


async def test_sim_between_tracked_units_applies_their_state(console: ConsoleSession) -> None:
    await _armies(console)
    await console.send("/unit damage unit:Boyz #2 models_left:7", user=BOB)
    await console.send("/riled add unit:Boyz #2 until:end-of-next-turn", user=BOB)
    choices = await console.autocomplete("/sim unit attacker:hearth", "attacker", user=ALICE)
    assert choices[0]["value"] == "Hearthkyn Warriors #1" and "10 models" in choices[0]["name"]
    assert all("(Bob)" not in c["name"] for c in choices)  # my units as attacker, then datasheets
    targets = await console.autocomplete("/sim unit attacker:Hearthkyn Warriors #1 target:boy", "target", user=ALICE)
    assert [c["value"] for c in targets[:4]] == ["Weirdboy", "Boyz #1", "Boyz #2", "Boyz #3"]
    assert "7/10 models" in targets[2]["name"] and "(Bob)" in targets[2]["name"]
    weapons = await console.autocomplete("/sim unit attacker:Hearthkyn Warriors #1 weapon:", "weapon", user=ALICE)
    assert any(c["value"].startswith("L7 missile launcher") for c in weapons)
    text = (await console.send("/sim unit attacker:Hearthkyn Warriors #1 target:Boyz #2", user=ALICE))[-1].text()
    assert "Hearthkyn Warriors #1 → Boyz #2" in text
    assert "Tracked state" in text and "Boyz #2: 7 of 10 models left" in text
    assert "Kâhl leads Hearthkyn Warriors #1" in text and "Warboss leads Boyz #2" in text
    assert "Boyz #2 is riled up: 5+ invulnerable save" in text
    # The list's loadout: the Theyn's and 7 warriors' ion blasters, not the datasheet's default bolters.
    assert "8 × Ion blaster" in text and "L7 missile launcher" in text
    assert "5++" in text.split("vs", 1)[1].split("\n")[0]
    sized = (await console.send("/sim unit attacker:Sagitaur target:Boyz #2 models:3 wounds_lost:1", user=ALICE))[-1]
    assert "not used: models, wounds\\_lost — the game's lists and tracked state decide" in sized.text()


async def test_bad_tracked_units_are_clear_ephemeral_errors(console: ConsoleSession) -> None:
    await _armies(console)
    await console.send("/unit destroyed unit:Boyz #3", user=BOB)
    cases = {
        "/sim unit attacker:Stompa target:Hearthkyn Warriors #1": "Stompa is Bob's unit",
        "/sim unit attacker:Sagitaur target:Boyz #3": "Boyz #3 is destroyed",
        "/sim unit attacker:Sagitaur target:Squiggoth": "not a unit of Bob",
        "/sim unit attacker:Hearthkyn Warriors target:Stompa": "which",
        "/sim unit attacker:Sagitaur target:Hekaton Land Fortress": "Hekaton Land Fortress is Alice's unit",
    }
    for line, words in cases.items():
        (reply,) = await console.send(line, user=ALICE)
        assert reply.ephemeral and words.lower() in reply.text().lower(), (line, reply.text())


async def test_judgement_tokens_and_battle_shock_are_named_not_applied(console: ConsoleSession) -> None:
    await _armies(console)
    await console.send("/judgement add unit:Stompa amount:2", user=ALICE)
    await console.send("/shock unit:Stompa", user=BOB)
    text = (await console.send("/sim unit attacker:Hekaton Land Fortress target:Stompa", user=ALICE))[-1].text()
    assert "Stompa has 2 Judgement tokens: not applied" in text and "bonus table is empty" in text
    assert "Stompa is battle-shocked: not applied" in text


async def test_a_datasheet_id_or_a_channel_without_lists_keeps_the_catalog_path(console: ConsoleSession) -> None:
    await console.send(START)
    text = (await console.send("/sim unit attacker:Hearthkyn Warriors target:Boyz", user=ALICE))[-1].text()
    assert "Tracked state" not in text and "Hearthkyn Warriors → Boyz" in text


async def test_an_unlisted_unit_is_refused(console: ConsoleSession) -> None:
    await console.send(START)
    await console.send(f"/army import file:@{FIXTURES / 'votann_gw_app.txt'}", user=ALICE)
    await console.send("/riled add unit:Gretchin until:end-of-next-turn", user=BOB)  # Bob has no list: free text
    (reply,) = await console.send("/sim unit attacker:Sagitaur target:Gretchin", user=ALICE)
    assert reply.ephemeral and "Gretchin is unlisted" in reply.text()


def test_ten_e_waaagh_adds_melee_strength_and_attacks_and_an_invulnerable_save(tmp_path: Path,
                                                                             shared_data_dir: Path) -> None:
    from bot.catalog.service import open_catalog
    from bot.config import Settings
    from bot.sim.planner import UnitPlanner
    from bot.sim.requests import SimOptions

    store = _game(tmp_path, "10e")
    for _ in range(5):
        store.act(1, gc.next_phase, ALICE)  # Bob's Command phase
    store.act(1, gc.waaagh, BOB)
    state = store.require(1)
    store.close()
    catalog = open_catalog(Settings(token=None, db_path=tmp_path / "state.db", data_dir=shared_data_dir))
    try:
        planner = UnitPlanner(catalog)
        plan, _, _ = tracked.plan_between(planner, state, "Stompa", "Kâhl", SimOptions(edition="11e"), user_id=BOB,
                                          phase="fight")
        assert any("+1 Strength and Attacks" in t for t in plan.tracked)
        datasheet = planner.unit(planner.datasheet(str(state.find_unit(1, "Stompa").datasheet_id), "10e", "a"))
        melee = next(w for w in datasheet.weapons if str(w.get("name")).startswith("Mega-choppa"))
        fired = plan.request["volley"][0]["weapon"]
        assert fired["strength"] == int(melee["S"]) + 1
        back, _, _ = tracked.plan_between(planner, state, "Kâhl", "Stompa", SimOptions(edition="11e"), user_id=ALICE)
        assert any("5+ invulnerable save" in t for t in back.tracked)
        assert back.request["target"]["invulnerable"] == 5
    finally:
        catalog.close()


def test_sim_plan_channel_contract_7(tmp_path: Path, shared_data_dir: Path) -> None:
    store = _game(tmp_path, channel=77)
    store.act(77, gc.damage, BOB, "Killa Kans", wounds=6)
    store.close()
    env = {"COGITATOR_DB": str(tmp_path / "state.db"), "COGITATOR_DATA": str(shared_data_dir), "PATH": "/usr/bin:/bin"}
    run = [sys.executable, "-m", "bot", "sim", "plan", "--attacker", "Sagitaur", "--channel", "77", "--json"]
    done = subprocess.run([*run, "--target", "Killa Kans"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert "Killa Kans: 2 of 3 models left" in data["tracked"]
    target = data["request"]["target"]
    assert target["models"] == 2 and target["wounds_lost"] == 1
    assert data["result"]["models_killed"]["pmf"]
    for target_name, words in (("Squiggoth", "not a unit of Bob"), ("Hekaton Land Fortress", "Alice's unit")):
        bad = subprocess.run([*run, "--target", target_name], cwd=ROOT, env=env, capture_output=True, text=True,
                             timeout=300)
        assert bad.returncode == 2 and words in json.loads(bad.stdout)["error"], bad.stdout
    none = subprocess.run([*run[:-3], "--channel", "78", "--target", "Boyz"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert none.returncode == 2 and "has no game" in none.stdout


@pytest.mark.parametrize("name", ["Kâhl", "Hearthkyn Warriors #1"])
def test_a_leader_fights_with_the_unit_it_leads(tmp_path: Path, name: str) -> None:
    store = _game(tmp_path)
    state = store.require(1)
    store.close()
    mine, theirs = tracked.sides(state, name, "Stompa", user_id=ALICE)
    assert (mine.unit.name, mine.leader.name) == ("Hearthkyn Warriors #1", "Kâhl")
    assert theirs.unit.name == "Stompa" and theirs.leader is None


# ---------------------------------------------------------------- the list as fielded (bot/units/listed.py)
def _unit() -> Unit:
    boy = ModelType("Boy", 9, 19, Profile("Boy", toughness=5, save=5, wounds=1),
                    loadout=(Carried("Choppa"), Carried("Slugga")))
    nob = ModelType("Boss Nob", 1, 1, Profile("Boss Nob", toughness=5, save=5, wounds=2),
                    loadout=(Carried("Big choppa"), Carried("Slugga")))
    weapons = tuple({"name": n, "weapon": n, "range": "Melee", "A": 3, "S": 4, "AP": 0, "D": 1}
                    for n in ("Choppa", "Big choppa", "Slugga"))
    return Unit("Boyz", "11e", "test", (boy, nob), weapons=weapons)


def test_a_flat_list_group_is_dealt_to_its_models() -> None:
    group = [{"name": "Boyz", "count": 10, "weapons": [{"name": "Slugga", "count": 10}, {"name": "Choppa", "count": 9},
                                                         {"name": "Big choppa", "count": 1}, {"name": "Banner", "count": 1}]}]
    unit, notes = as_listed(_unit(), "Boyz #2", group, 7)
    loadouts = {m.name: (m.min, {c.weapon: c.count for c in m.loadout}) for m in unit.models}
    # The big choppa is only the Boss Nob's (its default loadout): that model is the Nob (W2).
    assert loadouts == {"Boy": (6, {"Slugga": 1, "Choppa": 1}), "Boss Nob": (1, {"Slugga": 1, "Big choppa": 1})}
    assert [m.profile.wounds for m in unit.models] == [1, 2]
    assert any("3 lost models" in n for n in notes) and any("Boy profile" in n for n in notes)
    assert "Boyz #2: Banner — no weapon profile in the datasheet; not fired" in notes
    assert unit.name == "Boyz" and unit.sized().total == 7 and unit.source == "test and the army list"
    group[0]["weapons"][2] = {"name": "Slugga", "count": 1}  # no Nob weapon: ten Boys; the tenth, past the nine choppas, has two sluggas
    unit, _ = as_listed(_unit(), "Boyz #2", group, None)
    assert sorted((m.name, m.min) for m in unit.models) == [("Boy (Slugga)", 1), ("Boy (Slugga, Choppa)", 9)]
    assert sorted(c.count for m in unit.models for c in m.loadout if c.weapon == "Slugga") == [1, 2]


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 30), st.lists(st.integers(0, 90), max_size=5))
def test_dealing_keeps_every_weapon_and_spreads_them_evenly(models: int, counts: list[int]) -> None:
    weapons = [(f"w{i}", c) for i, c in enumerate(counts)]
    loadouts = _deal(weapons, models)
    assert len(loadouts) == models
    for name, count in weapons:
        per_model = [sum(c.count for c in lo if c.weapon == name) for lo in loadouts]
        assert sum(per_model) == count and max(per_model) - min(per_model) <= 1


def test_parts_of_a_combined_weapon_are_that_weapon_once() -> None:
    gun = {"name": "Deffkannon and Supa-rokkits", "weapon": "Deffkannon and Supa-rokkits", "range": 72, "A": "D6",
           "S": 20, "AP": -4, "D": 6}
    stompa = Unit("Stompa", "11e", "test", (ModelType("Stompa", 1, 1, Profile("Stompa", toughness=14, wounds=40)),),
                  weapons=(gun,))
    group = [{"name": "Stompa", "count": 1, "weapons": [{"name": "Deffkannon", "count": 1},
                                                        {"name": "Supa-rokkit", "count": 1}]}]
    unit, notes = as_listed(stompa, "Stompa", group, None)
    assert unit.models[0].loadout == (Carried("Deffkannon and Supa-rokkits", 1),) and notes == []
