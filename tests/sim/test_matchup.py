"""/sim matchup (issue 22): a channel's two army lists, or datasheet names, as a matrix of simulations;
through the real console (deferred, edited with progress, then the heatmap), contract 8 through the real
command line, and the limits that bound its work before any simulation runs."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from bot.console.session import ConsoleSession
from bot.errors import UserError
from bot.sim import matchup as matchups
from bot.sim.compute import check_request, evaluate_row
from engine.heatmap import draw_heatmap
from tests.sim.test_tracked import ALICE, BOB, ROOT, _armies, _game


def _answer(replies: list) -> tuple[object, bytes]:
    final = replies[-1]
    assert final.kind == "edit" and final.files == ["matchup.png"], [r.to_json() for r in replies]
    return final, final.file_data["matchup.png"]


async def test_matchup_between_the_games_lists(console: ConsoleSession) -> None:
    await _armies(console)
    await console.send("/unit damage unit:Boyz #2 models_left:7", user=BOB)
    replies = await console.send("/sim matchup", user=ALICE)
    assert [r.kind for r in replies][:2] == ["defer", "edit"]
    assert "Simulating… 0 of 6 attackers done" in replies[1].text()
    final, png = _answer(replies)
    text = final.text()
    # Alice's units down the side (leaders inside the unit they lead), Bob's numbered across, in list order.
    assert "Matchup: 6 attackers × 5 targets, shooting" in text
    assert "**1** Boyz #2 + Warboss · **2** Boyz #1 + Weirdboy · **3** Boyz #3 · **4** Stompa · **5** Killa Kans" in text
    assert "Hekaton Land Fortress → **" in text and "to destroy it)" in text
    image = Image.open(io.BytesIO(png))
    assert image.format == "PNG" and image.height == 58 + 24 * 6 + 34
    # Bob asks: his units attack Alice's.
    bob = (await console.send("/sim matchup phase:fight value:points", user=BOB))[-1].text()
    assert "Matchup: 5 attackers × 6 targets, fight" in bob and "**1** Hearthkyn Warriors #1 + Kâhl" in bob


async def test_matchup_of_datasheet_names_and_its_refusals(console: ConsoleSession) -> None:
    replies = await console.send("/sim matchup attackers:Intercessor Squad, Boyz targets:Boyz, Leman Russ Battle Tank")
    final, _ = _answer(replies)
    assert "**1** Boyz · **2** Leman Russ Battle Tank" in final.text()
    assert "each unit at its datasheet's minimum size and default loadout" in final.text()
    for line, words in (("/sim matchup", "Name both sides"),
                        ("/sim matchup attackers:Boyz", "Name both sides"),
                        ("/sim matchup attackers:Nopeasaurus targets:Boyz", "No datasheet matches `Nopeasaurus`")):
        refused = await console.send(line)
        assert len(refused) == 1 and refused[0].ephemeral and words in refused[0].text(), refused[0].text()


async def test_more_than_thirty_units_a_side_are_cut_with_a_message(console: ConsoleSession) -> None:
    many = ", ".join(["Boyz"] * 31)
    final, _ = _answer(await console.send(f"/sim matchup attackers:{many} targets:Gretchin"))
    assert "Matchup: 30 attackers × 1 targets" in final.text()
    assert "attackers: the first 30 of 31 units (a matchup is at most 30 × 30)" in final.text()


def _heavy() -> dict:
    """A request just inside the engine's own limits: every weapon rolls 10D6+10 attacks."""
    weapon = {"name": "Doom", "range": 24, "attacks": "10D6+10", "skill": 3, "strength": 8, "ap": -2,
              "damage": "D6+2", "keywords": ["SUSTAINED HITS D3"]}
    return {"volley": [{"models": 2, "weapon": weapon}] * 7,
            "target": {"models": 100, "toughness": 4, "save": 3, "wounds": 2}}


def test_a_matrix_past_the_cost_limit_is_refused_before_any_work() -> None:
    request, seconds = check_request(_heavy())
    assert seconds > 0
    cells = [[matchups.Cell(request, estimate=seconds)] * 30 for _ in range(30)]
    heavy = matchups.Matchup([f"a{i}" for i in range(30)], [f"t{j}" for j in range(30)], [None] * 30,
                             "shooting", "11e", cells)
    with pytest.raises(UserError, match=r"a matchup may take at most 60 s"):
        matchups.check_cost(heavy)
    one_row = matchups.Matchup(["a"], ["t"], [None], "shooting", "11e", [[matchups.Cell(request, estimate=6.0)]])
    with pytest.raises(UserError, match=r"one unit's row may take at most 5 s"):
        matchups.check_cost(one_row)


def test_a_cell_the_engine_refuses_keeps_its_reason_and_the_row_runs() -> None:
    too_many = {**_heavy(), "volley": [{"models": 20, "weapon": _heavy()["volley"][0]["weapon"]}]}
    cell = matchups._cell(lambda: type("P", (), {"request": too_many})())
    assert cell.request is None and "attack dice" in (cell.reason or "")
    fine = matchups._cell(lambda: type("P", (), {"request": {**_heavy(), "volley": _heavy()["volley"][:1]}})())
    found = matchups.Matchup(["a"], ["t", "u"], [200, None], "shooting", "11e", [[cell, fine]])
    rows = [[c.request for c in row if c.request is not None] for row in found.rows]
    data = matchups.contract(found, matchups.placed(found, [evaluate_row(r) for r in rows]))
    assert data["matrix"][0][0] is None and data["matrix"][0][1]["expected_points"] is None
    assert data["best"] == [{"attacker": "a", "target": "u", "p_destroy": data["matrix"][0][1]["p_destroy"]}]


def test_best_target_is_the_likeliest_to_be_destroyed_then_the_largest_share() -> None:
    row = [{"p_destroy": 0.0004, "share": 0.9}, {"p_destroy": 0.0, "share": 0.2}, {"p_destroy": 0.3, "share": 0.5}]
    assert matchups.best_columns([row, row[:2], [None, None]]) == [2, 0, None]


def test_heatmap_grows_with_the_matrix() -> None:
    shades = [[(i * j % 10) / 10 for j in range(30)] for i in range(30)]
    png = draw_heatmap([f"Unit {i}" for i in range(30)], 30, shades, [["50"] * 30] * 30, [0] * 30, title="t",
                       scale="s")
    image = Image.open(io.BytesIO(png))
    assert image.size == (12 * 2 + 240 + 30 * 34, 58 + 24 * 30 + 34)


def test_sim_matchup_contract_8(tmp_path: Path, shared_data_dir: Path) -> None:
    store = _game(tmp_path, channel=88)
    store.close()
    env = {"COGITATOR_DB": str(tmp_path / "state.db"), "COGITATOR_DATA": str(shared_data_dir), "PATH": "/usr/bin:/bin"}
    run = [sys.executable, "-m", "bot", "sim", "matchup"]
    done = subprocess.run([*run, "--channel", "88", "--phase", "fight", "--json"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["phase"] == "fight" and data["attackers"][0] == "Hearthkyn Warriors #1 + Kâhl"
    assert len(data["matrix"]) == len(data["attackers"]) and all(len(r) == len(data["targets"]) for r in data["matrix"])
    cell = data["matrix"][0][0]
    assert set(cell) == {"p_destroy", "expected_models", "expected_points"} and cell["expected_points"] is not None
    assert {b["attacker"] for b in data["best"]} <= set(data["attackers"])
    bad = subprocess.run([*run, "--attackers", "Boyz", "--json"], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=300)
    assert bad.returncode == 2 and json.loads(bad.stdout)["field"] == "targets"
