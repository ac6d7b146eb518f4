"""Dice expressions ("3", "D3", "2D6", "D6+2", "3D6+3") as exact integer distributions.

A distribution is a 1-D float array `p` where `p[v]` is the probability of the value `v` (so index 0
is the value 0). Only D3 and D6 exist in 40k profiles (01.05: "D3: roll one D6 and halve the result,
rounding up"), so those are the only faces accepted; the number of dice and the constant are bounded
by engine.limits so a hostile "999D6" is refused instead of computed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from engine import limits
from engine.numbers import HugeNumber, show_number

_EXPR = re.compile(r"^(?:(?P<flat>\d+)|(?P<n>\d*)D(?P<faces>\d+)(?:\+(?P<plus>\d+))?)$")


class DiceError(ValueError):
    """A dice expression that cannot be read or is beyond the limits."""


@dataclass(frozen=True)
class Dice:
    """`count` dice with `faces` faces plus `plus`; count == 0 means the constant `plus`."""

    count: int
    faces: int
    plus: int

    @property
    def minimum(self) -> int:
        return self.count + self.plus

    @property
    def maximum(self) -> int:
        return self.count * self.faces + self.plus

    @property
    def mean(self) -> float:
        return self.count * (self.faces + 1) / 2 + self.plus

    def pmf(self) -> np.ndarray:
        """Exact distribution (index = value). A fresh array the caller may modify."""
        return _pmf(self.count, self.faces, self.plus).copy()

    def __str__(self) -> str:
        if self.count == 0:
            return str(self.plus)
        head = f"{'' if self.count == 1 else self.count}D{self.faces}"
        return f"{head}+{self.plus}" if self.plus else head


def parse(expr: int | str) -> Dice:
    """Read a dice expression strictly; raises DiceError with a message meant for a person."""
    small = (isinstance(expr, int) and not isinstance(expr, bool) and abs(expr) < 10**20) or (
        isinstance(expr, str) and len(expr) <= 20)
    if small:
        return _parse_cached(expr)
    return _parse(expr)


@lru_cache(maxsize=1024, typed=True)
def _parse_cached(expr: int | str) -> Dice:
    return _parse(expr)


def _parse(expr: int | str) -> Dice:
    if isinstance(expr, bool):
        raise DiceError("expected a number or a dice expression such as D6+2, not true/false")
    if isinstance(expr, HugeNumber):
        raise DiceError(f"{expr} is {'negative' if expr.negative else f'more than the limit of {limits.MAX_FLAT}'}")
    if isinstance(expr, int):
        if expr < 0:
            raise DiceError(f"{show_number(expr)} is negative; expected 0 or more")
        if expr > limits.MAX_FLAT:
            raise DiceError(f"{show_number(expr)} is more than the limit of {limits.MAX_FLAT}")
        return Dice(0, 1, expr)
    if not isinstance(expr, str):
        raise DiceError(f"expected a number or a dice expression such as D6+2, got {type(expr).__name__}")
    text = re.sub(r"\s+", "", expr).upper()
    if len(text) > 20:
        raise DiceError("dice expression is too long; expected something like 3D6+3")
    m = _EXPR.match(text)
    if not m:
        raise DiceError(f"cannot read {expr!r} as dice; expected forms like 3, D3, D6, 2D6, D6+2 or 3D6+3")
    if m.group("flat") is not None:
        return _parse(int(m.group("flat")))
    faces = int(m.group("faces"))
    if faces not in limits.DICE_FACES:
        raise DiceError(f"D{faces} is not a 40k die; only D3 and D6 are used")
    count = int(m.group("n")) if m.group("n") else 1
    if count < 1:
        raise DiceError(f"{expr!r} rolls no dice")
    if count > limits.MAX_DICE_PER_EXPRESSION:
        raise DiceError(f"{count} dice is more than the limit of {limits.MAX_DICE_PER_EXPRESSION} in one expression")
    plus = int(m.group("plus")) if m.group("plus") else 0
    if plus > limits.MAX_FLAT:
        raise DiceError(f"+{plus} is more than the limit of {limits.MAX_FLAT}")
    return Dice(count, faces, plus)


def pmf(expr: int | str | Dice) -> np.ndarray:
    """Exact distribution of a dice expression (index = value)."""
    d = expr if isinstance(expr, Dice) else parse(expr)
    return d.pmf()


@lru_cache(maxsize=512)
def _pmf(count: int, faces: int, plus: int) -> np.ndarray:
    one = np.zeros(faces + 1)
    if faces == 3:  # D3 = a D6 halved, rounding up: each value on 2 of 6 faces
        one[1:4] = 1 / 3
    else:
        one[1:] = 1 / faces
    dist = np.array([1.0])
    for _ in range(count):
        dist = np.convolve(dist, one)
    out = np.zeros(plus + dist.size)
    out[plus:] = dist
    out.flags.writeable = False
    return out


def convolve_power(kernel: np.ndarray, n: int) -> np.ndarray:
    """Distribution of the sum of `n` independent draws from `kernel` (exponentiation by squaring)."""
    result = np.array([1.0])
    base = np.asarray(kernel, dtype=float)
    while n:
        if n & 1:
            result = np.convolve(result, base)
        n >>= 1
        if n:
            base = np.convolve(base, base)
    return result


def shift(dist: np.ndarray, by: int) -> np.ndarray:
    """The distribution of X + by (by >= 0)."""
    out = np.zeros(dist.size + by)
    out[by:] = dist
    return out
