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
- ys[m] = sum_n P(n, m) x T^n by stepping n once;
- 11e: sum_m ys[m] M^m by Horner's rule, M = one critical wound's mortal wounds to one model
  (after that weapon's normal damage, at most one model each, 11e 24.10);
- 10e: the m critical wounds' mortal wounds go to a pending axis (one for normal weapons, one for
  PRECISION weapons) and are inflicted one at a time at the end of the volley, spilling over. Inflicting
  a normal and a PRECISION mortal wound commutes (each touches only its own queue while that queue has
  models, and both act identically once it has none), so two axes give the weapon-by-weapon order of
  contract 1b exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from engine import exact
from engine.profiles import Target
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
    the last was a character")."""

    nc: Queue
    ch: Queue
    size: int  # (La + 1) * (Lc + 1) + 1
    start: int
    last_nc_group: int
    last_ch_group: int

    @classmethod
    def build(cls, target: Target) -> Layout:
        nc, ch = Queue.build(target, False), Queue.build(target, True)
        size = (nc.length + 1) * (ch.length + 1) + 1
        first = first_allocated(target.groups)
        if nc.length:
            start = target.wounds_lost * (ch.length + 1)
        else:
            start = target.wounds_lost
        assert target.groups[first].character == (nc.length == 0)
        last_nc = nc.groups[-1] if nc.groups else -1
        last_ch = ch.groups[-1] if ch.groups else -1
        return cls(nc, ch, size, start, last_nc, last_ch)

    @property
    def terminal(self) -> int:
        return self.size - 2

    @property
    def extra(self) -> int:
        return self.size - 1

    def transition(self, losses: dict[int, np.ndarray], precision: bool) -> np.ndarray:
        """The dense one-wound matrix T[from, to] for a weapon with these per-group loss pmfs."""
        la, lc = self.nc.length, self.ch.length
        a_nc = self.nc.matrix(losses)
        a_ch = self.ch.matrix(losses)
        ia, ic = np.eye(la + 1), np.eye(lc + 1)
        ea = np.zeros((la + 1, la + 1))
        ea[la, la] = 1.0
        ec = np.zeros((lc + 1, lc + 1))
        ec[lc, lc] = 1.0
        core = (np.kron(ia, a_ch) + np.kron(a_nc, ec)) if precision and lc else (np.kron(a_nc, ic) + np.kron(ea, a_ch))
        t = np.zeros((self.size, self.size))
        t[:-1, :-1] = core
        # Rows where the character queue is already destroyed and the non-character queue is not: a
        # move into the destroyed state means a non-character was the last model destroyed.
        rows = np.arange(la) * (lc + 1) + lc
        t[rows, -1] = t[rows, self.terminal]
        t[rows, self.terminal] = 0.0
        t[self.terminal, :] = 0.0
        t[self.terminal, self.terminal] = 1.0
        t[-1, -1] = 1.0
        return t

    def receiver(self, precision: bool) -> np.ndarray:
        """Group index of the model that receives the next wound, per state (after destruction: the
        last model destroyed)."""
        la, lc = self.nc.length, self.ch.length
        a = np.repeat(np.arange(la + 1), lc + 1)
        b = np.tile(np.arange(lc + 1), la + 1)
        ga, gb = self.nc.pos_group[a], self.ch.pos_group[b]
        if precision and lc:
            recv = np.where(b < lc, gb, ga)
        else:
            recv = np.where(a < la, ga, gb)
        out = np.empty(self.size, dtype=np.int64)
        out[:-1] = recv
        out[self.terminal] = self.last_ch_group if lc else self.last_nc_group
        out[-1] = self.last_nc_group if la else self.last_ch_group
        return out


def _save_mixed(loss: np.ndarray, save: float) -> np.ndarray:
    out = loss * (1.0 - save)
    out[0] += save
    return out


def _mixture_steps(x: np.ndarray, t: np.ndarray, joint: np.ndarray, fail: np.ndarray) -> tuple[np.ndarray, float]:
    """ys[m] = sum_n joint[n, m] x T^n for rows x (rows, S), and the expected failed saves (each of
    the n wounds fails with the receiving model's probability `fail` per state)."""
    n_max = joint.shape[0] - 1
    tail = joint.sum(axis=1)[::-1].cumsum()[::-1]  # P(N >= n)
    ys = np.zeros((joint.shape[1],) + x.shape)
    unsaved = 0.0
    for n in range(n_max + 1):
        ys += joint[n][:, None, None] * x[None]
        if n == n_max:
            break
        unsaved += tail[n + 1] * float((x @ fail).sum())
        x = x @ t
    return ys, unsaved


def _trimmed_joint(joint: np.ndarray) -> np.ndarray:
    n_hi = exact._trim(joint.sum(axis=1))[1]
    m_hi = exact._trim(joint.sum(axis=0))[1]
    return joint[: n_hi + 1, : m_hi + 1]


def _pending_cap(groups: list[ResolvedGroup], target: Target, thinned: bool) -> int:
    """Rows of a pending axis: the unit's wounds when extra mortal wounds cannot matter (no mortal
    Feel No Pain, or already thinned), else everything the volley's critical wounds can inflict."""
    if thinned:
        return target.total_wounds
    return sum(g.models * (g.attacks_per_model.size - 1) * (1 + (g.sustained.size - 1 if g.sustained is not None else 0))
               * (max(d.size for d in g.group_damage) - 1) for g in groups if g.devastating)


def _add_pending(ys: np.ndarray, mw: np.ndarray, axis: int, cap: int) -> np.ndarray:
    """sum_m ys[m] shifted along the pending `axis` (0: normal, 1: PRECISION) by m critical wounds'
    mortal wounds (each distributed as `mw`); everything at or beyond `cap` lands in row `cap`."""
    m_count = ys.shape[0]
    powers = np.zeros((m_count, cap + 1))
    powers[0, 0] = 1.0
    for m in range(1, m_count):
        c = np.convolve(powers[m - 1], mw)
        powers[m, :cap] = c[:cap]
        powers[m, cap] = c[cap:].sum()
    x = np.moveaxis(ys, axis + 1, 1)  # (m, pending, other, S)
    rest = x.shape[2:]
    out = np.zeros((cap + 1,) + rest)
    for p in np.flatnonzero(x.any(axis=tuple(i for i in range(x.ndim) if i != 1))):
        added = (powers.T @ x[:, p].reshape(m_count, -1)).reshape((cap + 1,) + rest)  # added[k]: p + k pending
        out[p:] += added[: cap + 1 - p]
        out[cap] += added[cap + 1 - p :].sum(axis=0)
    return np.moveaxis(out, 0, axis)


def run(groups: list[ResolvedGroup], target: Target, devastating_spills: bool) -> dict:
    """Exact result pieces for a volley against a mixed target: stages, killed pmf (whole unit and
    per group), damage pmf."""
    lay = Layout.build(target)
    n_groups = len(target.groups)
    pending = devastating_spills and any(g.devastating for g in groups)
    keeps = {kp for g in groups for kp in g.group_fnp_mortal}
    thinned = len(keeps) == 1  # every model rolls the same mortal-wound FNP: roll it as the wounds arrive
    cap_n = cap_p = 0
    if pending:
        cap = _pending_cap(groups, target, thinned or keeps == {0.0})
        cap_n = cap if any(g.devastating and not g.precision for g in groups) else 0
        cap_p = cap if any(g.devastating and g.precision for g in groups) else 0
    x = np.zeros((cap_n + 1, cap_p + 1, lay.size))
    x[0, 0, lay.start] = 1.0
    stages = {"attacks": 0.0, "hits": 0.0, "wounds": 0.0, "unsaved": 0.0}
    for g in groups:
        no_save = replace(g, save_threshold=8)
        gd = exact.group_distribution(no_save, collapse_ok=not g.devastating)
        stages["attacks"] += gd.attacks
        stages["hits"] += gd.hits
        stages["wounds"] += gd.wounds
        joint = _trimmed_joint(gd.joint)
        saves = g.group_save_probs()
        losses = {i: _save_mixed(exact.loss_pmf(g.group_damage[i], g.group_fnp[i]), saves[i]) for i in range(n_groups)}
        t = lay.transition(losses, g.precision)
        fail = 1.0 - np.asarray(saves)[lay.receiver(g.precision)]
        shape = x.shape
        live = np.flatnonzero(x.reshape(-1, lay.size).any(axis=1))
        flat = x.reshape(-1, lay.size)
        ys_live, unsaved = _mixture_steps(flat[live], t, joint, fail)
        ys = np.zeros((joint.shape[1],) + flat.shape)
        ys[:, live] = ys_live
        ys = ys.reshape((joint.shape[1],) + shape)
        m_mean = float(np.dot(np.arange(joint.shape[1]), joint.sum(axis=0)))
        stages["unsaved"] += unsaved + m_mean
        if joint.shape[1] == 1:
            x = ys[0]
        elif pending:
            amount = first_allocated(target.groups)
            if g.precision:
                amount = lay.ch.groups[0]
            mw = g.group_damage[amount]
            if thinned:
                mw = exact.loss_pmf(mw, g.group_fnp_mortal[0])
            x = _add_pending(ys, mw, 1 if g.precision else 0, cap_p if g.precision else cap_n)
        else:
            mortal = {i: exact.loss_pmf(g.group_damage[i], g.group_fnp_mortal[i]) for i in range(n_groups)}
            tm = lay.transition(mortal, g.precision)
            r = ys[-1]
            for m in range(joint.shape[1] - 2, -1, -1):
                r = r @ tm + ys[m]
            x = r
    final = x[0, 0] if not pending else _inflict_pending(x, groups, lay, thinned)
    return _summarise(final, lay, target, n_groups, stages)


def _inflict_pending(x: np.ndarray, groups: list[ResolvedGroup], lay: Layout, thinned: bool) -> np.ndarray:
    """10e: the pending mortal wounds, one at a time (spilling over), with each model's mortal FNP."""
    keep = groups[0].group_fnp_mortal
    ones = {i: exact.loss_pmf(np.array([0.0, 1.0]), 0.0 if thinned else keep[i]) for i in range(len(keep))}
    y = x[:, -1]
    if x.shape[1] > 1:
        tp = lay.transition(ones, True)
        for p in range(x.shape[1] - 2, -1, -1):
            y = y @ tp + x[:, p]
    z = y[-1]
    if y.shape[0] > 1:
        tn = lay.transition(ones, False)
        for p in range(y.shape[0] - 2, -1, -1):
            z = z @ tn + y[p]
    return z


def _summarise(final: np.ndarray, lay: Layout, target: Target, n_groups: int, stages: dict) -> dict:
    final = np.maximum(final, 0.0)
    la, lc = lay.nc.length, lay.ch.length
    a = np.repeat(np.arange(la + 1), lc + 1)
    b = np.tile(np.arange(lc + 1), la + 1)
    per_group = np.zeros((n_groups, lay.size), dtype=np.int64)
    per_group[:, :-1] = (lay.nc.killed_by_group(n_groups)[:, a] + lay.ch.killed_by_group(n_groups)[:, b]).astype(np.int64)
    per_group[:, -1] = [g.models for g in target.groups]
    per_group[:, lay.terminal] = [g.models for g in target.groups]
    total = per_group.sum(axis=0)
    killed = np.bincount(total, weights=final, minlength=target.models + 1)[: target.models + 1]
    lost = np.empty(lay.size, dtype=np.int64)
    lost[:-1] = a + b
    lost[lay.terminal] = lost[-1] = la + lc
    damage = np.bincount(np.maximum(lost - target.wounds_lost, 0), weights=final,  # below: unreachable
                         minlength=target.total_wounds + 1)
    groups_killed = [np.bincount(per_group[i], weights=final, minlength=g.models + 1)[: g.models + 1]
                     for i, g in enumerate(target.groups)]
    return {"stages": stages, "killed": killed, "damage": damage, "groups": groups_killed}


def work_estimate(groups: list[ResolvedGroup], target: Target, devastating_spills: bool) -> tuple[int, int]:
    """(dense states, estimated floating-point work) of `run`, for engine.api.check_size."""
    la = sum(g.models * g.wounds for g in target.groups if not g.character)
    lc = sum(g.models * g.wounds for g in target.groups if g.character)
    size = (la + 1) * (lc + 1) + 1
    pending = devastating_spills and any(g.devastating for g in groups)
    rows = 1
    if pending:
        keeps = {kp for g in groups for kp in g.group_fnp_mortal}
        cap = _pending_cap(groups, target, len(keeps) == 1 or keeps == {0.0}) + 1
        rows = cap * (cap if any(g.devastating and g.precision for g in groups) and
                      any(g.devastating and not g.precision for g in groups) else 1)
    work = 0
    for g in groups:
        cmax = g.models * (g.attacks_per_model.size - 1)
        n_max = cmax * (1 + (g.sustained.size - 1 if g.sustained is not None else 0))
        m_max = cmax if g.devastating else 0
        work += size * size * (3 + n_max * rows + m_max) + n_max * (m_max + 1) * rows * size
        if g.devastating:  # the joint (normal, devastating) distribution by FFT
            work += (n_max + 1) ** 2 * (cmax + 1) * 4
    if pending:
        work += rows * size * size
    return size, work

