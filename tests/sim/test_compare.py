"""/sim compare (issue 22): one attacker and target under up to four variants, through the real console;
the variants a unit can take, and the refusals that name them."""

from __future__ import annotations

import io
import re

import pytest
from PIL import Image

from bot.console.session import ConsoleSession
from bot.errors import UserError
from bot.sim import variants
from engine.compare_chart import plot_compare

LINE = "/sim compare attacker:Intercessor Squad target:Boyz"


def _means(text: str) -> dict[str, float]:
    return {m.group(1).strip(): float(m.group(2)) for m in re.finditer(r"^(.{34}) +([\d.]+) ", text, re.MULTILINE)}


async def test_variants_side_by_side(console: ConsoleSession) -> None:
    replies = await console.send(f"{LINE} variant1:as listed variant2:re-roll hits + lethal hits "
                                 "variant3:weapon: Bolt Rifle – Saturation variant4:+1 to wound")
    final = replies[-1]
    assert [r.kind for r in replies] == ["defer", "edit"] and final.files == ["compare.png"]
    means = _means(final.text())
    assert set(means) == {"as listed", "re-roll hits + lethal hits", "weapon: Bolt Rifle – Saturation", "+1 to wound"}
    assert means["re-roll hits + lethal hits"] > means["as listed"] and means["+1 to wound"] > means["as listed"]
    assert "Kill chances" in final.text()
    assert Image.open(io.BytesIO(final.file_data["compare.png"])).size == (800, 450)


@pytest.mark.parametrize(("variant", "words"), [
    ("+2 to hit", "It can take: as listed, +1 to hit"),
    ("weapon: Lascannon", "the attacker has no weapon 'Lascannon'. It can take: Chainsword"),
    ("weapon: Bolt Pistol + weapon: Chainsword", "names two weapons"),
])
async def test_a_variant_the_unit_cannot_take_is_refused_naming_what_it_can(console: ConsoleSession, variant: str,
                                                                           words: str) -> None:
    replies = await console.send(f"{LINE} variant1:as listed variant2:{variant}")
    assert len(replies) == 1 and replies[0].ephemeral and words in replies[0].text(), replies[0].text()


async def test_autocomplete_offers_what_the_attacker_can_take_and_combines(console: ConsoleSession) -> None:
    offered = [c["value"] for c in await console.autocomplete(f"{LINE} variant1:weapon", "variant1")]
    assert "weapon: Bolt Rifle – Focused Fire" in offered and "weapon: Plasma pistol – Standard" in offered
    combined = [c["value"] for c in await console.autocomplete(f"{LINE} variant2:cover + leth", "variant2")]
    assert combined == ["cover + lethal hits"]


def test_minus_one_damage_is_refused_against_a_target_that_already_reduces_damage() -> None:
    request = {"volley": [{"models": 1, "weapon": {"name": "x", "keywords": []}}],
               "target": {"models": 1, "damage_reduction": 1}}
    with pytest.raises(UserError, match="already reduces damage"):
        variants.apply(request, variants.parse("-1 damage", [], "variant1"), "variant1")
    fresh = variants.apply({**request, "target": {"models": 1}}, variants.parse("−1 Damage + sustained hits 1",
                                                                                  [], "variant1"), "variant1")
    assert fresh["target"]["damage_reduction"] == 1 and fresh["volley"][0]["weapon"]["keywords"] == ["SUSTAINED HITS 1"]


def test_compare_chart_takes_one_to_four_distributions() -> None:
    png = plot_compare([[0.5, 0.5], [0.2, 0.8]], ["a", "b"], [0.5, 0.8], title="t")
    assert Image.open(io.BytesIO(png)).size == (800, 450)
    with pytest.raises(ValueError):
        plot_compare([[1.0]] * 5, ["a"] * 5, [0.0] * 5, title="t")
