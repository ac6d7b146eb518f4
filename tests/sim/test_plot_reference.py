"""The /sim chart against reference PNGs drawn by the matplotlib-era code, pixel by pixel.

The chart once took its DejaVu fonts and its y ticks from matplotlib; it now ships the fonts
(engine/fonts) and places the ticks itself (engine/ticks.py). The five references in
tests/sim/plot_references/ were written by this file's `__main__` with matplotlib 3.11.2 (commit
"Reference PNGs of five /sim charts"), before the swap, and ticks_maxnlocator.json holds matplotlib's MaxNLocator(nbins=4).tick_values(0, top) for 2,000
tops; so both pin the old look. Regenerate the PNGs (python -m tests.sim.test_plot_reference) only
when the look is meant to change.

Since issue 22 the chart is a palette PNG (engine/canvas.py): shapes keep their exact colours, but text
anti-aliasing is rounded to 49 steps per ink/ground pair, so a text-edge pixel may differ from Pillow's RGB
blend by up to 255/98 per channel. The references stay the matplotlib-era ones; the check allows that
rounding (at most 3 per channel), so a shape or label moved by one pixel (edges contrast by 20 or more)
still fails.
"""

from __future__ import annotations

import io
import json
import sys
from math import comb
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from engine import plot
from engine.plot import plot_models_killed

HERE = Path(__file__).resolve().parent / "plot_references"


def _binomial(n: int, p: float) -> list[float]:
    return [comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1)]


def _result(pmf: list[float]) -> dict:
    return {"models_killed": {"mean": sum(k * p for k, p in enumerate(pmf)), "pmf": pmf}, "p_wipe": pmf[-1]}


# Five charts that cover the tick ranges, the label sizes and the layouts the chart has.
CASES: dict[str, tuple[dict, str | None]] = {
    "two_bars": (_result([0.4, 0.6]), None),
    "certain_wipe": (_result([0.0, 0.0, 0.0, 1.0]), "Lascannon vs Rhino"),
    "ten_of_twenty_hidden": (_result(_binomial(20, 0.1)), "Bolters vs Boyz"),
    "hundred_models": (_result(_binomial(100, 0.6)), "Orks — Shoota Boyz (100) · Flamers"),
    "skewed_right": (_result([0.01, 0.02, 0.04, 0.08, 0.15, 0.2, 0.25, 0.25]), "Ûnicode tîtle ☠"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_chart_matches_its_reference_pixel_for_pixel(name: str) -> None:
    result, title = CASES[name]
    png = Image.open(io.BytesIO(plot_models_killed(result, title=title)))
    assert png.mode == "P"
    drawn = np.asarray(png.convert("RGB")).astype(int)
    reference = np.asarray(Image.open(HERE / f"{name}.png").convert("RGB")).astype(int)
    assert drawn.shape == reference.shape
    difference = np.abs(drawn - reference).max(axis=2)
    assert difference.max() <= 3, f"{name}: a pixel differs by {difference.max()}"


def test_cached_layouts_and_labels_draw_the_same_chart_as_a_cold_start() -> None:
    from engine import canvas

    warm = {name: plot_models_killed(result, title=title) for name, (result, title) in CASES.items()}
    plot._BASES.clear()
    canvas._masks.clear()
    cold = {name: plot_models_killed(result, title=title) for name, (result, title) in CASES.items()}
    assert cold == warm


def test_y_ticks_match_matplotlibs_maxnlocator_choices() -> None:
    from engine.ticks import nice_ticks

    table = json.loads((HERE / "ticks_maxnlocator.json").read_text())
    assert len(table) == 2000
    wrong = [(top, ticks, nice_ticks(top)) for top, ticks in table if nice_ticks(top) != ticks]
    assert not wrong, wrong[:5]


def _tops() -> list[float]:
    """2,000 chart tops: every 1/k, every binomial mode the chart meets, boundaries and random ones."""
    import random

    rng = random.Random(20)
    tops = {1 / k for k in range(1, 401)}
    tops |= {max(_binomial(n, p)) for n in (1, 2, 3, 5, 8, 10, 20, 40, 100) for p in (0.1, 0.25, 0.5, 0.66, 0.9)}
    tops |= {s * 10.0**e * f for s in (1, 1.5, 2, 2.5, 3, 4, 5, 6, 8) for e in (-3, -2, -1) for f in (1, 4)}
    tops = {t for t in tops if 0 < t <= 1}
    while len(tops) < 2000:
        tops.add(rng.choice((rng.random(), rng.random() / 10, rng.random() / 100)) or 1.0)
    return sorted(tops)[:2000]


def _write_references() -> None:
    """The PNGs from the current code; the tick table only where matplotlib is installed (it is not a
    dependency any more: the table pins what it chose)."""
    HERE.mkdir(exist_ok=True)
    for name, (result, title) in CASES.items():
        (HERE / f"{name}.png").write_bytes(plot_models_killed(result, title=title))
    try:
        from matplotlib.ticker import MaxNLocator
    except ImportError:
        return
    table = [[top, [float(t) for t in MaxNLocator(nbins=4).tick_values(0, top)]] for top in _tops()]
    (HERE / "ticks_maxnlocator.json").write_text(json.dumps(table) + "\n")


if __name__ == "__main__":
    _write_references()
    sys.exit(0)
