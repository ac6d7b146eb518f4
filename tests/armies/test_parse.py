"""Army lists in every export format we read, written by us in tests/fixtures/armies, and broken ones."""

from __future__ import annotations

import base64
import gzip
import io
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.armies.decode import MAX_BYTES, ListError, decode, normalise_text
from bot.armies.parse import MAX_UNITS, parse_list, split_detachments

FIXTURES = Path(__file__).parent.parent / "fixtures" / "armies"
ROOT = Path(__file__).parent.parent.parent

# file, format label, faction, number of units, detachments
LISTS = [
    ("votann_gw_app.txt", "GW app", "Leagues of Votann", 9, ["Needgaârd Oathband"]),
    ("orks_gw_wtc.txt", "GW app (+++ header)", "Orks", 7, ["Da Big Hunt", "Taktikal Brigade"]),
    ("orks_newrecruit.json", "NewRecruit JSON", "Orks", 6, ["Taktikal Brigade"]),
    ("votann_newrecruit_wtc.txt", "NewRecruit WTC", "Leagues of Votann", 5, ["Needgaârd Oathband"]),
    ("orks_newrecruit_simple.txt", "NewRecruit text", "Orks", 7, ["Green Tide"]),
    ("orks_listforge.txt", "ListForge text", "Orks", 6, ["Da Big Hunt", "Taktikal Brigade"]),
    ("orks_listforge.json", "ListForge JSON", "Orks", 4, ["Da Big Hunt"]),
    ("orks_listforge_url.txt", "ListForge URL", "Orks", 4, ["Da Big Hunt"]),
    ("votann_battlescribe.ros", "BattleScribe .ros", "Leagues of Votann", 7, ["Hearthband"]),
    ("votann_battlescribe.rosz", "BattleScribe .rosz", "Leagues of Votann", 7, ["Hearthband"]),
]


def _parse(name: str, **kwargs):
    path = FIXTURES / name
    return parse_list(path.read_bytes(), filename=path.name, **kwargs)


@pytest.mark.parametrize(("name", "fmt", "faction", "units", "detachments"), LISTS)
def test_every_format_reads_into_catalog_datasheets(name, fmt, faction, units, detachments) -> None:
    army = _parse(name)
    assert (army.format, army.faction, len(army.units), army.detachments) == (fmt, faction, units, detachments)
    assert army.resolved == units  # our own lists resolve completely
    for unit in army.units:
        assert unit.datasheet_id.startswith("11e:datasheet:wh40kdc.")
        assert unit.models == sum(g.count for g in unit.composition)
    assert sum(u.warlord for u in army.units) <= 1


def test_resolution_rate_over_our_lists_is_at_least_98_percent() -> None:
    total = resolved = 0
    for name, *_ in LISTS:
        army = _parse(name)
        total += len(army.units)
        resolved += army.resolved
    assert resolved / total >= 0.98


def test_model_types_carry_their_weapons_with_counts() -> None:
    army = _parse("votann_newrecruit_wtc.txt")
    warriors = next(u for u in army.units if u.name == "Hearthkyn Warriors")
    groups = {g.name: g for g in warriors.composition}
    assert groups["Theyn"].count == 1 and groups["Hearthkyn Warrior"].count == 9
    assert {w.name: w.count for w in groups["Hearthkyn Warrior"].weapons}["Ion blaster"] == 9
    stompa = next(u for u in _parse("orks_gw_wtc.txt").units if u.name == "Stompa")
    assert {w.name: w.count for w in stompa.composition[0].weapons}["Big shoota"] == 3  # contract 6's example
    boyz = next(u for u in _parse("orks_newrecruit_simple.txt").units if u.name == "Boyz")
    assert [(g.name, g.count, {w.name: w.count for w in g.weapons}) for g in boyz.composition] == [
        ("Boss Nob", 1, {"Power klaw": 1, "Slugga": 1}), ("Boy", 9, {"Choppa": 9, "Slugga": 9})]


def test_warlord_enhancements_and_leaders() -> None:
    army = _parse("votann_newrecruit_wtc.txt")
    kahl = army.units[0]
    assert kahl.name == "Kâhl" and kahl.warlord  # named only in the "+ WARLORD: Char1: Kâhl" header
    assert kahl.enhancements == ["A Long List"]
    assert army.units[kahl.leading].name == "Hearthkyn Warriors"
    assert any("Assumed Kâhl leads Hearthkyn Warriors" in d.message for d in army.diagnostics)
    # ListForge's "Attached Units:" section says it outright: no assumption.
    lf = _parse("orks_listforge.txt")
    warboss = next(u for u in lf.units if u.name == "Warboss")
    assert lf.units[warboss.leading].name == "Boyz"
    assert not any("Warboss" in d.message for d in lf.diagnostics)
    # A unit is led by one leader at most; characters never lead characters.
    leading = [u.leading for u in _parse("votann_gw_app.txt").units if u.leading is not None]
    assert len(leading) == len(set(leading))


def test_quirks_nbsp_curly_apostrophes_comma_thousands_and_sub_bullets() -> None:
    army = _parse("votann_gw_app.txt")  # NBSP in "2,000 Points" and "Autoch pattern", "◦" sub-bullets
    assert army.points == 1995
    assert normalise_text("Strike Force (2,000\u00a0Points)") == "Strike Force (2000 Points)"
    assert normalise_text("Headwoppa\u2019s Killchoppa") == "Headwoppa's Killchoppa"
    assert normalise_text("  ◦ 9x Choppa") == "  • 9x Choppa"
    warboss = _parse("orks_gw_wtc.txt").units[0]
    assert warboss.enhancements == ["Headwoppa's Killchoppa"]


def test_multi_detachment_lines_match_known_names_longest_first() -> None:
    known = ["Legends of Saga and Song", "Saga", "Da Big Hunt", "Taktikal Brigade", "Green Tide"]
    assert split_detachments("Da Big Hunt + Taktikal Brigade", known) == (["Da Big Hunt", "Taktikal Brigade"], "")
    assert split_detachments("Legends of Saga and Song", known) == (["Legends of Saga and Song"], "")
    assert split_detachments("Green Tide and Mystery Horde", known) == (["Green Tide"], "Mystery Horde")
    text = (FIXTURES / "orks_gw_wtc.txt").read_text().replace("Da Big Hunt and Taktikal Brigade",
                                                              "Taktikal Brigade + Da Big Hunt")
    assert parse_list(text).detachments == ["Taktikal Brigade", "Da Big Hunt"]


def test_unresolved_names_become_diagnostics_with_suggestions_and_the_list_stays_usable() -> None:
    army = _parse("votann_typos.txt")
    assert [u.datasheet_id is not None for u in army.units] == [True, False, False]
    messages = " ".join(d.message for d in army.diagnostics if d.level == "error")
    assert "Unknown unit 'Hearthkin Warriors'" in messages and "Hearthkyn Warriors" in messages
    assert "Did you mean: Sagitaur?" in messages
    assert all(d.line for d in army.diagnostics if d.level == "error")


def test_ten_e_game_maps_onto_ten_e_datasheets_when_the_catalog_has_them() -> None:
    class Catalog:
        def resolve(self, name, *, kind, edition):
            from bot.catalog.model import Entry, Resolution
            entry = Entry("10e:datasheet:seed.votann:grimnyr", "datasheet", "Grimnyr", "10e", None, "seed", "")
            return Resolution(entry if name == "Grimnyr" else None, name == "Grimnyr", [])

    army = _parse("votann_gw_app.txt", edition="10e", catalog=Catalog())
    ids = {u.name: u.datasheet_id for u in army.units}
    assert ids["Grimnyr"] == "10e:datasheet:seed.votann:grimnyr"
    assert ids["Kâhl"].startswith("11e:")
    assert any("Kâhl: the catalog has no 10e datasheet" in d.message for d in army.diagnostics)


# ---- bad input: a clear refusal ----------------------------------------------------------------------

def test_not_a_list() -> None:
    with pytest.raises(ListError, match="does not look like an army list"):
        parse_list("Dear diary, today I painted three Boyz.\nThey look great.")
    with pytest.raises(ListError, match="not an army list export"):
        parse_list('{"hello": "world"}')
    with pytest.raises(ListError, match="empty"):
        parse_list("   \n")


def test_unknown_faction() -> None:
    with pytest.raises(ListError, match="Unknown faction 'Squats of Zarkon'"):
        _parse("broken_unknown_faction.txt")


def test_over_five_megabytes() -> None:
    big = (FIXTURES / "orks_gw_wtc.txt").read_bytes() + b"\n" * (MAX_BYTES + 1)
    with pytest.raises(ListError, match="limit is 5 MB"):
        parse_list(big)


def test_zip_bomb_posing_as_rosz_stops_at_the_limit() -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("army.ros", b"<roster>" + b" " * (50 * 1024 * 1024) + b"</roster>")
    assert len(buf.getvalue()) < 200_000
    with pytest.raises(ListError, match="zip bomb"):
        parse_list(buf.getvalue(), filename="army.rosz")


def test_broken_containers() -> None:
    with pytest.raises(ListError, match="not a valid zip"):
        parse_list(b"PK\x03\x04garbage", filename="army.rosz")
    with pytest.raises(ListError, match="DOCTYPE"):
        parse_list(b'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaa">]><roster>&a;</roster>', filename="x.ros")
    with pytest.raises(ListError, match="not a BattleScribe roster"):
        parse_list(b"<html><body>hi</body></html>")
    with pytest.raises(ListError, match="not valid JSON") as error:
        parse_list('{"roster": {\n  "forces": [}\n}')
    assert error.value.line == 2
    with pytest.raises(ListError, match="ListForge"):
        parse_list("https://listforge.club/#/listforge/H4sIAnotbase64!!")
    bomb = base64.b64encode(gzip.compress(b"{" + b" " * (20 * 1024 * 1024) + b"}")).decode()
    with pytest.raises(ListError, match="more than 5 MB"):
        parse_list(f"https://listforge.club/#/listforge/{bomb}")


def test_five_hundred_units_are_refused() -> None:
    head = "Horde (9999 Points)\n\nOrks\nGreen Tide\nOnslaught (3,000 Points)\n\nBATTLELINE\n\n"
    body = "".join("Gretchin (40 Points)\n  • 10x Gretchin\n     ◦ 10x Grot blasta\n\n" for _ in range(500))
    with pytest.raises(ListError, match=f"500 units; the limit is {MAX_UNITS}"):
        parse_list(head + body)


# ---- the parsers' limits, explored --------------------------------------------------------------------

@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=2048))
def test_any_bytes_either_parse_or_are_refused_clearly(data: bytes) -> None:
    try:
        parse_list(data)
    except ListError as error:
        assert str(error)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=st.sampled_from(list("+•◦-: ()0123456789xXabcAB\n\u00a0’,")), max_size=400))
def test_list_shaped_text_either_parses_or_is_refused_clearly(text: str) -> None:
    try:
        army = parse_list("Boyz (85 Points)\n" + text)
    except ListError as error:
        assert str(error)
    else:
        assert len(army.units) <= MAX_UNITS


@given(st.lists(st.sampled_from(["Da Big Hunt", "Taktikal Brigade", "Green Tide", "Legends of Saga and Song"]),
                min_size=1, max_size=3, unique=True), st.sampled_from([" and ", " + ", ", "]))
def test_joined_detachment_names_split_back(names: list[str], joiner: str) -> None:
    known = ["Da Big Hunt", "Taktikal Brigade", "Green Tide", "Legends of Saga and Song", "Saga"]
    found, rest = split_detachments(joiner.join(names), known)
    assert found == names and rest == ""


def test_decode_recognises_containers() -> None:
    assert decode((FIXTURES / "votann_battlescribe.rosz").read_bytes(), "x.rosz").source == "battlescribe-rosz"
    assert decode((FIXTURES / "orks_listforge_url.txt").read_text()).source == "listforge-url"
    assert decode(json.dumps({"a": 1})).source == "json"


# ---- contract 6 ------------------------------------------------------------------------------------

def _cli(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bot", "army", "parse", *args], input=stdin, capture_output=True,
                          cwd=ROOT, timeout=120)


def test_cli_prints_contract_6() -> None:
    done = _cli(str(FIXTURES / "orks_listforge.txt"), "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert {"format", "edition", "faction", "detachments", "points", "units", "diagnostics"} <= set(data)
    unit = data["units"][1]
    assert {"name", "datasheet_id", "models", "points", "composition", "leading", "enhancements", "warlord"} <= set(unit)
    assert unit["leading"] == 2 and data["units"][2]["name"] == "Boyz"
    assert {"name", "count", "weapons"} <= set(unit["composition"][0])


def test_cli_refuses_with_exit_2_and_one_json_line() -> None:
    done = _cli("-", "--json", stdin=b"not a list at all")
    assert done.returncode == 2
    assert set(json.loads(done.stdout)) == {"error", "line"}
    assert not done.stderr.strip()
