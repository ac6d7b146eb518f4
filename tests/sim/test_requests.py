"""Catalog datasheets -> engine requests: weapon choice, multi-profile weapons, targets, Feel No Pain."""

from __future__ import annotations

import pytest

from bot.errors import UserError
from bot.sim.requests import (
    ALL_MELEE,
    ALL_RANGED,
    SimOptions,
    build_request,
    datasheet_target,
    engine_weapon,
    feel_no_pain,
    select_weapons,
)


def w(name: str, kind: str = "ranged", **extra) -> dict:
    base = {
        "name": name,
        "type": kind,
        "range": 24 if kind == "ranged" else "melee",
        "A": "3",
        "skill": 5,
        "S": 5,
        "AP": 0,
        "D": "1",
        "keywords": [],
    }
    return {**base, **extra}


# The Stompa's weapons as the seed page prints them (11e).
STOMPA = [
    w("Big Shoota", keywords=["LETHAL HITS: non-MONSTER/VEHICLE", "RAPID FIRE 2"]),
    w("Deffkannon and Supa-rokkits", A="12", S=14, AP=-3, D="D6+2", keywords=["BLAST 2"]),
    w("Skorcha", skill=None, keywords=["BLAST 2", "TORRENT"]),
    w("Supa-gatler - Aimed", A="30", S=7, AP=-2, D="2", weapon="Supa-gatler", profile="Aimed"),
    w("Supa-gatler - Point Blank", A="3D6+3", skill=None, S=7, AP=-2, D="2", keywords=["TORRENT"]),
    w("Mega-choppa", "melee", A="6", skill=3, S=24, AP=-4, D="10", keywords=["CLEAVE 4"]),
]


def names(weapons: list[dict]) -> list[str]:
    return [x["name"] for x in weapons]


def test_all_ranged_fires_one_profile_of_each_multi_profile_weapon() -> None:
    chosen, notes = select_weapons(STOMPA, ALL_RANGED)
    assert names(chosen) == ["Big Shoota", "Deffkannon and Supa-rokkits", "Skorcha", "Supa-gatler - Aimed"]
    assert len(notes) == 1 and "Supa-gatler" in notes[0]


def test_default_weapon_choice() -> None:
    # One model: all its ranged weapons.
    assert names(select_weapons(STOMPA, None)[0]) == names(select_weapons(STOMPA, ALL_RANGED)[0])
    # No guns and one melee weapon: that weapon.
    assert names(select_weapons([w("Choppa", "melee")], None)[0]) == ["Choppa"]
    # A unit whose only ranged weapon has two profiles: that weapon, first profile.
    rifles = [
        w("Bolt Rifle – Focused Fire", weapon="Bolt Rifle"),
        w("Bolt Rifle – Saturation", weapon="Bolt Rifle"),
        w("Chainsword", "melee"),
    ]
    assert names(select_weapons(rifles, None, single_model=False)[0]) == ["Bolt Rifle – Focused Fire"]


def test_several_models_with_several_weapon_options_must_pick_one() -> None:
    boyz = [w("Slugga"), w("Shoota"), w("Choppa", "melee")]
    for choice in (None, ALL_RANGED):
        with pytest.raises(UserError, match="pick one weapon|Pick a weapon") as caught:
            select_weapons(boyz, choice, single_model=False)
        assert caught.value.field == "weapon"
    assert names(select_weapons(boyz, "Shoota", single_model=False)[0]) == ["Shoota"]


def test_a_model_fights_with_one_melee_weapon() -> None:
    assert names(select_weapons(STOMPA, ALL_MELEE)[0]) == ["Mega-choppa"]
    with pytest.raises(UserError, match="04.01"):
        select_weapons([w("Choppa", "melee"), w("Big choppa", "melee")], ALL_MELEE)
    with pytest.raises(UserError, match="Pick a weapon"):
        select_weapons([w("Choppa", "melee"), w("Big choppa", "melee")], None)


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ("Supa-gatler - Point Blank", "Supa-gatler - Point Blank"),
        ("supa-gatler - point blank", "Supa-gatler - Point Blank"),
        ("#2", "Deffkannon and Supa-rokkits"),
        ("deffkannon", "Deffkannon and Supa-rokkits"),
    ],
)
def test_pick_one_weapon(choice: str, expected: str) -> None:
    assert names(select_weapons(STOMPA, choice)[0]) == [expected]


def test_ambiguous_or_unknown_weapon_is_a_user_error_listing_the_weapons() -> None:
    with pytest.raises(UserError, match="several weapons") as caught:
        select_weapons(STOMPA, "supa-gatler")
    assert caught.value.field == "weapon"
    with pytest.raises(UserError, match="Big Shoota") as caught:
        select_weapons(STOMPA, "lascannon")
    assert caught.value.field == "weapon"
    with pytest.raises(UserError, match="no melee weapons"):
        select_weapons([w("Gun")], ALL_MELEE)
    with pytest.raises(UserError, match="no weapons"):
        select_weapons([], None)


def test_engine_weapon_maps_the_datasheet_schema() -> None:
    assert engine_weapon(STOMPA[1]) == {
        "name": "Deffkannon and Supa-rokkits",
        "range": 24,
        "attacks": 12,
        "skill": 5,
        "strength": 14,
        "ap": -3,
        "damage": "D6+2",
        "keywords": ["BLAST 2"],
    }
    assert engine_weapon(STOMPA[4])["attacks"] == "3D6+3"
    assert engine_weapon(STOMPA[4])["skill"] is None


@pytest.mark.parametrize(
    ("abilities", "expected"),
    [
        ([{"name": "Feel No Pain 5+", "text": ""}], (5, None)),
        ([{"name": "Feel No Pain", "text": "6+"}], (6, None)),
        (
            [
                {"name": "Feel No Pain 6+", "text": ""},
                {"name": "Feel No Pain 4+ against mortal wounds", "text": ""},
            ],
            (6, 4),
        ),
        (
            [
                {"name": "Feel No Pain 5+", "text": ""},
                {"name": "Feel No Pain 6+ (mortal wounds)", "text": ""},
            ],
            (5, None),
        ),
        # Conditional or aura abilities are not applied: the player sets fnp: when they apply.
        (
            [
                {
                    "name": "Nexus of Devotion",
                    "text": "While this model is leading a unit, models in that unit have the Feel No Pain 5+ ability.",
                }
            ],
            (None, None),
        ),
        (
            [{"name": "Feel No Pain", "text": "5+ while this unit is within range of an objective"}],
            (None, None),
        ),
        ([], (None, None)),
    ],
)
def test_feel_no_pain_only_when_unconditional(abilities: list[dict], expected: tuple) -> None:
    assert feel_no_pain(abilities) == expected


GRIMNYR = {
    "profiles": [
        {"name": "Grimnyr", "M": '5"', "T": 5, "Sv": 4, "InSv": 4, "W": 4, "Ld": 6, "OC": 1},
        {"name": "CORV", "M": '5"', "T": 5, "Sv": 4, "InSv": 4, "W": 1, "Ld": 6, "OC": 1},
    ],
    "abilities": [{"name": "Feel No Pain 6+", "text": ""}],
    "models_min": 3,
    "models_max": 3,
    "keywords": ["INFANTRY", "GRIMNYR", "CHARACTER", "PSYKER"],
    "faction_keywords": ["LEAGUES OF VOTANN"],
}


def test_datasheet_target_uses_first_profile_and_says_so() -> None:
    target, profile, notes = datasheet_target(GRIMNYR, models=None, fnp=None)
    assert target == {
        "models": 3,
        "toughness": 5,
        "save": 4,
        "invulnerable": 4,
        "wounds": 4,
        "feel_no_pain": 6,
        "feel_no_pain_mortal": None,
        "damage_reduction": 0,
        "keywords": ["INFANTRY", "GRIMNYR", "CHARACTER", "PSYKER", "LEAGUES OF VOTANN"],
        "wounds_lost": 0,
    }
    assert profile == "Grimnyr"
    assert notes and "Grimnyr profile" in notes[0]


def test_datasheet_target_options_override() -> None:
    target, _, _ = datasheet_target(GRIMNYR, models=1, fnp=4)
    assert target["models"] == 1 and target["feel_no_pain"] == 4
    with pytest.raises(UserError) as caught:
        datasheet_target({"profiles": []}, models=None, fnp=None)
    assert caught.value.field == "target"


def test_build_request_is_contract_1() -> None:
    options = SimOptions(edition="10e", half_range=True, hit_modifier=1, reroll_wounds="non_critical")
    request = build_request(
        [{"models": 2, "weapon": engine_weapon(STOMPA[0])}],
        {"models": 1},
        options,
        attacker_keywords=["VEHICLE"],
    )
    assert request["edition"] == "10e" and request["method"] == "exact"
    assert request["attacker"] == {"keywords": ["VEHICLE"]}
    assert request["context"] == {
        "half_range": True,
        "stationary": False,
        "charged": False,
        "cover": False,
        "hit_modifier": 1,
        "wound_modifier": 0,
        "save_modifier": 0,
        "reroll_hits": None,
        "reroll_wounds": "non_critical",
        "critical_hit": 6,
        "critical_wound": 6,
    }
    assert options.describe() == ["half range", "hit +1", "wounds: re-roll non-crits"]
