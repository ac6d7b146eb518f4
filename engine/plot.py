"""A PNG chart of the models-killed distribution, sized to read well inside a Discord embed.

Discord shows an embed image about 400 px wide on desktop and full width on a phone, so the chart is
drawn at 800 x 450 px with large type (it stays legible when halved) and a dark background close to
Discord's dark theme. It uses `matplotlib.figure.Figure` with the Agg canvas directly, never `pyplot`:
no global figure registry, nothing to leak or close, and safe to call from worker threads (each call has
its own Figure, and matplotlib keys its FreeType font cache by thread; a test checks that charts drawn in
parallel threads are byte-identical to serial ones).
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import LineCollection, PolyCollection
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

WIDTH_IN, HEIGHT_IN, DPI = 6.4, 3.6, 125  # 800 x 450 px

BACKGROUND = "#2b2d31"  # Discord's dark embed background
TEXT = "#f2f3f5"
MUTED = "#b5bac1"
GRID = "#404249"
BAR = "#5b9bd5"
WIPE = "#f59e0b"  # the simulation colour used by the embeds
MEAN = "#f87171"

# Bars below this probability at the right-hand end are not drawn, so a 20-model target where at most
# five die does not squeeze the chart into the left quarter; P(wipe) is still printed in the title.
NEGLIGIBLE = 5e-4


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
    """Render `result["models_killed"]` (contract 1) as PNG bytes, mean and P(wipe) marked.

    Drawn with the axis machinery switched off (bars as one collection, labels as plain text): matplotlib's
    tick objects cost more than the whole chart otherwise, and this runs once per /sim answer."""
    killed = result["models_killed"]
    pmf = [max(0.0, float(p)) for p in killed["pmf"]]
    if not pmf:
        raise ValueError("models_killed.pmf is empty")
    mean = float(killed["mean"])
    p_wipe = float(result.get("p_wipe", pmf[-1]))
    models = len(pmf) - 1
    shown = _visible_range(pmf, mean)
    xs = list(range(shown + 1))
    heights = pmf[: shown + 1]
    top = max(heights) if max(heights) > 0 else 1.0
    y_max = top * 1.22

    figure = Figure(figsize=(WIDTH_IN, HEIGHT_IN), dpi=DPI, facecolor=BACKGROUND)
    FigureCanvasAgg(figure)
    axes = figure.add_axes((0.085, 0.2, 0.9, 0.67))
    axes.set_axis_off()
    axes.set_xlim(-0.6, shown + 0.6)
    axes.set_ylim(0, y_max)
    data_x = axes.get_yaxis_transform()  # x in axes fraction, y in data units (for the y labels)

    # Horizontal grid lines with percentage labels; none above the tallest bar (or above 100%).
    ticks = [t for t in MaxNLocator(nbins=4).tick_values(0, top) if 0 <= t <= min(1.0, top * 1.05)]
    decimals = 0 if all(abs(t * 100 - round(t * 100)) < 1e-9 for t in ticks) else 1
    axes.add_collection(
        LineCollection([[(-0.6, t), (shown + 0.6, t)] for t in ticks], colors=GRID, linewidths=0.8, zorder=0)
    )
    for t in ticks:
        axes.text(
            -0.012,
            t,
            f"{t * 100:.{decimals}f}%",
            transform=data_x,
            ha="right",
            va="center",
            fontsize=10,
            color=MUTED,
        )

    half = 0.4
    bars = [
        [(k - half, 0), (k - half, p), (k + half, p), (k + half, 0)] for k, p in zip(xs, heights, strict=True)
    ]
    colours = [WIPE if (k == models and models > 0) else BAR for k in xs]
    axes.add_collection(PolyCollection(bars, facecolors=colours, edgecolors="none", zorder=2))

    if shown <= 12:
        size = 10 if shown <= 8 else 8.5
        for k, p in zip(xs, heights, strict=True):
            if p >= 0.005:
                axes.text(
                    k,
                    p + top * 0.02,
                    _percent(p),
                    ha="center",
                    va="bottom",
                    fontsize=size,
                    color=TEXT,
                    zorder=4,
                    bbox={
                        "boxstyle": "square,pad=0.1",
                        "facecolor": BACKGROUND,
                        "edgecolor": "none",
                        "alpha": 0.85,
                    },
                )

    # x labels under the bars, the wipe bar says so.
    below = axes.get_xaxis_transform()  # x in data units, y in axes fraction
    for k in _x_labels(shown, models):
        label = f"{k}\nwipe" if (k == models and models > 0) else str(k)
        axes.text(
            k, -0.03, label, transform=below, ha="center", va="top", fontsize=10, color=MUTED, linespacing=1.1
        )
    axes.plot([-0.6, shown + 0.6], [0, 0], color=GRID, linewidth=1, zorder=1)

    axes.plot([mean, mean], [0, y_max], color=MEAN, linestyle="--", linewidth=2, zorder=3)
    label_left = mean < shown * 0.75
    axes.text(
        mean,
        top * 1.17,
        f" mean {mean:.2f}" if label_left else f"mean {mean:.2f} ",
        color=MEAN,
        fontsize=11,
        fontweight="bold",
        ha="left" if label_left else "right",
        va="top",
    )

    heading = title or "Models killed"
    figure.text(
        0.085,
        0.95,
        f"{heading}  ·  P(wipe) {_percent(p_wipe)}",
        color=TEXT,
        fontsize=13,
        fontweight="bold",
        ha="left",
        va="center",
    )
    figure.text(
        0.53,
        0.03,
        f"models killed (of {models})"
        + ("" if shown == models else f"; {shown + 1}+ not shown, each <0.05%"),
        color=MUTED,
        fontsize=10.5,
        ha="center",
        va="bottom",
    )

    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", facecolor=BACKGROUND, pil_kwargs={"compress_level": 1})
    return buffer.getvalue()
