"""Where the /sim chart's y axis gets its grid lines: "nice" numbers, as matplotlib's MaxNLocator picks them.

The chart took its ticks from `matplotlib.ticker.MaxNLocator(nbins=4).tick_values(0, top)` until
matplotlib was dropped (a 75 MB install for this and two font files). This is that algorithm for the
one case the chart has (vmin = 0, 0 < top, four bins, the default steps), down to the same float
operations, so the ticks are bit-identical: tests/sim/test_plot_reference.py checks 2,000 tops
against a table written with matplotlib 3.11.2.

The rule: a step of 1, 1.5, 2, 2.5, 3, 4, 5, 6 or 8 times a power of ten, the smallest that covers
`top` in at most four steps; ticks at 0, step, 2 step, ... up to the first one at or above `top`.
"""

from __future__ import annotations

import math
import sys

STEPS = (1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10)  # MaxNLocator's default steps
NBINS = 4
# MaxNLocator's "staircase": a tenth of each step, the steps, then 10 x the second step.
_STAIRCASE = tuple([0.1 * s for s in STEPS[:-1]] + list(STEPS) + [10 * STEPS[1]])
# Below this, matplotlib treats the range as degenerate (transforms._nonsingular with tiny=1e-14).
_DEGENERATE = (1e6 / 1e-14) * sys.float_info.min
_TOLERANCE = 1e-10  # a remainder this close (relative to the step) to 0 counts as an exact multiple


def nice_ticks(top: float) -> list[float]:
    """Tick values from 0 through the first multiple of the step at or above `top` (the tallest bar)."""
    if not math.isfinite(top) or abs(top) < _DEGENERATE:  # matplotlib then widens the range to +-1e-13
        return nice_ticks_range(-1e-13, 1e-13)
    return nice_ticks_range(0.0, float(top))


def nice_ticks_range(vmin: float, vmax: float) -> list[float]:
    """MaxNLocator._raw_ticks for vmin < vmax near zero (no offset), four bins, min_n_ticks 2."""
    scale = 10 ** (math.log10((vmax - vmin) / NBINS) // 1)
    steps = [s * scale for s in _STAIRCASE]
    raw_step = (vmax - vmin) / NBINS
    istep = next((i for i, s in enumerate(steps) if s >= raw_step), len(steps) - 1)
    ticks: list[float] = []
    for step in reversed(steps[: istep + 1]):
        best_vmin = (vmin // step) * step
        low = _multiples_at_or_below(vmin - best_vmin, step)
        high = _multiples_at_or_above(vmax - best_vmin, step)
        ticks = [n * step + best_vmin for n in _float_range(low, high + 1)]
        if sum(1 for t in ticks if vmin <= t <= vmax) >= 2:
            break
    return ticks


def _multiples_at_or_below(x: float, step: float) -> float:
    d, m = divmod(x, step)
    return d + 1 if abs(m / step - 1) < _TOLERANCE else d


def _multiples_at_or_above(x: float, step: float) -> float:
    d, m = divmod(x, step)
    return d if abs(m / step) < _TOLERANCE else d + 1


def _float_range(start: float, stop: float) -> list[float]:
    """np.arange(start, stop) for whole-number floats: start, start + 1, ... below stop."""
    return [start + i for i in range(max(0, math.ceil(stop - start)))]
