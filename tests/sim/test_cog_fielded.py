"""/sim unit fires the unit as fielded: the cases of issue 11's "Why", through the console (real CommandTree,
real catalog of seeds + wh40kdc, real engine). Expected numbers are worked out by hand in each docstring."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bot.console.session import ConsoleSession
from bot.sim.fielded import engine_takes_groups

REPO = Path(__file__).resolve().parents[2]


def answer(replies):
    assert [r.kind for r in replies] == ["defer", "followup"], [r.to_json() for r in replies]
    return replies[1]


def fields(reply) -> dict[str, str]:
    return {f["name"]: f["value"] for f in reply.embeds[0]["fields"]}


def mean(value: str) -> float:
    return float(value.split("**")[1])


async def test_intercessors_into_boyz_fire_their_loadout_not_every_option(console: ConsoleSession) -> None:
    """10 Intercessors (a sergeant and 9): bolt rifles (focused fire, A1, RAPID FIRE not at half range) and the
    sergeant's grenade launcher (frag: A4, BLAST +4 against 20 models): 10 + 8 = 18 attacks, not 85; no bolt
    pistols (PISTOL: a model fires those or its other guns), no plasma pistols or hand flamers (options)."""
    reply = answer(await console.send("/sim unit attacker:Intercessor Squad target:Boyz models:10 target_models:20"))
    text = reply.embeds[0]["description"]
    assert "10 × Bolt Rifle – Focused Fire" in text and "1 × Grenade Launcher – Frag" in text
    for absent in ("Pistol", "pistol", "Hand Flamer", "Krak"):
        assert absent not in text
    values = fields(reply)
    assert values["Average per stage"].startswith("18.0 attacks")
    assert mean(values["Expected kills"]) < 5  # was "19.91 of 20"
    assert "Intercessor Squad: 10 models, shooting, loadout from wh40kdc" in values["Notes"]


async def test_boyz_are_ten_models_not_one(console: ConsoleSession) -> None:
    """Boyz at minimum size are a Nob and 9 Boys; choppas are the Boys' (the Nob has his kustom choppa). 9 × 3 =
    27 attacks, hit 3+ (2/3), S5 v T5 wound 4+ (1/2), AP-1 v Sv5+ saves on 6 (5/6 fail): 27 × 5/18 = 7.5."""
    reply = answer(await console.send("/sim unit attacker:Boyz target:Boyz weapon:Choppa"))
    assert "9 × Choppa — A 3 · WS 3+ · S 5 · AP -1 · D 1" in reply.embeds[0]["description"]
    stages = fields(reply)["Average per stage"]
    assert stages.startswith("27.0 attacks") and stages.endswith("7.5 unsaved")
    assert fields(reply)["Expected kills"].endswith("of 10")


async def test_boyz_fight_with_one_melee_weapon_per_model(console: ConsoleSession) -> None:
    """Fight phase: the Nob's kustom choppa (1 × A3) and 9 Boys' choppas; sluggas and shootas stay home."""
    reply = answer(await console.send("/sim unit attacker:Boyz target:Intercessor Squad phase:fight"))
    text = reply.embeds[0]["description"]
    assert "1 × Kustom Choppa" in text and "9 × Choppa" in text and "Shoota" not in text
    assert fields(reply)["Average per stage"].startswith("30.0 attacks")


async def test_leman_russ_fires_its_loadout_not_every_exclusive_option(console: ConsoleSession) -> None:
    reply = answer(await console.send("/sim unit attacker:Leman Russ Battle Tank target:Intercessor Squad"))
    lines = [line for line in reply.embeds[0]["description"].splitlines() if " × " in line and "**vs**" not in line]
    assert [line.split(" — ")[0] for line in lines] == ["1 × Lascannon", "1 × Leman Russ battle cannon"]
    assert "5 × Intercessor Squad" in reply.embeds[0]["description"]


async def test_grimnyr_witchfire_fires_once(console: ConsoleSession) -> None:
    """Only the Grimnyr carries Ancestral Wrath: 3 attacks, hit 3+ (2/3), S6 v T5 wounds 3+ (2/3), AP-2 leaves the
    Boyz no save, every wound kills a Boy (W1): 3 × 4/9 = 1.33 kills (not 4.00 from three models)."""
    reply = answer(await console.send(
        "/sim unit attacker:Grimnyr target:Boyz weapon:Ancestral Wrath – Witchfire target_models:10"))
    assert "1 × Ancestral Wrath – Witchfire — A 3 · BS 3+" in reply.embeds[0]["description"]
    assert fields(reply)["Expected kills"] == "**1.33** of 10"
    if engine_takes_groups():  # at most 3 wounds, all on the 9 Boys first: the Nob never dies
        assert fields(reply)["Kills per group"] == "Boy 1.3 of 9 · Nob 0.0 of 1"


async def test_stompa_fires_three_big_shootas(console: ConsoleSession) -> None:
    reply = answer(await console.send("/sim unit attacker:Stompa target:Boyz weapon:Big Shoota"))
    assert "3 × big shoota" in reply.embeds[0]["description"].lower()
    # 3 × A3 = 9 attacks (RAPID FIRE 2 not at half range)
    assert fields(reply)["Average per stage"].startswith("9.0 attacks")


async def test_weapon_picks_any_profile_of_a_carried_weapon(console: ConsoleSession) -> None:
    reply = answer(await console.send("/sim unit attacker:Stompa target:Boyz weapon:Supa-gatler - Point Blank"))
    assert "1 × Supa-gatler - Point Blank — A 3D6+3" in reply.embeds[0]["description"].replace(" – ", " - ")
    assert "wargear option" not in fields(reply).get("Notes", "")


async def test_a_leader_joins_the_target_as_a_character_group(console: ConsoleSession) -> None:
    """Intercessors (5 × T5 Sv3+ W2) led by a Captain (T5 Sv3+ 4++ W5, CHARACTER)."""
    reply = answer(await console.send(
        "/sim unit attacker:Intercessor Squad target:Intercessor Squad target_leader:Captain"))
    embed = reply.embeds[0]
    assert embed["title"] == "Intercessor Squad → Intercessor Squad + Captain"
    assert "5 × Intercessor Squad — T 5 · Sv 3+ · W 2 + 1 × Captain — T 5 · Sv 3+ · 4++ · W 5" in embed["description"]
    values = fields(reply)
    assert values["Expected kills"].endswith("of 6")
    assert "Captain leads Intercessor Squad" in values["Notes"]
    if engine_takes_groups():
        per_group = values["Kills per group"]
        assert per_group.startswith("Intercessor Squad ") and "of 5 · Captain " in per_group
        assert "of 1 (P dead " in per_group
    else:
        assert "every model uses the Intercessor Squad profile" in values["Notes"]


async def test_abilities_apply_by_default_and_switch_off(console: ConsoleSession) -> None:
    """Ratlings have Stealth. 10e: -1 to hit, so Intercessors hit on 4+ instead of 3+ (10 dice: 5.0 hits, not
    6.7). 11e 24.33: the benefit of cover instead (13.08: BS worsened by 1), the same 5.0 hits here."""
    on = answer(await console.send("/sim unit attacker:Intercessor Squad target:Ratlings edition:10e"))
    off = answer(await console.send("/sim unit attacker:Intercessor Squad target:Ratlings abilities:false edition:10e"))
    eleventh = answer(await console.send("/sim unit attacker:Intercessor Squad target:Ratlings"))
    assert "Stealth (Ratlings): -1 to hit rolls against it" in fields(on)["Abilities applied"]
    assert "Stealth (Ratlings): benefit of cover (11e 24.33)" in fields(eleventh)["Abilities applied"]
    assert "Abilities applied" not in fields(off)

    def hits(reply) -> float:
        return float(fields(reply)["Average per stage"].split(" → ")[1].split()[0])

    assert (hits(on), hits(off), hits(eleventh)) == (5.0, 6.7, 5.0)


def run_plan(*args: str, data: Path) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin", "COGITATOR_DATA": str(data), "COGITATOR_DB": str(data / "state.db")}
    return subprocess.run([sys.executable, "-m", "bot", "sim", "plan", *args], capture_output=True, text=True,
                          cwd=REPO, env=env, timeout=300)


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["--attacker", "Stompa", "--target", "Boyz", "--weapon", "Big Shoota", "--json"], 0),
        (["--attacker", "Boyz", "--target", "Boyz", "--models", "30"], 2),
        (["--attacker", "Boyz", "--target", "Boyz", "--leader", "Captain"], 2),
    ],
)
def test_sim_plan_prints_request_assumptions_and_result(args: list[str], code: int, shared_data_dir: Path) -> None:
    proc = run_plan(*args, data=shared_data_dir)
    assert proc.returncode == code, proc.stderr
    doc = json.loads(proc.stdout)
    if code:
        assert set(doc) == {"error", "field"} and doc["field"] in ("models", "leader")
        return
    assert set(doc) == {"request", "assumptions", "result"}
    assert doc["request"]["volley"][0]["models"] == 3
    assert any("3 big shootas" in a for a in doc["assumptions"])
    assert doc["result"]["stages"]["attacks"] == pytest.approx(9.0)
