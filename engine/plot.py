"""A PNG chart of the models-killed distribution, sized to read well inside a Discord embed.

Discord shows an embed image about 400 px wide on desktop and full width on a phone, so the chart is
drawn at 800 x 450 px with large type (it stays legible when halved) and a dark background close to
Discord's dark theme. It uses `matplotlib.figure.Figure` with the Agg canvas directly, never `pyplot`:
no global figure registry, nothing to leak or close, and safe to call from worker threads.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator, PercentFormatter

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
    xs = list(range(shown + 1))
    heights = pmf[: shown + 1]

    figure = Figure(figsize=(WIDTH_IN, HEIGHT_IN), dpi=DPI, facecolor=BACKGROUND)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    axes.set_facecolor(BACKGROUND)

    colours = [WIPE if (k == models and models > 0) else BAR for k in xs]
    axes.bar(xs, heights, width=0.8, color=colours, zorder=2)

    top = max(heights) if heights else 1.0
    axes.set_ylim(0, top * 1.22 if top > 0 else 1)
    if shown <= 12:
        for k, p in zip(xs, heights, strict=True):
            if p >= 0.005:
                axes.text(
                    k,
                    p + top * 0.02,
                    _percent(p),
                    ha="center",
                    va="bottom",
                    fontsize=10 if shown <= 8 else 8.5,
                    color=TEXT,
                    zorder=4,
                    bbox={
                        "boxstyle": "square,pad=0.1",
                        "facecolor": BACKGROUND,
                        "edgecolor": "none",
                        "alpha": 0.85,
                    },
                )

    axes.axvline(mean, color=MEAN, linestyle="--", linewidth=2, zorder=3)
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
    axes.set_title(
        f"{heading}  ·  P(wipe) {_percent(p_wipe)}",
        color=TEXT,
        fontsize=13,
        fontweight="bold",
        loc="left",
        pad=10,
    )
    axes.set_xlabel(
        f"models killed (of {models})"
        + ("" if shown == models else f"; {shown + 1}+ not shown, each <0.05%"),
        color=MUTED,
        fontsize=10.5,
    )
    axes.set_xlim(-0.6, shown + 0.6)
    if shown <= 15:
        axes.set_xticks(xs, [f"{k}\nwipe" if (k == models and models > 0) else str(k) for k in xs])
    else:
        axes.xaxis.set_major_locator(MaxNLocator(nbins=12, integer=True))
    axes.yaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
    # Headroom above the tallest bar is for the labels; ticks above it (or above 100%) would mislead.
    ticks = [t for t in MaxNLocator(nbins=4).tick_values(0, top) if 0 <= t <= min(1.0, top * 1.05)]
    axes.set_yticks(ticks)
    axes.tick_params(colors=MUTED, labelsize=10)
    axes.grid(axis="y", color=GRID, linewidth=0.8, zorder=0)
    for side in ("top", "right", "left"):
        axes.spines[side].set_visible(False)
    axes.spines["bottom"].set_color(GRID)
    # Fixed margins instead of tight_layout(): that would draw the whole figure once more (~40% of the time).
    figure.subplots_adjust(left=0.085, right=0.985, top=0.87, bottom=0.2)

    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", facecolor=BACKGROUND)
    return buffer.getvalue()
