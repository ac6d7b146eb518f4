"""A palette canvas for charts: shapes in a few solid colours, text blended through a fixed palette.

Why: an 800 x 450 RGB chart costs ~3 ms of zlib alone (1 MB of pixels) and its ~650 colours (the text's
anti-aliasing) rule out a palette PNG; a palette image is a third of the bytes and encodes in under 1 ms.
So the chart is drawn as palette indices: rectangles and lines through Pillow onto an "L" image (no
anti-aliasing, so an index is a colour), then text from masks rasterised once per (text, face, anchor,
sub-pixel offset) and cached, blended by a lookup table: each (ink, ground) pair the chart uses gets
`levels - 1` in-between entries, and a mask value picks the nearest. Against Pillow's RGB blend that is at
most about 255 / (2 * levels) per channel, invisible; tests/sim/test_plot_reference.py bounds it on the
matplotlib-era references. A pair the palette lacks (text over an unexpected colour) falls back to ink or
ground, whichever the mask is nearer.

The mask cache is shared between threads (its values are read-only arrays; two threads racing on one key
build the same mask); font objects are per thread, as FreeType faces are not thread-safe.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

_FONT_DIR = Path(__file__).resolve().parent / "fonts"
_fonts = threading.local()
# Cached label masks, emptied when they pass 8 MB: a chart's ~30 labels are ~40 KB, most of it the title,
# which differs per request; the axis and percentage labels repeat and come back within a few charts.
_MASK_CACHE_BYTES = 8 << 20
_masks: dict[tuple, tuple[np.ndarray, int, int]] = {}
_mask_bytes = [0]


def font(pixels: int, bold: bool = False) -> ImageFont.FreeTypeFont:
    """This thread's DejaVu face at `pixels`."""
    cache = _fonts.__dict__.setdefault("cache", {})
    key = (pixels, bold)
    if key not in cache:
        name = "DejaVuSans-Bold.ttf" if bold else "DejaVuSans.ttf"
        cache[key] = ImageFont.truetype(str(_FONT_DIR / name), pixels)
    return cache[key]


def _rgb(colour: str) -> tuple[int, int, int]:
    return int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16)


class Palette:
    """Solid colours (index = position) plus blend ramps for the (ink, ground) pairs text is drawn with."""

    def __init__(self, solids: Sequence[str], pairs: Sequence[tuple[str, str]], levels: int) -> None:
        if len(solids) + len(pairs) * (levels - 1) > 256:
            raise ValueError("palette over 256 entries")
        self.index = {c: i for i, c in enumerate(solids)}
        entries = [_rgb(c) for c in solids]
        self._luts: dict[int, np.ndarray] = {}
        mask_level = np.rint(np.arange(256) * levels / 255).astype(np.int64)  # mask value -> 0..levels
        for ink_colour in {ink for ink, _ in pairs}:
            ink = self.index[ink_colour]
            # Default for any ground: the ground below half coverage, the ink from half up.
            lut = np.empty((256, 256), np.uint8)
            lut[:, :] = np.arange(256, dtype=np.uint8)[:, None]
            lut[:, 128:] = ink
            self._luts[ink] = lut
        for ink_colour, ground_colour in pairs:
            ink, ground = self.index[ink_colour], self.index[ground_colour]
            first = len(entries)
            fg, bg = _rgb(ink_colour), _rgb(ground_colour)
            for level in range(1, levels):
                a = level / levels
                entries.append(tuple(round(b + (f - b) * a) for f, b in zip(fg, bg, strict=True)))
            row = np.where(mask_level == 0, ground, np.where(mask_level == levels, ink, first + mask_level - 1))
            self._luts[ink][ground] = row.astype(np.uint8)
        self.bytes = bytes(v for rgb in entries for v in rgb)

    def lut(self, ink: str) -> np.ndarray:
        return self._luts[self.index[ink]]


def _mask(text: str, face: tuple[int, bool], anchor: str, fx: float, fy: float,
          spacing: int, align: str) -> tuple[np.ndarray, int, int]:
    """The text's coverage as drawn at sub-pixel offset (fx, fy), with its top-left relative to (0, 0)."""
    key = (text, face, anchor, fx, fy, spacing, align)
    found = _masks.get(key)
    if found is not None:
        return found
    f = font(*face)
    probe = ImageDraw.Draw(Image.new("L", (1, 1)))
    left, top, right, bottom = probe.multiline_textbbox((fx, fy), text, font=f, anchor=anchor,
                                                        spacing=spacing, align=align)
    # The scratch origin sits left of and above both the ink and the anchor point, so the anchor lands on
    # non-negative coordinates (Pillow truncates them toward zero) and no ink is cut off.
    ox, oy = min(math.floor(left), 0) - 2, min(math.floor(top), 0) - 2
    scratch = Image.new("L", (math.ceil(right) - ox + 3, math.ceil(bottom) - oy + 3), 0)
    # Shifting the origin by whole pixels keeps the sub-pixel phase, so the coverage is what Pillow
    # would draw at the chart's own position.
    ImageDraw.Draw(scratch).multiline_text((fx - ox, fy - oy), text, font=f, fill=255, anchor=anchor,
                                           spacing=spacing, align=align)
    array = np.asarray(scratch)
    array.flags.writeable = False
    if _mask_bytes[0] + array.nbytes > _MASK_CACHE_BYTES:
        _masks.clear()
        _mask_bytes[0] = 0
    _masks[key] = (array, ox, oy)
    _mask_bytes[0] += array.nbytes
    return array, ox, oy


def text(canvas: np.ndarray, palette: Palette, xy: tuple[float, float], label: str, face: tuple[int, bool],
         ink: str, anchor: str = "la", *, spacing: int = 4, align: str = "left") -> None:
    """Draw `label` into the index array `canvas` as ImageDraw.multiline_text would at `xy`."""
    x, y = xy
    ix, iy = math.floor(x), math.floor(y)
    mask, ox, oy = _mask(label, face, anchor, x - ix, y - iy, spacing, align)
    x0, y0 = ix + ox, iy + oy
    h, w = mask.shape
    cx0, cy0 = max(0, x0), max(0, y0)
    cx1, cy1 = min(canvas.shape[1], x0 + w), min(canvas.shape[0], y0 + h)
    if cx0 >= cx1 or cy0 >= cy1:
        return
    region = canvas[cy0:cy1, cx0:cx1]
    part = mask[cy0 - y0:cy1 - y0, cx0 - x0:cx1 - x0]
    region[:, :] = palette.lut(ink)[region, part]


def text_bbox(xy: tuple[float, float], label: str, face: tuple[int, bool], anchor: str) -> tuple[float, ...]:
    """ImageDraw.textbbox for a label on this canvas."""
    return ImageDraw.Draw(Image.new("L", (1, 1))).textbbox(xy, label, font=font(*face), anchor=anchor)


def to_png(canvas: np.ndarray, palette: Palette) -> bytes:
    """The index array as a palette PNG."""
    import io

    image = Image.fromarray(canvas, mode=None)
    image.putpalette(palette.bytes)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", compress_level=1)
    return buffer.getvalue()
