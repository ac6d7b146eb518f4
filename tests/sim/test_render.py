"""The /sim embed and plot, from hand-made contract-1 result dicts (independent of the engine)."""

from __future__ import annotations

import io
from math import comb

import pytest
from PIL import Image

from bot.render.sim import (
    PLOT_FILENAME,
    SimDescription,
    applied_keywords,
    interesting_thresholds,
    percent,
    sim_embed,
    survival,
    target_line,
    weapon_line,
)
from engine.plot import plot_models_killed


def binomial(n: int, p: float) -> list[float]:
    return [comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1)]


def result_for(pmf: list[float], **extra) -> dict:
    mean = sum(k * p for k, p in enumerate(pmf))
    return {
        "edition": "11e",
        "method": "exact",
        "stages": {"attacks": 12.0, "hits": 4.0, "wounds": 3.33, "unsaved": 2.22},
        "models_killed": {"mean": mean, "pmf": pmf},
        "damage": {"mean": 6.5, "pmf": [0.1, 0.9]},
        "p_wipe": pmf[-1],
        "attacker_mortal_wounds": {"mean": 0.0, "pmf": [1.0]},
        "ignored_keywords": [],
        "notes": [],
        **extra,
    }


REQUEST = {
    "edition": "11e",
    "method": "exact",
    "volley": [
        {
            "models": 1,
            "weapon": {
                "name": "Deffkannon",
                "range": 72,
                "attacks": 12,
                "skill": 5,
                "strength": 14,
                "ap": -3,
                "damage": "D6+2",
                "keywords": ["BLAST 2", "Sustained Hits 1", "PSYCHIC"],
            },
        }
    ],
    "attacker": {"keywords": []},
    "target": {"models": 3, "toughness": 5, "save": 4, "invulnerable": 4, "wounds": 4},
    "context": {},
}

DESCRIPTION = SimDescription(
    title="Stompa → Grimnyr",
    attacker_lines=["1 × Deffkannon — A12 BS5+ S14 AP-3 DD6+2"],
    target_line="3 × Grimnyr — T5 Sv4+ 4++ W4",
    edition="11e",
    source="Seed page: Orks – Stompa",
    options=["half range"],
    notes=["Supa-gatler: fired as Supa-gatler - Aimed only"],
)


def fields(embed) -> dict[str, str]:
    return {f.name: f.value for f in embed.fields}


def test_embed_has_the_numbers_players_ask_for() -> None:
    pmf = [0.1, 0.3, 0.4, 0.2]
    result = result_for(pmf, ignored_keywords=["PSYCHIC"], notes=["PRECISION changes nothing here"])
    embed = sim_embed(result, REQUEST, DESCRIPTION)
    values = fields(embed)
    assert values["Expected kills"] == "**1.70** of 3"
    assert values["P(wipe)"] == "**20%**"
    assert values["Expected damage"] == "6.50 wounds"
    # P(>=1) = 0.9, P(>=2) = 0.6; wipe (k=3) has its own field.
    assert values["Chance to kill at least"] == "1: **90%** · 2: **60%**"
    assert values["Average per stage"] == "12.0 attacks → 4.0 hits → 3.3 wounds → 2.2 unsaved"
    assert values["Keywords applied"] == "BLAST 2, SUSTAINED HITS 1"
    assert values["Keywords ignored"] == "PSYCHIC"
    assert "Supa-gatler" in values["Notes"] and "PRECISION" in values["Notes"]
    assert "Attacker hazard losses" not in values
    assert embed.footer.text == "11th edition · Seed page: Orks – Stompa · exact"
    assert embed.image.url == f"attachment://{PLOT_FILENAME}"
    assert "half range" in embed.description and "**vs** 3 × Grimnyr" in embed.description


def test_hazard_losses_shown_for_hazardous_weapons_even_when_zero() -> None:
    request = {
        **REQUEST,
        "volley": [{"models": 1, "weapon": {**REQUEST["volley"][0]["weapon"], "keywords": ["HAZARDOUS"]}}],
    }
    result = result_for([0.5, 0.5], attacker_mortal_wounds={"mean": 0.5, "pmf": [2 / 3, 0, 0, 1 / 3]})
    values = fields(sim_embed(result, request, DESCRIPTION))
    assert values["Attacker hazard losses"] == "0.50 mortal wounds on average; P(any) 33%"


def test_montecarlo_footer_and_standard_error() -> None:
    request = {**REQUEST, "method": "montecarlo", "trials": 100_000}
    result = result_for(
        [0.5, 0.5], method="montecarlo", standard_error={"models_killed": 0.0016, "damage": {"mean": 0.01}}
    )
    embed = sim_embed(result, request, DESCRIPTION)
    assert embed.footer.text.endswith("Monte Carlo, 100,000 trials")
    assert fields(embed)["Expected kills"] == "**0.5000 ± 0.0016** of 1"
    assert fields(embed)["Expected damage"] == "6.500 ± 0.010 wounds"


def test_names_are_escaped_and_embed_fits_discord_limits() -> None:
    hostile = SimDescription(
        title="x" * 400,
        attacker_lines=[weapon_line(1, {**REQUEST["volley"][0]["weapon"], "name": "**@everyone**"})],
        target_line=target_line("<@123> `boom`", {**REQUEST["target"], "feel_no_pain": 5}),
        edition="10e",
        source="Ad-hoc profiles",
        notes=["n" * 3000],
    )
    embed = sim_embed(result_for(binomial(20, 0.3)), REQUEST, hostile)
    assert len(embed.title) <= 256
    assert "@everyone" not in embed.description.replace("@\u200beveryone", "")
    assert "\\*\\*" in embed.description
    assert all(len(f.value) <= 1024 for f in embed.fields)
    assert len(embed) <= 6000


@pytest.mark.parametrize(
    ("pmf", "expected"),
    [
        ([0.5, 0.5], []),  # one model: P(wipe) says it all
        ([0.0, 0.0, 1.0], [1]),  # certain: still answer "will anything die?"
        ([0.1, 0.3, 0.4, 0.2], [1, 2]),
    ],
)
def test_interesting_thresholds(pmf: list[float], expected: list[int]) -> None:
    assert interesting_thresholds(pmf) == expected


def test_interesting_thresholds_spread_over_a_big_unit() -> None:
    ks = interesting_thresholds(binomial(20, 0.5))
    assert len(ks) == 5
    assert ks == sorted(ks)
    at_least = survival(binomial(20, 0.5))
    assert all(0.01 <= at_least[k] <= 0.99 for k in ks)


@pytest.mark.parametrize(
    ("p", "text"),
    [
        (0, "0%"),
        (1, "100%"),
        (0.0004, "<0.1%"),
        (0.9996, ">99.9%"),
        (0.05, "5.0%"),
        (0.5, "50%"),
        (0.995, "99.5%"),
    ],
)
def test_percent(p: float, text: str) -> None:
    assert percent(p) == text


def test_applied_keywords_exclude_ignored_and_duplicates() -> None:
    volley = [{"weapon": {"keywords": ["Lethal Hits", "PSYCHIC"]}}, {"weapon": {"keywords": ["LETHAL HITS"]}}]
    assert applied_keywords(volley, ["psychic"]) == ["LETHAL HITS"]


@pytest.mark.parametrize(
    "pmf", [[0.4, 0.6], [0.1, 0.3, 0.4, 0.2], binomial(20, 0.1), binomial(100, 0.6), [0.0, 0.0, 1.0]]
)
def test_plot_is_a_discord_sized_png(pmf: list[float]) -> None:
    png = plot_models_killed(result_for(pmf), title="Models killed")
    image = Image.open(io.BytesIO(png))
    assert image.format == "PNG"
    assert image.size == (800, 450)
    assert len(png) < 200_000


def test_plot_marks_the_wipe_bar_in_its_own_colour() -> None:
    png = plot_models_killed(result_for([0.0, 0.0, 0.0, 1.0]))
    image = Image.open(io.BytesIO(png)).convert("RGB")
    colours = {c for _, c in image.getcolors(maxcolors=1 << 20)}
    assert (0xF5, 0x9E, 0x0B) in colours  # the wipe bar (simulation orange)


def test_plot_rejects_an_empty_distribution() -> None:
    with pytest.raises(ValueError):
        plot_models_killed({"models_killed": {"mean": 0, "pmf": []}, "p_wipe": 0})


def test_plots_drawn_in_parallel_threads_match_serial_ones() -> None:
    from concurrent.futures import ThreadPoolExecutor

    results = [result_for(binomial(n, 0.4)) for n in (1, 3, 5, 10, 20, 40)]
    serial = [plot_models_killed(r) for r in results]
    with ThreadPoolExecutor(max_workers=4) as pool:
        parallel = list(pool.map(plot_models_killed, results * 2))
    assert parallel == serial * 2
