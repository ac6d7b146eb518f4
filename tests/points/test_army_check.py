"""`/army check`, the check after `/army import`, `/game start battle_size:` and `army check --json`
(contract 6b), on the fixture MFM and battle sizes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from bot.armies.check import check_in
from bot.armies.parse import parse_list
from bot.console.session import ConsoleSession

from .conftest import ARMIES, REPO

START = "/game start opponent:222 edition:11e faction:Leagues of Votann opponent_faction:Orks"


def _army(name: str) -> dict:
    return parse_list((ARMIES / name).read_bytes(), filename=name).to_dict()


def test_costs_by_the_mfm_and_names_every_source(points_dir: Path) -> None:
    report = check_in(_army("votann_gw_app.txt"), points_dir)
    assert report["battle_size"] == "Strike Force" and report["points_source"] == "MFM v1.1, 2026-07-22"
    assert report["sizes_source"] == "Chapter Approved 2026-2027 (game-datacards, 2026-07-23)"
    assert report["points"]["limit"] == 2000 and report["detachment_points"]["limit"] == 3
    assert report["enhancements"] == {"count": 1, "limit": 4}
    units = {u["index"]: u for u in report["units"]}
    assert units[3]["points"] == 100 and units[3]["note"] == ""  # Hearthkyn Warriors, as stated
    assert units[0]["stated"] == 80 and "the list states 80" in units[0]["note"]
    assert report["points"]["total"] == sum(u["points"] for u in report["units"])
    assert report["points"]["stated"] == 1995
    rules = [(p["rule"], p["severity"]) for p in report["problems"]]
    assert ("Munitorum Field Manual", "warning") in rules
    assert not [p for p in report["problems"] if p["severity"] == "error"]


def test_every_check_fires_with_its_rule(points_dir: Path) -> None:
    army = _army("orks_gw_wtc.txt")
    boyz = next(u for u in army["units"] if u["name"] == "Boyz")
    warboss = next(i for i, u in enumerate(army["units"]) if u["name"] == "Warboss")
    army["units"] += [dict(boyz) for _ in range(4)]  # 7 Boyz: BATTLELINE doubles Incursion's 2 to 4
    army["units"][warboss]["enhancements"] = ["Headwoppa’s Killchoppa", "Not A Real Thing"]
    kans = next(i for i, u in enumerate(army["units"]) if u["name"] == "Killa Kans")
    army["units"][kans]["enhancements"] = ["Headwoppa’s Killchoppa"]
    army["units"][kans]["leading"] = 2  # Killa Kans are no leader: ignored; a Warboss leading Kans is checked
    army["units"][warboss]["leading"] = kans
    army["detachments"] = ["Da Big Hunt", "Taktikal Brigade", "Da Big Hunt"]
    report = check_in(army, points_dir, "Incursion")
    messages = {(p["rule"], p["severity"], p["message"]) for p in report["problems"]}
    text = "\n".join(f"{r} | {s} | {m}" for r, s, m in messages)
    assert "25.03 Select Battle Size (unit limit) | error | 7 × Boyz: at most 4 (BATTLELINE" in text
    assert "25.03 Select Battle Size | error | Detachments cost" in text
    assert "25.04 Fill Your Army Roster | error | Da Big Hunt is selected 2 times" in text
    assert "25.04 Fill Your Army Roster | error | Warboss has 2 enhancements" in text
    assert "Killa Kans, which is not a CHARACTER" in text
    assert "belongs to War Horde, which the list has not selected" in text
    assert "Enhancement 'Not A Real Thing' is not in MFM v1.1, 2026-07-22" in text
    assert "2 × the same enhancement" in text
    assert "Munitorum Field Manual (Leader/Support) | error | Warboss is attached to Killa Kans" in text
    assert "25.03 Select Battle Size | error | 3 enhancements; Incursion allows 2" in text
    assert "is over Incursion's 1,000" in text
    costed = {u["index"]: u for u in report["units"]}
    assert "copy 7: Your 4th + Unit Costs" in costed[len(army["units"]) - 1]["note"]


def test_typos_unknown_units_and_a_missing_battle_size(points_dir: Path, tmp_path: Path) -> None:
    report = check_in(_army("votann_typos.txt"), points_dir, "Apocalypse")
    notes = [u["note"] for u in report["units"]]
    assert "read as 'Hearthkyn Warriors'" in notes
    problems = [p["message"] for p in report["problems"]]
    assert any("'Sagitaurus' is not in MFM v1.1" in m and "Did you mean: Sagitaur" in m for m in problems)
    assert any(m.startswith("No battle size called 'Apocalypse' in Chapter Approved 2026-2027") for m in problems)
    bare = check_in(_army("votann_typos.txt"), tmp_path)
    assert bare["points_source"] is None and bare["points"]["total"] is None
    assert [p["message"][:40] for p in bare["problems"]] == [
        "Battle-size limits are not checked: no b", "No Munitorum Field Manual is imported, s"]


def test_150_units_duplicates_and_three_factions_answer_within_limits(points_dir: Path) -> None:
    army = _army("orks_gw_wtc.txt")
    votann = _army("votann_gw_app.txt")["units"]
    army["units"] = (army["units"] * 20)[:140] + votann[:5] + [{"name": "Necron Warriors", "models": 10}] * 5
    report = check_in(army, points_dir)
    assert len(report["units"]) == 150
    kinds = " ".join(p["message"] for p in report["problems"])
    assert "listed under Leagues of Votann, not Orks" in kinds and "'Necron Warriors' is not in" in kinds
    assert "× Boyz: at most 6" in kinds and "× Stompa: at most 3" in kinds


def test_cli_contract_6b(points_dir: Path) -> None:
    env = {**os.environ, "COGITATOR_DATA": str(points_dir)}
    run = subprocess.run([sys.executable, "-m", "bot", "army", "check", str(ARMIES / "orks_gw_wtc.txt"),
                          "--battle-size", "onslaught", "--json"], cwd=REPO, env=env, capture_output=True,
                         timeout=120, check=False)
    assert run.returncode == 0, run.stderr
    doc = json.loads(run.stdout)
    assert doc["format"] and doc["units"] and doc["check"]["battle_size"] == "Onslaught"
    assert set(doc["check"]) >= {"battle_size", "points_source", "points", "detachment_points", "enhancements",
                                 "units", "problems"}
    assert all(set(p) == {"rule", "severity", "message", "units"} for p in doc["check"]["problems"])
    bad = subprocess.run([sys.executable, "-m", "bot", "army", "check", "/no/such/list.txt", "--json"], cwd=REPO,
                         env=env, capture_output=True, timeout=120, check=False)
    assert bad.returncode == 2 and "error" in json.loads(bad.stdout) and b"Traceback" not in bad.stderr


async def test_console_check_after_import_and_on_demand(points_console: ConsoleSession) -> None:
    await points_console.send(START + " battle_size:incursion")
    replies = await points_console.send(f"/army import file:@{ARMIES / 'orks_gw_wtc.txt'}", user=222)
    text = replies[1].text()
    assert "List check — Orks · Incursion · MFM v1.1, 2026-07-22" in text and "❌" in text
    assert "1,115 points is over Incursion's 1,000" in text
    replies = await points_console.send(f"/army import file:@{ARMIES / 'votann_gw_app.txt'}")
    assert "✅ Legal for Incursion by these checks." in replies[1].text()
    asked = (await points_console.send("/army check battle_size:Strike Force"))[0]
    assert asked.ephemeral and "✅ Legal for Strike Force" in asked.text() and "Unit by unit" in asked.text()
    bob = (await points_console.send("/army check", user=222))[0]
    assert "List check — Orks · Incursion" in bob.text()  # the game's battle size
    refused = (await points_console.send("/army check", user=333))[0]
    assert refused.ephemeral and "No army list to check" in refused.text()
    choices = await points_console.autocomplete("/army check battle_size:o", "battle_size")
    assert [c["value"] for c in choices] == ["Incursion", "Strike Force", "Onslaught"]


async def test_game_start_refuses_an_unknown_battle_size(points_console: ConsoleSession) -> None:
    reply = (await points_console.send(START + " battle_size:Apocalypse"))[0]
    assert reply.ephemeral and "No battle size called 'Apocalypse'" in reply.text()
    assert "Incursion, Strike Force, Onslaught" in reply.text()


def test_enhancement_tags_are_ignored_when_nothing_has_the_exact_name(points_dir: Path) -> None:
    from bot.points.book import current

    book = current(points_dir)
    assert [e.name for _f, _d, e in book.enhancement_hits("Headwoppa's Killchoppa (Aura)")] == \
        ["Headwoppa’s Killchoppa"]
    assert book.enhancement_hits("Headwoppa's Killchoppa (Aura) Extra") == []


def test_units_without_points_are_costed_by_the_mfm_once(points_dir: Path) -> None:
    from bot.armies.check import fill_missing_points
    from bot.games.model import GameState, Player, Unit
    from bot.games.summary import lost_points

    army = _army("votann_gw_app.txt")
    army["units"][3]["points"] = None  # Hearthkyn Warriors: the list gives no figure
    assert fill_missing_points(army, check_in(army, points_dir)) == [3]
    assert army["units"][3]["points"] == 100
    assert army["points_filled"] == {"source": "MFM v1.1, 2026-07-22", "units": [3]}
    state = GameState(edition="11e", players=[Player(user_id=1, name="A", faction="Votann"),
                                              Player(user_id=2, name="B", faction="Orks")],
                      armies={"0": army}, units=[Unit(owner=0, name="Hearthkyn Warriors", army_index=3, unlisted=False,
                                                      destroyed=True)])
    assert lost_points(state, 0) == 100  # points destroyed count the MFM figure
    from bot.games.summary import summarise
    from bot.render.mission import destroyed_line

    line = destroyed_line(state, summarise(state, [], 0.0)["players"])
    assert line == "💀 Units destroyed: A 0 · B 1 (100 pts) — points a list left blank: MFM v1.1, 2026-07-22"


def test_a_misspelt_enhancement_is_read_within_the_lists_detachments_else_suggested(points_dir: Path) -> None:
    army = _army("orks_gw_wtc.txt")
    warboss = next(i for i, u in enumerate(army["units"]) if u["name"] == "Warboss")
    army["units"][warboss]["enhancements"] = ["Surly as a Squigoth"]  # one letter short of Da Big Hunt's
    report = check_in(army, points_dir)
    assert "+20 Surly as a Squiggoth" in report["units"][warboss]["note"]
    assert not [p for p in report["problems"] if "Squigoth" in p["message"]]
    army["units"][warboss]["enhancements"] = ["Proper Kilt"]  # too far to be read as anything: suggested
    report = check_in(army, points_dir)
    (missing,) = [p for p in report["problems"] if "Proper Kilt" in p["message"]]
    assert missing["message"].startswith("Enhancement 'Proper Kilt' is not in MFM v1.1, 2026-07-22; it is not "
                                         "costed. Did you mean: Proper Killy")
