"""Importers on the repository's fixtures in the real formats (and on the complete shared files where present),
and on broken copies of them: precise errors, nothing changed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.catalog.importers import common, gdc_json, wahapedia_csv
from bot.catalog.markdown import html_to_markdown
from bot.catalog.model import CatalogImportError
from bot.catalog.service import Catalog
from bot.units import wh40kdc_weapons as wh40kdc

from .conftest import FIX_GDC, FIX_WAHAPEDIA, copy_fixture

# ---------------------------------------------------------------------------------------------
# HTML -> Markdown


@pytest.mark.parametrize("html, markdown", [
    ("<b>WHEN:</b> Your <a href=\"/x\">Shooting phase</a>.", "**WHEN:** Your Shooting phase."),
    ("a<br><br>b", "a\n\nb"),
    ("<ul><li>one</li><li>two <b>2</b></li></ul>", "- one\n- two **2**"),
    ("<table><tr><td>Unmodified 1</td><td>FAILS</td></tr></table>", "Unmodified 1 — FAILS"),
    ("<span class=\"kwb\">ORKS</span> &amp; &lt;grots&gt;", "ORKS & <grots>"),
    ("<b></b>empty <i> </i>marks", "empty marks"),
    ("<div><p>para</p></div>", "para"),
    ("plain text, no tags", "plain text, no tags"),
    ("▪ bullet\n■ other", "- bullet\n- other"),
    ("<script>alert(1)</script>ok", "ok"),
])
def test_html_to_markdown(html: str, markdown: str) -> None:
    assert html_to_markdown(html) == markdown


@given(st.lists(st.sampled_from(list("<>/bipu lia&;#x\"=\n") + ["<b>", "</b>", "<br>", "<li>", "<table>", "<td>",
                                                                 "</tr>", "&amp;", "<ul>", "</ul>"]), max_size=80))
def test_html_to_markdown_never_fails(pieces: list[str]) -> None:
    out = html_to_markdown("".join(pieces))
    assert isinstance(out, str) and "\n\n\n" not in out


# ---------------------------------------------------------------------------------------------
# Wahapedia


def _copy_wahapedia(tmp_path: Path) -> Path:
    return copy_fixture(FIX_WAHAPEDIA, tmp_path / "wahapedia")


def test_wahapedia_real_export(full_catalog: Catalog) -> None:
    names = {d["name"]: d for d in full_catalog.datasets()}
    assert names["wahapedia:10e"]["entries"] > 9000
    _check_wahapedia_entries(full_catalog)


def test_wahapedia_fixture_export(small_catalog: Catalog) -> None:
    names = {d["name"]: d for d in small_catalog.datasets()}
    assert names["wahapedia:10e"]["entries"] == 28  # with its 2 detachments as entries of their own (#10)
    _check_wahapedia_entries(small_catalog)
    guard = small_catalog.get(small_catalog.search("custodian guard", kind="datasheet", edition="10e")[0].id)
    assert guard.data["points"] == [{"models": 4, "points": 170}, {"models": 5, "points": 210}]
    assert guard.faction == "Adeptus Custodes" and guard.data["profiles"][0]["InSv"] == 4


def _check_wahapedia_entries(catalog: Catalog) -> None:
    hit = catalog.search("warboss", kind="datasheet", edition="10e")[0]
    boss = catalog.get(hit.id)
    assert boss.source.startswith("Wahapedia export 2025-11-14")
    kombi = next(w for w in boss.data["weapons"] if w["name"] == "Kombi-weapon")
    assert kombi["keywords"] == ["ANTI-INFANTRY 4+", "DEVASTATING WOUNDS", "RAPID FIRE 1"]
    assert boss.data["profiles"][0]["T"] == 5 and boss.data["profiles"][0]["InSv"] == 5
    strat = catalog.get(catalog.search("tank shock", kind="stratagem", edition="10e")[0].id)
    assert strat.data["when"].startswith("Your Charge phase") and "<" not in strat.text and "href" not in strat.text


def test_wahapedia_reader_handles_bom_crlf_and_trailing_pipe(tmp_path: Path) -> None:
    f = tmp_path / "Factions.csv"
    f.write_bytes("\ufeffid|name|link|\r\nORK|Orks|https://x|\r\nLOV|Leagues of Votann||\r\n".encode())
    rows = wahapedia_csv.read_table(f, ("id", "name"))
    assert [(r["id"], r["name"], r["link"]) for r in rows] == [("ORK", "Orks", "https://x"),
                                                               ("LOV", "Leagues of Votann", "")]


@pytest.mark.parametrize("mutate, file, line, reason", [
    (lambda t: t.replace("\r\n", "\r\n|extra|field|", 1), "Datasheets_models.csv", 2, "fields where the header"),
    (lambda t: t.replace("datasheet_id|", "sheet|", 1), "Datasheets_models.csv", 1, "missing column"),
    (lambda t: "", "Datasheets_models.csv", 1, "empty"),
])
def test_wahapedia_malformed_files_are_reported(tmp_path: Path, mutate, file: str, line: int, reason: str) -> None:
    folder = _copy_wahapedia(tmp_path)
    path = folder / file
    path.write_bytes(mutate(path.read_bytes().decode("utf-8-sig")).encode())
    with pytest.raises(CatalogImportError) as info:
        wahapedia_csv.load_folder(folder)
    assert info.value.path.endswith(file) and info.value.line == line and reason in info.value.reason


def test_wahapedia_non_utf8_and_oversize(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _copy_wahapedia(tmp_path)
    raw = (folder / "Factions.csv").read_bytes().replace(b"Orks", b"Or\xffks")
    (folder / "Factions.csv").write_bytes(raw)
    with pytest.raises(CatalogImportError) as info:
        wahapedia_csv.load_folder(folder)
    assert "UTF-8" in info.value.reason and info.value.line and info.value.line > 1
    monkeypatch.setattr(wahapedia_csv, "MAX_CSV_BYTES", 1000)
    with pytest.raises(CatalogImportError) as info:
        wahapedia_csv.load_folder(_copy_wahapedia(tmp_path / "again"))
    assert "limit is 1,000 bytes" in info.value.reason
    with pytest.raises(CatalogImportError):
        wahapedia_csv.load_folder(tmp_path / "missing")


def test_wahapedia_reimport_replaces_and_failure_changes_nothing(writable_catalog: Catalog, tmp_path: Path) -> None:
    before = writable_catalog.count()
    first = writable_catalog.import_dataset("wahapedia", FIX_WAHAPEDIA)
    after_first = writable_catalog.count()
    assert first["wahapedia:10e"] == 28 and after_first == before + first["wahapedia:10e"]
    writable_catalog.import_dataset("wahapedia", FIX_WAHAPEDIA)
    assert writable_catalog.count() == after_first  # replaced, not duplicated
    broken = copy_fixture(FIX_WAHAPEDIA, tmp_path / "broken")
    text = (broken / "Stratagems.csv").read_bytes().decode("utf-8-sig").split("\r\n")
    text[4] = text[4] + "|stray"
    (broken / "Stratagems.csv").write_bytes("\r\n".join(text).encode())
    sample = writable_catalog.search("explosive clearance", edition="10e", kind="stratagem")[0]
    with pytest.raises(CatalogImportError) as info:
        writable_catalog.import_dataset("wahapedia", broken)
    assert info.value.line == 5 and info.value.path.endswith("Stratagems.csv")
    assert writable_catalog.count() == after_first
    assert writable_catalog.get(sample.id) is not None


# ---------------------------------------------------------------------------------------------
# game-datacards


def test_gdc_core_rules_are_complete_and_numbered(small_catalog: Catalog) -> None:
    lethal = small_catalog.get("11e:rule:gdc.core:24-23-lethal-hits")
    assert lethal is not None and lethal.data["number"] == "24.23"
    assert "automatically wound the target" in lethal.text and "<k>" not in lethal.text
    wound = small_catalog.get("11e:rule:gdc.core:05-02-wound-rolls")
    assert "Strength is **TWICE (or more than twice)** the Toughness — 2+" in wound.text
    sub = small_catalog.search("05.02.01", limit=1)[0]
    assert sub.name == "Multiple Toughness Characteristics"
    advance = small_catalog.get("11e:rule:gdc.core:09-06-advance-move")
    assert "**MAXIMUM DISTANCE:** Advance roll" in advance.text


def test_empty_seed_tables_link_to_the_complete_rule(small_catalog: Catalog) -> None:
    complete = small_catalog.complete_text_for("11e:rule:seed.core:wound-roll")
    assert complete is not None and complete.id == "11e:rule:gdc.core:05-02-wound-rolls"
    # no 10th-edition core rules are loaded: the 10e page's empty table stays unlinked rather than borrowing 11e
    assert small_catalog.complete_text_for("10e:rule:seed.core:wound-roll") is None


def test_gdc_faction_file(small_catalog: Catalog) -> None:
    hit = small_catalog.search("bannernob", kind="datasheet", edition="11e")[0]
    sheet = small_catalog.get(hit.id)
    assert sheet.source == "game-datacards Orks"
    assert sheet.data["profiles"][0] == {"name": "Bannernob", "M": '6"', "T": 5, "Sv": 4, "InSv": 5, "W": 4,
                                         "Ld": 7, "OC": 6}
    assert sheet.data["weapons"][0]["keywords"] == ["RAPID FIRE 1"]
    strat = small_catalog.get(small_catalog.search("armoured duellists", kind="stratagem")[0].id)
    assert strat.data["cp"] == 1 and strat.data["detachment"] == "Blitz Brigade"


@pytest.mark.parametrize("content, line, reason", [
    ('{"name": "Orks",\n "source": "40k-11e",\n "datasheets": [\n  {"id": "1", "name": }\n ]}', 4, "invalid JSON"),
    ('[1, 2, 3]', 1, "JSON object"),
    ('{"name": "Orks", "source": "40k-11e", "datasheets": [\n{"id": "abc-1", "stats": []}]}', 2, "has no name"),
    ('{"name": "Orks", "source": "40k-9e", "datasheets": []}', 1, "unknown 'source'"),
    ('{"hello": "world"}', 1, "not a game-datacards core rules, faction, faqs or keywords file"),
    ('{"name": "Orks", "source": "40k-11e", "stratagems": [\n{"id": "s-1", "name": "X", "cost": "lots"}]}', 2,
     "cost 'lots' that is not a whole number from 0 to 20"),
])
def test_gdc_malformed_files_are_reported(tmp_path: Path, content: str, line: int, reason: str) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(content, encoding="utf-8")
    with pytest.raises(CatalogImportError) as info:
        gdc_json.load_path(bad)
    assert info.value.line == line and reason in info.value.reason and info.value.path.endswith("bad.json")


def test_gdc_reimport_replaces_and_bad_file_changes_nothing(writable_catalog: Catalog, tmp_path: Path) -> None:
    before = writable_catalog.count()
    counts = writable_catalog.import_dataset("gdc", FIX_GDC / "orks.json")
    assert writable_catalog.count() == before + counts["gdc:orks"]
    writable_catalog.import_dataset("gdc", FIX_GDC / "orks.json")
    assert writable_catalog.count() == before + counts["gdc:orks"]
    folder = tmp_path / "gdc"
    folder.mkdir()
    shutil.copy(FIX_GDC / "votann.json", folder / "votann.json")
    (folder / "zz_broken.json").write_text('{"name": "X", "source": "40k-11e", "datasheets": [', encoding="utf-8")
    with pytest.raises(CatalogImportError):
        writable_catalog.import_dataset("gdc", folder)  # the good file in the folder is not imported either
    assert writable_catalog.count() == before + counts["gdc:orks"]
    assert not [d for d in writable_catalog.datasets() if d["name"] == "gdc:leagues-of-votann"]


def test_json_size_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(common, "MAX_JSON_BYTES", 100)
    monkeypatch.setattr(gdc_json, "MAX_JSON_BYTES", 100)
    with pytest.raises(CatalogImportError) as info:
        gdc_json.load_path(FIX_GDC / "orks.json")
    assert "limit is 100 bytes" in info.value.reason


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=20),
                    lambda children: st.lists(children, max_size=4) | st.dictionaries(
                        st.sampled_from(["name", "source", "datasheets", "stratagems", "sections", "stats", "id",
                                         "cost", "containers", "title", "en", "rules", "enhancements"]),
                        children, max_size=5), max_leaves=25))
def test_random_json_is_imported_or_refused_cleanly(tmp_path_factory: pytest.TempPathFactory, doc) -> None:
    path = tmp_path_factory.mktemp("fuzz") / "f.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    try:
        gdc_json.load_path(path)
    except CatalogImportError as error:
        assert error.path.endswith("f.json") and error.reason


# ---------------------------------------------------------------------------------------------
# wh40kdc


def test_wh40kdc_overrides_fix_the_stompa(small_catalog: Catalog) -> None:
    stompa = small_catalog.get("11e:datasheet:wh40kdc.orks:stompa")
    weapons = {w["name"]: w for w in stompa.data["weapons"]}
    assert weapons["Supa-gatler – Aimed"]["keywords"] == ["LETHAL HITS: non-MONSTER/VEHICLE", "SUSTAINED HITS 1"]
    assert weapons["Supa-gatler – Aimed"]["corrections"]
    assert weapons["Mega-choppa"]["keywords"] == ["CLEAVE 4"]
    assert weapons["Big shoota"]["keywords"] == ["LETHAL HITS: non-MONSTER/VEHICLE", "RAPID FIRE 2"]
    assert stompa.source == "wh40kdc 1.4.5" and stompa.data["profiles"][0]["W"] == 30


def test_wh40kdc_keyword_rendering() -> None:
    names = {"anti": "Anti", "sustained-hits": "Sustained Hits", "lethal-hits": "Lethal Hits"}
    assert wh40kdc.keyword_text({"keyword_id": "anti", "parameters": {"target_keyword": "Vehicle",
                                                                      "threshold": 4}}, names) == "ANTI-VEHICLE 4+"
    assert wh40kdc.keyword_text({"keyword_id": "sustained-hits", "parameters": {"value": "D3"}},
                                names) == "SUSTAINED HITS D3"
    assert wh40kdc.keyword_text({"keyword_id": "lethal-hits", "parameters": {
        "excluded_target_keywords": ["Monster", "Vehicle"]}}, names) == "LETHAL HITS: non-MONSTER/VEHICLE"


def test_stale_override_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "overrides.json"
    path.write_text(json.dumps({"weapons": [{"faction_id": "orks", "weapon_id": "no-such-gun", "set": {},
                                             "reason": "test"}]}), encoding="utf-8")
    with pytest.raises(CatalogImportError) as info:
        wh40kdc.apply_overrides({}, wh40kdc.load_overrides(path), path)
    assert "matches no wh40kdc weapon" in info.value.reason
    path.write_text("{bad", encoding="utf-8")
    with pytest.raises(CatalogImportError) as info:
        wh40kdc.load_overrides(path)
    assert info.value.line == 1


def test_every_entry_records_its_provenance(small_catalog: Catalog) -> None:
    strat = small_catalog.get(small_catalog.search("tank shock", kind="stratagem", edition="10e")[0].id)
    assert strat.data["provenance"]["file"] == "Stratagems.csv" and strat.data["provenance"]["line"] > 1
    seed = small_catalog.get("11e:rule:seed.core:lethal-hits")
    assert seed.data["provenance"]["file"].endswith(".txt")
    assert small_catalog.get("11e:rule:gdc.core:24-23-lethal-hits").data["provenance"] == {"file": "core_rules.json"}
    assert small_catalog.get("11e:datasheet:wh40kdc.orks:stompa").data["provenance"]["package"] == "wh40kdc 1.4.5"
