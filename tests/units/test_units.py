"""bot/units: the unit as fielded, from wh40kdc (bundled, so no shared data needed) and from loadout words."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.errors import UserError
from bot.units.build import from_text
from bot.units.model import Unit, norm
from bot.units.wh40kdc import load_units


@pytest.fixture(scope="module")
def units() -> dict[tuple[str, str], Unit]:
    return load_units()


def loadout(unit: Unit, model: str) -> dict[str, int]:
    found = next(m for m in unit.models if m.name == model)
    return {c.weapon: c.count for c in found.loadout}


def test_stompa_carries_three_big_shootas_with_the_correction_stated(units) -> None:
    stompa = units[("orks", "stompa")]
    assert loadout(stompa, "Stompa")["Big shoota"] == 3
    assert any("3 big shootas" in a for a in stompa.assumptions)


def test_boyz_default_is_a_nob_and_nine_boyz(units) -> None:
    boyz = units[("orks", "boyz")]
    sized = boyz.sized()
    assert [(m.name, n) for m, n in sized.counts] == [("Nob", 1), ("Boy", 9)]
    assert sized.total == 10
    assert [(m.name, n) for m, n in boyz.sized(20).counts] == [("Nob", 1), ("Boy", 19)]
    assert "Choppa" in loadout(boyz, "Boy") and "Kustom Choppa" in loadout(boyz, "Nob")
    assert next(m for m in boyz.models if m.name == "Nob").profile.wounds == 3


def test_sizes_outside_the_datasheet_are_refused_naming_the_allowed_ones(units) -> None:
    boyz = units[("orks", "boyz")]
    with pytest.raises(UserError, match="10-20 models, not 25"):
        boyz.sized(25)
    forced = boyz.sized(25, force=True)
    assert forced.total == 25 and "forced" in forced.notes[0]
    assert boyz.sized(3, force=True).total == 3


def test_grimnyr_only_the_grimnyr_is_a_character_and_carries_the_witchfire(units) -> None:
    grimnyr = units[("leagues-of-votann", "grimnyr")]
    kinds = {m.name: (m.character, m.min) for m in grimnyr.models}
    assert kinds == {"Grimnyr": (True, 1), "CORV": (False, 2)}
    assert loadout(grimnyr, "Grimnyr") == {"Ancestral ward stave": 1, "Ancestral Wrath": 1}
    assert len(grimnyr.weapon("Ancestral Wrath")) == 2  # witchfire and focused witchfire


def test_leaders_from_either_side(units) -> None:
    captain = units[("adeptus-astartes", "captain")]
    intercessors = units[("adeptus-astartes", "intercessor-squad")]
    boyz = units[("orks", "boyz")]
    assert intercessors.may_be_led_by(captain)
    assert not boyz.may_be_led_by(captain)
    assert "Captain" in intercessors.led_by


def test_json_round_trip(units) -> None:
    boyz = units[("orks", "boyz")]
    assert Unit.from_json(boyz.to_json()) == boyz


GDC_BOYZ = {
    "composition": ["1 Boss Nob", "9-19 Boyz"],
    "loadout": "**The Boss Nob is equipped with:** slugga; big choppa.\n**Every Boy is equipped with:** slugga; choppa.",
    "profiles": [{"name": "Boy", "T": 5, "Sv": "5+", "W": 1}, {"name": "Boss Nob", "T": 5, "Sv": "5+", "W": 2}],
    "weapons": [{"name": "Slugga", "type": "ranged"}, {"name": "Big choppa", "type": "melee"},
                {"name": "Choppa", "type": "melee"}],
    "keywords": ["INFANTRY"],
}


def test_loadout_words_from_game_datacards() -> None:
    unit = from_text("Boyz", "11e", "gdc", GDC_BOYZ, (None, None))
    assert unit is not None
    assert [(m.name, m.min, m.max) for m in unit.models] == [("Boss Nob", 1, 1), ("Boyz", 9, 19)]
    assert loadout(unit, "Boss Nob") == {"Slugga": 1, "Big choppa": 1}
    assert loadout(unit, "Boyz") == {"Slugga": 1, "Choppa": 1}
    assert next(m for m in unit.models if m.name == "Boss Nob").profile.wounds == 2


def test_counts_and_unknown_words_in_a_loadout() -> None:
    data = {"composition": ["1 Stompa"], "loadout": "This model is equipped with: 3 big shootas; twin big shoota; "
            "mega-choppa.", "profiles": [{"name": "Stompa", "T": 14, "W": 30}],
            "weapons": [{"name": "Big Shoota"}, {"name": "Mega-choppa", "type": "melee"}]}
    unit = from_text("Stompa", "11e", "gdc", data, (None, None))
    assert unit is not None and loadout(unit, "Stompa") == {"Big Shoota": 3, "Mega-choppa": 1}
    assert any("twin big shoota" in a for a in unit.assumptions)


def test_every_model_loadout_applies_to_each_model_type() -> None:
    data = {"composition": ["1 Intercessor Sergeant", "4-9 Intercessors"],
            "loadout": "Every model is equipped with: bolt pistol; bolt rifle; close combat weapon.",
            "profiles": [{"name": "Intercessor", "T": 4, "Sv": "3+", "W": 2}],
            "weapons": [{"name": "Bolt pistol"}, {"name": "Bolt rifle"}, {"name": "Close combat weapon", "type": "melee"}]}
    unit = from_text("Intercessor Squad", "10e", "wahapedia", data, (None, None))
    assert unit is not None
    for model in ("Intercessor Sergeant", "Intercessors"):
        assert loadout(unit, model) == {"Bolt pistol": 1, "Bolt rifle": 1, "Close combat weapon": 1}


@given(st.text(max_size=40))
def test_norm_never_fails_and_is_idempotent_on_its_output_words(text: str) -> None:
    assert isinstance(norm(text), str)
