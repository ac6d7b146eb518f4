"""A PNG chart of the models-killed distribution, sized to read well inside a Discord embed.

Discord shows an embed image about 400 px wide on desktop and full width on a phone, so the chart is
drawn at 800 x 450 px with large type (it stays legible when halved) and a dark background close to
Discord's dark theme.

It is drawn with Pillow directly (rectangles, lines and FreeType text), not with matplotlib's artist
machinery (matplotlib spent ~90 ms of CPU per /sim answer laying out text objects). The DejaVu faces it
used ship in engine/fonts and engine/ticks.py places the y ticks as its MaxNLocator did, so the chart
keeps the matplotlib-era look (tests/sim/test_plot_reference.py).

Cost (issue 22: the chart was 70-80% of a /sim answer): it is a palette PNG drawn on engine/canvas.py
(a third of the bytes to compress), its labels are rasterised once and cached, and the part that depends
only on the layout (background, x labels, footer: the band under the zero line, which nothing else
touches) is drawn once per (bars shown, models) and copied. bench/bench_sim.py --chart prints ms/chart.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
from PIL import Image, ImageDraw

from engine import canvas
from engine.ticks import nice_ticks

WIDTH, HEIGHT = 800, 450
PX_PER_PT = 125 / 72  # the chart was designed at 125 dpi; font sizes below are in points

BACKGROUND = "#2b2d31"  # Discord's dark embed background
TEXT = "#f2f3f5"
MUTED = "#b5bac1"
GRID = "#404249"
BAR = "#5b9bd5"
WIPE = "#f59e0b"  # the simulation colour used by the embeds
MEAN = "#f87171"
LABEL_BOX = "#2d2f33"  # the background behind a bar's percentage (85% opaque over the grid)

# Plot area in pixels: left edge, right edge, top (the tallest bar's headroom), bottom (the zero line).
LEFT, RIGHT, TOP, BOTTOM = 68, 788, 58, 360

# Bars below this probability at the right-hand end are not drawn, so a 20-model target where at most
# five die does not squeeze the chart into the left quarter; P(wipe) is still printed in the title.
NEGLIGIBLE = 5e-4

# Text blends: grey labels and the white title on the background, white percentages in their boxes,
# the mean's label on the background (or over a grid line). 8 solids + 5 ramps of 49 = 253 entries.
PALETTE = canvas.Palette(
    (BACKGROUND, TEXT, MUTED, GRID, BAR, WIPE, MEAN, LABEL_BOX),
    ((MUTED, BACKGROUND), (TEXT, BACKGROUND), (MEAN, BACKGROUND), (TEXT, LABEL_BOX), (MEAN, GRID)),
    levels=50,
)
_INDEX = PALETTE.index
_BASES: dict[tuple[int, int], Image.Image] = {}
_BASES_MAX = 32  # 360 KB each; the oldest goes first
_bases_lock = threading.Lock()


def _face(points: float, bold: bool = False) -> tuple[int, bool]:
    return round(points * PX_PER_PT), bold


def _visible_range(pmf: Sequence[float], mean: float) -> int:
    """Index of the last bar worth drawing: the last one above NEGLIGIBLE, never left of the mean."""
    last = 0
    for k, p in enumerate(pmf):
        if p > NEGLIGIBLE:
            last = k
    return min(len(pmf) - 1, max(last, int(mean) + 1))


def _percent(p: float) -> str:
    if p <= 0:
        return "0%"
    if p < 0.001:
        return "<0.1%"
    if p > 0.999 and p < 1:
        return ">99.9%"
    return f"{p * 100:.1f}%" if p < 0.1 else f"{p * 100:.0f}%"


def _x_labels(shown: int, models: int) -> list[int]:
    """Which bars get a number under them: all of them up to 16 bars, else about a dozen, wipe included."""
    if shown <= 15:
        return list(range(shown + 1))
    step = max(1, round(shown / 12))
    picks = list(range(0, shown + 1, step))
    if shown == models and picks[-1] != shown:
        picks[-1] = shown
    return picks


def _base(shown: int, models: int) -> Image.Image:
    """Background, x labels and footer for a layout: an "L" image of palette indices, drawn once."""
    key = (shown, models)
    with _bases_lock:
        found = _BASES.get(key)
    if found is not None:
        return found
    grid = np.full((HEIGHT, WIDTH), _INDEX[BACKGROUND], np.uint8)
    small = _face(10)
    for k in _x_labels(shown, models):
        label = f"{k}\nwipe" if (k == models and models > 0) else str(k)
        canvas.text(grid, PALETTE, (_px(k, shown), BOTTOM + 9), label, small, MUTED, "ma", spacing=2,
                    align="center")
    footer = f"models killed (of {models})" + ("" if shown == models else f"; {shown + 1}+ not shown, each <0.05%")
    canvas.text(grid, PALETTE, (round(WIDTH * 0.53), HEIGHT - 12), footer, _face(10.5), MUTED, "md")
    base = Image.fromarray(grid)
    with _bases_lock:
        if len(_BASES) >= _BASES_MAX:
            del _BASES[next(iter(_BASES))]
        _BASES[key] = base
    return base


def _px(x: float, shown: int) -> float:
    return LEFT + (x + 0.6) / (shown + 1.2) * (RIGHT - LEFT)


def plot_models_killed(result: dict[str, Any], *, title: str | None = None) -> bytes:
    """Render `result["models_killed"]` (contract 1) as PNG bytes, mean and P(wipe) marked."""
    killed = result["models_killed"]
    pmf = [max(0.0, float(p)) for p in killed["pmf"]]
    if not pmf:
        raise ValueError("models_killed.pmf is empty")
    mean = float(killed["mean"])
    p_wipe = float(result.get("p_wipe", pmf[-1]))
    models = len(pmf) - 1
    shown = _visible_range(pmf, mean)
    heights = pmf[: shown + 1]
    top = max(heights) if max(heights) > 0 else 1.0
    y_max = top * 1.22

    def px(x: float) -> float:
        return _px(x, shown)

    def py(y: float) -> float:
        return BOTTOM - y / y_max * (BOTTOM - TOP)

    # Shapes first (exact indices through Pillow), then every label on top: no label overlaps a shape
    # drawn after it in the RGB original, so the order is the same picture.
    image = _base(shown, models).copy()
    draw = ImageDraw.Draw(image)
    ticks = [t for t in nice_ticks(top) if 0 <= t <= min(1.0, top * 1.05)]
    decimals = 0 if all(abs(t * 100 - round(t * 100)) < 1e-9 for t in ticks) else 1
    for t in ticks:
        y = round(py(t))
        draw.line([(LEFT, y), (RIGHT, y)], fill=_INDEX[GRID], width=1)

    half = 0.4
    for k, p in enumerate(heights):
        if p <= 0:
            continue
        colour = WIPE if (k == models and models > 0) else BAR
        draw.rectangle([round(px(k - half)), round(py(p)), round(px(k + half)) - 1, BOTTOM], fill=_INDEX[colour])
    draw.line([(LEFT, BOTTOM), (RIGHT, BOTTOM)], fill=_INDEX[GRID], width=2)

    # The mean: a dashed line over the whole height, its value beside it near the top.
    x_mean = round(px(mean))
    for y in range(TOP, BOTTOM, 14):
        draw.line([(x_mean, y), (x_mean, min(y + 8, BOTTOM))], fill=_INDEX[MEAN], width=3)

    bar_labels = []
    if shown <= 12:
        label_face = _face(10 if shown <= 8 else 8.5)
        for k, p in enumerate(heights):
            if p >= 0.005:
                anchor = (px(k), py(p) - 6)
                box = canvas.text_bbox(anchor, _percent(p), label_face, "mb")
                draw.rectangle([box[0] - 2, box[1] - 2, box[2] + 2, box[3] + 1], fill=_INDEX[LABEL_BOX])
                bar_labels.append((anchor, _percent(p)))

    grid = np.array(image)
    small = _face(10)
    for t in ticks:
        canvas.text(grid, PALETTE, (LEFT - 8, round(py(t))), f"{t * 100:.{decimals}f}%", small, MUTED, "rm")
    for anchor, label in bar_labels:
        canvas.text(grid, PALETTE, anchor, label, label_face, TEXT, "mb")
    label_left = mean < shown * 0.75
    canvas.text(grid, PALETTE, (x_mean + 6 if label_left else x_mean - 6, py(top * 1.17)), f"mean {mean:.2f}",
                _face(11, bold=True), MEAN, "la" if label_left else "ra")
    heading = title or "Models killed"
    canvas.text(grid, PALETTE, (LEFT, round(HEIGHT * 0.05)), f"{heading}  ·  P(wipe) {_percent(p_wipe)}",
                _face(13, bold=True), TEXT, "lm")
    return canvas.to_png(grid, PALETTE)
