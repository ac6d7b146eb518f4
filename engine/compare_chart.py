"""The /sim compare chart: the models-killed distributions of up to four variants, overlaid as grouped bars.

One image per comparison, drawn in plain RGB with Pillow in the /sim chart's colours and fonts (engine.plot,
engine.canvas): bars of the same kill count stand side by side, one colour per variant, each variant's mean
in the legend; kill counts that no variant reaches with a chance above 0.05% are left off the right.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

from PIL import Image, ImageDraw

from engine.canvas import font
from engine.plot import BACKGROUND, GRID, HEIGHT, LEFT, MUTED, NEGLIGIBLE, RIGHT, TEXT, WIDTH
from engine.ticks import nice_ticks

COLOURS = ("#5b9bd5", "#f59e0b", "#f87171", "#34d399")  # blue, orange, red, green
TOP, BOTTOM = 96, 372


def plot_compare(pmfs: Sequence[Sequence[float]], labels: Sequence[str], means: Sequence[float], *,
                 title: str) -> bytes:
    """PNG bytes: one bar series per variant (pmf of models killed), labelled with its mean."""
    if not pmfs or len(pmfs) > len(COLOURS) or len(labels) != len(pmfs) or len(means) != len(pmfs):
        raise ValueError("one to four distributions, each with a label and a mean")
    longest = max(len(p) for p in pmfs)
    shown = max([k for p in pmfs for k, v in enumerate(p) if v > NEGLIGIBLE] + [int(max(means)) + 1])
    shown = min(longest - 1, shown)
    top = max(max(p[: shown + 1]) for p in pmfs) or 1.0
    y_max = top * 1.1
    image = Image.new("RGB", (WIDTH, HEIGHT), BACKGROUND)
    draw = ImageDraw.Draw(image)
    small, bold = font(17), font(22, True)
    draw.text((LEFT, 22), title, font=bold, fill=TEXT, anchor="lm")
    for i, (label, mean) in enumerate(zip(labels, means, strict=True)):
        x, y = LEFT + (i % 2) * 360, 50 + (i // 2) * 22
        draw.rectangle([x, y - 7, x + 14, y + 7], fill=COLOURS[i])
        text = f"{label} · mean {mean:.2f}"
        while len(text) > 8 and draw.textlength(text, font=small) > 330:
            text = text[:-2]
        draw.text((x + 20, y), text, font=small, fill=TEXT, anchor="lm")

    def py(v: float) -> float:
        return BOTTOM - v / y_max * (BOTTOM - TOP)

    for t in [t for t in nice_ticks(top) if 0 <= t <= min(1.0, top * 1.05)]:
        y = round(py(t))
        draw.line([(LEFT, y), (RIGHT, y)], fill=GRID, width=1)
        draw.text((LEFT - 8, y), f"{t * 100:.0f}%" if t * 100 == round(t * 100) else f"{t * 100:.1f}%", font=small,
                  fill=MUTED, anchor="rm")
    slot = (RIGHT - LEFT) / (shown + 1)
    bar = slot * 0.8 / len(pmfs)
    for k in range(shown + 1):
        x0 = LEFT + k * slot + slot * 0.1
        for i, pmf in enumerate(pmfs):
            p = pmf[k] if k < len(pmf) else 0.0
            if p > 0:
                left = round(x0 + i * bar)
                draw.rectangle([left, round(py(p)), max(left, round(x0 + (i + 1) * bar) - 1), BOTTOM],
                               fill=COLOURS[i])
        step = max(1, round((shown + 1) / 16))
        if k % step == 0:
            draw.text((LEFT + (k + 0.5) * slot, BOTTOM + 8), str(k), font=small, fill=MUTED, anchor="ma")
    draw.line([(LEFT, BOTTOM), (RIGHT, BOTTOM)], fill=GRID, width=2)
    draw.text((WIDTH // 2, HEIGHT - 14), "models killed", font=small, fill=MUTED, anchor="md")
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", compress_level=1)
    return buffer.getvalue()
