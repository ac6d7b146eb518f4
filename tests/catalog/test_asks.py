"""Players' asks (data/rules_asks.jsonl, bot/catalog/asks.py): indexed per rule they name in their own FTS5 table,
at import only, ranked as a ranking of their own; never quoted; the rules text ranks as without them; a missing or
invalid file is one warning line and the answers keep working."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from bot.catalog import asks
from bot.catalog.building import players_asks
from bot.catalog.service import Catalog
from tests.catalog.conftest import REPO

ODD = "zorblax wibbleton"  # words no rules text has


def _with_asks(catalog: Catalog, table: dict) -> None:
    """Build the catalog's passages again as an import does, with these asks."""
    catalog.store.set_meta(asks.META_KEY, json.dumps(table))
    catalog.store.replace_datasets({})


def test_the_shipped_file_loads_and_names_rules_of_both_editions() -> None:
    table = asks.load(REPO / "data" / asks.FILE)
    assert set(table) == {"10e", "11e"}
    assert "13.08" in table["11e"] and asks.rule_key("Fall Back Moves") in table["10e"]
    assert all(a.strip() for rules in table.values() for found in rules.values() for a in found)


def test_an_ask_finds_its_rule_and_is_never_quoted(writable_catalog: Catalog) -> None:
    _with_asks(writable_catalog, {})
    assert not writable_catalog.answer(f"what does {ODD} do?").passages  # before: no passage has the words
    words = ["fall", "back", "shoot", "combat"]
    text_before = writable_catalog.store.passage_search(words)
    _with_asks(writable_catalog, {"10e": {asks.rule_key("Fall Back Moves"): [f"{ODD} after combat"]},
                                  "11e": {asks.rule_key("13.01"): ["how do i set up the board"]}})
    answer = writable_catalog.answer(f"what does {ODD} do?")
    assert answer.passages[0].passage.name == "Fall Back Moves" and answer.passages[0].passage.edition == "10e"
    assert all("zorblax" not in q.text for q in answer.passages)
    assert "zorblax" not in json.dumps(answer.as_json()["passages"])
    asked = writable_catalog.store.passage_asks(["zorblax", "board"])
    assert {(e.name, e.data.get("number")) for e in map(writable_catalog.store.get, asked)} == {
        ("Fall Back Moves", None), ("Placing Terrain", "13.01")}
    assert writable_catalog.store.passage_search(words) == text_before  # the rules' own words rank as before


@pytest.mark.parametrize("content, problem", [
    (None, "cannot be read"),
    ('{"edition": "11e", "rule": "13.08", "asks": ["x"]}\nnot json\n', "line 2: not JSON"),
    ('# a comment\n{"edition": "12e", "rule": "13.08", "asks": ["x"]}\n', 'line 2: expected {"edition"'),
    ('{"edition": "11e", "rule": "13.08", "asks": "fall back"}\n', 'line 1: expected {"edition"'),
    ('{"edition": "11e", "rule": "Boyz", "kind": "datasheet", "asks": ["x"]}\n', 'optional "kind": one of ability'),
    ("#" * (asks.MAX_BYTES + 1), f"larger than {asks.MAX_BYTES} bytes"),
])
def test_a_missing_or_invalid_file_is_one_warning_line(tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                                       content: str | None, problem: str) -> None:
    if content is not None:
        (tmp_path / asks.FILE).write_text(content, encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="bot.catalog.service"):
        assert players_asks(tmp_path) == {}
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 1 and problem in lines[0] and "without the players' asks" in lines[0]


def test_without_asks_the_answers_keep_working(writable_catalog: Catalog) -> None:
    _with_asks(writable_catalog, {})
    answer = writable_catalog.answer("can i shoot after falling back")
    assert answer.passages and not writable_catalog.store.passage_asks(["fall", "back", "shoot"])


def test_a_factions_ask_reaches_the_entry_of_its_kind_only(writable_catalog: Catalog) -> None:
    """A faction entry's asks are keyed by kind and name: written for an ability, they never reach the core
    keyword of the same name."""
    _with_asks(writable_catalog, {"11e": {asks.rule_key("Waaagh! Effigy", "ability"): [f"{ODD} near the stompa"],
                                          asks.rule_key("Deep Strike", "ability"): ["wibbleton arrives"]}})
    answer = writable_catalog.answer(f"what does {ODD} do?")
    assert answer.passages[0].passage.name == "Waaagh! Effigy" and answer.passages[0].passage.kind == "ability"
    assert writable_catalog.store.passage_asks(["arrives"]) == []  # Deep Strike is a keyword, not an ability
    assert asks.rule_key("Deep Strike") in asks.load(REPO / "data" / asks.FILE)["11e"]  # the keyword's own asks


def test_the_shipped_file_holds_asks_for_factions_entries() -> None:
    table = asks.load(REPO / "data" / asks.FILE)
    assert asks.rule_key("Dok’s Toolz", "ability") in table["11e"]
    assert asks.rule_key("Dok’s Toolz", "ability") in table["10e"]
    assert sum(key.startswith(asks.FACTION_KINDS) for key in table["11e"]) > 300
