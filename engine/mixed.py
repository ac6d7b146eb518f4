"""Exact distributions for a mixed target (contract 1b: `target.groups`, two or more model groups).

The unit is two queues of models: the non-CHARACTER models (groups in request order, model after
model) and the CHARACTER models (likewise). Because a wound always goes to the model that has already
lost wounds, and otherwise to the next model of its queue, each queue is described completely by one
number: the wounds it has lost so far, counting whole destroyed models at their full W (a "position";
position == the queue's total wounds means the queue is destroyed). The unit's state is the pair
(a, b) of positions, plus one extra absorbing state, so that "the unit is destroyed" remembers which
queue lost its last model (a wound that arrives afterwards is judged against that model's save, which
keeps `stages.unsaved` equal to the single-profile result).

A wound from a normal weapon moves the non-character queue while it has models, else the character
queue; a PRECISION wound moves the character queue while it has models, else the other one. One wound
is a dense transition matrix T over the states (the receiving model's save, damage modifiers and
Feel No Pain inside it; the excess damage is lost). Per weapon group:
- the joint distribution P(n, m) of n wounds that need a saving throw (normal wounds and LETHAL
  auto-wounds) and m DEVASTATING critical wounds comes from engine.exact (with saves switched off,
  since the save now depends on who receives the wound);
- ys[m] = sum_n P(n, m) x T^n: in two phases (engine.phases: the weapon's wounds go to one queue until it
  is destroyed, then to the other, so only powers of the two queues' own chains are needed, built at
  compile) when that is cheaper, else by stepping n once (large units);
- 11e: sum_m ys[m] M^m by Horner's rule, M = one critical wound's mortal wounds to one model
  (after that weapon's normal damage, at most one model each, 11e 24.10);
- 10e: the m critical wounds' mortal wounds go to a pending axis (one for normal weapons, one for
  PRECISION weapons) and are inflicted one at a time at the end of the volley, spilling over. Inflicting
  a normal and a PRECISION mortal wound commutes (each touches only its own queue while that queue has
  models, and both act identically once it has none), so two axes give the weapon-by-weapon order of
  contract 1b exactly.

Why one file of about 650 lines (issue 20 asks each product file over 500 lines for a reason): the state
layout of a mixed target (`Layout`, `Queue`) and the steps that move probability through it are one
computation (contract 1b); each step indexes the layout directly. `compile_volley` builds the state-independent part once
(engine.plan caches it), `Volley.run` moves the state through it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from engine import exact, limits
from engine.lru import STAGES
from engine.phases import Phases, worth_it
from engine.profiles import ModelGroup, Target
from engine.request import first_allocated
from engine.rules import ResolvedGroup


@dataclass
class Queue:
    """One allocation queue: the model groups it holds and, per position, the model's group and W."""

    groups: list[int]  # group indices (request order)
    starts: list[int]  # first position of each model
    model_group: list[int]  # group index of each model
    wounds: list[int]  # W of each model
    length: int  # total wounds; position == length: the queue is destroyed
    pos_group: np.ndarray  # group index per position (the model that receives the next wound)

    @classmethod
    def build(cls, target: Target, character: bool) -> Queue:
        groups = [i for i, g in enumerate(target.groups) if g.character == character]
        starts, model_group, wounds = [], [], []
        pos = 0
        for i in groups:
            g = target.groups[i]
            for _ in range(g.models):
                starts.append(pos)
                model_group.append(i)
                wounds.append(g.wounds)
                pos += g.wounds
        pos_group = np.full(pos + 1, -1, dtype=np.int64)
        for s, gi, w in zip(starts, model_group, wounds, strict=True):
            pos_group[s : s + w] = gi
        return cls(groups, starts, model_group, wounds, pos, pos_group)

    def matrix(self, losses: dict[int, np.ndarray]) -> np.ndarray:
        """(L+1, L+1) one-wound transition of this queue alone, given each group's loss pmf; the
        destroyed row is zero (the caller decides where a wound goes once the queue is destroyed)."""
        n = self.length + 1
        a = np.zeros((n, n))
        blocks: dict[int, np.ndarray] = {}
        for s, gi, w in zip(self.starts, self.model_group, self.wounds, strict=True):
            m = blocks.get(gi)
            if m is None:
                m = blocks[gi] = exact.step_matrix(losses[gi], w)
            a[s : s + w, s : s + w] = m[:, :w]
            a[s : s + w, s + w] += m[:, w]
        return a

    def killed_by_group(self, n_groups: int) -> np.ndarray:
        """(groups, L+1): models of each group destroyed at each position."""
        out = np.zeros((n_groups, self.length + 1))
        for s, gi, w in zip(self.starts, self.model_group, self.wounds, strict=True):
            out[gi, s + w :] += 1
        return out


@dataclass
class Layout:
    """The joint states: index a * (Lc + 1) + b for queue positions (a, b), then the extra state
    X = "destroyed, the last model destroyed was a non-character" (the state (La, Lc) is "destroyed,
    the last was a character").

    A one-wound matrix is linear in the groups' one-model step matrices (engine.exact.step_matrix), so
    the layout precomputes, once per target, where each of their entries lands: building T for a
    weapon is then one gather and one assignment."""

    nc: Queue
    ch: Queue
    size: int  # (La + 1) * (Lc + 1) + 1
    start: int
    last_nc_group: int
    last_ch_group: int
    offsets: list[int]  # where group i's step values (`_step_values`, 2W+1) start in the value vector
    scatter: dict[bool, tuple[np.ndarray, np.ndarray]]  # precision -> (flat T index, value index)
    receivers: dict[bool, np.ndarray]
    killed: np.ndarray  # (groups, states) models of each group destroyed
    lost: np.ndarray  # wounds lost by the unit per state, counting from a fresh unit
    group_wounds: list[int]  # W per group
    _single: dict = field(default_factory=dict, repr=False)  # precision -> `single_wound` (computed once)
    _moved: dict = field(default_factory=dict, repr=False)  # (precision, k_count, rows) -> `moved`

    @classmethod
    def build(cls, target: Target) -> Layout:
        return _layout(target.groups, target.wounds_lost)

    @property
    def terminal(self) -> int:
        return self.size - 2

    def transition(self, losses: dict[int, np.ndarray], precision: bool) -> np.ndarray:
        """The dense one-wound matrix T[from, to] for a weapon with these per-group loss pmfs.

        Each entry of a group's step matrix (engine.exact.step_matrix) is either a loss probability,
        zero or a tail probability P(loss >= l): the layout gathers them straight from one short
        vector per group (`_step_values`), and the flat T indices are unique, so T is one gather and
        one assignment (the same numbers as step_matrix, without building it)."""
        parts = [_step_values(losses[i], w) if i in losses else np.zeros(2 * w + 1)
                 for i, w in enumerate(self.group_wounds)]
        values = np.concatenate(parts + [_ONE])
        flat, idx = self.scatter[precision]
        t = np.zeros(self.size * self.size)
        t[flat] = values[idx]
        return t.reshape(self.size, self.size)

    def single_wound(self, precision: bool) -> np.ndarray:
        """Where one wound of exactly one damage (no save, no Feel No Pain) moves each state: that
        one-wound matrix has a single 1.0 per row, so k such wounds are k look-ups, not k products."""
        dest = self._single.get(precision)
        if dest is None:
            one = np.array([0.0, 1.0])
            t = self.transition(dict.fromkeys(range(len(self.group_wounds)), one), precision)
            dest = t.argmax(axis=1)
            if not np.array_equal(t[np.arange(self.size), dest], np.ones(self.size)):
                raise AssertionError("mixed layout: one damage does not move every state to one state")
            dest.flags.writeable = False
            self._single[precision] = dest
        return dest

    def moved(self, precision: bool, k_count: int, rows: int) -> np.ndarray:
        """For `_shift_sum`: the flat (row, state) index where state s of row r lands after k wounds of
        exactly one damage (k < k_count), as one read-only array of shape (k_count * rows * S,)."""
        key = (precision, k_count, rows)
        idx = self._moved.get(key)
        if idx is None:
            dest = self.single_wound(precision)
            moved = np.empty((k_count, self.size), dtype=np.int64)
            moved[0] = np.arange(self.size)
            for k in range(1, k_count):
                moved[k] = dest[moved[k - 1]]
            idx = (np.arange(rows)[None, :, None] * self.size + moved[:, None, :]).ravel()
            idx.flags.writeable = False
            if len(self._moved) < 64:  # a layout is shared by every plan of its target: keep a few
                self._moved[key] = idx
        return idx

    def receiver(self, precision: bool) -> np.ndarray:
        """Group index of the model that receives the next wound, per state (after destruction: the
        last model destroyed)."""
        return self.receivers[precision]


_ONE = np.ones(1)
_ONE.flags.writeable = False
_FIRST_ROW = np.zeros(1, dtype=np.int64)
_FIRST_ROW.flags.writeable = False


def _step_values(loss: np.ndarray, w: int) -> np.ndarray:
    """[loss[0..W-1] (zero-padded), 0, P(loss >= 1..W)]: every value a (W, W+1) step matrix holds,
    computed as engine.exact.step_matrix does (same tail cumsum, so the same floating-point values)."""
    out = np.zeros(2 * w + 1)
    n = min(w, loss.size)
    out[:n] = loss[:n]
    tail = np.cumsum(loss[::-1])[::-1]  # tail[l] = P(L >= l)
    k = min(loss.size, w + 1)
    out[w + 1 : w + k] = tail[1:k]
    return out


@lru_cache(maxsize=64)
def _step_index(w: int) -> np.ndarray:
    """Index into `_step_values` of each entry of the flattened (W, W+1) step matrix."""
    j = np.arange(w)[:, None]
    k = np.arange(w + 1)[None, :]
    idx = np.where(k < j, w, k - j)  # below the diagonal: the zero at index W
    idx = np.where(k == w, 2 * w - j, idx)  # kill column: P(L >= W - j) at index W + (W - j)
    idx = idx.ravel()
    idx.flags.writeable = False
    return idx


def _queue_entries(q: Queue, offsets: list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every entry of the queue's one-wound matrix: (from position, to position, value index)."""
    frm, to, idx = [], [], []
    for s, gi, w in zip(q.starts, q.model_group, q.wounds, strict=True):
        j = np.repeat(np.arange(w), w + 1)
        k = np.tile(np.arange(w + 1), w)
        frm.append(s + j)
        to.append(s + k)
        idx.append(offsets[gi] + _step_index(w)[j * (w + 1) + k])
    if not frm:
        return (np.zeros(0, dtype=np.int64),) * 3
    return np.concatenate(frm), np.concatenate(to), np.concatenate(idx)


@lru_cache(maxsize=64)
def _layout(groups: tuple[ModelGroup, ...], wounds_lost: int) -> Layout:
    target = Target(0, 0, 7, None, 1, groups=groups, wounds_lost=wounds_lost)
    nc, ch = Queue.build(target, False), Queue.build(target, True)
    la, lc = nc.length, ch.length
    cols = lc + 1
    size = (la + 1) * cols + 1
    terminal, extra = size - 2, size - 1
    start = wounds_lost * cols if la else wounds_lost
    offsets, total = [], 0
    for g in groups:
        offsets.append(total)
        total += 2 * g.wounds + 1
    one = total  # index of the constant 1.0 at the end of the value vector
    nf, nt, ni = _queue_entries(nc, offsets)
    cf, ct, ci = _queue_entries(ch, offsets)
    bs = np.arange(cols)
    as_ = np.arange(la + 1)

    def moves_nc(rows_b: np.ndarray):
        """The non-character queue moves, the character position stays (one copy per b)."""
        return ((nf[:, None] * cols + rows_b[None, :]).ravel(), (nt[:, None] * cols + rows_b[None, :]).ravel(),
                np.repeat(ni, rows_b.size))

    def moves_ch(rows_a: np.ndarray):
        return ((rows_a[:, None] * cols + cf[None, :]).ravel(), (rows_a[:, None] * cols + ct[None, :]).ravel(),
                np.tile(ci, rows_a.size))

    scatter = {}
    receivers = {}
    a_of = np.repeat(as_, cols)
    b_of = np.tile(bs, la + 1)
    ga, gb = nc.pos_group[a_of], ch.pos_group[b_of]
    for precision in (False, True):
        if precision and lc:
            parts = [moves_ch(as_), moves_nc(np.array([lc]))]  # characters while any; then the rest
            recv = np.where(b_of < lc, gb, ga)
        else:
            parts = [moves_nc(bs), moves_ch(np.array([la]))]
            recv = np.where(a_of < la, ga, gb)
        frm = np.concatenate([p[0] for p in parts])
        to = np.concatenate([p[1] for p in parts])
        idx = np.concatenate([p[2] for p in parts])
        # a move into "destroyed" from a state whose character queue is already gone: a non-character
        # model was the last one destroyed
        last_nc = (to == terminal) & (frm % cols == lc) & (frm // cols < la)
        to = np.where(last_nc, extra, to)
        keep = (frm != terminal)
        frm, to, idx = frm[keep], to[keep], idx[keep]
        frm = np.concatenate([frm, [terminal, extra]])
        to = np.concatenate([to, [terminal, extra]])
        idx = np.concatenate([idx, [one, one]])
        flat = frm * size + to
        if np.unique(flat).size != flat.size:  # each (from, to) pair is written once: T is a plain gather
            raise AssertionError("mixed layout: a transition entry is written twice")
        scatter[precision] = (flat, idx)
        r = np.empty(size, dtype=np.int64)
        r[:-1] = recv
        r[terminal] = ch.groups[-1] if lc else nc.groups[-1]
        r[extra] = nc.groups[-1] if la else ch.groups[-1]
        receivers[precision] = r
    n_groups = len(groups)
    killed = np.zeros((n_groups, size), dtype=np.int64)
    killed[:, :-1] = (nc.killed_by_group(n_groups)[:, a_of] + ch.killed_by_group(n_groups)[:, b_of]).astype(np.int64)
    killed[:, terminal] = killed[:, extra] = [g.models for g in groups]
    lost = np.empty(size, dtype=np.int64)
    lost[:-1] = a_of + b_of
    lost[terminal] = lost[extra] = la + lc
    for arr in (killed, lost):
        arr.flags.writeable = False
    lay = Layout(nc, ch, size, start, nc.groups[-1] if nc.groups else -1, ch.groups[-1] if ch.groups else -1,
                 offsets, scatter, receivers, killed, lost, [g.wounds for g in groups])
    return lay


def _save_mixed(loss: np.ndarray, save: float) -> np.ndarray:
    out = loss * (1.0 - save)
    out[0] += save
    return out


def _mixture_steps(x: np.ndarray, t: np.ndarray, joint: np.ndarray, n_pmf: np.ndarray,
                   fail: np.ndarray) -> tuple[np.ndarray, float]:
    """ys[m] = sum_n joint[n, m] x T^n for rows x (rows, S), and the expected failed saves (each of
    the n wounds fails with the receiving model's probability `fail` per state); n_pmf is the joint's
    n marginal. One row (always so in 11e) is stepped as a vector against T's transpose: the
    matrix-vector product BLAS does fastest."""
    n_max = joint.shape[0] - 1
    xs = np.empty((n_max + 1,) + x.shape)
    xs[0] = x
    if x.shape[0] == 1:
        vs = xs[:, 0]
        tt = t.T
        for n in range(n_max):
            np.dot(tt, vs[n], out=vs[n + 1])
    else:
        for n in range(n_max):
            np.dot(xs[n], t, out=xs[n + 1])
    flat = xs.reshape(n_max + 1, -1)
    ys = (joint.T @ flat).reshape((joint.shape[1],) + x.shape)
    if not n_max:
        return ys, 0.0
    tail = n_pmf[:0:-1].cumsum()[::-1]  # P(N >= n), n >= 1
    unsaved = float(tail @ (xs[:-1] @ fail).sum(axis=-1))
    return ys, unsaved


def _trimmed_joint(joint: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The joint without its negligible tails, and its n and m marginals."""
    n_hi = exact.support(joint.sum(axis=1))[1]
    if joint.shape[1] == 1:
        joint = joint[: n_hi + 1]
        return joint, joint[:, 0], np.ones(1)
    m_hi = exact.support(joint.sum(axis=0))[1]
    joint = joint[: n_hi + 1, : m_hi + 1]
    return joint, joint.sum(axis=1), joint.sum(axis=0)


def _pending_cap(groups: list[ResolvedGroup], target: Target, thinned: bool) -> int:
    """Rows of a 10e pending axis (raw mortal wounds; the last row holds "at least this many").

    Already thinned by a Feel No Pain every model shares, or without any mortal FNP, a mortal wound
    always costs a wound and the unit's remaining wounds are enough. Otherwise each pending mortal
    wound is still to be rolled against the receiving model's FNP: the cap is the smallest count whose
    chance of NOT destroying the unit, even with the best FNP of the unit, is below
    limits.TAIL_EPSILON (or everything the volley's critical wounds can inflict, when that is less)."""
    wounds = target.total_wounds
    keep = max(kp for g in groups for kp in g.group_fnp_mortal)
    if thinned or keep == 0.0:
        return wounds
    support = sum(g.models * (g.attacks_per_model.size - 1) * (1 + (g.sustained.size - 1 if g.sustained is not None else 0))
                  * (max(d.size for d in g.group_mortal_damage) - 1) for g in groups if g.devastating)
    return min(support, _fnp_cap(wounds, keep))


@lru_cache(maxsize=256)
def _fnp_cap(wounds: int, keep: float) -> int:
    """Smallest c with P(Binomial(c, 1 - keep) < wounds) < TAIL_EPSILON."""
    below = np.zeros(wounds)  # pmf of wounds lost so far, below `wounds`
    below[0] = 1.0
    c = 0
    while below.sum() >= limits.TAIL_EPSILON:
        nxt = below * keep
        nxt[1:] += below[:-1] * (1.0 - keep)
        below = nxt
        c += 1
    return max(c, wounds)


def _pending_powers(mw: np.ndarray, m_count: int, cap: int) -> np.ndarray:
    """(m_count, cap + 1): row m is the distribution of m critical wounds' mortal wounds (each distributed
    as `mw`), everything at or beyond `cap` in column `cap` (capping once at the end is the same: mortal
    wounds never decrease, so mass beyond the cap stays there). State-independent: built at compile."""
    full = np.zeros((m_count, (m_count - 1) * (mw.size - 1) + 1))
    full[0, 0] = 1.0
    for m in range(1, m_count):
        n = m * (mw.size - 1) + 1
        full[m, :n] = np.convolve(full[m - 1, : n - mw.size + 1], mw)
    powers = np.zeros((m_count, cap + 1))
    powers[:, : min(cap, full.shape[1])] = full[:, :cap]
    powers[:, cap] = full[:, cap:].sum(axis=1)
    return powers


def _add_pending(ys: np.ndarray, live: np.ndarray, shape: tuple, powers: np.ndarray, axis: int) -> np.ndarray:
    """The new (normal pending, PRECISION pending, state) array: ys[m] (one row per entry of `live`,
    a flat index into the first two axes of `shape`) with m critical wounds' mortal wounds (`powers`,
    `_pending_powers`) added on `axis` (0: normal, 1: PRECISION); at or beyond the axis' last row
    everything lands in that row."""
    m_count = ys.shape[0]
    cap = shape[axis] - 1
    added = (powers.T @ ys.reshape(m_count, -1)).reshape((cap + 1,) + ys.shape[1:])  # [k, row, S]
    out = np.zeros(shape)
    if live.size == 1 and live[0] == 0:  # nothing pending yet (the first devastating group): one copy
        if axis == 0:
            out[:, 0] = added[:, 0]
        else:
            out[0] = added[:, 0]
        return out
    rows_n, rows_p = np.divmod(live, shape[1])
    for i, (pn, pp) in enumerate(zip(rows_n, rows_p, strict=True)):
        p = (pn, pp)[axis]
        dest = out[:, pp] if axis == 0 else out[pn]  # (cap + 1, S) view along the pending axis
        dest[p:] += added[: cap + 1 - p, i]
        if p:
            dest[cap] += added[cap + 1 - p :, i].sum(axis=0)
    return out


@dataclass(frozen=True, eq=False)
class _Step:
    """One weapon group against the layout, everything that does not depend on the state: the trimmed
    joint (n, m) distribution, the one-wound matrix, the chance each receiving model fails its save,
    and what its DEVASTATING critical wounds do (11e: a mortal-wound matrix; 10e: a pending-axis pmf)."""

    joint: np.ndarray
    n_pmf: np.ndarray
    m_mean: float
    t: np.ndarray | None  # the one-wound matrix, stepped n times (None: `phases` replace it)
    phases: Phases | None  # the mixture over n in two phases (engine.phases), when cheaper
    fail: np.ndarray
    mortal: np.ndarray | None  # 11e: one critical wound's transition matrix
    pending_powers: np.ndarray | None  # 10e: m critical wounds' mortal wounds on the pending axis (per m)
    precision: bool
    counts: tuple[float, float, float]  # expected attacks, hits and wounds of the group

    @property
    def nbytes(self) -> int:
        """Every array the step holds (the stage cache's byte cap counts them)."""
        arrays = (self.joint, self.n_pmf, self.t, self.fail, self.mortal, self.pending_powers)
        return sum(a.nbytes for a in arrays if a is not None) + (self.phases.nbytes if self.phases else 0)


@dataclass(frozen=True, eq=False)
class Volley:
    """A volley against a mixed target, compiled (engine.plan): `run()` evaluates it."""

    layout: Layout
    target: Target
    groups: tuple[ResolvedGroup, ...]
    steps: tuple[_Step, ...]
    shape: tuple[int, int, int]  # (normal pending rows, PRECISION pending rows, states)
    pending: bool
    thinned: bool
    stages: dict

    @property
    def nbytes(self) -> int:
        return sum(st.nbytes for st in self.steps)

    def run(self) -> dict:
        """Exact result pieces: stages, killed pmf (whole unit and per group), damage pmf."""
        lay = self.layout
        x = np.zeros(self.shape)
        x[0, 0, lay.start] = 1.0
        unsaved_total = 0.0
        for st in self.steps:
            flat = x.reshape(-1, lay.size)
            # 10e: only the pending rows that hold mass so far (one row without a pending axis)
            live = _FIRST_ROW if flat.shape[0] == 1 else np.flatnonzero(flat.any(axis=1))
            if st.phases is not None:
                mixed = st.phases.mix(flat[live])
                ys, unsaved = mixed[:-1], float((mixed[-1] @ st.fail).sum())
            else:
                ys, unsaved = _mixture_steps(flat[live], st.t, st.joint, st.n_pmf, st.fail)
            unsaved_total += unsaved + st.m_mean
            if st.pending_powers is not None:
                x = _add_pending(ys, live, x.shape, st.pending_powers, int(st.precision))
                continue
            r = ys[0] if st.mortal is None else _horner(ys, st.mortal)
            if flat.shape[0] == 1:
                x = r.reshape(x.shape)
                continue
            flat = np.zeros_like(flat)
            flat[live] = r
            x = flat.reshape(x.shape)
        final = x[0, 0] if not self.pending else _inflict_pending(x, list(self.groups), lay, self.thinned)
        stages = dict(self.stages, unsaved=self.stages["unsaved"] + unsaved_total)
        return _summarise(final, lay, self.target, len(self.target.groups), stages)


def compile_volley(groups: list[ResolvedGroup], target: Target, devastating_spills: bool) -> Volley:
    """Everything of `run` that does not depend on the state, once per volley."""
    lay = Layout.build(target)
    pending = devastating_spills and any(g.devastating for g in groups)
    keeps = {kp for g in groups for kp in g.group_fnp_mortal}
    thinned = len(keeps) == 1  # every model rolls the same mortal-wound FNP: roll it as the wounds arrive
    cap_n = cap_p = 0
    if pending:
        cap = _pending_cap(groups, target, thinned)
        cap_n = cap if any(g.devastating and not g.precision for g in groups) else 0
        cap_p = cap if any(g.devastating and g.precision for g in groups) else 0
    stages = {"attacks": 0.0, "hits": 0.0, "wounds": 0.0, "unsaved": 0.0}
    steps = []
    for g in groups:
        # a group's step depends on the group and the layout, and a 10e DEVASTATING group's on the
        # volley's pending axis too: kept by value (docs/engine.md, "The cold path")
        cap = cap_p if g.precision else cap_n
        key = _step_key(g, target) + ((thinned, cap) if pending and g.devastating else ())
        step = STAGES.get(key)
        if step is None:
            step = _compile_step(g, target, lay, pending, thinned, cap)
            STAGES.put(key, step)
        for name, value in zip(("attacks", "hits", "wounds"), step.counts, strict=True):
            stages[name] += value
        steps.append(step)
    return Volley(lay, target, tuple(groups), tuple(steps), (cap_n + 1, cap_p + 1, lay.size), pending, thinned,
                  stages)


def _step_key(g: ResolvedGroup, target: Target) -> tuple:
    """Everything a group's step depends on without a pending axis: the die's kernel, the attack dice,
    what each model group's saves, damage and Feel No Pain do to it, and the layout's model groups (not
    `wounds_lost`, which only moves the starting state)."""
    return ("mixed step", exact.kernel_key(g, not g.devastating, saves=False), g.attacks_per_model.tobytes(),
            g.models, tuple(d.tobytes() for d in g.group_damage), tuple(g.group_fnp),
            tuple(d.tobytes() for d in g.group_mortal_damage), tuple(g.group_fnp_mortal), tuple(g.group_saves),
            g.precision, target.groups)


def _compile_step(g: ResolvedGroup, target: Target, lay: Layout, pending: bool, thinned: bool, cap: int) -> _Step:
    """One weapon group's state-independent step against the layout (`cap`: its pending axis' last row)."""
    n_groups = len(target.groups)
    gd = exact.group_distribution(g, collapse_ok=not g.devastating, saves=False)
    joint, n_pmf, m_pmf = _trimmed_joint(gd.joint)
    saves = g.group_save_probs()
    losses = {i: _save_mixed(exact.loss_pmf(g.group_damage[i], g.group_fnp[i]), saves[i]) for i in range(n_groups)}
    m_mean = float(np.dot(np.arange(m_pmf.size), m_pmf)) if m_pmf.size > 1 else 0.0
    mortal = pending_mw = None
    if joint.shape[1] > 1 and pending:
        amount = lay.ch.groups[0] if g.precision else first_allocated(target.groups)
        pending_mw = g.group_mortal_damage[amount]
        if thinned:
            pending_mw = exact.loss_pmf(pending_mw, g.group_fnp_mortal[0])
        pending_mw = _pending_powers(pending_mw, joint.shape[1], cap)
    elif joint.shape[1] > 1:
        mortal = lay.transition({i: exact.loss_pmf(g.group_mortal_damage[i], g.group_fnp_mortal[i])
                                 for i in range(n_groups)}, g.precision)
    t, phases = lay.transition(losses, g.precision), None
    first_is_nc = not (g.precision and lay.ch.length)
    if worth_it(lay.nc.length, lay.ch.length, first_is_nc, joint.shape[0] - 1, joint.shape[1] + 1, lay.size):
        unsaved_weights = np.zeros(joint.shape[0])  # P(N >= n + 1): the n-th wound's save is rolled
        unsaved_weights[:-1] = n_pmf[:0:-1].cumsum()[::-1]
        phases = Phases.build(t, lay.nc.length, lay.ch.length, first_is_nc,
                              np.column_stack([joint, unsaved_weights]))
        t = None
    step = _Step(joint, n_pmf, m_mean, t, phases, 1.0 - np.asarray(saves)[lay.receiver(g.precision)],
                 mortal, pending_mw, g.precision, (gd.attacks, gd.hits, gd.wounds))
    for arr in (step.joint, step.n_pmf, step.t, step.fail, step.mortal, step.pending_powers):
        if arr is not None:
            arr.flags.writeable = False  # a compiled step is shared by every run of every plan holding it
    return step


def run(groups: list[ResolvedGroup], target: Target, devastating_spills: bool) -> dict:
    """Exact result pieces for a volley against a mixed target: stages, killed pmf (whole unit and per
    group), damage pmf."""
    return compile_volley(groups, target, devastating_spills).run()


def _inflict_pending(x: np.ndarray, groups: list[ResolvedGroup], lay: Layout, thinned: bool) -> np.ndarray:
    """10e: the pending mortal wounds, one at a time (spilling over), with each model's mortal FNP."""
    keep = groups[0].group_fnp_mortal
    if thinned or not any(keep):  # every pending mortal wound costs exactly one wound: look-ups
        y = _shift_sum(x.transpose(1, 0, 2), lay.moved(True, x.shape[1], x.shape[0])) if x.shape[1] > 1 else x[:, 0]
        return _shift_sum(y[:, None], lay.moved(False, y.shape[0], 1))[0] if y.shape[0] > 1 else y[0]
    ones = {i: exact.loss_pmf(np.array([0.0, 1.0]), keep[i]) for i in range(len(keep))}
    y = _horner(x.transpose(1, 0, 2), lay.transition(ones, True)) if x.shape[1] > 1 else x[:, 0]
    return _horner(y, lay.transition(ones, False)) if y.shape[0] > 1 else y[0]


def _shift_sum(terms: np.ndarray, moved: np.ndarray) -> np.ndarray:
    """sum_k terms[k] T^k for a T that moves each state s to dest[s] with certainty (terms[k]: rows
    of state vectors, shape (k, rows, S)): state s of row r of terms[k] lands on flat index
    `moved[k, r, s]` = r S + dest^k(s) (Layout.moved), so the sum is one bincount."""
    k_count, rows, size = terms.shape
    return np.bincount(moved, weights=terms.ravel(), minlength=rows * size).reshape(rows, size)


def _horner(terms: np.ndarray, t: np.ndarray) -> np.ndarray:
    """sum_k terms[k] T^k by Horner's rule (terms[k]: a state vector or rows of them); a single row
    is stepped as a vector against T's transpose (gemv, the cheapest product for BLAS)."""
    one_row = terms.ndim == 3 and terms.shape[1] == 1
    if one_row:
        terms = terms[:, 0]
    r = terms[-1].copy()
    if r.ndim == 1:
        tt = t.T
        for k in range(terms.shape[0] - 2, -1, -1):
            r = np.dot(tt, r)
            r += terms[k]
    else:
        for k in range(terms.shape[0] - 2, -1, -1):
            r = np.dot(r, t)
            r += terms[k]
    return r[None] if one_row else r


def _summarise(final: np.ndarray, lay: Layout, target: Target, n_groups: int, stages: dict) -> dict:
    final = np.maximum(final, 0.0)
    total = lay.killed.sum(axis=0)
    killed = np.bincount(total, weights=final, minlength=target.models + 1)[: target.models + 1]
    damage = np.bincount(np.maximum(lay.lost - target.wounds_lost, 0), weights=final,  # below 0: unreachable
                         minlength=target.total_wounds + 1)
    groups_killed = [np.bincount(lay.killed[i], weights=final, minlength=g.models + 1)[: g.models + 1]
                     for i, g in enumerate(target.groups)]
    return {"stages": stages, "killed": killed, "damage": damage, "groups": groups_killed}


def work_estimate(groups: list[ResolvedGroup], target: Target, devastating_spills: bool) -> tuple[int, int]:
    """(dense states, estimated floating-point work) of `run`, for engine.api.check_size. Follows
    `run`: each weapon steps only the pending rows that hold mass so far."""
    la = sum(g.models * g.wounds for g in target.groups if not g.character)
    lc = sum(g.models * g.wounds for g in target.groups if g.character)
    size = (la + 1) * (lc + 1) + 1
    if size > limits.MAX_MIXED_STATES_EXACT:  # refused on size alone: estimate nothing more
        return size, 0
    pending = devastating_spills and any(g.devastating for g in groups)
    cap = 0
    if pending:
        keeps = {kp for g in groups for kp in g.group_fnp_mortal}
        cap = _pending_cap(groups, target, len(keeps) == 1)
    rows = [1, 1]  # populated rows of the (normal, PRECISION) pending axes
    work = 0
    for g in groups:
        cmax = g.models * (g.attacks_per_model.size - 1)
        n_max = cmax * (1 + (g.sustained.size - 1 if g.sustained is not None else 0))
        m_max = cmax if g.devastating else 0
        live = rows[0] * rows[1]
        work += 3 * size * size + n_max * live * size * (size + m_max + 1)
        if g.devastating:  # the joint (normal, devastating) distribution by FFT
            work += (n_max + 1) ** 2 * (cmax + 1) * 4
            if pending:
                axis = int(g.precision)
                work += live * (m_max + 1) * (cap + 1) * size
                rows[axis] = cap + 1
            else:
                work += m_max * size * size
    if pending:
        work += rows[0] * rows[1] * size * size
    return size, work
