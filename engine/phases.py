"""A weapon's wounds against a mixed target as two phases: the mixture over the number of wounds without
stepping it wound by wound (issue 22: "no per-die Python loop"; docs/engine.md, "Mixed targets").

engine.mixed describes the unit by the pair of queue positions (a, b) and moves it with a one-wound
matrix T. A weapon's wounds go to one queue (the "first": the non-characters, or the characters for
PRECISION) while it has models, and only then to the other. So T never moves both positions, and
x T^n splits into
- phase 1: the first queue still has models: its position moves by the queue's own chain A1 (the same
  for every position of the other queue), x_n = x_0 A1^n;
- phase 2: the first queue is destroyed: the other position moves by its chain A2, fed at each wound by
  the mass phase 1 destroys (its last model, column r1);
- two absorbing states: "destroyed, the first queue's model last" (D1) and "... the second's" (D2).
The mixture sum_n w_n x T^n over a weapon's wound count then needs only powers of the two small chains,
computed once at compile: phase 1 is one product with S1 = sum_n w_n A1^n, the flows out of it one
product with Q1[k] = A1^(k-1) r1, and phase 2 - a linear system fed by those flows - is
sum_j (sum_k w_(k+j) Z_k) A2^j (Z_0: the phase-2 mass at the start, Z_k: the flow of wound k), one
Hankel product and one contraction. D2 takes the same form with the tail weights and A2^j r2; D1 is the
flows' tail-weighted sum. Exact (the same sums as stepping, in another order: agreement to ~1e-16).

The powers cost (N+1)(L1^3 + L2^3) to build and (N+1) L2^2 to keep (L1, L2: the queues' total wounds),
where stepping costs N S^2 per evaluation (S ~ L1 L2 states): `worth_it` picks the phases only when
building them costs no more than stepping once and they take no more memory than the dense T.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np


def worth_it(la: int, lc: int, first_is_nc: bool, n_max: int, columns: int, size: int) -> bool:
    """Two phases instead of stepping T n_max times: no dearer to build than one stepped evaluation,
    and no larger than the dense one-wound matrix."""
    if n_max < 1:
        return False
    lf, ls = (la, lc) if first_is_nc else (lc, la)
    build = (n_max + 1) * (lf**3 + ls**3) + columns * (n_max + 1) * lf * lf
    keep = columns * lf * lf + (n_max + 1) * (ls * ls + lf) + 3 * columns * (n_max + 1) ** 2
    return build <= n_max * size * size and keep <= size * size


@lru_cache(maxsize=64)
def _chain_index(la: int, lc: int, first_is_nc: bool) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """Flat indices into T of the block-diagonal diag(A1, A2) (off the blocks: an entry of the corner's
    absorbing row, always zero) and of the two entries whose sum is each position's "last model
    destroyed" probability (r1, r2).

    A1: the first queue's positions f < L1 (at the other queue's position 0: the same for every position);
    its last model goes to (L1, 0), or - the other queue already gone - straight to an absorbing state.
    A2: the other queue's positions s < L2 once the first is destroyed; its last model goes to the
    corner (la, lc) or to the extra state, by the layout. Of each pair of entries exactly one can be
    non-zero."""
    cols = lc + 1
    size = (la + 1) * cols + 1
    extra = size - 1
    zero = (size - 2) * size  # T[corner, 0]: the corner only goes to itself, and it is never state 0
    lf, ls = (la, lc) if first_is_nc else (lc, la)

    def idx(f, s):
        return f * cols + s if first_is_nc else s * cols + f

    src = np.concatenate([idx(np.arange(lf), 0), idx(lf, np.arange(ls))])
    dst = src.copy()
    chains = np.full((lf + ls, lf + ls), zero, dtype=np.int64)
    chains[:lf, :lf] = src[:lf, None] * size + dst[None, :lf]
    chains[lf:, lf:] = src[lf:, None] * size + dst[None, lf:]
    kill = np.concatenate([np.full(lf, idx(lf, 0)), np.full(ls, idx(lf, ls))])
    kills = (src * size + kill, src * size + extra)
    for a in (chains, *kills):
        a.flags.writeable = False
    return chains, kills


@lru_cache(maxsize=64)
def _hankel_index(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices min(k + j, N + 1) and min(k + j + 1, N + 1) for k, j <= N (N + 1: a zero column)."""
    k = np.arange(n + 1)
    kj = np.minimum(k[:, None] + k[None, :], n + 1)
    kj1 = np.minimum(kj + 1, n + 1)
    for a in (kj, kj1):
        a.flags.writeable = False
    return kj, kj1


def _powers(a: np.ndarray, count: int) -> np.ndarray:
    """(count, L, L): a^0 .. a^(count-1), by doubling (rows [m + 1, 2m + 1) = rows [1, m + 1) @ a^m):
    about 2 log2(count) products."""
    size = a.shape[0]
    out = np.empty((count, size, size))
    out[0] = np.eye(size)
    m = 1
    while m < count:
        np.dot(out[m - 1], a, out=out[m])
        step = min(m, count - m - 1)
        if step > 0:  # the stacked powers' rows times a^m: one 2-D product
            np.dot(out[1 : 1 + step].reshape(step * size, size), out[m],
                   out=out[m + 1 : m + 1 + step].reshape(step * size, size))
        m += 1 + step
    return out


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.flags.writeable = False
    return a


@dataclass(frozen=True, eq=False)
class Phases:
    """The state-independent part of sum_n W[n, c] x T^n for every weight column c (module docstring)."""

    la: int
    lc: int
    first_is_nc: bool
    s1t: np.ndarray  # (C, L1, L1): (sum_n W[n, c] A1^n)^T
    q1: np.ndarray  # (N, L1): A1^(k-1) r1, k = 1..N
    p2: np.ndarray  # ((N+1) L2, L2): A2^j stacked
    p2r2: np.ndarray  # ((N+1) L2,): A2^j r2 stacked
    hankel: np.ndarray  # (C, N+1, N+1): W[k + j, c]
    hankel_tail: np.ndarray  # (C, N+1, N+1): sum_{n > k + j} W[n, c]
    tail: np.ndarray  # (C, N+1): sum_{n >= k} W[n, c]

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.s1t, self.q1, self.p2, self.p2r2, self.hankel, self.hankel_tail,
                                      self.tail))

    @classmethod
    def build(cls, t: np.ndarray, la: int, lc: int, first_is_nc: bool, weights: np.ndarray) -> Phases:
        """From the dense one-wound matrix `t` of engine.mixed's layout (index a (lc+1) + b, then the
        corner (la, lc) and the extra destroyed state) and the weights (N+1, C)."""
        lf, ls = (la, lc) if first_is_nc else (lc, la)
        chains, kills = _chain_index(la, lc, first_is_nc)
        flat = t.ravel()
        both = flat[chains]  # diag(A1, A2): the two queues' chains as one block-diagonal matrix
        r = flat[kills[0]] + flat[kills[1]]  # (r1, r2): each last model destroyed (one entry is zero)
        n = weights.shape[0] - 1
        columns = weights.shape[1]
        powers = _powers(both, n + 1)  # block-diagonal: (A1^j, A2^j)
        p1 = np.ascontiguousarray(powers[:, :lf, :lf]).reshape(n + 1, lf * lf)
        s1t = (weights.T @ p1).reshape(columns, lf, lf).transpose(0, 2, 1)
        pr = powers @ r  # (N+1, L1 + L2): A1^j r1, A2^j r2
        tail = np.zeros((columns, n + 2))  # tail[c, k] = sum_{n >= k} W[n, c]; column N + 1: zero
        tail[:, : n + 1] = weights[::-1].cumsum(axis=0)[::-1].T
        wpad = np.zeros((columns, n + 2))
        wpad[:, : n + 1] = weights.T
        kj, kj1 = _hankel_index(n)
        return cls(la, lc, first_is_nc, _frozen(s1t), _frozen(pr[:n, :lf]),
                   _frozen(powers[:, lf:, lf:].reshape((n + 1) * ls, ls)), _frozen(pr[:, lf:].ravel()),
                   _frozen(wpad[:, kj]), _frozen(tail[:, kj1]), _frozen(tail[:, : n + 1]))

    def mix(self, x: np.ndarray) -> np.ndarray:
        """sum_n W[n, c] x T^n for state rows x (R, S): shape (C, R, S)."""
        la, lc = self.la, self.lc
        lf, ls = (la, lc) if self.first_is_nc else (lc, la)
        r, size = x.shape
        c_count, n1 = self.hankel.shape[:2]
        g = x[:, :-1].reshape(r, la + 1, lc + 1)
        if not self.first_is_nc:
            g = g.transpose(0, 2, 1)  # (R, L1 + 1, L2 + 1): first queue's position, then the other's
        u0 = g[:, :lf, :].transpose(1, 0, 2).reshape(lf, r * (ls + 1))
        mix1 = np.matmul(self.s1t, u0)  # (C, L1, R (L2 + 1))
        z = (self.q1 @ u0).reshape(n1 - 1, r, ls + 1)  # flows out of phase 1, wound k = 1..N
        feed = np.empty((n1, r, ls))
        feed[0] = g[:, lf, :ls]
        feed[1:] = z[:, :, :ls]
        feed = feed.reshape(n1, r * ls)
        line = (np.matmul(self.hankel, feed).reshape(c_count, n1, r, ls).transpose(0, 2, 1, 3)
                .reshape(c_count * r, n1 * ls) @ self.p2).reshape(c_count, r, ls)
        d2 = (np.matmul(self.hankel_tail, feed).reshape(c_count, n1, r, ls).transpose(0, 2, 1, 3)
              .reshape(c_count * r, n1 * ls) @ self.p2r2).reshape(c_count, r)
        d1 = self.tail[:, 1:] @ z[:, :, ls]  # (C, R)
        wsum = self.tail[:, :1]
        out = np.empty((c_count, r, lf + 1, ls + 1))
        out[:, :, :lf, :] = mix1.reshape(c_count, lf, r, ls + 1).transpose(0, 2, 1, 3)
        out[:, :, lf, :ls] = line
        corner = g[:, lf, ls][None, :] * wsum
        extra = x[:, -1][None, :] * wsum
        if self.first_is_nc:  # D1: the non-characters' last model (extra), D2: a character's (corner)
            extra += d1
            corner += d2
        else:
            corner += d1
            extra += d2
        out[:, :, lf, ls] = corner
        ys = np.empty((c_count, r, size))
        ys[:, :, :-1] = (out if self.first_is_nc else out.transpose(0, 1, 3, 2)).reshape(c_count, r, size - 1)
        ys[:, :, -1] = extra
        return ys
