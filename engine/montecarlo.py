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


def _sample(rng: np.random.Generator, pmf: np.ndarray, size) -> np.ndarray:
    cdf = np.cumsum(pmf)
    cdf /= cdf[-1]
    return np.searchsorted(cdf, rng.random(size), side="right").astype(np.int64)


def _roll(rng: np.random.Generator, n: int, category, reroll) -> np.ndarray:
    rolls = rng.integers(1, 7, n)
    again = reroll(rolls)
    if again.any():
        rolls[again] = rng.integers(1, 7, int(again.sum()))
    return category(rolls)


def _damage_losses(rng: np.random.Generator, g: ResolvedGroup, n: int, keep: float) -> np.ndarray:
    d = _sample(rng, g.damage, n)
    return rng.binomial(d, 1.0 - keep) if keep > 0 else d


def sample_group(rng: np.random.Generator, g: ResolvedGroup, trials: int) -> dict[str, np.ndarray]:
    """Per-trial counts: attacks, hits, wounds, normal (reach damage), devastating critical wounds."""
    per_model = _sample(rng, g.attacks_per_model, (trials, g.models))
    attacks = per_model.sum(axis=1)
    die_trial = np.repeat(np.arange(trials), attacks)
    n = die_trial.size
    cat = np.full(n, HIT) if g.auto_hit else _roll(rng, n, g.hit_category, g.hit_reroll)
    crit = cat == CRIT
    extra = np.zeros(n, dtype=np.int64)
    if g.sustained is not None and not g.auto_hit and crit.any():
        extra[crit] = _sample(rng, g.sustained, int(crit.sum()))
    hits_per_die = (cat != FAIL).astype(np.int64) + extra
    auto = crit if g.lethal else np.zeros(n, dtype=bool)
    rolled_per_die = hits_per_die - auto
    hit_trial = np.repeat(die_trial, rolled_per_die)
    wcat = _roll(rng, hit_trial.size, g.wound_category, g.wound_reroll)
    dev = (wcat == CRIT) if g.devastating else np.zeros(hit_trial.size, dtype=bool)
    to_save = np.concatenate([hit_trial[(wcat != FAIL) & ~dev], die_trial[auto]])
    saved = g.save_passes(rng.integers(1, 7, to_save.size))
    return {
        "attacks": attacks,
        "hits": np.bincount(die_trial, weights=hits_per_die, minlength=trials),
        "wounds": np.bincount(hit_trial, weights=wcat != FAIL, minlength=trials)
        + np.bincount(die_trial, weights=auto, minlength=trials),
        "normal": np.bincount(to_save[~saved], minlength=trials),
        "devastating": np.bincount(hit_trial[dev], minlength=trials),
    }


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
    """Per-trial outcomes for the volley: stage counts, models killed and wounds lost."""
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
