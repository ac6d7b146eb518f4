"""A 10e list costed and checked by the Wahapedia export's points (issue 23, part 5): `check_in`, the check
after `/army import` in a 10e game, `/army check`, and `army check --edition 10e --json` (contract 6b), on the
small catalog (seeds, wh40kdc and the repository's Wahapedia fixture, export of 2025-11-14)."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

from bot.armies.check import TENTH_NOT_CHECKED, check_in
from bot.armies.parse import parse_list
from bot.catalog.service import Catalog
from bot.config import Settings
from bot.console.session import ConsoleSession

from .conftest import ARMIES, REPO

LIST = ARMIES / "orks_10e_gw_app.txt"
SOURCE = "Wahapedia export 2025-11-14 (10th edition)"


def _army(catalog: Catalog) -> dict:
    return parse_list(LIST.read_bytes(), filename=LIST.name, edition="10e", catalog=catalog).to_dict()


def test_a_10e_list_is_costed_by_the_wahapedia_export(small_catalog: Catalog, tmp_path: Path) -> None:
    report = check_in(_army(small_catalog), tmp_path, None, small_catalog)
    assert report["points_source"] == SOURCE and report["battle_size"] is None and report["sizes_source"] == ""
    by_unit = [(u["points"], u["stated"]) for u in report["units"]]
    # Warboss 75 + Follow Me Ladz 25; Weirdboy not in the export fixture; Boyz 20 and 10; Deff Dread 135
    assert by_unit == [(100, 75), (None, 60), (160, 170), (80, 80), (135, 150)]
    assert report["points"] == {"total": 475, "limit": None, "stated": 560}
    assert report["detachment_points"] == {"spent": None, "limit": None}
    assert report["enhancements"] == {"count": 1, "limit": None}
    notes = [u["note"] for u in report["units"]]
    assert "+25 Follow Me Ladz" in notes[0] and notes[2] == f"the list states 170 (-10 by {SOURCE})"
    first, *rest = report["problems"]
    assert first == {"rule": "10e battle size", "severity": "warning", "message": TENTH_NOT_CHECKED, "units": []}
    texts = [f"{p['rule']} | {p['severity']} | {p['message']}" for p in rest]
    assert any(t.startswith(f"Wahapedia export points | warning | 'Weirdboy' is not in {SOURCE}") for t in texts)
    assert f"Wahapedia export points | warning | The list states 560 points; {SOURCE} gives 475 (-85)" in texts[-1]
    assert not [p for p in report["problems"] if p["severity"] == "error"]


def test_the_enhancement_rules_fire_with_10e_names(small_catalog: Catalog, tmp_path: Path) -> None:
    army = _army(small_catalog)
    army["units"][2]["enhancements"] = ["Follow Me Ladz"]  # Boyz: not a CHARACTER, and a second copy
    army["units"][0]["enhancements"] = ["Follow Me Ladz", "Auric Mantle"]  # two, one of another faction
    report = check_in(army, tmp_path, "Strike Force", small_catalog)
    text = "\n".join(f"{p['rule']} | {p['severity']} | {p['message']}" for p in report["problems"])
    assert report["problems"][0]["message"].endswith("The battle size asked (Strike Force) is not used.")
    assert "10e core rules, Muster Army | error | Warboss has 2 enhancements; a unit can have one." in text
    assert (f"Wahapedia export points | warning | Enhancement 'Auric Mantle' is not in {SOURCE}; it is not costed."
            in text)  # a Custodes enhancement: the Orks points do not have it
    assert "10e core rules, Muster Army | error | Follow Me Ladz is on Boyz, which is not a CHARACTER" in text
    assert "10e core rules, Muster Army | error | 2 × the same enhancement (follow me ladz); at most 1." in text
    assert "25.0" not in text and "Munitorum" not in text  # no 11e rule or source is named for a 10e list


def test_without_a_catalog_or_its_points_nothing_is_costed_and_it_says_why(tmp_path: Path) -> None:
    army = parse_list(LIST.read_bytes(), filename=LIST.name, edition="10e").to_dict()
    report = check_in(army, tmp_path)
    assert report["points"]["total"] is None and report["points_source"] is None
    assert [p["message"] for p in report["problems"]][1].startswith("No 10th-edition points are loaded")


def test_cli_contract_6b_for_10e(small_dir: Path) -> None:
    env = {**os.environ, "COGITATOR_DATA": str(small_dir)}
    run = subprocess.run([sys.executable, "-m", "bot", "army", "check", str(LIST), "--edition", "10e", "--json"],
                         cwd=REPO, env=env, capture_output=True, timeout=120, check=False)
    assert run.returncode == 0, run.stderr
    doc = json.loads(run.stdout)
    assert doc["edition"] == "10e" and doc["check"]["points_source"] == SOURCE
    assert doc["check"]["points"] == {"total": 475, "limit": None, "stated": 560}
    assert all(set(p) == {"rule", "severity", "message", "units"} for p in doc["check"]["problems"])


async def test_console_checks_a_10e_import_and_on_demand(settings: Settings, small_dir: Path) -> None:
    session = await ConsoleSession.open(dataclasses.replace(settings, data_dir=small_dir))
    try:
        await session.send("/game start opponent:222 edition:10e faction:Orks opponent_faction:Orks")
        replies = await session.send(f"/army import file:@{LIST}")
        check = replies[1].text()
        assert f"List check — Orks · no battle size · {SOURCE}" in check
        assert "✅ No problem found by these checks (the battle size is not checked)." in check
        assert "Points 475 (the list states 560)" in check and "DP" not in check.split("\n")[2]
        asked = (await session.send("/army check"))[0]
        assert asked.ephemeral and "Deff Dread: 135 (list 150)" in asked.text()
    finally:
        await session.close()
