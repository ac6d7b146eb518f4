"""Hostile catalog input: undecodable queries, deep or huge JSON, giant CSV fields, BOM offsets, absurd costs
and imported text that tries to mention, ping or break out of its formatting. Each refused clearly and cheaply,
or shown harmlessly; the limits themselves are checked with property tests at small (patched) sizes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.catalog.importers import common, gdc_json, wahapedia_csv
from bot.catalog.model import CatalogImportError, Entry
from bot.catalog.service import Catalog, open_catalog
from bot.config import Settings
from bot.console.session import ConsoleSession
from bot.render.common import safe_markdown
from bot.render.rules import datasheet_embed, entry_embed

from .conftest import FIX_GDC, FIX_WAHAPEDIA, REPO, copy_catalog, copy_fixture, settings_for

SURROGATES = ["\udbff", "lethal\udbffhits", "\ud800\udc00", "x\udcffy" * 50, "\udbff" * 500]
PATCH = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

# ---------------------------------------------------------------------------------------------
# Lone surrogates and undecodable bytes in lookups


@pytest.mark.parametrize("query", SURROGATES)
def test_lone_surrogates_are_normalised(small_catalog: Catalog, query: str) -> None:
    assert isinstance(small_catalog.search(query), list)
    assert isinstance(small_catalog.autocomplete(query, kind="datasheet", faction=query), list)
    assert small_catalog.resolve(query).candidates is not None
    assert small_catalog.get(query) is None


def test_a_surrogate_between_words_reads_as_a_space(small_catalog: Catalog) -> None:
    assert small_catalog.resolve("lethal\udbffhits").best.name == "Lethal Hits"


async def test_surrogates_through_the_commands(small_dir: Path, tmp_path: Path) -> None:
    settings = Settings(token=None, db_path=tmp_path / "state.db", data_dir=small_dir, log_level="WARNING",
                        sync_commands=False)
    session = await ConsoleSession.open(settings)
    try:
        for command, option in (("/rule", "query"), ("/datasheet", "name"), ("/stratagem", "name")):
            for query in ("lethal\udbffhits", "\udbff\udbff"):
                for reply in await session.send(f"{command} {option}:{query}"):
                    text = json.dumps(reply.to_json(), ensure_ascii=False)
                    assert "Something went wrong" not in text, text
                    text.encode("utf-8")  # nothing unencodable goes back to Discord
            choices = await session.autocomplete(f"{command} {option}:bo\udbff", option)
            assert len(choices) <= 25
    finally:
        await session.close()


def test_cli_lookup_reads_undecodable_stdin(small_dir: Path) -> None:
    env = dict(os.environ, COGITATOR_DATA=str(small_dir), COGITATOR_LOG_LEVEL="WARNING")
    proc = subprocess.run([sys.executable, "-m", "bot", "lookup", "-", "--json", "--limit", "1"],
                          input=b"lethal hits\n\xff\xfe bad \xed\xa0\x80\n", capture_output=True, cwd=REPO, env=env,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.decode().splitlines()]
    assert lines[0]["results"][0]["name"] == "Lethal Hits" and len(lines) == 2


# ---------------------------------------------------------------------------------------------
# game-datacards JSON: depth and size


def test_deep_json_is_refused_quickly(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text('{"name": "Orks", "source": "40k-11e", "datasheets": ' + "[" * 100_000 + "]" * 100_000 + "}",
                    encoding="utf-8")
    with pytest.raises(CatalogImportError, match="nested deeper than 32 levels"):
        gdc_json.load_path(path)
    path.write_text(json.dumps({"name": "Orks", "source": "40k-11e", "datasheets": _nested(33, 1)}),
                    encoding="utf-8")  # one level over the limit (the datasheets list is level 2)
    with pytest.raises(CatalogImportError, match="nested deeper"):
        gdc_json.load_path(path)


def test_a_file_of_empty_objects_is_refused_before_parsing(tmp_path: Path) -> None:
    path = tmp_path / "many.json"
    path.write_text('{"name": "Orks", "source": "40k-11e", "datasheets": [' + "{}," * 500_000 + "{}]}",
                    encoding="utf-8")
    with pytest.raises(CatalogImportError, match=r"JSON values; the limit is 400,000"):
        gdc_json.load_path(path)


def _nested(depth: int, width: int) -> object:
    doc: object = list(range(width))
    for _ in range(depth - 1):
        doc = [doc]
    return doc


@PATCH
@given(depth=st.integers(1, 45), width=st.integers(0, 60))
def test_json_limits_hold(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory,
                          depth: int, width: int) -> None:
    monkeypatch.setattr(gdc_json, "MAX_JSON_ITEMS", 50)
    text = json.dumps(_nested(depth, width))
    counted = text.count(",") + text.count("[")
    try:
        doc = gdc_json.parse_bounded(text, Path("x.json"))
    except CatalogImportError as error:
        assert depth > common.MAX_JSON_DEPTH or counted > 50, error
    else:
        assert depth <= common.MAX_JSON_DEPTH and counted <= 50 and doc == _nested(depth, width)


# ---------------------------------------------------------------------------------------------
# Wahapedia CSV: field size, rows, BOM offsets


def test_a_giant_field_is_refused_at_its_line(tmp_path: Path) -> None:
    folder = copy_fixture(FIX_WAHAPEDIA, tmp_path / "w")
    path = folder / "Stratagems.csv"
    lines = path.read_bytes().split(b"\r\n")
    lines[3] = lines[3].replace(b"|1|", b"|1|" + b"x" * 3_000_000 + b" ", 1)
    path.write_bytes(b"\r\n".join(lines))
    with pytest.raises(CatalogImportError) as info:
        wahapedia_csv.load_folder(folder)
    assert info.value.line == 4 and re.search(r"field 'legend' has 3,000,\d{3} characters; the limit is 65,536",
                                              info.value.reason)


@PATCH
@given(field=st.integers(0, 120), rows=st.integers(0, 60), bad_row=st.integers(0, 59))
def test_csv_limits_hold(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory, field: int,
                         rows: int, bad_row: int) -> None:
    monkeypatch.setattr(wahapedia_csv, "MAX_CSV_FIELD_CHARS", 40)
    monkeypatch.setattr(wahapedia_csv, "MAX_CSV_ROWS", 30)
    body = [f"{i}|name {i}|" for i in range(rows)]
    if rows:
        body[bad_row % rows] = f"{bad_row % rows}|{'y' * field}|"
    path = tmp_path_factory.mktemp("csv") / "Factions.csv"
    path.write_bytes(("\ufeffid|name|\r\n" + "\r\n".join(body) + "\r\n").encode())
    too_long = bool(rows) and field > 40
    try:
        got = wahapedia_csv.read_table(path, ("id", "name"))
    except CatalogImportError as error:
        assert rows > 30 or too_long, error
        if too_long and rows <= 30:
            assert error.line == bad_row % rows + 2
    else:
        assert rows <= 30 and not too_long and len(got) == rows


@given(lines=st.lists(st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"),
                              max_size=8), min_size=1, max_size=8), at=st.integers(0, 7), col=st.integers(0, 8),
       bom=st.booleans())
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_invalid_utf8_names_the_right_line(tmp_path_factory: pytest.TempPathFactory, lines: list[str], at: int,
                                            col: int, bom: bool) -> None:
    at %= len(lines)
    raw = [line.encode() for line in lines]
    cut = min(col, len(raw[at]))
    while cut and (raw[at][cut] & 0xC0) == 0x80 if cut < len(raw[at]) else False:
        cut -= 1  # never split a character
    raw[at] = raw[at][:cut] + b"\xff" + raw[at][cut:]
    path = tmp_path_factory.mktemp("bom") / "f.csv"
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + b"\r\n".join(raw))
    with pytest.raises(CatalogImportError) as info:
        common.read_text(path, 10_000)
    assert info.value.line == at + 1 and "0xff" in info.value.reason


# ---------------------------------------------------------------------------------------------
# Costs


@pytest.mark.parametrize("cost", [10 ** 30, "1" + "0" * 30, -1, 21, "9" * 5000, 1.5, True])
def test_absurd_stratagem_costs_are_refused(tmp_path: Path, cost: object) -> None:
    doc = json.loads((FIX_GDC / "orks.json").read_text(encoding="utf-8"))
    doc["stratagems"][0]["cost"] = cost
    path = tmp_path / "orks.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(CatalogImportError) as info:
        gdc_json.load_path(path)
    assert "cost" in info.value.reason and len(info.value.reason) < 300


def test_absurd_wahapedia_numbers(tmp_path: Path) -> None:
    folder = copy_fixture(FIX_WAHAPEDIA, tmp_path / "w")
    path = folder / "Stratagems.csv"
    path.write_bytes(path.read_bytes().replace(b"|TANK SHOCK|000008335007|Core \xe2\x80\x93 Strategic Ploy Stratagem|1|",
                                               b"|TANK SHOCK|000008335007|Core \xe2\x80\x93 Strategic Ploy Stratagem|"
                                               + b"1" + b"0" * 30 + b"|"))
    with pytest.raises(CatalogImportError) as info:
        wahapedia_csv.load_folder(folder)
    assert info.value.line == 3 and "not a number from 0 to 20" in info.value.reason
    folder = copy_fixture(FIX_WAHAPEDIA, tmp_path / "w2")  # 5,000-digit stats and points: read as absent
    models = folder / "Datasheets_models.csv"
    models.write_bytes(models.read_bytes().replace(b'|6"|5|4+|5||6|', b'|6"|' + b"9" * 5000 + b"|4+|5||6|"))
    cost = folder / "Datasheets_models_cost.csv"
    cost.write_bytes(cost.read_bytes().replace(b"|1 model|75|", b"|1 model|" + b"7" * 5000 + b"|"))
    (batch,) = wahapedia_csv.load_folder(folder).values()
    boss = next(e for e in batch[2] if e.kind == "datasheet" and e.name == "Warboss")
    assert boss.data["profiles"][0]["T"] is None and boss.data["points"] == []


# ---------------------------------------------------------------------------------------------
# Imported text is shown, never obeyed

HOSTILE_TEXT = ("@everyone look <@123456789012345678> <@&234567890123456789> <#345678901234567890> "
                "</sim custom:456789012345678901> <t:1700000000:R>\n```\nbroken out\n# Big heading\n"
                "[click me](https://evil.example) **bold stays**")


def _assert_harmless(text: str) -> None:
    assert "@everyone" not in text and "@here" not in text
    assert not re.search(r"<(@[!&]?\d|#\d|/\w|t:\d)", text), text  # Discord's mention syntaxes, unbroken
    assert "```" not in text.replace("```\n", "").replace("\n```", "") or text.count("```") % 2 == 0
    assert "](" not in text and not re.search(r"(?m)^# ", text)


def test_safe_markdown_neutralises_and_keeps_bold() -> None:
    out = safe_markdown(HOSTILE_TEXT)
    _assert_harmless(out)
    assert "```" not in out and "**bold stays**" in out


def test_rendered_entries_are_harmless() -> None:
    rule = Entry("11e:rule:x:y", "rule", "@everyone ```", "11e", "<@&234567890123456789>", "src @here",
                 HOSTILE_TEXT, {})
    embed = entry_embed(rule).to_dict()
    for part in (embed["title"], embed["description"], embed["author"]["name"]):
        _assert_harmless(part)
    sheet = Entry("11e:datasheet:x:y", "datasheet", "@everyone", "11e", None, "src", "",
                  {"profiles": [{"name": "a```b", "M": "6\"", "T": 4, "Sv": 3, "W": 2, "Ld": 6, "OC": 1}],
                   "weapons": [{"name": "@here gun", "type": "ranged", "range": 24, "A": "2`", "skill": 3, "S": 4,
                                "AP": 0, "D": "1", "keywords": ["<@&234567890123456789>"]}],
                   "abilities": [{"name": "@everyone", "text": HOSTILE_TEXT, "type": "datasheet"}],
                   "composition": ["1 ```model"], "keywords": ["@here"], "leader": "<@123456789012345678>"})
    embed = datasheet_embed(sheet).to_dict()
    assert embed["description"].count("```") == 2  # the profile table's own fences only
    for part in [embed["title"], *(f["value"] for f in embed["fields"])]:
        _assert_harmless(part)


async def test_hostile_import_through_the_commands(base_dir: Path, tmp_path: Path) -> None:
    doc = json.loads((FIX_GDC / "orks.json").read_text(encoding="utf-8"))
    doc["stratagems"][0]["name"] = {"en": "Armoured @everyone Duellists"}
    doc["stratagems"][0]["effect"] = {"en": HOSTILE_TEXT}
    doc["datasheets"][0]["abilities"]["other"][0]["description"] = {"en": HOSTILE_TEXT}
    path = tmp_path / "orks.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    data = copy_catalog(base_dir, tmp_path / "data")
    catalog = open_catalog(settings_for(data))
    try:
        catalog.import_dataset("gdc", path)
    finally:
        catalog.close()
    settings = Settings(token=None, db_path=tmp_path / "state.db", data_dir=data, log_level="WARNING",
                        sync_commands=False)
    session = await ConsoleSession.open(settings)
    try:
        (strat,) = await session.send("/stratagem name:11e:stratagem:gdc.orks.blitz-brigade:armoured-everyone-duellists")
        (sheet,) = await session.send("/datasheet name:11e:datasheet:gdc.orks:bannernob")
    finally:
        await session.close()
    embed = strat.embeds[0]
    _assert_harmless(embed["title"])
    _assert_harmless(embed["description"])
    for field in sheet.embeds[0].get("fields", []):
        _assert_harmless(field["value"])
