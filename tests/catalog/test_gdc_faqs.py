"""A whole game-datacards folder imports: faqs.json becomes errata/FAQ entries linked to their targets,
keywords.json the glossary, and an unknown file is skipped with a warning the operator sees.

Runs on the small fixture folder in tests/fixtures/gdc-11e (cut from the real export, same shape), so it
needs no ../shared.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.catalog.importers import gdc_json
from bot.catalog.model import CatalogImportError
from bot.catalog.service import Catalog, open_catalog
from bot.console.session import ConsoleSession

from .conftest import REPO, copy_catalog, settings_for

FIXTURE = REPO / "tests" / "fixtures" / "gdc-11e"


@pytest.fixture(scope="module")
def gdc_dir(base_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The base catalog plus the fixture gdc folder, imported once for this module (tests only read)."""
    folder = copy_catalog(base_dir, tmp_path_factory.mktemp("gdc-fixture"))
    catalog = open_catalog(settings_for(folder))
    try:
        catalog.import_dataset("gdc", FIXTURE)
    finally:
        catalog.close()
    return folder


@pytest.fixture
def gdc_catalog(gdc_dir: Path) -> Catalog:
    catalog = open_catalog(settings_for(gdc_dir))
    yield catalog
    catalog.close()


@pytest.fixture
async def gdc_console(gdc_dir: Path, tmp_path: Path) -> AsyncIterator[ConsoleSession]:
    settings = dataclasses.replace(settings_for(gdc_dir), db_path=tmp_path / "state.db")
    async with ConsoleSession.opened(settings) as session:
        yield session


def only(replies: list) -> object:
    assert len(replies) == 1, [r.to_json() for r in replies]
    return replies[0]


def test_every_file_of_the_folder_imports_and_unknown_files_are_reported() -> None:
    skipped: list[str] = []
    batches = gdc_json.load_path(FIXTURE, skipped)
    assert set(batches) == {"gdc:core-rules", "gdc:faqs", "gdc:keywords", "gdc:orks"}
    assert skipped and skipped[0].startswith("readme.json: not a game-datacards")
    faqs = batches["gdc:faqs"][2]
    assert len(faqs) == 10 and all(e.kind == "faq" for e in faqs)
    qa = next(e for e in faqs if e.data["faq_kind"] == "faq")
    assert qa.text.startswith("**Q:** ") and "**A:** " in qa.text
    errata = next(e for e in faqs if e.name == "Stompa, Transport Section")
    assert errata.data["publication"] == "Codex: Orks" and errata.data["date"] == "2026-07-23"
    assert errata.data["targets"][0]["name"] == "Stompa" and "transport capacity of 22" in errata.text
    glossary = {e.name: e for e in batches["gdc:keywords"][2]}
    assert set(glossary) == {"Anti-X Y+", "Feel No Pain", "Lone Operative", "Deep Strike", "Sustained Hits",
                             "Pistol"}
    assert glossary["Feel No Pain"].kind == "keyword" and "Feel No Pain X+" in glossary["Feel No Pain"].text


def test_errata_link_to_their_targets_in_every_source(gdc_catalog: Catalog) -> None:
    gdc_stompa = gdc_catalog.get("11e:datasheet:gdc.orks:stompa")
    assert gdc_stompa is not None
    names = [e.name for e in gdc_catalog.errata_for(gdc_stompa.id)]
    assert names == ["Battlewagon, Stompa, Trukk – Keywords Section", "Stompa, Transport Section"]
    # the seed page's Stompa is the same unit: the errata reach it by name
    assert "Stompa, Transport Section" in [e.name for e in gdc_catalog.errata_for("11e:datasheet:seed.orks:stompa")]
    waaagh = gdc_catalog.get("11e:rule:gdc.orks:waaagh")
    assert waaagh is not None and any(e.name == "Waaagh! Army Rule" for e in gdc_catalog.errata_for(waaagh.id))
    lone = [h for h in gdc_catalog.search("lone operative", kind="rule", edition="11e", limit=10)
            if h.id.startswith("11e:rule:gdc.core")]
    assert lone and any("Lone Operative" in e.name for e in gdc_catalog.errata_for(lone[0].id))
    # the FAQ entries and the glossary are searchable under their own kinds
    assert gdc_catalog.search("feel no pain", kind="keyword")[0].id == "11e:keyword:gdc.keywords:feel-no-pain"
    assert gdc_catalog.search("stompa transport section", kind="faq")[0].name == "Stompa, Transport Section"


async def test_a_targets_answer_shows_its_errata_with_publication_and_date(gdc_console: ConsoleSession) -> None:
    reply = only(await gdc_console.send("/datasheet name:11e:datasheet:gdc.orks:stompa"))
    field = next(f for f in reply.embeds[0]["fields"] if f["name"].startswith("Errata & FAQ"))
    assert field["name"] == "Errata & FAQ (2)"
    assert "**Codex: Orks** (2026-07-23) — errata:" in field["value"] and "transport capacity" in field["value"]
    buttons = [c for c in reply.components if c.get("label", "").startswith("Errata")]
    assert [b["label"] for b in buttons] == ["Errata 1: Codex: Orks", "Errata 2: Codex: Orks"]
    await gdc_console.restart()  # the buttons carry the entry in their custom_id
    shown = only(await gdc_console.click(buttons[1]["custom_id"]))
    assert shown.ephemeral and shown.embeds[0]["title"] == "Stompa, Transport Section"
    assert shown.embeds[0]["description"].startswith("**Errata** · Codex: Orks · 2026-07-23")
    assert "Applies to: Stompa" in shown.embeds[0]["description"]


def test_cli_import_of_a_folder_warns_about_skipped_files(base_dir: Path, tmp_path: Path) -> None:
    data = copy_catalog(base_dir, tmp_path / "data")
    proc = subprocess.run([sys.executable, "-m", "bot", "import", "gdc", str(FIXTURE), "--json"], cwd=REPO,
                          env={"COGITATOR_DATA": str(data), "PATH": "/usr/bin:/bin"}, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "warning: skipped readme.json" in proc.stderr
    result = json.loads(proc.stdout)
    assert result["imported"]["gdc:faqs"] == 10 and result["imported"]["gdc:keywords"] == 6
    assert result["skipped"][0].startswith("readme.json")


@pytest.mark.parametrize("content, line, reason", [
    ('{"source": "40k-11e", "faqs": [\n {"id": "f-1", "order": 1, "publication": {"name": {"en": "X"}}}]}', 2,
     "neither a question nor errata text"),
    ('{"source": "40k-11e", "faqs": [\n 3]}', None, "is not an object"),
    ('{"source": "40k-11e", "cardType": "keywords", "keywords": [\n {"key": "k-1", "name": "Blast"}]}', 2,
     "has no description"),
    ('{"source": "40k-11e", "cardType": "keywords", "keywords": [\n {"key": "k-2"}]}', 2, "has no name"),
    ('{"source": "40k-11e", "cardType": "keywords", "keywords": []}', None, "keyword list is empty"),
])
def test_malformed_faqs_and_keywords_are_reported(tmp_path: Path, content: str, line: int | None,
                                                  reason: str) -> None:
    bad = tmp_path / "faqs.json"
    bad.write_text(content, encoding="utf-8")
    with pytest.raises(CatalogImportError) as info:
        gdc_json.load_path(bad)
    assert info.value.line == line and reason in info.value.reason


def test_a_lone_unknown_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(gdc_json.UnknownFileError):
        gdc_json.load_path(FIXTURE / "readme.json")


@given(st.text(min_size=0, max_size=400))
def test_faq_names_are_bounded(question: str) -> None:
    assert len(gdc_json._short(question)) <= gdc_json.FAQ_NAME_CHARS + 1


async def test_about_credits_every_loaded_source_with_version_or_date(gdc_console: ConsoleSession) -> None:
    (reply,) = await gdc_console.send("/about")
    loaded = next(f["value"] for f in reply.embeds[0]["fields"] if f["name"] == "Loaded now")
    lines = dict(line.split(": ", 1) for line in loaded.splitlines())
    assert "version 1.4.5" in lines["**wh40kdc**"]
    assert "4 files" in lines["**game-datacards**"] and "data of 2026-07-23" in lines["**game-datacards**"]
    assert "entries" in lines["**Seed pages**"]
