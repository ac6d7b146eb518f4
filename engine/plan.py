"""Compiled requests (issue 22): everything a request needs except the final products, built once.

`compile(request)` validates the request, resolves its keywords (engine.rules), checks the size limits and
estimates the cost (engine.api.check_size / estimate) and builds each weapon group's allocation operator,
once. The `Plan` is immutable (its arrays are read-only) and cached by value: the same request content
gives the same Plan object, so a repeated request (a re-asked `/sim`, a matchup cell that recurs) starts
at evaluation. `Plan.run()` evaluates it: for a single-profile exact volley a handful of numpy calls per
weapon group, no per-die Python loop.

The operator of one group (docs/engine.md, "Compiled plans"): the exact engine's allocation chain is
linear in the state and its models are identical, so the distribution after the group from state
(k models destroyed, j wounds lost) is the one from (0, j) shifted by k models, with everything at or
beyond the unit's last model in "destroyed". The plan keeps W rows - the chain run from (0, j) for every j
(engine.exact.allocate_group on W unit vectors) - and `apply_rows` shifts and adds them for any state, or
for many states at once (a leading batch axis). When those W rows would cost much more than one state
vector (huge W with many attacks), the group is evaluated directly on the state instead (`_Direct`).
A mixed target (contract 1b) is compiled by engine.mixed (`compile_volley`: every group's joint
distribution and its two phases, engine.phases, or its one-wound matrix) and its state vector is moved
through them at evaluation. A single-profile 10e volley with DEVASTATING WOUNDS (a pending axis that
spills over, so no fixed-size operator) keeps its groups' distributions and runs engine.exact.run's
allocation on them.
"""

from __future__ import annotations

import marshal
import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from engine import cost, exact, mixed, montecarlo, powers
from engine.api import check_size, hazard_pmf
from engine.errors import RequestError
from engine.lru import STAGES, Cache
from engine.profiles import Target
from engine.request import PARTS, Request, validate
from engine.rules import ResolvedGroup, resolve

ROW_OPERATOR_MAX_SECONDS = 0.005  # estimated cost of a group's W rows; above it the group runs directly
ROW_OPERATOR_MAX_BYTES = 8 * 2**20
CACHE_MAX_PLANS = 512
CACHE_MAX_BYTES = 32 * 2**20  # operators held by cached plans, in all (a worker's cap: docs/operations.md)


def _frozen(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


def apply_rows(states: np.ndarray, rows: np.ndarray, models: int, wounds: int) -> np.ndarray:
    """The flat state distribution(s) after a group whose operator rows are `rows` ((W, S): the state after
    the group from (0 destroyed, j lost)). `states` is (S,) or (B, S); each block of W entries (one number
    of models destroyed, k) is multiplied by the rows and shifted by k models, in one product and one
    strided copy; whatever lands at or beyond the last model is "destroyed" (the last entry)."""
    lead = states.shape[:-1]
    x = states.reshape(-1, states.shape[-1])
    b = x.shape[0]
    kw = models * wounds
    size = kw + 1
    c = x[:, :kw].reshape(b, models, wounds) @ rows  # (B, K, S): block k's contribution before its shift
    width = size + (models - 1) * wounds  # row k lands at columns [k W, k W + S)
    buf = np.zeros((b, models * width))
    shifted = as_strided(buf, shape=(b, models, size),
                         strides=(buf.strides[0], (width + wounds) * buf.itemsize, buf.itemsize))
    shifted[...] = c
    total = buf.reshape(b, models, width).sum(axis=1)
    out = np.empty((b, size))
    out[:, :kw] = total[:, :kw]
    out[:, kw] = total[:, kw:].sum(axis=1) + x[:, kw]
    return out.reshape(lead + (size,))


@dataclass(frozen=True, eq=False)
class _Rows:
    """A weapon group compiled to its operator rows (see the module docstring)."""

    rows: np.ndarray  # (W, S), read-only
    stages: Mapping[str, float]  # the group's expected stage counts (exact)

    def apply(self, s: np.ndarray, target: Target) -> np.ndarray:
        return apply_rows(s, self.rows, target.models, target.wounds)

    @property
    def nbytes(self) -> int:
        return self.rows.nbytes


@dataclass(frozen=True, eq=False)
class _Direct:
    """A weapon group whose rows would cost too much: its distribution is kept, the chain runs per state."""

    gd: exact.GroupDistribution
    group: ResolvedGroup

    def apply(self, s: np.ndarray, target: Target) -> np.ndarray:
        if s.ndim == 1:
            return exact.allocate_group(s, self.gd, self.group, target, False)
        return np.stack([exact.allocate_group(row, self.gd, self.group, target, False) for row in s])

    @property
    def nbytes(self) -> int:
        return self.gd.joint.nbytes


def _rows_seconds(gd: exact.GroupDistribution, target: Target) -> float:
    """Estimated seconds of the group's W operator rows: engine.cost's renewal model with W state rows
    (its products that grow with the rows), plus one dense mortal-wound step per devastating count."""
    t, w, k = gd.joint.shape[0], target.wounds, target.models
    nb = 1 if gd.collapsed or gd.joint.shape[1] == 1 else gd.joint.shape[1]
    size = k * w + 1
    work = w * k * (t * t + 2 * t * w + nb * w * w + nb * t * w) + (nb - 1) * w * size * size
    return cost.SEC_MATMUL * work


def _compile_group(g: ResolvedGroup, target: Target, bytes_left: int) -> tuple[Any, dict[str, float]]:
    """The group's operator rows, or `_Direct` when they would cost more than ROW_OPERATOR_MAX_SECONDS,
    or more memory than ROW_OPERATOR_MAX_BYTES (the rows of every devastating count while they are built)
    or than the plan has left (`bytes_left`). Rows of the powers path are kept by value in the stage
    cache (engine.lru.STAGES), keyed by all they depend on: the die's kernel, the attack dice, the damage
    stage and the target's W and models (not its name, keywords, wounds lost or the other groups)."""
    collapse_ok = g.fnp_mortal == g.fnp and exact.same_damage(g)
    kernel = exact.kernel_key(g, collapse_ok)
    key = ("rows", kernel, g.attacks_per_model.tobytes(), g.models, g.damage.tobytes(), g.fnp,
           g.mortal_damage.tobytes(), g.fnp_mortal, target.wounds, target.models)
    hit = STAGES.get(key)
    if hit is not None:
        return hit, dict(hit.stages)
    gd = exact.group_distribution(g, collapse_ok, key=kernel)
    stages = {"attacks": gd.attacks, "hits": gd.hits, "wounds": gd.wounds, "unsaved": gd.unsaved}
    rows = powers.group_rows(gd, g, target)
    if rows is not None:
        op = _Rows(_frozen(rows), MappingProxyType(stages))
        STAGES.put(key, op)
        return op, stages
    w, size = target.wounds, target.models * target.wounds + 1
    nb = 1 if gd.collapsed or gd.joint.shape[1] == 1 else gd.joint.shape[1]
    if (_rows_seconds(gd, target) > ROW_OPERATOR_MAX_SECONDS or 8 * nb * w * size > ROW_OPERATOR_MAX_BYTES
            or 8 * w * size > bytes_left):
        return _Direct(gd, g), stages
    unit = np.zeros((w, size))
    unit[np.arange(w), np.arange(w)] = 1.0
    rows = _frozen(np.ascontiguousarray(exact.allocate_group(unit, gd, g, target, False)))
    return _Rows(rows, MappingProxyType(stages)), stages


@dataclass(frozen=True, eq=False)
class Plan:
    """One compiled request (immutable; cached by value by `compile`)."""

    request: Request
    groups: tuple[ResolvedGroup, ...]
    cost: Mapping[str, float]  # engine.api.estimate: {"seconds", "bytes"}
    applied: tuple[str, ...]
    ignored: tuple[str, ...]
    notes: tuple[str, ...]
    hazard: np.ndarray  # attacker's mortal wounds pmf (read-only)
    ops: tuple[Any, ...] | None  # single-profile exact without 10e DEVASTATING WOUNDS: one op per group
    stages: Mapping[str, float]  # expected stage counts (exact)
    volley: mixed.Volley | None = None  # a mixed target, exact: compiled by engine.mixed
    hazard_mean: float = 0.0
    distributions: tuple[exact.GroupDistribution, ...] | None = None  # 10e DEVASTATING WOUNDS, single profile


    @property
    def nbytes(self) -> int:
        return (sum(op.nbytes for op in self.ops or ()) + (self.volley.nbytes if self.volley is not None else 0)
                + sum(gd.joint.nbytes for gd in self.distributions or ()))

    def start(self) -> np.ndarray:
        """The target's state before the volley (single profile): `wounds_lost` on the first model."""
        t = self.request.target
        s = np.zeros(t.models * t.wounds + 1)
        s[t.wounds_lost] = 1.0
        return s

    def final(self, states: np.ndarray | None = None) -> np.ndarray:
        """Flat state distribution(s) after the volley (compiled single-profile path), from the request's
        start or from `states` ((S,) or (B, S): a leading batch axis of starting states)."""
        ops = self.ops
        if states is not None:
            s = np.asarray(states, dtype=float)
        elif isinstance(ops[0], _Rows):  # the operator applied to the start (a unit vector) is one row
            s, ops = ops[0].rows[self.request.target.wounds_lost], ops[1:]
        else:
            s = self.start()
        for op in ops:
            s = op.apply(s, self.request.target)
        return np.maximum(s, 0.0)

    def _exact(self) -> dict[str, Any]:
        req, t = self.request, self.request.target
        if self.ops is not None:
            flat = self.final()
            kw = t.models * t.wounds
            killed = np.empty(t.models + 1)
            killed[:-1] = flat[:kw].reshape(t.models, t.wounds).sum(axis=1)  # flat index k W + j: k destroyed
            killed[-1] = flat[kw]
            return {"stages": dict(self.stages), "killed": killed, "damage": flat[t.wounds_lost:]}
        if self.volley is not None:
            return self.volley.run()
        return exact.run(list(self.groups), t, req.edition.devastating_spills_after_volley, list(self.distributions))

    def run(self) -> dict[str, Any]:
        """The contract-1 result (engine.simulate)."""
        req = self.request
        k = req.target.models
        groups_killed = None
        if req.method == "exact":
            r = self._exact()
            groups_killed = r.get("groups")
            killed, damage = r["killed"], r["damage"]
            result = {  # every exact engine clamps its final distribution at 0: no negative entries here
                "edition": req.edition.code,
                "method": "exact",
                "stages": {key: float(v) for key, v in r["stages"].items()},
                "models_killed": {"mean": _mean(killed), "pmf": killed.tolist()},
                "damage": {"mean": _mean(damage), "pmf": damage.tolist()},
                "p_wipe": float(killed[k]),
                "attacker_mortal_wounds": {"mean": self.hazard_mean, "pmf": self.hazard.tolist()},
            }
        else:
            result, hazard, groups_killed = self._montecarlo()
            result["attacker_mortal_wounds"] = {"mean": _mean(hazard), "pmf": _pmf_list(hazard)}
        if req.target.groups:  # contract 1b: kills per model group, in request order
            if groups_killed is None:
                groups_killed = [np.asarray(result["models_killed"]["pmf"])]
            result["groups"] = [{"name": mg.name, "models_killed": {"mean": _mean(p), "pmf": _pmf_list(p)}}
                                for mg, p in zip(req.target.groups, groups_killed, strict=True)]
        result["ignored_keywords"] = list(self.ignored)
        result["applied_keywords"] = list(self.applied)
        result["notes"] = list(self.notes)
        return result

    def _montecarlo(self) -> tuple[dict[str, Any], np.ndarray, list[np.ndarray] | None]:
        req, groups = self.request, list(self.groups)
        rng = np.random.default_rng(req.seed)
        trials, k = req.trials, req.target.models
        spills = req.edition.devastating_spills_after_volley
        groups_killed = None
        if req.target.mixed:
            r = montecarlo.run_mixed(groups, req.target, spills, trials, rng)
            groups_killed = [np.bincount(row, minlength=mg.models + 1) / trials
                             for mg, row in zip(req.target.groups, r["groups"], strict=True)]
        else:
            r = montecarlo.run(groups, req.target, spills, trials, rng)
        killed_pmf = np.bincount(r["killed"], minlength=k + 1) / trials
        damage_pmf = np.bincount(r["damage"], minlength=req.target.total_wounds + 1) / trials
        wiped = (r["killed"] == k).astype(float)
        # The attacker's hazard rolls (independent of the target) are rolled too.
        rolls = sum(g.models for g in groups if g.hazardous)
        _, mw = req.edition.hazard(req.attacker.keywords)
        haz = (rng.integers(1, 7, (trials, rolls)) <= req.edition.hazard_fail_max).sum(axis=1) * mw

        def se(x: np.ndarray) -> float | None:
            """Standard error of the mean; None (JSON null) when one trial cannot estimate it."""
            return float(np.std(x, ddof=1) / math.sqrt(trials)) if trials > 1 else None

        result = {
            "edition": req.edition.code,
            "method": "montecarlo",
            "stages": {key: float(v.mean()) for key, v in r["stages"].items()},
            "models_killed": {"mean": float(r["killed"].mean()), "pmf": _pmf_list(killed_pmf)},
            "damage": {"mean": float(r["damage"].mean()), "pmf": _pmf_list(damage_pmf)},
            "p_wipe": float(wiped.mean()),
            "standard_error": {
                "stages": {key: se(v) for key, v in r["stages"].items()},
                "models_killed": se(r["killed"].astype(float)),
                "damage": se(r["damage"].astype(float)),
                "p_wipe": se(wiped),
                "attacker_mortal_wounds": se(haz.astype(float)),
                "trials": trials,
            },
        }
        hazard = np.bincount(haz.astype(np.int64), minlength=self.hazard.size) / trials
        return result, hazard, groups_killed


def _pmf_list(p: np.ndarray) -> list[float]:
    return np.maximum(np.asarray(p, dtype=float), 0.0).tolist()


_VALUES = np.arange(4096.0)
_VALUES.flags.writeable = False


def _mean(p: np.ndarray) -> float:
    values = _VALUES[: p.size] if p.size <= _VALUES.size else np.arange(p.size)
    return float(np.dot(values, p))


def _collect(groups: list[ResolvedGroup]) -> tuple[tuple[str, ...], ...]:
    out: tuple[list[str], list[str], list[str]] = ([], [], [])
    for g in groups:
        for src, dst in zip((g.applied, g.ignored, g.notes), out, strict=True):
            dst.extend(item for item in src if item not in dst)
    return tuple(tuple(x) for x in out)


@dataclass(frozen=True, eq=False)
class Checked:
    """A request validated, resolved and checked against the size limits, with its cost estimate: what
    a batch needs to be accepted or refused before any of it is built (engine.batch)."""

    request: Request
    groups: tuple[ResolvedGroup, ...]
    cost: Mapping[str, float]


def check(raw: Any) -> Checked:
    """Validate, resolve and check the size limits (RequestError), without building anything."""
    req = validate(raw)
    groups = tuple(resolve(g, req.target, req.context, req.attacker, req.edition) for g in req.groups)
    return Checked(req, groups, MappingProxyType(check_size(req, list(groups))))


def build(checked: Checked) -> Plan:
    """Compile a checked request: the groups' distributions and operators."""
    req, groups, est = checked.request, list(checked.groups), checked.cost
    applied, ignored, notes = _collect(groups)
    ops = stages = volley = gds = None
    t = req.target
    spills = req.edition.devastating_spills_after_volley and any(g.devastating for g in groups)
    if req.method == "exact" and not t.mixed and not spills:
        compiled, left = [], ROW_OPERATOR_MAX_BYTES * 2  # rows a plan keeps, in all
        for g in groups:
            compiled.append(_compile_group(g, t, left))
            left -= compiled[-1][0].nbytes
        ops = tuple(op for op, _ in compiled)
        stages = {key: math.fsum(s[key] for _, s in compiled) for key in ("attacks", "hits", "wounds", "unsaved")}
    elif req.method == "exact" and t.mixed:
        volley = mixed.compile_volley(groups, t, req.edition.devastating_spills_after_volley)
    elif req.method == "exact":  # 10e DEVASTATING WOUNDS: the distributions now, the pending axis per run
        gds = tuple(exact.distributions(groups, True))
        for gd in gds:
            _frozen(gd.joint)
    hazard = _frozen(np.maximum(hazard_pmf(req, groups), 0.0))
    return Plan(req, tuple(groups), est, applied, ignored, notes, hazard, ops,
                MappingProxyType(stages or {}), volley, _mean(hazard), gds)


CACHE = Cache(CACHE_MAX_PLANS, CACHE_MAX_BYTES)


def clear_caches() -> None:
    """Empty the engine's by-value caches: plans, the stage cache (engine.lru.STAGES) and the validated
    request parts (engine.request.PARTS). Results never depend on them; benches and tests use this."""
    CACHE.clear()
    STAGES.clear()
    PARTS.clear()


def _key(raw: Any) -> bytes | None:
    """The request's content as bytes (marshal: plain data only, about 5 us for a typical request, where
    sorted JSON takes 15), or None when it holds anything else (never cached). Format version 2 writes
    every value out (later versions refer back to objects seen before, so equal requests made of other
    objects would give other bytes). Equal requests built in the same key order - as one caller builds
    them - give equal keys; another order only misses the cache."""
    try:
        return marshal.dumps(raw, 2)
    except ValueError:
        return None


def compile(raw: Any) -> Plan:  # noqa: A001 - the engine's verb for "build a plan"
    """The Plan of a contract-1 request; raises RequestError for invalid input or a request over the limits.
    Monte Carlo plans draw fresh dice on every run (with `seed`, the same dice)."""
    key = _key(raw)
    plan = CACHE.get(key) if key is not None else None
    return plan if plan is not None else compile_checked(key, check(raw))


def compile_checked(key: bytes | None, checked: Checked) -> Plan:
    """Build a checked request's plan and cache it under `key` (engine.plan._key of the request)."""
    plan = build(checked)
    if key is not None:
        CACHE.put(key, plan)
    return plan


def cached(raw: Any) -> tuple[bytes | None, Plan | None]:
    """The request's cache key and its plan if one is cached."""
    key = _key(raw)
    return key, CACHE.get(key) if key is not None else None


def simulate(request: Any) -> dict[str, Any]:
    """Run one contract-1 request (defaults applied) and return the contract-1 result."""
    return compile(request).run()


__all__ = ["CACHE", "Checked", "Plan", "RequestError", "apply_rows", "build", "cached", "check", "clear_caches", "compile",
           "compile_checked", "simulate"]
