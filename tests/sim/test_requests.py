"""Catalog weapons -> engine weapons, Feel No Pain from abilities, and the request shape (contract 1)."""

from __future__ import annotations

import pytest

from bot.sim.requests import (
    SimOptions,
    build_request,
    engine_weapon,
)
from bot.units.build import feel_no_pain


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
