"""A heatmap PNG for /sim matchup: attackers down the side, targets numbered across the top.

One image per matchup (not per simulation), so it is drawn in plain RGB with Pillow: its cost (a few ms
for 30 x 30) is small next to the 900 simulations behind it. Target names are too long for column heads, so
columns carry numbers and the embed's legend names them; rows carry the attacker's name. Each row's best
cell is outlined. Colours run from the chart's dark background through its blue to its orange, so the
matchup reads like the /sim chart.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

from PIL import Image, ImageDraw

from engine.canvas import font

BACKGROUND = (0x2B, 0x2D, 0x31)
TEXT = (0xF2, 0xF3, 0xF5)
MUTED = (0xB5, 0xBA, 0xC1)
DARK_TEXT = (0x1E, 0x1F, 0x22)
EMPTY = (0x38, 0x3A, 0x40)  # a cell with no simulation (no weapon for the phase, refused)
OUTLINE = (0xFF, 0xFF, 0xFF)
_STOPS = ((0.0, (0x31, 0x33, 0x38)), (0.5, (0x5B, 0x9B, 0xD5)), (1.0, (0xF5, 0x9E, 0x0B)))

LABEL_W, ROW_H, HEAD_H, FOOT_H, PAD = 240, 24, 58, 34, 12


def colour(value: float) -> tuple[int, int, int]:
    """The ramp at `value` in [0, 1]."""
    v = min(1.0, max(0.0, value))
    for (a, ca), (b, cb) in zip(_STOPS, _STOPS[1:], strict=False):
        if v <= b:
            t = (v - a) / (b - a)
            return tuple(round(x + (y - x) * t) for x, y in zip(ca, cb, strict=True))  # type: ignore[return-value]
    return _STOPS[-1][1]


def _fit(draw: ImageDraw.ImageDraw, text: str, face: object, width: int) -> str:
    if draw.textlength(text, font=face) <= width:
        return text
    while text and draw.textlength(text + "…", font=face) > width:
        text = text[:-1]
    return text + "…"


def draw_heatmap(rows: Sequence[str], columns: int, shades: Sequence[Sequence[float | None]],
                 labels: Sequence[Sequence[str]], best: Sequence[int | None], *, title: str, scale: str) -> bytes:
    """PNG bytes: `shades[i][j]` in [0, 1] colours a cell (None: empty), `labels[i][j]` is printed in it,
    `best[i]` (a column or None) is outlined; `scale` explains the colours under the grid."""
    n_rows = len(rows)
    cell_w = max(34, min(80, 780 // max(1, columns)))
    width = LABEL_W + cell_w * columns + PAD * 2
    height = HEAD_H + ROW_H * n_rows + FOOT_H
    image = Image.new("RGB", (max(width, 520), height), BACKGROUND)
    draw = ImageDraw.Draw(image)
    title_face, small, cell_face = font(20, True), font(15), font(14 if cell_w >= 44 else 12)
    draw.text((PAD, 16), _fit(draw, title, title_face, image.width - 2 * PAD), font=title_face, fill=TEXT, anchor="lm")
    x0, y0 = PAD + LABEL_W, HEAD_H
    for j in range(columns):
        draw.text((x0 + j * cell_w + cell_w / 2, y0 - 8), str(j + 1), font=small, fill=MUTED, anchor="mb")
    for i, name in enumerate(rows):
        y = y0 + i * ROW_H
        draw.text((PAD, y + ROW_H / 2), _fit(draw, name, small, LABEL_W - 10), font=small, fill=TEXT, anchor="lm")
        for j in range(columns):
            x = x0 + j * cell_w
            shade = shades[i][j]
            fill = EMPTY if shade is None else colour(shade)
            draw.rectangle([x + 1, y + 1, x + cell_w - 1, y + ROW_H - 1], fill=fill)
            text = labels[i][j]
            if text:
                ink = DARK_TEXT if shade is not None and shade > 0.62 else TEXT
                draw.text((x + cell_w / 2, y + ROW_H / 2), text, font=cell_face, fill=ink, anchor="mm")
        if best[i] is not None:
            x = x0 + best[i] * cell_w  # type: ignore[operator]
            draw.rectangle([x, y, x + cell_w, y + ROW_H], outline=OUTLINE, width=2)
    draw.text((PAD, height - FOOT_H / 2), _fit(draw, scale, small, image.width - 2 * PAD), font=small, fill=MUTED,
              anchor="lm")
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", compress_level=1)
    return buffer.getvalue()
