"""Dice parsing, keyword parsing and request validation, including hostile input and property tests."""

from __future__ import annotations

import copy
import json
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import RequestError, dice, limits, prepare, simulate
from engine.profiles import KeywordError, parse_keyword

BASE = {
    "edition": "11e",
    "volley": [{"models": 2, "weapon": {"name": "gun", "range": 24, "attacks": "D6+2", "skill": 3,
                                        "strength": 14, "ap": -3, "damage": "D6+2", "keywords": ["BLAST 2"]}}],
    "target": {"models": 3, "toughness": 5, "save": 4, "invulnerable": 4, "wounds": 4},
}


def req(**changes):
    r = copy.deepcopy(BASE)
    for path, value in changes.items():
        obj = r
        keys = path.split("__")
        for k in keys[:-1]:
            obj = obj[int(k)] if k.isdigit() else obj[k]
        last = keys[-1]
        if value is ...:
            del obj[last]
        else:
            obj[int(last) if last.isdigit() else last] = value
    return r


# ---- dice ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("expr", "lo", "hi", "mean"), [
    (3, 3, 3, 3), ("3", 3, 3, 3), ("D3", 1, 3, 2), ("d6", 1, 6, 3.5), ("2D6", 2, 12, 7), ("D6+2", 3, 8, 5.5),
    ("3D6+3", 6, 21, 13.5), (" 2 d 3 + 1 ", 3, 7, 5)])
def test_dice_distributions(expr, lo, hi, mean):
    p = dice.pmf(expr)
    assert p.sum() == pytest.approx(1.0)
    assert np.flatnonzero(p)[0] == lo and p.size - 1 == hi
    assert float(np.dot(np.arange(p.size), p)) == pytest.approx(mean)


def test_d3_is_a_halved_d6():
    """01.05: "D3: Roll one D6 and halve the result (rounding up)"."""
    assert dice.pmf("D3")[1:] == pytest.approx([1 / 3] * 3)


@pytest.mark.parametrize("bad", ["D7", "999D6", "D", "2D", "-1", "D6-1", "1.5", "", "abc", "D6+D6", "0D6", "D0",
                                 "D6++1", "1e9", "D6+999999", True, None, 2.0, [1], 10**9, -1])
def test_dice_rejects(bad):
    with pytest.raises(dice.DiceError):
        dice.parse(bad)


@given(st.text(max_size=30))
@settings(max_examples=300, deadline=None)
def test_dice_parser_never_crashes(text):
    """Any string either parses to a bounded distribution or raises DiceError - nothing else."""
    try:
        d = dice.parse(text)
    except dice.DiceError as exc:
        assert str(exc)
        return
    p = d.pmf()
    assert p.sum() == pytest.approx(1.0)
    assert d.maximum <= limits.MAX_DICE_PER_EXPRESSION * 6 + limits.MAX_FLAT


@given(st.integers(1, limits.MAX_DICE_PER_EXPRESSION), st.sampled_from([3, 6]), st.integers(0, limits.MAX_FLAT))
@settings(max_examples=100, deadline=None)
def test_dice_round_trip(n, faces, plus):
    d = dice.parse(f"{n}D{faces}+{plus}")
    assert dice.parse(str(d)) == d
    assert d.pmf().sum() == pytest.approx(1.0)
    assert float(np.dot(np.arange(d.maximum + 1), d.pmf())) == pytest.approx(d.mean)


# ---- keywords --------------------------------------------------------------------------------------
@pytest.mark.parametrize(("raw", "name", "value"), [
    ("SUSTAINED HITS 1", "SUSTAINED HITS", "1"), ("Sustained Hits D3", "SUSTAINED HITS", "D3"),
    ("[BLAST 2]", "BLAST", "2"), ("BLAST", "BLAST", None), ("Rapid Fire 2", "RAPID FIRE", "2"),
    ("MELTA 2", "MELTA", "2"), ("CLEAVE 4", "CLEAVE", "4"), ("twin\u2011linked", "TWIN-LINKED", None),
    ("Torrent", "TORRENT", None)])
def test_keyword_parsing(raw, name, value):
    k = parse_keyword(raw)
    assert k.known and k.name == name
    assert (str(k.value) if k.value else None) == value


def test_conditional_and_anti_keywords():
    k = parse_keyword("LETHAL HITS: non-MONSTER/VEHICLE")
    assert k.name == "LETHAL HITS" and k.condition.negated and k.condition.keywords == ("MONSTER", "VEHICLE")
    assert k.applies_to(frozenset({"INFANTRY"})) and not k.applies_to(frozenset({"MONSTER"}))
    a = parse_keyword("ANTI-INFANTRY 4+")
    assert (a.name, a.anti_keyword, a.threshold) == ("ANTI", "INFANTRY", 4)
    s = parse_keyword("SUSTAINED HITS 1: INFANTRY/BEASTS")
    assert s.applies_to(frozenset({"BEASTS"})) and not s.applies_to(frozenset({"VEHICLE"}))


@pytest.mark.parametrize("bad", ["SUSTAINED HITS", "SUSTAINED HITS X", "RAPID FIRE D7", "ANTI-INFANTRY", "ANTI-INFANTRY 7+",
                                 "BLAST D3", "CLEAVE", "MELTA 0", "LETHAL HITS: ", "LETHAL HITS: non-"])
def test_malformed_known_keywords_are_errors(bad):
    with pytest.raises(KeywordError):
        parse_keyword(bad)


def test_unknown_keyword_is_kept():
    k = parse_keyword("PSYCHIC")
    assert not k.known and k.raw == "PSYCHIC"


# ---- requests --------------------------------------------------------------------------------------
HOSTILE = [
    (req(target__toughness=0), "target.toughness"),
    (req(target__save=1), "target.save"),
    (req(volley__0__weapon__attacks=-1), "volley[0].weapon.attacks"),
    (req(volley__0__weapon__attacks="D7"), "volley[0].weapon.attacks"),
    (req(volley__0__weapon__attacks="999D6"), "volley[0].weapon.attacks"),
    (req(volley__0__weapon__attacks=10**9), "volley[0].weapon.attacks"),
    (req(volley__0__weapon__attacks="0"), "volley[0].weapon.attacks"),
    (req(volley__0__weapon__damage="D6-1"), "volley[0].weapon.damage"),
    (req(target__toughness="five"), "target.toughness"),
    (req(target__wounds="4"), "target.wounds"),
    (req(target__wounds=True), "target.wounds"),
    (req(target__wounds=4.0), "target.wounds"),
    (req(volley__0__weapon__strength="strong"), "volley[0].weapon.strength"),
    (req(volley__0__weapon__ap=2), "volley[0].weapon.ap"),
    (req(volley__0__weapon__skill=1), "volley[0].weapon.skill"),
    (req(volley__0__weapon__skill=7), "volley[0].weapon.skill"),
    (req(volley__0__weapon__range="far"), "volley[0].weapon.range"),
    (req(volley__0__weapon__keywords="BLAST"), "volley[0].weapon.keywords"),
    (req(volley__0__weapon__keywords=["SUSTAINED HITS"]), "volley[0].weapon.keywords[0]"),
    (req(volley__0__weapon__keywords=[3]), "volley[0].weapon.keywords[0]"),
    (req(volley__0__models=0), "volley[0].models"),
    (req(volley__0__models=10**9), "volley[0].models"),
    (req(volley=[]), "volley"),
    (req(volley="gun"), "volley"),
    (req(target__models=10**6), "target.models"),
    (req(target__wounds_lost=4), "target.wounds_lost"),
    (req(target__invulnerable=1), "target.invulnerable"),
    (req(target__feel_no_pain=7), "target.feel_no_pain"),
    (req(target__toughnes=4), "target.toughnes"),
    (req(target=...), "target"),
    (req(edition="12e"), "edition"),
    (req(method="guess"), "method"),
    (req(trials=0), "trials"),
    (req(trials=10**12), "trials"),
    (req(seed=-1), "seed"),
    (req(context={"cover": "yes"}), "context.cover"),
    (req(context={"reroll_hits": "all"}), "context.reroll_hits"),
    (req(context={"critical_hit": 1}), "context.critical_hit"),
    (req(context={"hit_modifier": 100}), "context.hit_modifier"),
]


@pytest.mark.parametrize(("bad", "field"), HOSTILE, ids=[f for _, f in HOSTILE])
def test_hostile_requests_name_the_field(bad, field):
    with pytest.raises(RequestError) as info:
        simulate(bad)
    assert info.value.field == field
    assert info.value.message and "Traceback" not in info.value.message


def test_not_an_object():
    for bad in (None, [], "x", 3):
        with pytest.raises(RequestError):
            simulate(bad)


def test_size_limits_suggest_montecarlo():
    big = req(volley__0__models=100, volley__0__weapon__attacks="10D6+100")
    with pytest.raises(RequestError) as info:
        prepare(big)
    assert "montecarlo" in info.value.message
    mortal_fnp = req(target__models=100, target__wounds=10, volley__0__models=20, target__feel_no_pain_mortal=5,
                     volley__0__weapon__keywords=["BLAST 2", "DEVASTATING WOUNDS"])
    with pytest.raises(RequestError) as info:
        prepare(mortal_fnp)
    assert "montecarlo" in info.value.message and info.value.field == "method"
    ten_dev = req(edition="10e", target__models=100, target__wounds=10,
                  volley__0__weapon__keywords=["DEVASTATING WOUNDS"])
    with pytest.raises(RequestError) as info:
        prepare(ten_dev)
    assert "montecarlo" in info.value.message and info.value.field == "target"
    prepare(req(target__models=100, target__wounds=200, volley__0__models=20))  # big but cheap: accepted
    with pytest.raises(RequestError) as info:
        prepare(dict(big, method="montecarlo", trials=limits.MAX_TRIALS))
    assert info.value.field == "trials"


def test_defaults_applied():
    r = simulate({"volley": [{"weapon": {"attacks": 1, "skill": 3, "strength": 4, "damage": 1}}],
                  "target": {"models": 1, "toughness": 4, "save": 3, "wounds": 1}})
    assert r["edition"] == "11e" and r["method"] == "exact"
    assert r["models_killed"]["pmf"][1] == pytest.approx(4 / 6 * 3 / 6 * 2 / 6)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**12, 10**12) | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=12)


@given(json_values)
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_validator_property_random_json(value):
    """Arbitrary JSON is either a valid request or a RequestError - never another exception."""
    try:
        simulate(value)
    except RequestError as exc:
        assert isinstance(exc.field, str) and exc.message


_fields = {
    "target.toughness": st.integers(-5, 30) | st.text(max_size=4) | st.none(),
    "target.save": st.integers(-2, 9) | st.text(max_size=3),
    "target.wounds": st.integers(-2, 300),
    "target.models": st.integers(-2, 120),
    "target.invulnerable": st.none() | st.integers(0, 8),
    "target.damage_reduction": st.integers(-1, 12),
    "target.wounds_lost": st.integers(-1, 6),
    "volley.0.weapon.attacks": st.integers(-3, 300) | st.sampled_from(["D6", "2D6+1", "D7", "11D6", "3D3+2", "x"]),
    "volley.0.weapon.damage": st.integers(-1, 12) | st.sampled_from(["D3", "D6+2", "D2", "d6"]),
    "volley.0.weapon.skill": st.none() | st.integers(0, 8),
    "volley.0.weapon.ap": st.integers(-12, 2),
    "volley.0.weapon.keywords": st.lists(st.sampled_from(
        ["BLAST", "BLAST 2", "SUSTAINED HITS D3", "LETHAL HITS", "DEVASTATING WOUNDS", "ANTI-VEHICLE 2+",
         "RAPID FIRE 1", "MELTA 3", "HAZARDOUS", "TORRENT", "INDIRECT FIRE", "SUSTAINED HITS", "FOO"]), max_size=4),
    "volley.0.models": st.integers(-1, 120),
    "context.critical_hit": st.integers(0, 8),
    "context.reroll_wounds": st.sampled_from([None, "ones", "failed", "non_critical", "bogus"]),
}


@given(st.fixed_dictionaries({}, optional=_fields), st.sampled_from(["10e", "11e"]))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_validator_property_mutated_requests(mutations, edition):
    """Plausible-but-hostile field values: a valid result (probabilities summing to 1) or a RequestError."""
    r = copy.deepcopy(BASE)
    r["edition"] = edition
    r["context"] = {}
    for path, value in mutations.items():
        obj = r
        keys = path.split(".")
        for k in keys[:-1]:
            obj = obj[int(k)] if k.isdigit() else obj[k]
        obj[keys[-1]] = value
    try:
        out = simulate(r)
    except RequestError as exc:
        assert exc.field
        return
    assert math.fsum(out["models_killed"]["pmf"]) == pytest.approx(1.0, abs=1e-9)
    assert math.fsum(out["damage"]["pmf"]) == pytest.approx(1.0, abs=1e-9)
    assert all(p >= 0 for p in out["models_killed"]["pmf"])
    json.dumps(out, allow_nan=False)
