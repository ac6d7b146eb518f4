"""The 11e core stratagems 15.02-15.12: game-datacards numbers them but holds only their ids, wh40kdc holds them as
metadata with a community summary and the same id (`external_refs.mfm`). The join gives wh40kdc's entries their
number whichever is imported first; their summary is a passage a question finds, labelled as a community summary;
where the seed page prints another number (Crushing Impact 15.06 against game-datacards' 15.05) both are shown."""

from __future__ import annotations

import json
from pathlib import Path

from bot.catalog.building import build_base
from bot.catalog.service import Catalog
from bot.render.answers import SUMMARY_LABEL, answer_embed, citation
from bot.render.rules import body_text

FIRE_OVERWATCH = "11e:stratagem:wh40kdc.core:fire-overwatch"
EXPLOSIVES = "11e:stratagem:wh40kdc.core:explosives"
COUNTER = "11e:stratagem:wh40kdc.core:counter-offensive"
CRUSHING_SEED = "11e:stratagem:seed.core:crushing-impact"
CRUSHING_WH = "11e:stratagem:wh40kdc.core:crushing-impact"


def _core_rules(folder: Path, *, stratagems: bool = True) -> Path:
    """A core_rules.json in game-datacards' shape with its Stratagems section (ids as in the real export)."""
    def ref(number: str, title: str, stratagem_id: str) -> dict:
        return {"id": f"c-{number}", "type": "stratagem", "order": 1, "title": {"en": title},
                "subTitle": {"en": number}, "stratagem_id": stratagem_id, "components": []}

    containers = [{"id": "c-15.00", "type": "introduction", "order": 0, "title": {"en": "Stratagems"},
                   "subTitle": {"en": "15.00"}, "components": [
                       {"order": 0, "type": "text", "text": {"en": "Stratagems are used by spending Command Points."}}]}]
    if stratagems:
        containers += [ref("15.05", "Crushing Impact", "67deb45f-23e8-492b-9372-de586c0dfd61"),
                       ref("15.06", "Explosives", "d57d3583-efec-4344-bd18-10e13bb5ef40"),
                       ref("15.08", "Fire Overwatch", "5447addb-20a3-48e5-8db9-41b4066a39cd"),
                       ref("15.12", "Counteroffensive", "33bd61f7-4741-4c27-a8d8-2e13b20ca121")]
    doc = {"id": "core", "name": {"en": "Core Rules"}, "source": "40k-11e", "updated": "2026-07-23T15:58:36.057Z",
           "sections": [{"id": "s15", "name": {"en": "15. Stratagems"}, "order": 0, "containers": containers}]}
    path = folder / "core_rules.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def _number(catalog: Catalog, entry_id: str) -> str | None:
    entry = catalog.store.get(entry_id)
    assert entry is not None
    return entry.data.get("number")


def test_without_game_datacards_the_summary_answers_unnumbered(writable_catalog: Catalog) -> None:
    assert _number(writable_catalog, FIRE_OVERWATCH) is None
    answer = writable_catalog.answer("how does fire overwatch work")
    first = answer.passages[0].passage
    assert first.entry_id == FIRE_OVERWATCH and first.summary and first.number is None
    assert "snap shooting" in first.text
    assert SUMMARY_LABEL in citation(answer.passages[0])
    assert SUMMARY_LABEL in (answer_embed(answer).description or "")
    assert answer.as_json()["passages"][0]["community_summary"] is True


def test_game_datacards_numbers_them_in_either_order(writable_catalog: Catalog, tmp_path: Path) -> None:
    writable_catalog.import_dataset("gdc", _core_rules(tmp_path))
    wanted = {FIRE_OVERWATCH: "15.08", EXPLOSIVES: "15.06", COUNTER: "15.12", CRUSHING_WH: "15.05",
              CRUSHING_SEED: "15.06"}  # the seed page prints its own number and keeps it
    assert {e: _number(writable_catalog, e) for e in wanted} == wanted
    build_base(writable_catalog.store)  # wh40kdc imported again after game-datacards
    writable_catalog.reload()
    assert {e: _number(writable_catalog, e) for e in wanted} == wanted
    assert writable_catalog.search("15.08")[0].id == FIRE_OVERWATCH
    shown = writable_catalog.get(FIRE_OVERWATCH)
    assert shown is not None and body_text(shown).startswith("**1CP** · Strategic Ploy · Core · rule 15.08")
    answer = writable_catalog.answer("how does fire overwatch work")
    assert answer.passages[0].passage.number == "15.08"
    assert citation(answer.passages[0]).startswith("**15.08 Fire Overwatch**")
    # without the references the numbers go
    writable_catalog.import_dataset("gdc", _core_rules(tmp_path, stratagems=False))
    assert _number(writable_catalog, FIRE_OVERWATCH) is None and _number(writable_catalog, CRUSHING_SEED) == "15.06"


def test_the_sources_disagreeing_on_a_number_is_shown(writable_catalog: Catalog, tmp_path: Path) -> None:
    writable_catalog.import_dataset("gdc", _core_rules(tmp_path))
    entry = writable_catalog.get(CRUSHING_SEED)
    assert entry is not None
    assert "Rule number: 15.06 (seed page) · 15.05 (game-datacards)" in entry.data["disagreements"]
    answer = writable_catalog.answer("crushing impact mortal wounds after a charge with a vehicle")
    quoted = next(q for q in answer.passages if q.passage.entry_id == CRUSHING_SEED)
    assert quoted.passage.number == "15.06" and quoted.passage.other_numbers == "15.05 (game-datacards)"
    assert "sources disagree on the number: also 15.05 (game-datacards)" in citation(quoted)
    assert not quoted.passage.summary and SUMMARY_LABEL not in citation(quoted)
