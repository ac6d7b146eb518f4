"""A weapon group's operator rows from the allocation chain's powers, cached by value (issue 22, cold path).

The rows of a group (engine.plan, docs/engine.md "Compiled plans") are R[j] = sum_t P(t) e_j T^t: the state
after the group from (0 models destroyed, j wounds lost). They are linear in P, the distribution of the
group's damaging attacks (the attack, hit, wound and save stages), and T - one damaging attack on the
target - depends only on the damage stage: the loss distribution (the weapon's Damage after the target's
damage modifiers, then Feel No Pain), the target's W and its number of models. So the powers
Q[t, j] = e_j T^t are a stage of their own, cached by value (loss, W, models, length): a new request that
meets a damage stage seen before (another weapon of the same Damage against that target, the same weapon
with another hit or wound modifier, re-rolls, cover, half range) makes its rows with one product,
P @ Q. A new damage stage builds Q by doubling (Q[n:2n] = Q[:n] @ T^n, T^n by squaring): about
2 log2(t) small products, where the renewal mixture (engine.exact) makes some 60 numpy calls.

Q is built for a length rounded up to a power of two, and a request always uses the Q of its own rounded
length, so its numbers never depend on what the cache held before (the same request gives the same bits).
Only targets with few states use this path (`fits`): the squarings cost (K W + 1)^3 each. The rest keep
the renewal mixture.
"""

from __future__ import annotations

import numpy as np

from engine import exact
from engine.lru import STAGES
from engine.profiles import Target
from engine.rules import ResolvedGroup

MAX_STATES = 64  # K W + 1 up to this: a squaring is a 64 x 64 product at most
MAX_BYTES = 2**20  # one Q (length x W x states doubles)
MIN_LENGTH = 8


def length(t: int) -> int:
    """The number of powers kept for t weights: t rounded up to a power of two (at least MIN_LENGTH)."""
    return max(MIN_LENGTH, 1 << (t - 1).bit_length())


def fits(target: Target, t: int) -> bool:
    """Whether a group of up to t damaging attacks against `target` takes this path."""
    size = target.models * target.wounds + 1
    return size <= MAX_STATES and 8 * length(t) * target.wounds * size <= MAX_BYTES


def transition(loss: np.ndarray, wounds: int, models: int) -> np.ndarray:
    """engine.exact's (S, S) one-attack matrix over flat states k W + j (the last: unit destroyed) for a
    loss distribution, read-only and cached by value."""
    key = ("T", loss.tobytes(), wounds, models)
    t = STAGES.get(key)
    if t is not None:
        return t
    t = exact.dense_matrix(exact.step_matrix(loss, wounds), models)
    t.flags.writeable = False
    STAGES.put(key, t)
    return t


def chain_powers(loss: np.ndarray, wounds: int, models: int, n: int) -> np.ndarray:
    """Q, shape (n, W * S): row t holds e_j T^t for j < W, side by side (read-only, cached by value)."""
    key = ("Q", loss.tobytes(), wounds, models, n)
    q = STAGES.get(key)
    if q is not None:
        return q
    size = models * wounds + 1
    power = transition(loss, wounds, models)
    q = np.zeros((n, wounds, size))
    q[0, np.arange(wounds), np.arange(wounds)] = 1.0
    done = 1
    while done < n:  # rows [done, 2 done) = rows [0, done) @ T^done
        c = min(done, n - done)
        q[done : done + c] = (q[:c].reshape(c * wounds, size) @ power).reshape(c, wounds, size)
        done += c
        if done < n:
            power = power @ power
    q = q.reshape(n, wounds * size)
    q.flags.writeable = False
    STAGES.put(key, q)
    return q


def group_rows(gd: exact.GroupDistribution, g: ResolvedGroup, target: Target) -> np.ndarray | None:
    """The group's (W, S) operator rows, or None when the target has too many states for this path.
    The same sums as engine.exact.allocate_group on the W unit states, in another order: normal damage
    is sum_t P(t, m) Q[t] for each number m of DEVASTATING critical wounds (11e, when they inflict
    something else than a failed save), whose mortal wounds then follow one dense step each (Horner)."""
    joint = gd.joint
    if gd.collapsed or joint.shape[1] == 1:
        weights = joint.sum(axis=1)
        wts = weights[None, : exact.support(weights)[1] + 1]
    else:
        wts = joint[: exact.support(joint.sum(axis=1))[1] + 1, : exact.support(joint.sum(axis=0))[1] + 1].T
    t = wts.shape[1]
    if not fits(target, t):
        return None
    w, k = target.wounds, target.models
    q = chain_powers(exact.loss_pmf(g.damage, g.fnp), w, k, length(t))
    ys = (wts @ q[:t]).reshape(-1, w, k * w + 1)  # ys[m]: the rows after normal damage, m critical wounds
    r = ys[-1]
    if ys.shape[0] > 1:
        mortal = transition(exact.loss_pmf(g.mortal_damage, g.fnp_mortal), w, k)
        for m in range(ys.shape[0] - 2, -1, -1):
            r = r @ mortal + ys[m]
    return np.maximum(r, 0.0)
