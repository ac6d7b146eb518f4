"""Cost model of a request: estimated seconds and peak bytes, checked before any heavy work.

Why a model and not a single "work" number: the exact engine's cost has several independent
drivers, and each one blew the budget on its own before this existed (issue 9): the damage dice size
(a 10e DEVASTATING WOUNDS group's pending mortal-wound rows grow with it), the number of devastating
counts times the FFT grid of the renewal mixture (memory nb x fft x W complex), the Hankel/Toeplitz
matrices and the pending-rows x states products. `exact_cost` walks the same code paths as
`engine.exact.run` (same shapes, same branch conditions, upper bounds where the engine trims tails)
and adds up time in calibrated units and the bytes of the largest arrays alive at once.

The constants (`SEC_*`) were calibrated with `bench/bench_budget.py`, which measures real requests in
a subprocess (wall time of `simulate`, peak RSS above the idle interpreter) and searches with
hypothesis for accepted requests that break the budget. They are deliberately pessimistic: the
machine is shared (2 cores, ~9 users), so one estimated second may take two.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from engine import exact, limits
from engine.profiles import Target
from engine.rules import ResolvedGroup

# Seconds per unit of work, by kind of operation (calibrated, see module docstring).
SEC_MATMUL = 1.5e-9  # one multiply-add in a BLAS product
SEC_ELEMENT = 4e-9  # one element touched by a numpy elementwise op / fancy index / convolution step
SEC_FFT = 6e-9  # per element x log2(size) of an FFT
SEC_LOOP = 6e-6  # one Python-level iteration that calls numpy


@dataclass
class Cost:
    seconds: float = 0.0
    peak_bytes: float = 0.0

    def work(self, seconds: float, live_bytes: float = 0.0) -> None:
        self.seconds += seconds
        self.peak_bytes = max(self.peak_bytes, live_bytes)


def _fft_size(t: int) -> int:
    return 1 << int(2 * t).bit_length()


def _log2(n: float) -> float:
    return math.log2(max(n, 2))


def renewal_cost(c: Cost, nb: int, ns: int, t: int, w: int, models: int, base_bytes: float = 0.0) -> None:
    """exact.renewal_mixture with nb weight rows, ns state rows, t attacks, W wounds, K models."""
    size = models * w + 1
    # F by doubling, survival, death, first
    c.work(SEC_MATMUL * (t * w * w + _log2(t) * w**3) + SEC_ELEMENT * 6 * t * w
           + SEC_MATMUL * ns * models * w * t, base_bytes + 8 * (4 * t * w + w * w + ns * models * t))
    # G: Hankel product when small, else an FFT per (row, wound)
    if t <= 256 and nb * t * t <= 4_000_000:
        c.work(SEC_ELEMENT * nb * t * t + SEC_MATMUL * nb * t * t * w, base_bytes + 8 * (nb * t * t + nb * t * w))
    else:
        n = _fft_size(t)
        half = n // 2 + 1
        c.work(SEC_FFT * (nb * n + n * w) * _log2(n) + SEC_ELEMENT * 2 * nb * half * w
               + SEC_FFT * nb * w * n * _log2(n),
               base_bytes + 16 * (nb * half + half * w) + 16 * nb * half * w + 8 * nb * n * w)
    g_bytes = 8 * nb * t * w
    # out, the no-kill Toeplitz product, the V recursion, the rows x G product
    out_bytes = 8 * nb * ns * size
    c.work(SEC_ELEMENT * (nb * w * w + 2 * nb * ns * size) + SEC_MATMUL * nb * ns * models * w * w,
           base_bytes + g_bytes + out_bytes + 8 * (nb * w * w + nb * ns * models * w))
    if t <= 512:
        conv = SEC_MATMUL * models * ns * t * t + SEC_ELEMENT * t * t
    else:
        n = _fft_size(t)
        conv = SEC_FFT * models * ns * n * _log2(n) * 2
    c.work(conv + SEC_LOOP * 4 * models + SEC_MATMUL * nb * ns * models * t * w,
           base_bytes + g_bytes + 2 * out_bytes + 8 * (models + 1) * ns * t + 8 * nb * ns * models * w)


def _step_cost(size: int, w: int) -> float:
    if size <= exact.DENSE_MAX_STATES:
        return SEC_MATMUL * size * size + SEC_LOOP
    return SEC_MATMUL * size * w + SEC_ELEMENT * 3 * size + SEC_LOOP


def _max_hits_per_die(g: ResolvedGroup) -> int:
    return 1 + (g.sustained.size - 1 if g.sustained is not None and not g.auto_hit else 0)


def exact_cost(groups: list[ResolvedGroup], target: Target, devastating_spills: bool) -> Cost:
    """Estimated seconds and peak bytes of engine.exact.run for these groups (an upper bound)."""
    c = Cost()
    k, w = target.models, target.wounds
    size = k * w + 1
    pending = devastating_spills and any(g.devastating for g in groups)
    total = target.total_wounds
    rows = 1  # pending rows holding mass before the group (10e devastating)
    for g in groups:
        cmax = g.models * (g.attacks_per_model.size - 1)
        hits = _max_hits_per_die(g)
        collapsed = not (g.devastating and (pending or g.fnp_mortal != g.fnp or not exact.same_damage(g)))
        n_max = cmax * hits  # normal (or normal + devastating) attacks reaching damage
        m_max = cmax * hits if not collapsed else 0  # devastating critical wounds
        dsize = int(max(g.damage.size, g.mortal_damage.size))
        # the group's joint distribution: a 1-D convolution loop, or a 2-D FFT grid per dice count
        if collapsed:
            c.work(SEC_ELEMENT * cmax * (n_max + 1) * (hits + 1) + SEC_LOOP * cmax, 8 * 3 * (n_max + 1))
        else:
            cells = (n_max + 1) * (m_max // 2 + 1)
            width = cmax - g.models * int(np.flatnonzero(g.attacks_per_model)[0]) + 1
            c.work(SEC_FFT * 2 * (n_max + 1) * (m_max + 1) * _log2(cells) + SEC_ELEMENT * 3 * width * cells
                   + SEC_LOOP * width, 16 * 4 * cells + 8 * 2 * (n_max + 1) * (m_max + 1))
        # loss distributions (damage, then Feel No Pain per wound)
        c.work(SEC_ELEMENT * dsize * dsize * 2 + SEC_LOOP * dsize, 8 * dsize * dsize)
        state_bytes = 8 * rows * size if pending else 8 * size
        t = n_max + 1
        if collapsed:
            if not pending and t <= exact.STEP_MAX_ATTACKS:
                c.work(t * _step_cost(size, w), 8 * size * size if size <= exact.DENSE_MAX_STATES else 8 * 4 * size)
            else:
                renewal_cost(c, 1, rows if pending else 1, t, w, k, state_bytes)
            continue
        nb = m_max + 1
        renewal_cost(c, nb, rows if pending else 1, t, w, k, state_bytes)
        ys_bytes = 8 * nb * (rows if pending else 1) * size
        if pending:  # pending_combine: powers, the (cap+1) x m product, then the shifts per row
            cap = total
            new_rows = min(total + 1, rows + m_max * (dsize - 1))
            c.work(SEC_ELEMENT * nb * (cap + dsize) * dsize + SEC_LOOP * nb
                   + SEC_MATMUL * (cap + 1) * nb * rows * size + SEC_ELEMENT * 2 * rows * cap * size
                   + SEC_LOOP * rows,
                   ys_bytes + 8 * (nb * (cap + 1) + 2 * (cap + 1) * rows * size))
            rows = new_rows
        else:  # one mortal-wound step per devastating count
            c.work(m_max * (_step_cost(size, w) + SEC_ELEMENT * size),
                   ys_bytes + (8 * size * size if size <= exact.DENSE_MAX_STATES else 8 * 4 * size))
    c.work(SEC_ELEMENT * 2 * rows * size, 8 * 2 * rows * size)
    return c


def mixed_cost(states: int, work: float) -> dict[str, float]:
    """A mixed target (contract 1b, engine.mixed): its own work estimate in flop-like units (~4e8 a
    second) and its dense matrices (a few states x states arrays) for memory."""
    return {"seconds": work / 4e8, "bytes": 8.0 * 4 * states * states}


# Monte Carlo, per trial: a fixed part (stage sums, histograms, standard errors, hazard rolls), a
# part per attack die (attack count, hit roll, re-roll, SUSTAINED draw), per dice slot (attack x hits:
# wound rolls and saves) and per allocation pass (one per possible damaging attack, over the whole
# chunk of trials). Fitted on measurements (per trial: 1 die 2-4 us; 100 dice 17 us; 100 dice with
# SUSTAINED HITS D6 70 us; 1,020 dice 116 us) with ~15% to spare.
SEC_MC_TRIAL = 3e-6
SEC_MC_DIE = 0.03e-6
SEC_MC_SLOT = 0.05e-6
SEC_MC_PASS = 0.05e-6
BYTES_MC_TRIAL = 160  # per-trial result arrays (stages, killed, damage, chunks joined, pmfs)
BYTES_MC_SLOT = 12  # int8 roll and category arrays over (trials, dice, hits) of one chunk, a few alive at once


def montecarlo_seconds(groups: list[ResolvedGroup], target: Target, trials: int) -> float:
    """Estimated seconds of engine.montecarlo.run plus the result statistics (engine.api)."""
    dice = slots = passes = 0
    for g in groups:
        cmax = g.models * (g.attacks_per_model.size - 1)
        hits = _max_hits_per_die(g)
        dice += cmax
        slots += cmax * hits
        passes += cmax * hits * (2 if g.devastating else 1)
    chunks = math.ceil(trials / max(1, min(trials, montecarlo_chunk(groups))))
    per_trial = SEC_MC_TRIAL + SEC_MC_DIE * dice + SEC_MC_SLOT * slots + SEC_MC_PASS * passes
    return trials * per_trial + SEC_LOOP * 4 * passes * chunks


def montecarlo_chunk(groups: list[ResolvedGroup]) -> int:
    from engine import montecarlo

    per_trial = sum(g.models * (g.attacks_per_model.size - 1) * (g.sustained.size if g.sustained is not None else 1)
                    for g in groups)
    return max(1, montecarlo.CHUNK_ELEMENTS // max(per_trial, 1))


def limit_seconds() -> float:
    return limits.MAX_ESTIMATED_SECONDS


def limit_bytes() -> float:
    return limits.MAX_ESTIMATED_BYTES
