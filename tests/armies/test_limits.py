"""The cost limits of reading a list (bot.armies.limits): each hostile shape of issue 19's audit is refused
with a message naming its limit, and a real 2,000-point list in every format stays well inside each limit."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from xml.etree import ElementTree

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.armies import limits
from bot.armies.decode import decode, decode_listforge
from bot.armies.errors import ListError
from bot.armies.parse import parse_list
from tests.fuzz import hostile_lists

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "armies"
# What each refusal must name: the limit's own words.
NAMES_A_LIMIT = ("limit is", "must be", "not a number a list can hold", "not finite", "more than 12 digits",
                 "from 0 to")


@pytest.mark.parametrize(("name", "data"), hostile_lists.all_shapes(), ids=lambda v: v if isinstance(v, str) else "")
def test_every_hostile_shape_is_refused_naming_its_limit(tmp_path: Path, name: str, data: bytes) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(ListError) as refused:
        parse_list(path.read_bytes(), filename=path.name)
    assert any(words in str(refused.value) for words in NAMES_A_LIMIT), str(refused.value)


def test_the_audits_crashes_are_refusals() -> None:
    """Before: RecursionError in decode_listforge, OverflowError in wh40kdc's group_loadout and at parse.py's
    int(), and 100000000000 models shown by the tracker."""
    with pytest.raises(ListError, match="nests deeper than 64 levels"):
        decode_listforge(hostile_lists.listforge_deep()[1].decode())
    with pytest.raises(ListError, match='number="inf"'):
        parse_list(hostile_lists.battlescribe_number("inf")[1], filename="list.ros")
    with pytest.raises(ListError, match="1e999, which is not finite"):
        parse_list(hostile_lists.newrecruit_number("1e999")[1], filename="list.json")
    with pytest.raises(ListError, match="from 0 to 1,000"):
        parse_list(hostile_lists.battlescribe_number("100000000000")[1], filename="list.ros")
    with pytest.raises(ListError, match="100,000,000,001 models; a unit has a whole number of models from 0 to 100"):
        parse_list(hostile_lists.gw_count("100000000000")[1])


def test_the_boyz_flood_is_refused_by_its_line_count() -> None:
    name, data = hostile_lists.boyz_flood()
    assert 4.5 * 2**20 < len(data) < 5 * 2**20  # under the byte cap: bytes alone let it through
    with pytest.raises(ListError, match="more than 3,000 lines; the limit is 3,000"):
        parse_list(data, filename=name)


def test_every_number_of_the_adapters_output_is_checked() -> None:
    for value in (float("inf"), float("nan"), 10**11, -1, 2.5):
        with pytest.raises(ListError):
            limits.check_parsed({"units": [{"raw_name": "Boyz", "model_count": value}]})
    with pytest.raises(ListError, match="the limit is 100,000"):
        limits.check_parsed({"units": [{"raw_name": "Boyz", "points": 10**9}]})
    with pytest.raises(ListError, match="count = inf: every number in a list must be finite"):
        limits.check_parsed({"units": [{"raw_name": "Boyz", "loadout_groups": [{"count": 1, "wargear": [
            {"count": float("inf")}]}]}]})
    limits.check_parsed({"units": [{"raw_name": "Boyz", "model_count": 20, "points": 170, "is_warlord": True,
                                    "wargear": [{"count": 19}]}], "declared_limit": 2000})


# ---- a real 2,000-point list is far inside every limit ------------------------------------------------------

def _cost(name: str) -> dict[str, int]:
    """What a fixture list costs against each limit, scaled to 2,000 points of units (costs grow linearly with
    the units repeated; depth does not)."""
    raw = (FIXTURES / name).read_bytes()
    army = parse_list(raw, filename=name)
    scale = 2000 / max(1, sum(u.points or 0 for u in army.units))
    payload = decode(raw, name)
    cost = {"units": len(army.units) * scale, "models": max(u.models for u in army.units)}
    if isinstance(payload.value, str):
        cost["lines"] = (payload.value.count("\n") + 1) * scale
    elif name.endswith((".ros", ".rosz")):
        xml = raw if name.endswith(".ros") else zipfile.ZipFile(FIXTURES / name).read(
            zipfile.ZipFile(FIXTURES / name).namelist()[0])
        root = ElementTree.fromstring(xml)
        cost["nodes"] = sum(1 for _ in root.iter()) * scale
        cost["depth"] = _depth(root)
    else:
        text = json.dumps(payload.value)
        cost["nodes"] = sum(1 for _ in limits._JSON_TOKEN.finditer(text)) * scale
        cost["depth"] = max(_json_depth(payload.value), 1)
    return {key: int(value) for key, value in cost.items()}


def _depth(node: ElementTree.Element) -> int:
    return 1 + max((_depth(child) for child in node), default=0)


def _json_depth(value: object) -> int:
    if isinstance(value, dict):
        return 1 + max((_json_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_json_depth(v) for v in value), default=0)
    return 0


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.iterdir()
                                        if not p.name.startswith(("broken", "votann_typos"))))
def test_a_real_2000_point_list_uses_a_fraction_of_each_limit(name: str) -> None:
    cost = _cost(name)
    ceiling = {"units": limits.MAX_UNITS, "models": limits.MAX_MODELS, "lines": limits.MAX_LINES,
               "nodes": limits.MAX_NODES, "depth": limits.MAX_DEPTH}
    for key, used in cost.items():
        assert used <= ceiling[key] / 3, f"{name}: {key} {used} of {ceiling[key]}"


# ---- fuzz: list shapes at random sizes ---------------------------------------------------------------------

_SHAPES = st.one_of(
    st.integers(limits.MAX_LINES, 200_000).map(lambda n: hostile_lists.boyz_flood(n)),
    st.integers(65, 50_000).map(lambda n: hostile_lists.listforge_deep(n)),
    st.integers(65, 20_000).map(lambda n: hostile_lists.xml_deep(n)),
    st.integers(65, 20_000).map(lambda n: hostile_lists.json_deep(n)),
    st.sampled_from(["inf", "-inf", "nan", "NaN", "1e999", "100000000000", "1001", "-1", "1.5", "", "1 000"]).map(
        hostile_lists.battlescribe_number),
    st.one_of(st.sampled_from(["1e999", "-1e999", "NaN", "Infinity", "-Infinity", "1e308", "100000000000", "-1",
                               "1001", "0.5"]),
              st.integers(13, 6000).map(lambda n: "9" * n)).map(hostile_lists.newrecruit_number),
    st.one_of(st.sampled_from(["101", "100000000000", "999999999999"]),
              st.integers(13, 6000).map(lambda n: "7" * n)).map(hostile_lists.gw_count),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(_SHAPES)
def test_hostile_list_shapes_are_refused_clearly(shape: tuple[str, bytes]) -> None:
    name, data = shape
    with pytest.raises(ListError) as refused:
        parse_list(data, filename=name)
    assert str(refused.value)


def test_a_roster_is_counted_before_wh40kdcs_adapter_walks_it() -> None:
    """decode() alone (no adapter) refuses a NewRecruit roster of 28,000 unit selections (one MB of JSON)."""
    tree = json.loads((FIXTURES / "orks_newrecruit.json").read_text())
    force = tree["roster"]["forces"][0]
    force["selections"] += [{"name": "Boyz", "type": "unit", "number": 1}] * 28_000
    with pytest.raises(ListError, match="The list has 28,0"):
        decode(json.dumps(tree).encode(), "list.json")
