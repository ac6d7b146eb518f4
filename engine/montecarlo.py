"""Monte Carlo sampling of the same rules as engine.exact, vectorised over trials with numpy.

Every die is rolled: attack counts, hit rolls (with re-rolls), SUSTAINED extra hits, wound rolls,
saves, damage rolls and Feel No Pain rolls, using the same classification functions as the exact
engine (engine.rules), so a disagreement beyond a few standard errors points at the probability
combination in one of the two engines. Allocation loops over "the j-th attack reaching damage" and is
vectorised over the trials still receiving attacks.
"""

from __future__ import annotations

import numpy as np

from engine.profiles import Target
from engine.rules import CRIT, FAIL, HIT, ResolvedGroup

CHUNK_ELEMENTS = 4_000_000  # dice slots per chunk of trials: bounds memory to tens of MB


def _sample(rng: np.random.Generator, pmf: np.ndarray, size) -> np.ndarray:
    cdf = np.cumsum(pmf)
    cdf /= cdf[-1]
    return np.searchsorted(cdf, rng.random(size), side="right").astype(np.int64)


def _roll(rng: np.random.Generator, shape, table: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """Roll D6s, re-roll the faces the policy re-rolls (once), classify with the rules' table."""
    cat, again = table
    rolls = rng.integers(1, 7, shape, dtype=np.int8)
    if again.any():
        redo = again[rolls]
        rolls[redo] = rng.integers(1, 7, int(np.count_nonzero(redo)), dtype=np.int8)
    return cat[rolls]


def _damage_losses(rng: np.random.Generator, g: ResolvedGroup, n: int, keep: float, mortal: bool = False) -> np.ndarray:
    d = _sample(rng, g.mortal_damage if mortal else g.damage, n)
    return rng.binomial(d, 1.0 - keep) if keep > 0 else d


def sample_group(rng: np.random.Generator, g: ResolvedGroup, trials: int) -> dict[str, np.ndarray]:
    """Per-trial counts: attacks, hits, wounds, normal (reach damage), devastating critical wounds.

    Dense layout: (trials, attack dice, hits per die) arrays of small integers with masks for the
    dice that exist, so every step is one vectorised operation."""
    per_model = _sample(rng, g.attacks_per_model, (trials, g.models))
    attacks = per_model.sum(axis=1)
    cmax = max(int(attacks.max(initial=0)), 1)
    fixed = bool((attacks == cmax).all())
    exists = None if fixed else np.arange(cmax)[None, :] < attacks[:, None]
    if g.auto_hit:
        cat = np.full((trials, cmax), HIT, dtype=np.int8)
    else:
        cat = _roll(rng, (trials, cmax), g.hit_table())
    if exists is not None:
        cat *= exists
    crit = cat == CRIT
    hits_per_die = (cat != FAIL).view(np.int8)
    if g.sustained is not None and not g.auto_hit:
        nz = np.flatnonzero(g.sustained)
        if nz.size == 1:  # a constant X
            hits_per_die = hits_per_die + crit.view(np.int8) * np.int8(nz[0])
        else:
            extra = _sample(rng, g.sustained, (trials, cmax)).astype(np.int8)
            hits_per_die = hits_per_die + crit.view(np.int8) * extra
    rolled = hits_per_die - crit.view(np.int8) if g.lethal else hits_per_die
    hmax = max(int(rolled.max(initial=0)), 1)
    wcat = _roll(rng, (trials, cmax, hmax), g.wound_table())
    if not (rolled == hmax).all():  # slots beyond a die's rolled hits do not exist
        wcat *= np.arange(hmax, dtype=np.int8)[None, None, :] < rolled[:, :, None]
    save_table = g.save_table()
    if g.devastating:
        dev = wcat == CRIT
        wounded_normal = wcat == HIT
    else:
        dev = None
        wounded_normal = wcat != FAIL
    unsaved = wounded_normal & ~save_table[rng.integers(1, 7, wcat.shape, dtype=np.int8)]
    out = {
        "attacks": attacks,
        "hits": hits_per_die.sum(axis=1, dtype=np.int64),
        "wounds": np.count_nonzero(wcat, axis=(1, 2)),
        "normal": np.count_nonzero(unsaved, axis=(1, 2)),
        "devastating": np.count_nonzero(dev, axis=(1, 2)) if dev is not None else np.zeros(trials, dtype=np.int64),
    }
    if g.lethal and not g.auto_hit:  # critical hits wound automatically, then roll saves
        out["wounds"] = out["wounds"] + np.count_nonzero(crit, axis=1)
        auto_unsaved = crit & ~save_table[rng.integers(1, 7, crit.shape, dtype=np.int8)]
        out["normal"] = out["normal"] + np.count_nonzero(auto_unsaved, axis=1)
    return out


def _allocate(rng, g: ResolvedGroup, counts: np.ndarray, killed, lost, models: int, wounds: int, keep: float,
              mortal: bool = False):
    """Apply counts[t] damaging attacks to trial t, one attack index at a time (no spill-over); `mortal`:
    11e DEVASTATING critical wounds, whose mortal wounds follow `mortal_damage`."""
    for j in range(int(counts.max(initial=0))):
        idx = np.flatnonzero((counts > j) & (killed < models))
        if idx.size == 0:
            break
        new = lost[idx] + _damage_losses(rng, g, idx.size, keep, mortal)
        dead = new >= wounds
        killed[idx[dead]] += 1
        new[dead] = 0
        lost[idx] = new


def run(groups: list[ResolvedGroup], target: Target, devastating_spills: bool, trials: int,
        rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Per-trial outcomes for the volley (in chunks that bound memory): stage counts, killed, damage."""
    per_trial = sum(g.models * (g.attacks_per_model.size - 1) * (g.sustained.size if g.sustained is not None else 1)
                    for g in groups)
    chunk = max(1, min(trials, CHUNK_ELEMENTS // max(per_trial, 1)))
    parts = [_run_chunk(groups, target, devastating_spills, min(chunk, trials - i), rng)
             for i in range(0, trials, chunk)]
    return {
        "stages": {key: np.concatenate([p["stages"][key] for p in parts]) for key in parts[0]["stages"]},
        "killed": np.concatenate([p["killed"] for p in parts]),
        "damage": np.concatenate([p["damage"] for p in parts]),
    }


def _run_chunk(groups: list[ResolvedGroup], target: Target, devastating_spills: bool, trials: int,
               rng: np.random.Generator) -> dict[str, np.ndarray]:
    k, w = target.models, target.wounds
    killed = np.zeros(trials, dtype=np.int64)
    lost = np.full(trials, target.wounds_lost, dtype=np.int64)
    pending = np.zeros(trials, dtype=np.int64)
    stages = {key: np.zeros(trials) for key in ("attacks", "hits", "wounds", "unsaved")}
    for g in groups:
        c = sample_group(rng, g, trials)
        for key in ("attacks", "hits", "wounds"):
            stages[key] += c[key]
        stages["unsaved"] += c["normal"] + c["devastating"]
        _allocate(rng, g, c["normal"], killed, lost, k, w, g.fnp)
        if devastating_spills:
            crit_trial = np.repeat(np.arange(trials), c["devastating"])
            mw = _damage_losses(rng, g, crit_trial.size, g.fnp_mortal, mortal=True)
            pending += np.bincount(crit_trial, weights=mw, minlength=trials).astype(np.int64)
        else:
            _allocate(rng, g, c["devastating"], killed, lost, k, w, g.fnp_mortal, mortal=True)
    flat = np.minimum(killed * w + lost + pending, k * w)
    return {"stages": stages, "killed": flat // w, "damage": flat - target.wounds_lost}


# --------------------------------------------------------------------------------------------------
# Mixed targets (contract 1b): every wound is allocated by the contract's order, then the receiving
# model's save, damage modifiers and Feel No Pain are rolled. Two queue positions per trial (wounds
# lost by the non-character models and by the character models, in allocation order) describe the
# unit completely, as in engine.mixed.
# --------------------------------------------------------------------------------------------------


class _Queues:
    """Per-position look-ups of both queues: receiving group, and where the current model ends."""

    def __init__(self, target: Target) -> None:
        from engine.mixed import Queue

        self.queues = [Queue.build(target, False), Queue.build(target, True)]
        self.length = [q.length for q in self.queues]
        self.group = [q.pos_group for q in self.queues]
        self.end = []
        for q in self.queues:
            end = np.zeros(q.length + 1, dtype=np.int64)
            for s, w in zip(q.starts, q.wounds, strict=True):
                end[s : s + w] = s + w
            end[q.length] = q.length
            self.end.append(end)
        self.last = [q.groups[-1] if q.groups else -1 for q in self.queues]


def _sample_rows(rng: np.random.Generator, cdfs: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """One draw per entry of `rows` from the pmf whose CDF is cdfs[row]."""
    u = rng.random(rows.size)
    return (cdfs[rows] <= u[:, None]).sum(axis=1)


def _cdfs(pmfs: list[np.ndarray]) -> np.ndarray:
    size = max(p.size for p in pmfs)
    out = np.ones((len(pmfs), size))
    for i, p in enumerate(pmfs):
        c = np.cumsum(p) / p.sum()
        out[i, : c.size] = c
    out[:, -1] = 1.0 + 1e-12  # never exceeded: the largest value is the last index
    return out


def _allocate_mixed(rng, q: _Queues, pos: np.ndarray, last: np.ndarray, counts: np.ndarray, precision: bool,
                    fail: np.ndarray | None, dmg_cdfs: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """Allocate counts[t] wounds to trial t one at a time; returns the failed saves per trial.
    pos[:, 0] / pos[:, 1]: non-character / character queue positions; last: queue of the last model
    destroyed. `fail` None: no saving throw (mortal wounds)."""
    unsaved = np.zeros(counts.size)
    first, second = (1, 0) if precision else (0, 1)
    for j in range(int(counts.max(initial=0))):
        idx = np.flatnonzero(counts > j)
        if fail is None:  # mortal wounds: nothing to count once a unit is destroyed, so stop there
            idx = idx[(pos[idx, 0] < q.length[0]) | (pos[idx, 1] < q.length[1])]
        if idx.size == 0:
            break
        p_first, p_second = pos[idx, first], pos[idx, second]
        on_first = p_first < q.length[first]
        on_second = ~on_first & (p_second < q.length[second])
        side = np.where(on_first, first, second)
        cur = np.where(on_first, p_first, p_second)
        alive = on_first | on_second
        grp = np.where(side == 0, q.group[0][np.minimum(cur, q.length[0])], q.group[1][np.minimum(cur, q.length[1])])
        dead_grp = np.where(last[idx] == 0, q.last[0], q.last[1])
        grp = np.where(alive, grp, dead_grp)
        if fail is not None:
            failed = rng.random(idx.size) < fail[grp]
            unsaved[idx] += failed
            hit = alive & failed
        else:
            hit = alive
        t = idx[hit]
        if t.size == 0:
            continue
        g = grp[hit]
        d = _sample_rows(rng, dmg_cdfs, g)
        loss = rng.binomial(d, 1.0 - keep[g])
        s = side[hit]
        p = pos[t, s]
        end = np.where(s == 0, q.end[0][np.minimum(p, q.length[0])], q.end[1][np.minimum(p, q.length[1])])
        new = np.minimum(p + loss, end)
        pos[t, s] = new
        destroyed = (new == end) & (new == np.where(s == 0, q.length[0], q.length[1]))
        other_done = np.where(s == 0, pos[t, 1] >= q.length[1], pos[t, 0] >= q.length[0])
        last[t[destroyed & other_done]] = s[destroyed & other_done]
    return unsaved


def run_mixed(groups: list[ResolvedGroup], target: Target, devastating_spills: bool, trials: int,
              rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Per-trial outcomes against a mixed target: stage counts, killed (unit and per group), damage."""
    from dataclasses import replace

    from engine.request import first_allocated

    q = _Queues(target)
    pos = np.zeros((trials, 2), dtype=np.int64)
    pos[:, 0 if q.length[0] else 1] = target.wounds_lost
    last = np.full(trials, 0 if q.length[0] else 1, dtype=np.int64)
    pending = np.zeros((trials, 2), dtype=np.int64)  # 10e: raw mortal wounds of normal / PRECISION weapons
    stages = {key: np.zeros(trials) for key in ("attacks", "hits", "wounds", "unsaved")}
    for g in groups:
        c = sample_group(rng, replace(g, save_threshold=8), trials)
        for key in ("attacks", "hits", "wounds"):
            stages[key] += c[key]
        fail = 1.0 - np.asarray(g.group_save_probs())
        cdfs = _cdfs(g.group_damage)
        stages["unsaved"] += _allocate_mixed(rng, q, pos, last, c["normal"], g.precision, fail, cdfs,
                                             np.asarray(g.group_fnp))
        stages["unsaved"] += c["devastating"]
        if devastating_spills:
            amount = q.queues[1].groups[0] if g.precision else first_allocated(target.groups)
            crit_trial = np.repeat(np.arange(trials), c["devastating"])
            mw = _sample(rng, g.group_mortal_damage[amount], crit_trial.size)
            pending[:, int(g.precision)] += np.bincount(crit_trial, weights=mw, minlength=trials).astype(np.int64)
        else:
            _allocate_mixed(rng, q, pos, last, c["devastating"], g.precision, None, _cdfs(g.group_mortal_damage),
                            np.asarray(g.group_fnp_mortal))
    if devastating_spills and pending.any():
        one = _cdfs([np.array([0.0, 1.0])] * len(target.groups))
        keep = np.asarray(groups[0].group_fnp_mortal)
        for side in (0, 1):
            _allocate_mixed(rng, q, pos, last, pending[:, side], bool(side), None, one, keep)
    per_group = np.zeros((len(target.groups), trials), dtype=np.int64)
    for s in (0, 1):
        queue = q.queues[s]
        for start, gi, w in zip(queue.starts, queue.model_group, queue.wounds, strict=True):
            per_group[gi] += pos[:, s] >= start + w
    return {"stages": stages, "killed": per_group.sum(axis=0), "damage": pos.sum(axis=1) - target.wounds_lost,
            "groups": per_group}
