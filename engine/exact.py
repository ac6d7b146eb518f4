"""Exact distributions for a whole volley.

Per weapon group:
1. The outcome of one attack die is a small joint distribution over (n, m): n = attacks that reach
   normal damage (failed saves, including LETHAL auto-wounds and SUSTAINED extra hits), m = DEVASTATING
   critical wounds. Built from the exact hit/wound/save probabilities of engine.rules.
2. Convolved over the attack dice and mixed over the random number of attack dice (the sum of every
   model's A roll plus BLAST/RAPID FIRE/CLEAVE dice): sum_c P(c) * kernel^{*c}. One-dimensional when n
   and m are allocated identically (the common case), otherwise a 2-D probability generating function
   evaluated with an FFT on a grid that covers the whole support, so there is no aliasing.
3. Allocation is a Markov chain over (models destroyed, wounds lost by the current model): each attack
   that reaches damage rolls its damage (after MELTA and damage reduction, min 1), Feel No Pain per
   wound, and the current model loses at most its remaining wounds - the excess is lost, and the
   wounded model is always finished first. The state is a flat vector (index k*W + j, last entry =
   unit destroyed). Because nothing spills over, the chain is a renewal process and the mixture
   sum_t P(t) T^t s over the number of attacks t is computed in one pass (`renewal_mixture`) instead
   of t matrix steps; the step-by-step form (`make_step`) remains for the mortal wounds after a
   group's normal damage (11e, separate mortal FNP) and serves as the reference in the tests.
   Devastating wounds follow the edition: 11e, after that group's normal damage, each critical wound
   damages at most one model (the same chain, with the mortal-wound Feel No Pain); 10e, their mortal
   wounds are collected on a pending axis and inflicted at the end of the volley, spilling over.

Why one file of about 610 lines (issue 20 asks each product file over 500 lines for a reason): it is one
computation, the exact distribution of a volley, from the per-die kernel to the allocation over the
target's models; its steps share array layouts and truncation rules, and they are checked as one against
brute force (tests/engine/test_exact_brute.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from engine import dice, limits
from engine.profiles import Target
from engine.rules import ResolvedGroup


@dataclass
class GroupDistribution:
    """The joint (n, m) distribution for one group plus its expected stage counts."""

    joint: np.ndarray  # 2-D, joint[n, m]; m axis has length 1 when there are no devastating wounds
    collapsed: bool  # n and m are allocated identically: joint holds n+m along axis 0
    attacks: float
    hits: float
    wounds: float
    unsaved: float


def loss_pmf(damage: np.ndarray, keep: float) -> np.ndarray:
    """Wounds lost by one attack: damage D, then each wound is kept with probability `keep` (FNP)."""
    if keep <= 0.0:
        return damage
    out = np.zeros(damage.size)
    lose = 1.0 - keep
    for d, p in enumerate(damage):
        if p:
            out[: d + 1] += p * _binom(d, lose)
    return out


@lru_cache(maxsize=4096)
def _binom(n: int, p: float) -> np.ndarray:
    out = dice.convolve_power(np.array([1.0 - p, p]), n)
    out.flags.writeable = False
    return out


def kernel_key(g: ResolvedGroup, collapse_ok: bool, saves: bool = True) -> tuple:
    """What one attack die's kernel depends on: its resolved hit, wound and save probabilities and
    keywords (hashable; `_die_kernel`'s arguments)."""
    hp = (0.0, 1.0, 0.0) if g.auto_hit else tuple(g.hit_probs().tolist())
    wp = tuple(g.wound_probs().tolist())
    s = g.save_prob() if saves else 0.0
    sustained = None if g.sustained is None or g.auto_hit else tuple(g.sustained.tolist())
    return hp, wp, s, g.devastating, g.lethal, sustained, collapse_ok


def per_die_kernel(g: ResolvedGroup, collapse_ok: bool, saves: bool = True,
                   key: tuple | None = None) -> tuple[np.ndarray, dict[str, float], bool]:
    """Joint (n, m) distribution of one attack die, its expected stage counts and whether collapsed.
    `saves` False: n counts wounds before any saving throw (mixed targets roll saves at allocation).
    A pure function of the die's resolved probabilities and keywords: cached on exactly those
    (`key`: kernel_key's, when the caller already has it)."""
    kernel, stages, collapsed = _die_kernel(*(key or kernel_key(g, collapse_ok, saves)))
    return kernel, dict(stages), collapsed


@lru_cache(maxsize=1024)
def _die_kernel(hp: tuple[float, ...], wp: tuple[float, ...], s: float, devastating: bool, lethal: bool,
                sustained: tuple[float, ...] | None, collapse_ok: bool) -> tuple[np.ndarray, dict[str, float], bool]:
    """per_die_kernel from the hit, wound and save probabilities (the kernel is read-only)."""
    if devastating:
        a, b = wp[1] * (1 - s), wp[2]
    else:
        a, b = (wp[1] + wp[2]) * (1 - s), 0.0
    collapsed = collapse_ok or b == 0.0
    if collapsed:  # one axis: n + m
        rolled = np.array([1.0 - a - b, a + b])
        auto = np.array([s, 1.0 - s])
    else:
        rolled = np.array([[1.0 - a - b, b], [a, 0.0]])
        auto = np.array([[s, 0.0], [1.0 - s, 0.0]])
    crit_first = auto if lethal else rolled
    extra_hits = 0.0
    if sustained is not None:
        sus = np.array(sustained)
        extras = _mixture_power(rolled, sus)
        crit_out = _conv(crit_first, extras)
        extra_hits = float(np.dot(np.arange(sus.size), sus))
    else:
        crit_out = crit_first
    shape = tuple(max(a, b) for a, b in zip(rolled.shape, crit_out.shape, strict=True))
    kernel = np.zeros(shape)
    kernel[(0,) * rolled.ndim] = hp[0]
    kernel[tuple(slice(0, n) for n in rolled.shape)] += hp[1] * rolled
    kernel[tuple(slice(0, n) for n in crit_out.shape)] += hp[2] * crit_out
    rolled_hits = hp[1] + hp[2] * extra_hits + (0.0 if lethal else hp[2])
    stages = {
        "hits": hp[1] + hp[2] * (1 + extra_hits),
        "wounds": rolled_hits * (wp[1] + wp[2]) + (hp[2] if lethal else 0.0),
        "unsaved": rolled_hits * (a + b) + (hp[2] * (1 - s) if lethal else 0.0),
    }
    kernel.flags.writeable = False
    return kernel, stages, collapsed


def _add(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    shape = tuple(max(a, b) for a, b in zip(x.shape, y.shape, strict=True))
    out = np.zeros(shape)
    out[tuple(slice(0, n) for n in x.shape)] += x
    out[tuple(slice(0, n) for n in y.shape)] += y
    return out


def _conv(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Full convolution of two small 1-D or 2-D arrays."""
    if x.ndim == 1:
        return np.convolve(x, y)
    out = np.zeros((x.shape[0] + y.shape[0] - 1, x.shape[1] + y.shape[1] - 1))
    for i, j in zip(*np.nonzero(y), strict=True):
        out[i : i + x.shape[0], j : j + x.shape[1]] += y[i, j] * x
    return out


def _mixture_power(kernel: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """sum_c counts[c] * kernel^{*c} for small arrays (direct convolution)."""
    if kernel.ndim == 1:
        acc = np.zeros((kernel.size - 1) * (counts.size - 1) + 1)
        power = np.ones(1)
        for c, p in enumerate(counts):
            if p:
                acc[: power.size] += p * power
            if c + 1 < counts.size:
                power = np.convolve(power, kernel)
        return acc
    one = np.zeros((1,) * kernel.ndim)
    one[(0,) * kernel.ndim] = 1.0
    power, acc = one, np.zeros((1,) * kernel.ndim)
    for c, p in enumerate(counts):
        if p:
            acc = _add(acc, p * power)
        if c + 1 < counts.size:
            power = _conv(power, kernel)
    return acc


def count_pmf(g: ResolvedGroup) -> np.ndarray:
    """Distribution of the group's attack dice: every model's A roll (plus extra dice) summed."""
    return _count_pmf(tuple(g.attacks_per_model.tolist()), g.models)


@lru_cache(maxsize=1024)
def _count_pmf(per_model: tuple[float, ...], models: int) -> np.ndarray:
    """A dice distribution of small immutable inputs (cached like dice._pmf; read-only)."""
    out = dice.convolve_power(np.array(per_model), models)
    out.flags.writeable = False
    return out


CLOSED_FORM_MAX_DICE = 120  # binomial coefficients and powers stay far inside float range up to here


@lru_cache(maxsize=1)
def _pascal() -> np.ndarray:
    """C(c, s) for c, s <= CLOSED_FORM_MAX_DICE (zero for s > c), read-only: built once per process by
    Pascal's rule on Python integers (exact), each entry rounded once to a float - the values of
    float(math.comb(c, s)) without one call per entry for every new number of dice."""
    n = CLOSED_FORM_MAX_DICE
    rows, row = [], [1]
    for c in range(n + 1):
        rows.append([float(x) for x in row] + [0.0] * (n - c))
        row = [1, *(a + b for a, b in zip(row, row[1:], strict=False)), 1]
    out = np.array(rows)
    out.flags.writeable = False
    return out


@lru_cache(maxsize=32)
def _binomials(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Read-only tables for dice counts up to n: C(c, s) (zero for s > c); c - s (0 for s > c);
    C(i + j, i) (zero for i + j > n); i + j (0 for i + j > n)."""
    table = np.ascontiguousarray(_pascal()[: n + 1, : n + 1])
    diff = np.subtract.outer(np.arange(n + 1), np.arange(n + 1))
    diff[diff < 0] = 0
    total = np.add.outer(np.arange(n + 1), np.arange(n + 1))
    inside = total <= n
    total[~inside] = 0
    pascal = np.where(inside, table[total, np.arange(n + 1)[:, None]], 0.0)
    out = (table, diff, pascal, total)
    for arr in out:
        arr.flags.writeable = False
    return out


def _compound_closed(counts: np.ndarray, kernel: np.ndarray) -> np.ndarray | None:
    """`compound` in closed form when one die moves each axis by at most one and never both: a
    kernel [p0, pn] (binomial) or [[p0, pm], [pn, 0]] (trinomial). With C ~ counts dice,
    P(n, m) = C(n+m, n) pn^n pm^m h[n+m], h[s] = sum_c counts[c] C(c, s) p0^(c-s): a handful of
    array operations instead of one convolution (or FFT step) per possible number of dice.
    None: another kernel (or too many dice), use the general path."""
    cmax = counts.size - 1
    if cmax > CLOSED_FORM_MAX_DICE:
        return None
    if kernel.shape == (2,):
        p0, pn, pm = kernel[0], kernel[1], 0.0
    elif kernel.shape == (2, 2) and kernel[1, 1] == 0.0:
        p0, pn, pm = kernel[0, 0], kernel[1, 0], kernel[0, 1]
    else:
        return None
    table, diff, pascal, total = _binomials(cmax)
    steps = np.arange(cmax + 1)
    h = counts @ (table * (p0**steps)[diff])  # table is zero where s > c
    if kernel.ndim == 1:
        return pn**steps * h
    return pascal * h[total] * (pn**steps)[:, None] * (pm**steps)[None, :]


def compound(counts: np.ndarray, kernel: np.ndarray) -> np.ndarray:
    """Distribution of the sum of C i.i.d. draws from `kernel`, C ~ `counts` (exact)."""
    closed = _compound_closed(counts, kernel)
    if closed is not None:
        return closed
    cmin = int(np.flatnonzero(counts)[0])
    cmax = counts.size - 1
    if kernel.ndim == 1:
        power = dice.convolve_power(kernel, cmin)
        if cmin == cmax:  # a fixed number of attack dice
            return power * counts[cmax]
        out = np.zeros(cmax * (kernel.size - 1) + 1)
        for c in range(cmin, cmax + 1):
            if counts[c]:
                out[: power.size] += counts[c] * power
            if c < cmax:
                power = np.convolve(power, kernel)
        return out
    # 2-D: probability generating function on an FFT grid large enough for the whole support.
    shape = (cmax * (kernel.shape[0] - 1) + 1, cmax * (kernel.shape[1] - 1) + 1)
    f = np.fft.rfft2(kernel, s=shape)
    h = np.full(f.shape, counts[cmax], dtype=complex)
    for c in range(cmax - 1, cmin - 1, -1):
        h = h * f + counts[c]
    if cmin:
        h = h * f**cmin
    out = np.fft.irfft2(h, s=shape)
    out[out < 1e-300] = 0.0
    return out


def group_distribution(g: ResolvedGroup, collapse_ok: bool, saves: bool = True,
                       key: tuple | None = None) -> GroupDistribution:
    kernel, stages, collapsed = per_die_kernel(g, collapse_ok, saves, key)
    counts = count_pmf(g)
    attacks = float(np.dot(np.arange(counts.size), counts))
    joint = compound(counts, kernel)
    if joint.ndim == 1:
        joint = joint[:, None]
    return GroupDistribution(joint, collapsed, attacks, attacks * stages["hits"], attacks * stages["wounds"],
                             attacks * stages["unsaved"])


# --------------------------------------------------------------------------------------------------
# Allocation chain. State array s[p, k, j]: p = pending 10e devastating mortal wounds (after FNP),
# k = models destroyed (k == K: unit destroyed, only j == 0 used), j = wounds lost by the current model.
# --------------------------------------------------------------------------------------------------


def step_matrix(loss: np.ndarray, wounds: int) -> np.ndarray:
    """(W, W+1) matrix: row j (wounds already lost) -> new wounds lost j' < W, or the last column =
    model destroyed (any loss >= W - j; the excess is lost)."""
    m = np.empty((wounds, wounds + 1))
    m[:, :wounds] = _toeplitz(loss, wounds)
    tail = np.zeros(wounds + 1)
    tail[: min(loss.size, wounds + 1)] = np.cumsum(loss[::-1])[::-1][: wounds + 1]  # tail[l] = P(L >= l)
    m[:, wounds] = tail[wounds - np.arange(wounds)]
    return m


DENSE_MAX_STATES = 800  # up to this many (models x wounds) states, one step is a single dense matvec
STEP_MAX_ATTACKS = 16  # a group with at most this many damaging attacks is stepped, not renewal-mixed


@lru_cache(maxsize=128)
def _dense_index(models: int, wounds: int) -> tuple[np.ndarray, np.ndarray]:
    """Flat indices into the (S, S) transition matrix: the K diagonal W x W blocks (row-major per block),
    and each state's "model destroyed" column ((k+1) W: the next model, or the unit at k+1 == K)."""
    size = models * wounds + 1
    k = np.arange(models)[:, None, None]
    i = np.arange(wounds)[None, :, None]
    j = np.arange(wounds)[None, None, :]
    block = ((k * wounds + i) * size + k * wounds + j).ravel()
    kill = ((k * wounds + i) * size + (k + 1) * wounds)[:, :, 0].ravel()
    for a in (block, kill):
        a.flags.writeable = False
    return block, kill


def dense_matrix(m: np.ndarray, models: int) -> np.ndarray:
    """The full transition matrix over flat states k*W + j (the last state: unit destroyed), from the
    (W, W+1) step matrix: block k is m's first W columns, and destroying model k moves to (k+1)*W, which
    is the 'destroyed' state when k+1 == models. Two index assignments, no loop over the models."""
    w = m.shape[0]
    size = models * w + 1
    block, kill = _dense_index(models, w)
    t = np.zeros((size, size))
    flat = t.reshape(-1)
    flat[block] = np.broadcast_to(m[:, :w], (models, w, w)).reshape(-1)
    flat[kill] = np.broadcast_to(m[:, w], (models, w)).reshape(-1)
    t[-1, -1] = 1.0
    return t


def make_step(loss: np.ndarray, target: Target, state: np.ndarray):
    """One-attack transition on flat states (index k*W + j, last = unit destroyed), for a vector or
    for rows of vectors: a dense matrix product when small, else a product per model block."""
    m = step_matrix(loss, target.wounds)
    size = state.shape[-1]
    if size <= DENSE_MAX_STATES:
        t = dense_matrix(m, target.models)
        return lambda x: x @ t
    kw = size - 1
    w = target.wounds

    def flat_step(x: np.ndarray) -> np.ndarray:
        lead = x.shape[:-1]
        y = x[..., :kw].reshape(lead + (-1, w)) @ m
        out = np.empty_like(x)
        out[..., :kw] = y[..., :w].reshape(lead + (kw,))
        out[..., kw] = x[..., kw]
        out[..., w::w] += y[..., w]  # destroying model k moves to (k+1)*W; k+1 == models is "destroyed"
        return out

    return flat_step


def _alive(s: np.ndarray) -> float:
    return float(s[..., :-1].sum())


def support(p: np.ndarray) -> tuple[int, int]:
    """Index range [lo, hi] outside of which the mass of the pmf `p` is negligible (limits.TAIL_EPSILON)."""
    c = p.cumsum()
    lo = int(c.searchsorted(limits.TAIL_EPSILON))
    hi = int(c.searchsorted(c[-1] - limits.TAIL_EPSILON))
    return lo, min(hi, p.size - 1)


def powers_mixture(s: np.ndarray, step, weights: np.ndarray) -> np.ndarray:
    """sum_t weights[t] * T^t s, stopping early once the unit is destroyed with certainty."""
    lo, hi = support(weights)
    x = s
    for _ in range(lo):
        x = step(x)
    out = weights[lo] * x
    for t in range(lo + 1, hi + 1):
        if (t & 7) == 0 and _alive(x) < 1e-300:
            out += weights[t : hi + 1].sum() * x
            break
        x = step(x)
        out += weights[t] * x
    return out


@lru_cache(maxsize=256)
def _toeplitz_index(w: int) -> np.ndarray:
    """Index matrix j - i for j >= i, else w (which points at an appended zero)."""
    d = np.arange(w)[None, :] - np.arange(w)[:, None]
    d[d < 0] = w
    d.flags.writeable = False
    return d


@lru_cache(maxsize=64)
def _hankel_index(t: int) -> np.ndarray:
    """Index matrix s + r (s, r < t) for G[s] = sum_r weights[s + r] F[r]."""
    idx = np.arange(t)
    out = idx[:, None] + idx[None, :]
    out.flags.writeable = False
    return out


def _toeplitz(c: np.ndarray, w: int) -> np.ndarray:
    """(W, W) upper-triangular Toeplitz matrix M[i, j] = c[j - i]: x @ M = the first W entries of the
    convolution x * c (adding a loss distributed as c; a truncated convolution)."""
    padded = np.zeros(w + 1)
    n = min(w, c.size)
    padded[:n] = c[:n]
    return padded[_toeplitz_index(w)]


def renewal_mixture(s: np.ndarray, loss: np.ndarray, weights: np.ndarray, wounds: int) -> np.ndarray:
    """sum_t weights[t] * T^t s for flat state vectors, without stepping t times.

    No spill-over makes allocation a renewal process: a fresh model survives u attacks with j wounds
    lost exactly when the sum S_u of u independent losses is j < W, so F[u, j] = P(S_u = j) (the
    loss distribution's powers truncated below W) describes one model completely. From F follow the
    attack on which a model with j0 wounds lost dies, the attack on which the k-th model of the
    unit dies (V_k, a convolution recursion over models) and, for whatever attacks remain after that,
    the state of the next model (G = weights correlated with F). Exact; cost ~ t_max x (W + models).

    `s` may hold several states (rows) and `weights` several weight vectors (rows): the result has
    shape weights.shape[:-1] + s.shape, sharing everything that does not depend on either."""
    wts = weights.reshape(-1, weights.shape[-1])
    states = s.reshape(-1, s.shape[-1])
    w = wounds
    size = states.shape[1]
    kw = size - 1
    k_models = kw // w
    nb, t = wts.shape
    ns = states.shape[0]
    # F[u, j] = P(S_u = j), j < W: the model has not yet been destroyed after u attacks.
    a = _toeplitz(loss, w)  # one attack: F[u] = F[u-1] @ A
    f = np.zeros((t, w))
    f[0, 0] = 1.0
    n, power = 1, a
    while n < t:  # doubling: rows [n, 2n) = rows [0, n) @ A^n
        m = min(n, t - n)
        f[n : n + m] = f[:m] @ power
        n += m
        if n < t:
            power = power @ power
    fc = np.cumsum(f, axis=1)  # P(S_u <= x)
    # death[j0, u]: a model with j0 wounds lost is destroyed by attack u (u >= 1).
    surv = fc[:, ::-1]  # surv[u, j0] = P(S_u <= W-1-j0) = P(still alive after u attacks)
    death = np.zeros((w, t))
    death[:, 1:] = (surv[:-1] - surv[1:]).T
    np.maximum(death, 0.0, out=death)
    blocks = states[:, :kw].reshape(ns, k_models, w)
    first = blocks @ death  # first[i, k0, u]: from k0 destroyed, the next model dies on attack u
    fresh = death[0]
    # G[b, s, j] = sum_r weights[b, s + r] F[r, j]: after a kill on attack s, the rest leave the next
    # model with j wounds lost.
    if t <= 256 and nb * t * t <= 4_000_000:
        padded = np.zeros((nb, 2 * t))
        padded[:, :t] = wts
        g = padded[:, _hankel_index(t)] @ f
    else:
        fft_size = 1 << int(2 * t).bit_length()
        wf = np.fft.rfft(wts[:, ::-1], fft_size, axis=1)
        ff = np.fft.rfft(f, fft_size, axis=0)
        g = np.fft.irfft(wf[:, :, None] * ff[None, :, :], fft_size, axis=1)[:, :t][:, ::-1]
    tail = np.cumsum(wts[:, ::-1], axis=1)[:, ::-1]  # P(at least s attacks)
    out = np.zeros((nb, ns, size))
    # no model destroyed in this group: the current model keeps taking losses
    padded_c = np.zeros((nb, w + 1))
    padded_c[:, :w] = g[:, 0, :]
    toeplitz = padded_c[:, _toeplitz_index(w)]  # (nb, W, W)
    out[:, :, :kw] = np.matmul(blocks.reshape(1, ns * k_models, w), toeplitz).reshape(nb, ns, kw)
    # the k-th model of the unit dies on attack s: V_k = V_{k-1} * fresh + first[k-1]
    v = np.zeros((k_models + 1, ns, t))
    # mass of first[:, k:] per k (a Python list: read once per model below)
    pending = first.sum(axis=(0, 2))[::-1].cumsum()[::-1].tolist()
    if t <= 512 and k_models >= DOUBLING_MIN_MODELS and pending[1] == 0.0:
        # only the first model can be partly damaged (a compiled plan's operator rows start at (0, j)):
        # V_k = first_0 * fresh^(k-1), every k at once from the truncated powers of `fresh`
        powers = _truncated_powers(fresh, k_models, t)
        lead = np.zeros((ns, t + 1))
        lead[:, :t] = first[:, 0]
        v[1:] = np.matmul(powers, lead[:, _toeplitz_index(t)]).transpose(1, 0, 2)
    elif t <= 512:  # V_k = V_(k-1) C + first_(k-1): one product and one sum per model
        c = _toeplitz(fresh, t)
        for k in range(1, k_models + 1):
            np.dot(v[k - 1], c, out=v[k])
            v[k] += first[:, k - 1]
            if k < k_models and pending[k] == 0.0 and v[k].sum() < 1e-300:
                break  # no model beyond the k-th can be destroyed: the remaining rows stay zero
    else:
        conv = _truncated_convolver(fresh, t)
        for k in range(1, k_models + 1):
            v[k] = conv(v[k - 1]) + first[:, k - 1]
            if k < k_models and pending[k] == 0.0 and v[k].sum() < 1e-300:
                break
    # (nb, ns, K-1, W): sum_s V[k, i, s] G[b, s, j]
    rows = v[1:k_models].transpose(1, 0, 2).reshape(1, ns * (k_models - 1), t)
    out[:, :, w:kw] += np.matmul(rows, g).reshape(nb, ns, kw - w)
    out[:, :, kw] = states[:, kw][None, :] * wts.sum(axis=1)[:, None] + tail @ v[k_models].T
    np.maximum(out, 0.0, out=out)
    return out.reshape(weights.shape[:-1] + s.shape)


DOUBLING_MIN_MODELS = 6  # from this many models, the death-time powers double instead of stepping per model


def _truncated_powers(kernel: np.ndarray, count: int, n: int) -> np.ndarray:
    """(count, n): row j = the first n entries of kernel^(*j) (row 0: the unit), by doubling - rows
    [m, 2m) are rows [0, m) convolved with row m - in about log2(count) products."""
    out = np.zeros((count, n))
    out[0, 0] = 1.0
    m = 1
    while m < count:
        out[m] = np.convolve(out[m - 1], kernel[:n])[:n]
        step = min(m, count - m - 1)
        if step > 0:
            out[m + 1 : m + 1 + step] = out[1 : 1 + step] @ _toeplitz(out[m], n)
        m += 1 + step
    return out


def _truncated_convolver(kernel: np.ndarray, n: int):
    """x -> first n entries of (x * kernel) along the last axis, for one row or many."""
    if n <= 512:
        c = _toeplitz(kernel, n)
        return lambda x: x @ c
    size = 1 << int(2 * n).bit_length()
    kf = np.fft.rfft(kernel[:n], size)
    return lambda x: np.fft.irfft(np.fft.rfft(x, size, axis=-1) * kf, size, axis=-1)[..., :n]


def pending_combine(ys: np.ndarray, mw: np.ndarray, cap: int) -> np.ndarray:
    """sum_m ys[m] with m critical wounds' mortal wounds (each distributed as `mw`) added to the
    pending axis. ys has shape (m, pending rows so far, states); the result has cap + 1 pending rows,
    everything at or beyond `cap` (enough to destroy the unit) collected in row `cap`."""
    m_count, rows, size = ys.shape
    powers = np.zeros((m_count, cap + 1))  # powers[m]: distribution of m critical wounds' mortal wounds
    powers[0, 0] = 1.0
    for m in range(1, m_count):  # one per possible critical wound of this group (at most its dice)
        c = np.convolve(powers[m - 1], mw)
        powers[m, :cap] = c[:cap]
        powers[m, cap] = c[cap:].sum()
    added = (powers.T @ ys.reshape(m_count, rows * size)).reshape(cap + 1, rows, size)
    if rows == 1:
        return added[:, 0, :].copy()
    # row i already held i mortal wounds from earlier groups: k new ones land on min(k + i, cap)
    return np.bincount(_pending_index(cap, rows, size), weights=added.ravel(),
                       minlength=(cap + 1) * size).reshape(cap + 1, size)


@lru_cache(maxsize=64)
def _pending_index(cap: int, rows: int, size: int) -> np.ndarray:
    """Flat index (min(k + i, cap), state) of entry (k, i, state) of `pending_combine`'s sums."""
    k = np.arange(cap + 1)[:, None]
    i = np.arange(rows)[None, :]
    dest = np.minimum(k + i, cap)[:, :, None] * size + np.arange(size)[None, None, :]
    out = dest.ravel()
    out.flags.writeable = False
    return out


def allocate_group(s: np.ndarray, gd: GroupDistribution, g: ResolvedGroup, target: Target,
                   devastating_pending: bool) -> np.ndarray:
    """Advance the state by one group's attacks (normal damage, then devastating per edition).
    `s` is one flat state vector, or (10e devastating wounds) one row per pending mortal-wound count."""
    joint = gd.joint
    loss = loss_pmf(g.damage, g.fnp)
    full = s
    if devastating_pending:  # only the pending rows that hold mass so far
        used = np.flatnonzero(s.any(axis=1))
        s = s[: used[-1] + 1]
    if gd.collapsed or joint.shape[1] == 1:
        weights = joint.sum(axis=1)
        weights = weights[: support(weights)[1] + 1]
        # a few dense steps are cheaper than the renewal mixture: for one state, or for a plan's operator
        # rows (engine.plan) while the state space is small
        if not devastating_pending and weights.size <= STEP_MAX_ATTACKS and (s.ndim == 1 or s.shape[-1] <= 64):
            return powers_mixture(s, make_step(loss, target, s), weights)  # a few steps are cheaper
        out = renewal_mixture(s, loss, weights, target.wounds)
        if devastating_pending:
            padded = np.zeros_like(full)
            padded[: out.shape[0]] = out
            return padded
        return out
    n_hi = support(joint.sum(axis=1))[1]
    m_hi = support(joint.sum(axis=0))[1]
    ys = renewal_mixture(s, loss, joint[: n_hi + 1, : m_hi + 1].T, target.wounds)  # ys[m]: sum_n P(n,m) T^n s
    if devastating_pending:
        return pending_combine(ys, loss_pmf(g.mortal_damage, g.fnp_mortal), full.shape[0] - 1)
    step_mortal = make_step(loss_pmf(g.mortal_damage, g.fnp_mortal), target, s)
    r = ys[m_hi]
    for mm in range(m_hi - 1, -1, -1):
        r = step_mortal(r) + ys[mm]
    return r


def final_flat(s: np.ndarray, target: Target) -> np.ndarray:
    """Distribution of k*W + j (wounds lost by the unit counting from a fresh unit), with 10e pending
    mortal wounds (row p) inflicted last: they carry over, so the flat index simply advances by p."""
    if s.ndim == 1:
        return s.copy()
    total = s.shape[1] - 1
    return np.bincount(_carry_index(*s.shape), weights=s.ravel(), minlength=total + 1)


@lru_cache(maxsize=64)
def _carry_index(rows: int, size: int) -> np.ndarray:
    """Flat index min(p + j, last) of entry (p, j) of `final_flat`: p pending wounds carry j onwards."""
    out = np.minimum(np.arange(rows)[:, None] + np.arange(size)[None, :], size - 1).ravel()
    out.flags.writeable = False
    return out


def same_damage(g: ResolvedGroup) -> bool:
    """A DEVASTATING critical wound inflicts what a failed save does (always so in 10e; in 11e unless the
    target has damage modifiers, which its mortal wounds ignore)."""
    return g.mortal_damage is g.damage or np.array_equal(g.mortal_damage, g.damage)


def distributions(groups: list[ResolvedGroup], devastating_spills: bool) -> list[GroupDistribution]:
    """Each group's joint distribution as `run` allocates it (state-independent: engine.plan keeps them)."""
    pending = devastating_spills and any(g.devastating for g in groups)
    return [group_distribution(g, not pending and g.fnp_mortal == g.fnp and same_damage(g)) for g in groups]


def run(groups: list[ResolvedGroup], target: Target, devastating_spills: bool,
        gds: list[GroupDistribution] | None = None) -> dict:
    """Exact result pieces for a volley: stages, models-killed pmf, damage pmf (`gds`: the groups'
    `distributions`, when already built)."""
    pending = devastating_spills and any(g.devastating for g in groups)
    k, w = target.models, target.wounds
    remaining = target.total_wounds
    s = np.zeros((remaining + 1, k * w + 1) if pending else k * w + 1)
    s[(0, target.wounds_lost) if pending else target.wounds_lost] = 1.0
    stages = {"attacks": 0.0, "hits": 0.0, "wounds": 0.0, "unsaved": 0.0}
    for g, gd in zip(groups, gds if gds is not None else distributions(groups, devastating_spills), strict=True):
        for key in stages:
            stages[key] += getattr(gd, key)
        s = allocate_group(s, gd, g, target, pending)
    flat = np.maximum(final_flat(s, target), 0.0)
    killed = np.bincount(np.arange(flat.size) // w, weights=flat, minlength=k + 1)[: k + 1]
    damage = flat[target.wounds_lost :]
    return {"stages": stages, "killed": killed, "damage": damage}
