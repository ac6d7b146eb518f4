"""A PNG chart of the models-killed distribution, sized to read well inside a Discord embed.

Discord shows an embed image about 400 px wide on desktop and full width on a phone, so the chart is
drawn at 800 x 450 px with large type (it stays legible when halved) and a dark background close to
Discord's dark theme.

It is drawn with Pillow directly (rectangles, lines and FreeType text), not with matplotlib's artist
machinery: one chart is a dozen bars and twenty labels, and matplotlib spent ~90 ms of CPU per /sim
answer laying out text objects, against ~5 ms here (bench/bench_sim.py prints both). Nor does it load
matplotlib for the rest: the DejaVu faces it used ship in engine/fonts (their licence next to them) and
engine/ticks.py places the y ticks as its MaxNLocator did, so the chart is pixel-identical to the
matplotlib-era one (tests/sim/test_plot_reference.py). Each thread keeps its own font objects
(FreeType faces are not shared between threads); a test checks that charts drawn in parallel threads
are byte-identical to serial ones.
"""

from __future__ import annotations

import io
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw, ImageFont

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

_FONT_DIR = Path(__file__).resolve().parent / "fonts"
_fonts = threading.local()


def _font(points: float, bold: bool = False) -> ImageFont.FreeTypeFont:
    cache = _fonts.__dict__.setdefault("cache", {})
    key = (points, bold)
    if key not in cache:
        name = "DejaVuSans-Bold.ttf" if bold else "DejaVuSans.ttf"
        cache[key] = ImageFont.truetype(str(_FONT_DIR / name), round(points * PX_PER_PT))
    return cache[key]


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
        return LEFT + (x + 0.6) / (shown + 1.2) * (RIGHT - LEFT)

    def py(y: float) -> float:
        return BOTTOM - y / y_max * (BOTTOM - TOP)

    image = Image.new("RGB", (WIDTH, HEIGHT), BACKGROUND)
    draw = ImageDraw.Draw(image)

    # Horizontal grid lines with percentage labels; none above the tallest bar (or above 100%).
    ticks = [t for t in nice_ticks(top) if 0 <= t <= min(1.0, top * 1.05)]
    decimals = 0 if all(abs(t * 100 - round(t * 100)) < 1e-9 for t in ticks) else 1
    small = _font(10)
    for t in ticks:
        y = round(py(t))
        draw.line([(LEFT, y), (RIGHT, y)], fill=GRID, width=1)
        draw.text((LEFT - 8, y), f"{t * 100:.{decimals}f}%", font=small, fill=MUTED, anchor="rm")

    half = 0.4
    for k, p in enumerate(heights):
        if p <= 0:
            continue
        colour = WIPE if (k == models and models > 0) else BAR
        draw.rectangle([round(px(k - half)), round(py(p)), round(px(k + half)) - 1, BOTTOM], fill=colour)
    draw.line([(LEFT, BOTTOM), (RIGHT, BOTTOM)], fill=GRID, width=2)

    # The mean: a dashed line over the whole height, its value beside it near the top.
    x_mean = round(px(mean))
    for y in range(TOP, BOTTOM, 14):
        draw.line([(x_mean, y), (x_mean, min(y + 8, BOTTOM))], fill=MEAN, width=3)

    if shown <= 12:
        label_font = _font(10 if shown <= 8 else 8.5)
        for k, p in enumerate(heights):
            if p >= 0.005:
                anchor = (px(k), py(p) - 6)
                box = draw.textbbox(anchor, _percent(p), font=label_font, anchor="mb")
                draw.rectangle([box[0] - 2, box[1] - 2, box[2] + 2, box[3] + 1], fill=LABEL_BOX)
                draw.text(anchor, _percent(p), font=label_font, fill=TEXT, anchor="mb")

    # x labels under the bars; the wipe bar says so.
    for k in _x_labels(shown, models):
        label = f"{k}\nwipe" if (k == models and models > 0) else str(k)
        draw.multiline_text((px(k), BOTTOM + 9), label, font=small, fill=MUTED, anchor="ma", align="center",
                            spacing=2)

    label_left = mean < shown * 0.75
    draw.text((x_mean + 6 if label_left else x_mean - 6, py(top * 1.17)),
              f"mean {mean:.2f}", font=_font(11, bold=True), fill=MEAN, anchor="la" if label_left else "ra")

    heading = title or "Models killed"
    draw.text((LEFT, round(HEIGHT * 0.05)), f"{heading}  ·  P(wipe) {_percent(p_wipe)}", font=_font(13, bold=True),
              fill=TEXT, anchor="lm")
    footer = f"models killed (of {models})" + ("" if shown == models else f"; {shown + 1}+ not shown, each <0.05%")
    draw.text((round(WIDTH * 0.53), HEIGHT - 12), footer, font=_font(10.5), fill=MUTED, anchor="md")

    buffer = io.BytesIO()
    image.save(buffer, format="PNG", compress_level=1)
    return buffer.getvalue()
