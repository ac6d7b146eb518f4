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


def _damage_losses(rng: np.random.Generator, g: ResolvedGroup, n: int, keep: float) -> np.ndarray:
    d = _sample(rng, g.damage, n)
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


def _allocate(rng, g: ResolvedGroup, counts: np.ndarray, killed, lost, models: int, wounds: int, keep: float):
    """Apply counts[t] damaging attacks to trial t, one attack index at a time (no spill-over)."""
    for j in range(int(counts.max(initial=0))):
        idx = np.flatnonzero((counts > j) & (killed < models))
        if idx.size == 0:
            break
        new = lost[idx] + _damage_losses(rng, g, idx.size, keep)
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
            mw = _damage_losses(rng, g, crit_trial.size, g.fnp_mortal)
            pending += np.bincount(crit_trial, weights=mw, minlength=trials).astype(np.int64)
        else:
            _allocate(rng, g, c["devastating"], killed, lost, k, w, g.fnp_mortal)
    flat = np.minimum(killed * w + lost + pending, k * w)
    return {"stages": stages, "killed": flat // w, "damage": flat - target.wounds_lost}
