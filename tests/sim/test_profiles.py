"""The /sim custom profile strings: what players type, and everything they might mistype."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.errors import UserError
from bot.sim.profiles import parse_attacker, parse_dice, parse_target


def weapon(text: str) -> dict:
    [group] = parse_attacker(text).volley
    return group


def test_issue_example_attacker() -> None:
    group = weapon('A=D6+2 BS=3 S=14 AP=-3 D=D6+2 kw="BLAST 2"')
    assert group == {
        "models": 1,
        "weapon": {
            "name": "Weapon 1",
            "range": 24,
            "attacks": "D6+2",
            "skill": 3,
            "strength": 14,
            "ap": -3,
            "damage": "D6+2",
            "keywords": ["BLAST 2"],
        },
    }


def test_issue_example_target() -> None:
    profile = parse_target("T=5 Sv=4 W=4 inv=4 models=3")
    assert profile.target == {
        "models": 3,
        "toughness": 5,
        "save": 4,
        "invulnerable": 4,
        "wounds": 4,
        "feel_no_pain": None,
        "feel_no_pain_mortal": None,
        "damage_reduction": 0,
        "keywords": [],
        "wounds_lost": 0,
    }
    assert profile.name is None


def test_target_with_every_setting() -> None:
    profile = parse_target(
        't=4 sv=3+ w=3 inv=5+ models=10 fnp=6+ fnp_mortal=5 dr=1 wl=2 kw="INFANTRY, IMPERIUM" name=Intercessors'
    )
    assert profile.target["feel_no_pain"] == 6
    assert profile.target["feel_no_pain_mortal"] == 5
    assert profile.target["damage_reduction"] == 1
    assert profile.target["wounds_lost"] == 2
    assert profile.target["keywords"] == ["INFANTRY", "IMPERIUM"]
    assert profile.name == "Intercessors"


@pytest.mark.parametrize(
    ("text", "keywords"),
    [
        ('A=3 BS=3 S=4 D=1 kw="BLAST 2" kw="LETHAL HITS"', ["BLAST 2", "LETHAL HITS"]),
        ('A=3 BS=3 S=4 D=1 kw="blast 2, lethal hits"', ["BLAST 2", "LETHAL HITS"]),
        ("A=3 BS=3 S=4 D=1 kw='SUSTAINED HITS D3'", ["SUSTAINED HITS D3"]),
        ("A=3 BS=3 S=4 D=1 kw=SUSTAINED HITS 1, LANCE", ["SUSTAINED HITS 1", "LANCE"]),
        ("A=3 kw=SUSTAINED HITS 1 BS=3 S=4 D=1", ["SUSTAINED HITS 1"]),
        ("A=3 BS=3 S=4 D=1 kw=“ANTI-INFANTRY 4+”", ["ANTI-INFANTRY 4+"]),
        ('A=3 BS=3 S=4 D=1 kw="LETHAL HITS: non-MONSTER/VEHICLE"', ["LETHAL HITS: NON-MONSTER/VEHICLE"]),
    ],
)
def test_keywords_quoted_repeated_and_comma_separated(text: str, keywords: list[str]) -> None:
    assert weapon(text)["weapon"]["keywords"] == keywords


def test_ws_is_an_alias_of_bs_and_makes_a_melee_weapon() -> None:
    group = weapon("A=6 WS=3+ S=24 AP=-4 D=10 kw='CLEAVE 4'")
    assert group["weapon"]["skill"] == 3
    assert group["weapon"]["range"] == "melee"


@pytest.mark.parametrize("skill", ["N/A", "n/a", "-", "torrent", "none"])
def test_bs_not_applicable_is_torrent(skill: str) -> None:
    group = weapon(f"A=D6 BS={skill} S=5 AP=-1 D=1")
    assert group["weapon"]["skill"] is None
    assert "TORRENT" in group["weapon"]["keywords"]


def test_torrent_keyword_needs_no_bs() -> None:
    assert weapon("A=D6 S=5 D=1 kw=TORRENT")["weapon"]["skill"] is None


def test_several_weapon_groups_in_order() -> None:
    volley = parse_attacker(
        "A=3 BS=5 S=5 D=1 models=3 name='Big Shoota'; A=12 BS=5 S=14 AP=-3 D=D6+2 range=72"
    ).volley
    assert [g["models"] for g in volley] == [3, 1]
    assert volley[0]["weapon"]["name"] == "Big Shoota"
    assert volley[1]["weapon"]["range"] == 72


def test_spaces_around_equals_and_commas_between_settings() -> None:
    group = weapon("A = 3, BS = 4+, S = 4, AP = 0, D = 1")
    assert group["weapon"]["attacks"] == 3 and group["weapon"]["skill"] == 4


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("3", 3),
        ("d3", "D3"),
        ("D6", "D6"),
        ("2d6", "2D6"),
        ("D6+2", "D6+2"),
        ("3D6+3", "3D6+3"),
        ("1D6", "D6"),
    ],
)
def test_dice(raw: str, expected: int | str) -> None:
    assert parse_dice(raw, "attacker", "A") == expected


@pytest.mark.parametrize(
    ("text", "field", "words"),
    [
        ("A=D7 BS=3 S=4 D=1", "attacker.A", "D7"),
        ("A=-1 BS=3 S=4 D=1", "attacker.A", "at least 1"),
        ("A=0 BS=3 S=4 D=1", "attacker.A", "at least 1"),
        ("A=999D6 BS=3 S=4 D=1", "attacker.A", "more than"),
        ("A=1000000000 BS=3 S=4 D=1", "attacker.A", "more than"),
        ("A=three BS=3 S=4 D=1", "attacker.A", "three"),
        ("A=3 BS=1 S=4 D=1", "attacker.BS", "2+ to 6+"),
        ("A=3 BS=7+ S=4 D=1", "attacker.BS", "2+ to 6+"),
        ("A=3 S=4 D=1", "attacker.BS", "missing"),
        ("BS=3 S=4 D=1", "attacker.A", "missing"),
        ("A=3 BS=3 D=1", "attacker.S", "missing"),
        ("A=3 BS=3 S=4", "attacker.D", "missing"),
        ("A=3 BS=3 S=0 D=1", "attacker.S", "between"),
        ("A=3 BS=3 S=four D=1", "attacker.S", "whole number"),
        ("A=3 BS=3 S=4 AP=2 D=1", "attacker.AP", "negative"),
        ("A=3 BS=3 S=4 AP=x D=1", "attacker.AP", "whole number"),
        ("A=3 BS=3 S=4 D=0", "attacker.D", "at least 1"),
        ("A=3 BS=3 S=4 D=D6+", "attacker.D", "dice"),
        ("A=3 BS=3 S=4 D=1 models=0", "attacker.models", "between"),
        ("A=3 BS=3 S=4 D=1 range=far", "attacker.range", "whole number"),
        ("A=3 A=4 BS=3 S=4 D=1", "attacker.A", "twice"),
        ("A=3 BS=3 S=4 D=1 foo=2", "attacker.foo", "unknown setting"),
        ('A=3 BS=3 S=4 D=1 kw="BLAST', "attacker", "never closed"),
        ("A=3 BS=3 S=4 D=1 kw=<@123>", "attacker.kw", "not a keyword"),
        ("hello world", "attacker", "NAME=VALUE"),
        ("", "attacker", "empty"),
        ("   ", "attacker", "empty"),
        ("A=3 BS=3 S=4 D=1;" * 9, "attacker", "at most"),
    ],
)
def test_bad_attacker_names_the_field(text: str, field: str, words: str) -> None:
    with pytest.raises(UserError) as caught:
        parse_attacker(text)
    assert caught.value.field == field
    assert words.lower() in str(caught.value).lower()


@pytest.mark.parametrize(
    ("text", "field", "words"),
    [
        ("T=0 Sv=3 W=1", "target.T", "between 1"),
        ("T=4 Sv=1+ W=1", "target.Sv", "2+ to 6+"),
        ("T=4 Sv=3 W=0", "target.W", "between 1"),
        ("T=4 Sv=3", "target.W", "missing"),
        ("Sv=3 W=1", "target.T", "missing"),
        ("T=4 W=1", "target.Sv", "missing"),
        ("T=4 Sv=3 W=1 inv=1", "target.inv", "2+ to 6+"),
        ("T=4 Sv=3 W=1 fnp=7", "target.fnp", "2+ to 6+"),
        ("T=4 Sv=3 W=1 models=0", "target.models", "between 1"),
        ("T=4 Sv=3 W=2 wl=2", "target.wounds_lost", "less than"),
        ("T=4 Sv=3 W=2 dr=-1", "target.dr", "between 0"),
        ("T=4 Sv=3 W=1; T=5 Sv=3 W=1", "target", "one profile"),
        ("T=4 Sv=3 W=1 A=3", "target.A", "unknown setting"),
        ("T=four Sv=3 W=1", "target.T", "whole number"),
    ],
)
def test_bad_target_names_the_field(text: str, field: str, words: str) -> None:
    with pytest.raises(UserError) as caught:
        parse_target(text)
    assert caught.value.field == field
    assert words.lower() in str(caught.value).lower()


def test_no_save_is_seven() -> None:
    assert parse_target("T=3 Sv=- W=1").target["save"] == 7


def test_user_text_is_echoed_without_backticks() -> None:
    with pytest.raises(UserError) as caught:
        parse_attacker("A=`@everyone` BS=3 S=4 D=1")
    assert "`@everyone`" not in str(caught.value)


def test_overlong_profile_is_refused_before_parsing() -> None:
    with pytest.raises(UserError, match="longer than"):
        parse_attacker("A=3 " * 400)


PROFILE_ALPHABET = st.sampled_from(
    list("ABDSTWPVabdstwpv0123456789+-=;,\"' _/:")
    + ["BS=", "WS=", "AP=", "kw=", "models=", "D6", "2D6", "N/A", "“", "”", "\n", "\x00", "é"]
)


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=200))
def test_arbitrary_text_raises_only_user_error(text: str) -> None:
    for parse in (parse_attacker, parse_target):
        try:
            parse(text)
        except UserError as error:
            assert str(error)
            assert error.field is not None


@settings(max_examples=400, deadline=None)
@given(st.lists(PROFILE_ALPHABET, max_size=60).map("".join))
def test_profile_like_text_raises_only_user_error(text: str) -> None:
    for parse in (parse_attacker, parse_target):
        try:
            parse(text)
        except UserError as error:
            assert error.field is not None and str(error)


@settings(max_examples=200, deadline=None)
@given(
    attacks=st.sampled_from(["1", "3", "D3", "D6", "2D6", "D6+2", "3D6+3", "10"]),
    skill=st.integers(2, 6),
    strength=st.integers(1, 30),
    ap=st.integers(-6, 0),
    damage=st.sampled_from(["1", "2", "D3", "D6", "D6+2"]),
    models=st.integers(1, 20),
)
def test_valid_profiles_round_trip(
    attacks: str, skill: int, strength: int, ap: int, damage: str, models: int
) -> None:
    group = weapon(f"A={attacks} BS={skill}+ S={strength} AP={ap} D={damage} models={models}")
    w = group["weapon"]
    assert str(w["attacks"]).replace("1D", "D") == attacks.replace("1D", "D")
    assert (w["skill"], w["strength"], w["ap"], str(w["damage"]), group["models"]) == (
        skill,
        strength,
        ap,
        damage,
        models,
    )


def test_unit_keywords_apply_to_the_attacker_not_a_weapon() -> None:
    profile = parse_attacker(
        'A=1 BS=3 S=8 AP=-3 D=2 kw=HAZARDOUS unit_kw="VEHICLE, WALKER"; A=2 BS=3 S=4 D=1'
    )
    assert profile.keywords == ["VEHICLE", "WALKER"]
    assert [g["weapon"]["keywords"] for g in profile.volley] == [["HAZARDOUS"], []]
    trailing = parse_attacker("A=1 BS=3 S=8 D=2; unit_kw=MONSTER")
    assert len(trailing.volley) == 1 and trailing.keywords == ["MONSTER"]
    with pytest.raises(UserError) as caught:
        parse_attacker("unit_kw=VEHICLE")
    assert caught.value.field == "attacker.A"
