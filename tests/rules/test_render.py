"""Renderer limits: pagination boundaries and Discord's embed size limits, on hostile-sized entries."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from bot.catalog.model import Entry
from bot.render.rules import datasheet_embed, entry_embed, paginate


@given(st.text(max_size=20_000))
def test_paginate_keeps_every_word_and_respects_the_page_size(text: str) -> None:
    pages = paginate(text, 500)
    assert all(len(p) <= 500 for p in pages)
    assert "".join(text.split()) in "".join("".join(pages).split()) or not text.strip()


def test_a_huge_datasheet_stays_within_discord_limits() -> None:
    weapon = {"name": "Very long weapon name " * 3, "type": "ranged", "range": 24, "A": "D6+3", "skill": 3, "S": 10,
              "AP": -3, "D": "D6+2", "keywords": ["SUSTAINED HITS 2", "LETHAL HITS: non-MONSTER/VEHICLE"] * 3}
    data = {"profiles": [{"name": f"Model {i}", "M": '6"', "T": 4, "Sv": 3, "InSv": 4, "W": 3, "Ld": 6, "OC": 2}
                         for i in range(12)],
            "weapons": [weapon] * 60 + [dict(weapon, type="melee", range="melee")] * 60,
            "abilities": [{"name": f"Ability {i}", "text": "x " * 400, "type": "datasheet"} for i in range(40)],
            "composition": ["1 Boss"] * 50, "points": [{"models": 5, "points": 100}], "keywords": ["K"] * 300,
            "faction_keywords": ["F"], "leader": "L" * 2000}
    entry = Entry("11e:datasheet:test:huge", "datasheet", "H" * 300, "11e", "F" * 200, "S" * 300, "", data)
    embed = datasheet_embed(entry)
    assert len(embed) <= 6000 and len(embed.fields) <= 25
    assert all(len(f.value) <= 1024 for f in embed.fields) and len(embed.title) <= 256
    assert embed.fields[-1].name == "More"


def test_every_page_of_a_long_rule_fits() -> None:
    entry = Entry("11e:rule:test:long", "rule", "Long", "11e", None, "Test", "word " * 5000,
                  {"faq": [{"q": "q" * 500, "a": "a" * 500}] * 10})
    first = entry_embed(entry, page=0)
    assert len(first) <= 6000 and first.footer.text.endswith("page 1/" + first.footer.text.split("/")[-1])
    last = entry_embed(entry, page=999)  # clamped to the last page
    assert len(last) <= 6000


@given(st.text(min_size=90, max_size=400).filter(lambda s: s.strip()))
def test_a_picker_option_with_a_long_name_keeps_its_description(name: str) -> None:
    """A FAQ entry is named by its whole question; a name over 100 characters broke the "did you mean" menu
    (the label truncated before the " · " the description was split at)."""
    from bot.catalog.model import Hit
    from cogs.rules import PickSelect

    hits = [Hit("11e:faq:gdc.faq.x:long", "faq", name, "11e", "gdc", 80.0),
            Hit("11e:rule:gdc.core:anti", "rule", "Anti", "11e", "gdc", 79.0)]
    options = PickSelect(1, hits).item.options
    assert [o.description for o in options] == ["11e · FAQ / errata", "11e · Rule"]
    assert all(1 <= len(o.label) <= 100 for o in options)
