"""bot/sim/fielded: unit as fielded -> request, without Discord (units straight from wh40kdc)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.errors import UserError
from bot.sim.fielded import option_limit, plan, target_groups
from bot.sim.planner import split_count
from bot.sim.requests import SimOptions
from bot.units.model import Unit
from bot.units.wh40kdc import load_units
from engine import validate

OPTIONS = SimOptions(edition="11e")


@pytest.fixture(scope="module")
def units() -> dict[tuple[str, str], Unit]:
    return load_units()


def test_split_count() -> None:
    assert split_count("3x Plasma pistol") == ("Plasma pistol", 3)
    assert split_count("2 × Big Shoota") == ("Big Shoota", 2)
    assert split_count("Ancestral Wrath – Witchfire") == ("Ancestral Wrath – Witchfire", None)
    assert split_count("  ") == (None, None)


@given(models=st.integers(1, 100), target_models=st.integers(1, 100), force=st.booleans())
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_sizes_are_refused_or_fielded_exactly(units, models: int, target_models: int, force: bool) -> None:
    boyz = units[("orks", "boyz")]
    allowed = 10 <= models <= 20 and 10 <= target_models <= 20
    try:
        built = plan(boyz, boyz, OPTIONS, models=models, target_models=target_models, force=force)
    except UserError as error:
        assert not allowed and not force
        assert "10-20" in str(error) and error.field in ("models", "target_models")
        return
    assert allowed or force
    fired = sum(g["models"] for g in built.request["volley"])
    assert fired == models  # the Nob's kombi-skorcha + every Boy's shoota (the slugga stays home: PISTOL)
    assert sum(g["models"] for g in built.target_groups) == target_models
    validate(built.request)  # always a valid contract-1 request
    assert ("forced" in " ".join(built.assumptions)) == (not allowed)


def test_target_groups_merge_same_profiles_and_put_characters_last(units) -> None:
    intercessors = units[("adeptus-astartes", "intercessor-squad")].sized(10)
    captain = units[("adeptus-astartes", "captain")].sized()
    groups = target_groups([captain, intercessors], fnp=None, extra_fnp=None)
    assert [(g["name"], g["models"], g["character"]) for g in groups] == [
        ("Intercessor Squad", 10, False), ("Captain", 1, True)]


def test_option_limits_follow_the_options(units) -> None:
    boyz = units[("orks", "boyz")]
    assert option_limit(boyz, "Rokkit Launcha", [boyz.sized(10)]) == 1
    assert option_limit(boyz, "Rokkit Launcha", [boyz.sized(20)]) == 2
    russ = units[("astra-militarum", "leman-russ-battle-tank")]
    assert option_limit(russ, "Heavy bolter", [russ.sized()]) == 5  # hull 3 + a pair of sponsons


def test_abilities_off_removes_ability_fnp(units) -> None:
    nork = next(u for (f, i), u in units.items() if i == "nork-deddog")
    fnp = nork.models[0].profile.feel_no_pain  # the best unconditional FNP among its abilities (4+)
    assert fnp == 4
    boyz = units[("orks", "boyz")]
    on = plan(boyz, nork, OPTIONS, weapon="Choppa")
    off = plan(boyz, nork, OPTIONS, weapon="Choppa", abilities=False)
    assert on.request["target"]["feel_no_pain"] == fnp and off.request["target"]["feel_no_pain"] is None


def test_a_leaders_while_leading_ability_reaches_the_whole_unit(units) -> None:
    """Grimnyr's Fortify (corrected: +1 Toughness while leading) on Hearthkyn Warriors (T5): every group T6."""
    grimnyr = units[("leagues-of-votann", "grimnyr")]
    warriors = next(u for (f, i), u in units.items() if u.name == "Hearthkyn Warriors")
    boyz = units[("orks", "boyz")]
    led = plan(boyz, warriors, OPTIONS, target_leader=grimnyr)
    alone = plan(boyz, warriors, OPTIONS)
    base = alone.target_groups[0]["toughness"]
    assert {g["toughness"] for g in led.target_groups} == {base + 1}
    assert any(w.startswith("Fortify (Psychic) (Grimnyr): +1 Toughness") for w in led.abilities)
    assert [g["character"] for g in led.target_groups][-1] is True  # the Grimnyr last
    off = plan(boyz, warriors, OPTIONS, target_leader=grimnyr, abilities=False)
    assert {g["toughness"] for g in off.target_groups} == {base}
