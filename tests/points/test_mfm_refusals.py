"""The MFM reader refuses what it does not know, in one line naming the place, and never fails otherwise
(property tests over mutated fixture documents and arbitrary text)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from bot.points import yamlsafe
from bot.points.mfm import MAX_POINTS, PointsDataError, faction_from_doc, parse_faction, parse_meta

FIXTURE = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "mfm"
ORKS = (FIXTURE / "orks.yaml").read_text(encoding="utf-8")


def _doc() -> dict:
    return yaml.safe_load(ORKS)


def test_the_fixture_reads() -> None:
    orks = parse_faction(ORKS, "orks.yaml")
    assert orks.name == "Orks" and orks.version == "1.1" and len(orks.units) == 9
    meta = parse_meta((FIXTURE / "meta.yaml").read_text(encoding="utf-8"))
    assert meta.label == "MFM v1.1, 2026-07-22" and meta.factions == ("leagues-of-votann", "orks")


@given(key=st.text(min_size=1, max_size=20).filter(lambda k: k not in {"name", "pricing", "role", "attachTo",
                                                                     "wargear", "legends", "groupTitle"}),
       unit=st.integers(0, 8))
def test_unknown_unit_keys_are_refused(key: str, unit: int) -> None:
    doc = _doc()
    doc["units"][unit][key] = 1
    with pytest.raises(PointsDataError, match=rf"^orks\.yaml: units\[{unit}\]: unknown key ") as info:
        faction_from_doc(doc, "orks.yaml")
    assert "\n" not in str(info.value)


@given(points=st.one_of(st.integers(max_value=-1), st.integers(min_value=MAX_POINTS + 1)), unit=st.integers(0, 8))
def test_costs_out_of_range_are_refused(points: int, unit: int) -> None:
    doc = _doc()
    doc["units"][unit]["pricing"][0]["costs"][0]["points"] = points
    with pytest.raises(PointsDataError, match=rf"units\[{unit}\]\.pricing\[0\]\.costs\[0\]\.points: .* is outside"):
        faction_from_doc(doc, "orks.yaml")


@given(value=st.one_of(st.text(max_size=12), st.integers(), st.none(), st.lists(st.integers(), max_size=3)))
def test_ranges_are_intervals_or_refused(value: object) -> None:
    doc = _doc()
    doc["units"][0]["pricing"][0]["range"] = value
    try:
        unit = faction_from_doc(doc, "orks.yaml").units[0]
    except PointsDataError as exc:
        assert "pricing[0].range" in str(exc) and "not an interval" in str(exc)
    else:
        tier = unit.tiers[0]
        assert tier.low >= 1 and (tier.high is None or tier.high >= tier.low)


@pytest.mark.parametrize("value", ["[3,", "[3,)]", "[0,)", "[2,1]", "[1,3)", "(1,3]", " [1,)", "[1,1000)"])
def test_malformed_ranges(value: str) -> None:
    doc = _doc()
    doc["units"][0]["pricing"][0]["range"] = value
    with pytest.raises(PointsDataError, match="not an interval"):
        faction_from_doc(doc, "orks.yaml")


@given(text=st.text(max_size=300))
def test_any_text_reads_or_is_refused_in_one_line(text: str) -> None:
    try:
        parse_faction(text, "orks.yaml")
    except PointsDataError as exc:
        assert str(exc).startswith("orks.yaml: ") and "\n" not in str(exc)


@given(cut=st.integers(0, len(ORKS)))
def test_any_cut_of_a_real_file_reads_or_is_refused(cut: int) -> None:
    try:
        parse_faction(ORKS[:cut], "orks.yaml")
    except PointsDataError as exc:
        assert "\n" not in str(exc)


def test_bounds_of_the_loader() -> None:
    with pytest.raises(yamlsafe.YamlRefused, match="10,485,761 characters; the limit is 2,097,152"):
        yamlsafe.load("x" * (10 * 1024 * 1024 + 1))
    with pytest.raises(yamlsafe.YamlRefused, match="more than 100 aliases"):
        yamlsafe.load("a: &a 1\nb: [" + ", ".join(["*a"] * 101) + "]\n")
    assert yamlsafe.load("a: &a [1, 2]\nb: *a\n") == {"a": [1, 2], "b": [1, 2]}  # a few aliases are fine
    with pytest.raises(yamlsafe.YamlRefused, match="nested more than 32 deep"):
        yamlsafe.load("[" * 100_000)
    with pytest.raises(yamlsafe.YamlRefused, match=r"not valid YAML \(line 2\)"):
        yamlsafe.load("a: 1\n b: [\n")


def test_python_tags_are_refused() -> None:
    with pytest.raises(yamlsafe.YamlRefused, match="not valid YAML"):
        yamlsafe.load("!!python/object/apply:os.system ['echo hi']")
