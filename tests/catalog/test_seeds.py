"""The seed page parser on the two real pages, plus malformed and hostile pages."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.catalog.importers.seeds import load_seed_dir, parse_seed_page
from bot.catalog.model import CatalogImportError

from .conftest import SEEDS, SHARED

GRIMNYR = next(p for p in SEEDS.glob("*.txt") if p.read_text(encoding="utf-8").startswith("Leagues of Votann"))
STOMPA = next(p for p in SEEDS.glob("*.txt") if p.read_text(encoding="utf-8").startswith("Orks"))


@pytest.fixture(scope="module")
def entries() -> dict:
    found, _aliases, _paths = load_seed_dir(SEEDS)
    return {e.id: e for e in found}


def by_name(entries: dict, kind: str, name: str, edition: str | None = None) -> list:
    return [e for e in entries.values() if e.kind == kind and e.name.lower() == name.lower()
            and (edition is None or e.edition == edition)]


@pytest.mark.shared_data
def test_pages_are_copied_verbatim_from_the_shared_seeds() -> None:
    shared = SHARED / "seeds"
    if not shared.exists():
        pytest.skip(f"shared seeds not found at {shared} (a fresh clone has none; set COGITATOR_SHARED)")
    for page in shared.glob("*.txt"):
        assert (SEEDS / page.name).read_bytes() == page.read_bytes()


def test_editions_are_detected_from_the_page() -> None:
    assert parse_seed_page(GRIMNYR).edition == "10e"
    assert parse_seed_page(STOMPA).edition == "11e"


def test_grimnyr_datasheet(entries: dict) -> None:
    (sheet,) = by_name(entries, "datasheet", "Grimnyr")
    data = sheet.data
    assert sheet.edition == "10e" and sheet.faction == "Leagues of Votann"
    assert data["profiles"] == [
        {"name": "Grimnyr", "M": '5"', "T": 5, "Sv": 4, "InSv": 4, "W": 4, "Ld": 6, "OC": 1},
        {"name": "Corv", "M": '5"', "T": 5, "Sv": 4, "InSv": 4, "W": 1, "Ld": 6, "OC": 1},
    ]
    weapons = {w["name"]: w for w in data["weapons"]}
    focused = weapons["Ancestral Wrath – focused witchfire"]
    assert focused == {"name": "Ancestral Wrath – focused witchfire", "type": "ranged", "range": 24, "A": "6",
                       "skill": 2, "S": 6, "AP": -2, "D": "D3", "keywords": ["HAZARDOUS", "PSYCHIC"],
                       "weapon": "Ancestral Wrath", "profile": "focused witchfire"}
    assert weapons["Ancestral ward stave"]["range"] == "melee" and weapons["Ancestral ward stave"]["skill"] == 3
    assert data["points"] == [{"models": 3, "points": 65}]
    assert data["models_min"] == data["models_max"] == 3
    assert data["composition"][:2] == ["1 Grimnyr", "2 CORVs*"]
    assert data["keywords"] == ["INFANTRY", "GRIMNYR", "CHARACTER", "PSYKER"]
    assert data["faction_keywords"] == ["LEAGUES OF VOTANN"]
    abilities = {a["name"]: a for a in data["abilities"]}
    assert abilities["Leader"]["type"] == "core" and abilities["Eye of the Ancestors"]["type"] == "faction"
    # two abilities glued on one line in the page are split
    assert abilities["Fortify (Psychic)"]["text"].endswith("by 1.")
    assert abilities["Grimnyr’s Regard"]["text"].startswith("Once per battle")


def test_stompa_weapons_keep_every_printed_keyword(entries: dict) -> None:
    (sheet,) = by_name(entries, "datasheet", "Stompa")
    assert sheet.edition == "11e"
    weapons = {w["name"]: w for w in sheet.data["weapons"]}
    assert weapons["Big Shoota"]["keywords"] == ["LETHAL HITS: non-MONSTER/VEHICLE", "RAPID FIRE 2"]
    assert weapons["Deffkannon and Supa-rokkits"]["keywords"] == ["BLAST 2"]
    assert weapons["Deffkannon and Supa-rokkits"]["D"] == "D6+2"
    assert weapons["Skorcha"]["keywords"] == ["BLAST 2", "TORRENT"] and weapons["Skorcha"]["skill"] is None
    assert weapons["Mega-choppa"]["keywords"] == ["CLEAVE 4"] and weapons["Mega-choppa"]["S"] == 24
    aimed = weapons["Supa-gatler - Aimed"]
    assert aimed["keywords"] == ["LETHAL HITS: non-MONSTER/VEHICLE", "SUSTAINED HITS 1"]
    assert (aimed["weapon"], aimed["profile"], aimed["A"]) == ("Supa-gatler", "Aimed", "30")
    blank = weapons["Supa-gatler - Point Blank"]
    assert (blank["A"], blank["skill"], blank["keywords"]) == ("3D6+3", None, ["TORRENT"])
    assert sheet.data["points"] == [{"models": 1, "points": 700, "label": "Your 1st unit costs"},
                                    {"models": 1, "points": 800, "label": "Your 2nd + unit costs"}]
    assert sheet.data["keywords"] == ["VEHICLE", "FRAME", "TITANIC", "TOWERING", "TRANSPORT", "WALKER"]
    # the page prints no M/T/Sv table for the Stompa: nothing is invented
    assert sheet.data["profiles"] == []
    (supa,) = by_name(entries, "weapon", "Supa-gatler")
    assert [p["profile"] for p in supa.data["profiles"]] == ["Aimed", "Point Blank"]


def test_same_named_stratagems_stay_distinct(entries: dict) -> None:
    crr = by_name(entries, "stratagem", "Command Re-roll")
    assert sorted((e.edition, e.data["category"]) for e in crr) == [
        ("10e", "Boarding Actions"), ("10e", "Core"), ("11e", "Core")]
    assert len({e.text for e in crr}) == 3
    core11 = next(e for e in crr if e.edition == "11e")
    assert core11.data["number"] == "15.02" and core11.data["cp"] == 1
    # the roll list belongs to WHEN ("one of the following rolls:"), not to EFFECT
    assert "- Hazard roll" in core11.data["when"] and "Hazard roll" not in core11.data["effect"]
    # Boarding Actions stratagems appear on both pages: one entry, both pages named as its source
    ba = next(e for e in crr if e.data["category"] == "Boarding Actions")
    assert "Grimnyr" in ba.source and "Stompa" in ba.source


def test_repeated_lines_and_blocks_are_deduplicated(entries: dict) -> None:
    ids = [e.id for e in entries.values()]
    assert len(ids) == len(set(ids))
    for e in entries.values():
        if e.kind == "stratagem" and e.data.get("target"):
            assert e.text.count("**TARGET:**") == 1, e.name
            assert e.text.count(e.data["target"].split("\n")[0]) == 1, e.name
    (hazardous,) = by_name(entries, "rule", "Hazardous", "11e")
    assert hazardous.data["number"] == "24.15"
    assert hazardous.text.count("Weapons powered by unstable") == 1
    (escape,) = by_name(entries, "rule", "Desperate Escape Tests", "10e")
    assert escape.text.count("Unlike when making other types of move") == 1


def test_rule_numbers_titles_summary_and_faq(entries: dict) -> None:
    (lethal,) = by_name(entries, "rule", "Lethal Hits", "11e")
    assert lethal.data["number"] == "24.23" and "automatically wound the target" in lethal.text
    (destroyed,) = by_name(entries, "rule", "Destroyed", "11e")
    assert destroyed.data["number"] == "05.04.04"
    (saves,) = by_name(entries, "rule", "Save Rolls", "11e")
    assert [f["a"] for f in saves.data["faq"]][-1] == "No."
    (hit10,) = by_name(entries, "rule", "Hit Roll", "10e")
    assert "Critical Hit: Unmodified Hit roll of 6. Always successful." in hit10.data["summary"]
    (normal_damage,) = by_name(entries, "rule", "Normal Damage", "11e")
    assert normal_damage.data["number"] == "06.02.01"  # was glued after "...Select Weapons step."


def test_empty_tables_are_flagged_not_invented(entries: dict) -> None:
    for edition in ("10e", "11e"):
        (wound,) = by_name(entries, "rule", "Wound Roll", edition)
        assert wound.data["incomplete"] == "table"
        assert "2+" not in wound.text and "TWICE" not in wound.text.upper()
    (eye,) = by_name(entries, "rule", "Eye of the Ancestors", "10e")
    assert eye.faction == "Leagues of Votann" and eye.data["incomplete"] == "table"


def test_detachments_enhancements_keywords_and_errata(entries: dict) -> None:
    (ruthless,) = by_name(entries, "detachment", "Ruthless Efficiency")
    assert ruthless.data["detachment"] == "Oathband" and "Strike Force: 4 units" in ruthless.text
    enh = {e.name: e for e in entries.values() if e.kind == "enhancement"}
    assert {n: e.data["cost"] for n, e in enh.items()} == {
        "A Long List": 15, "Appraising Glare": 20, "Grim Demeanour": 20, "Wayfarer’s Grace": 25,
        "Masterful Construction": None, "Obsessive Drive": None}
    assert "life-support system" in enh["Wayfarer’s Grace"].text
    assert enh["Masterful Construction"].data["detachment"] == "Void Salvagers"
    assert "[SUSTAINED HITS 1]" in enh["Masterful Construction"].text
    frame = by_name(entries, "keyword", "FRAME")
    assert frame and "Titanic" in frame[0].data["categories"]
    assert not [e for e in entries.values() if e.kind == "keyword" and " and " in f" {e.name} ".lower()]
    page = parse_seed_page(STOMPA)
    assert page.aliases == {"tank shock": "Crushing Impact"}


def test_counts_are_stable(entries: dict) -> None:
    counts = Counter((e.edition, e.kind) for e in entries.values())
    assert counts[("10e", "stratagem")] == 22
    assert counts[("11e", "stratagem")] == 12
    assert counts[("10e", "datasheet")] == counts[("11e", "datasheet")] == 1


def test_crlf_and_bom_pages_parse_the_same() -> None:
    text = STOMPA.read_text(encoding="utf-8")
    plain = parse_seed_page(STOMPA, text)
    crlf = parse_seed_page(STOMPA, "\ufeff" + text.replace("\n", "\r\n"))
    assert [e.id for e in plain.entries] == [e.id for e in crlf.entries]
    assert [e.text for e in plain.entries] == [e.text for e in crlf.entries]


@pytest.mark.parametrize("text, reason", [
    ("", "empty"),
    ("\n\n  \n", "empty"),
    ("no dash in the title\nSTRATAGEMS\n", "Faction – Unit"),
    ("Orks – Stompa\nM\n5\"\n", "STRATAGEMS"),
])
def test_malformed_pages_are_refused_with_a_reason(tmp_path: Path, text: str, reason: str) -> None:
    with pytest.raises(CatalogImportError) as info:
        parse_seed_page(tmp_path / "bad.txt", text)
    assert reason in info.value.reason and "bad.txt" in str(info.value)


def test_non_utf8_page_reports_the_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"Orks - Stompa\nSTRATAGEMS\n\xff\xfe broken\n")
    with pytest.raises(CatalogImportError) as info:
        parse_seed_page(bad)
    assert info.value.line == 3


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(
    st.sampled_from(["STRATAGEMS", "1CP", "Core – Battle Tactic Stratagem", "WHEN: x", "TARGET: y", "EFFECT: z",
                     "| a | b |", "| ||||", "FAQ", "| Q: | q |", "| A: | a |", "RANGED WEAPONS | RANGE | A | BS | S | AP | D | |",
                     "| Gun BLAST 2 | 12\" | 3 | 4+ | 5 | -1 | 1 | |", "Oathband Detachment", "24.23 Title",
                     "[LETHAL HITS]24.23", "The FRAME keyword is used in the following Orks datasheets:", "- bullet"]),
    st.text(max_size=80)), max_size=40))
def test_random_pages_never_crash(lines: list[str]) -> None:
    text = "Orks – Fuzz\n" + "\n".join(lines)
    try:
        page = parse_seed_page(Path("fuzz.txt"), text)
    except CatalogImportError:
        return
    assert len({e.id for e in page.entries}) == len(page.entries)


def test_paragraphs_glued_by_the_scrape_are_split(entries: dict) -> None:
    import re

    for e in entries.values():
        assert not re.search(r"[a-z]\.[A-Z][a-z ]", e.text), (e.name, e.text)
    (dev,) = by_name(entries, "rule", "Devastating Wounds", "11e")
    assert "by those attacks.\n\nMortal wounds inflicted" in dev.text


# ---------------------------------------------------------------------------------------------
# Issue 10 item 7: what the pages print, parsed; rendering defects fixed


def test_11e_detachment_stratagems_carry_the_phase_and_turn_the_page_prints(entries: dict) -> None:
    expected = {"Dread Power": ("movement", "your"), "Stomping Juggernaut": ("movement/charge", "your"),
                "Fungus-fuel Injection": ("movement", "your"), "Close-range Dakka": ("shooting", "your"),
                "Hit 'em Harder": ("fight", "either"), "Drive-by Bustin'": ("shooting", "your")}
    for name, (phase, turn) in expected.items():
        (strat,) = by_name(entries, "stratagem", name, "11e")
        assert (strat.data["phase"], strat.data["turn"]) == (phase, turn), name
        assert strat.data["when"] and not strat.data.get("incomplete"), name
    (bravery,) = [e for e in by_name(entries, "stratagem", "Insane Bravery", "11e") if e.data["category"] == "Core"]
    assert bravery.data["turn"] == "your"  # "Battle-shock step of your Command phase"


def test_dread_power_starts_with_its_text_not_blank_lines(entries: dict) -> None:
    (dread,) = by_name(entries, "stratagem", "Dread Power", "11e")
    assert dread.text.startswith("*Fuelled by the pilot’s obsession")
    assert "\n\n\n" not in dread.text


def test_get_stuck_in_is_the_war_horde_detachment_rule_not_stratagem_text(entries: dict) -> None:
    (rule,) = by_name(entries, "detachment", "Get Stuck In", "11e")
    assert rule.data["detachment"] == "War Horde"
    assert rule.data["rule"] == "Friendly ORKS units’ melee attacks have [Sustained Hits 1]."
    for strat in entries.values():
        if strat.kind == "stratagem":
            assert "Get Stuck In" not in strat.text, strat.id


def test_into_the_fray_keeps_its_sub_bullets_under_it(entries: dict) -> None:
    (heroic,) = by_name(entries, "stratagem", "Heroic Intervention", "11e")
    effect = heroic.data["effect"].split("\n")
    at = effect.index("- Into the Fray (+1CP):")
    assert effect[at + 1].startswith("  - When making the charge roll")
    assert effect[at + 2].startswith("  - When selecting charge targets, you can select any enemy units")
    assert effect[at - 1].startswith("- Leap to Defend:")
    assert heroic.data["cp_extra"] == ["Into the Fray: +1CP"]
