"""Integers from untrusted JSON, bounded before conversion and shown truncated.

Python refuses to convert an integer literal of more than 4,300 digits (a ValueError deep inside
`json.loads`), and converting a few thousand digits still costs quadratic time; echoing one in an
error message makes the message as long as the input. So `python -m engine` reads integer literals
with `parse_json_int`: anything longer than `limits.MAX_JSON_INT_DIGITS` digits stays text in a
`HugeNumber`, which every validator refuses as out of range, naming the field, with the number cut
short.
"""

from __future__ import annotations

from engine import limits

SHOWN_DIGITS = 12


class HugeNumber:
    """An integer literal too long to convert; only its sign, leading digits and length are kept."""

    __slots__ = ("digits", "head", "negative")

    def __init__(self, text: str) -> None:
        self.negative = text.startswith("-")
        body = text.lstrip("+-")
        self.digits = len(body)
        self.head = body[:SHOWN_DIGITS]

    def __str__(self) -> str:
        return f"{'-' if self.negative else ''}{self.head}… ({self.digits:,} digits)"

    __repr__ = __str__


def parse_json_int(text: str) -> int | HugeNumber:
    """`json.loads(..., parse_int=parse_json_int)`: convert only literals of a bounded length."""
    if len(text.lstrip("+-")) > limits.MAX_JSON_INT_DIGITS:
        return HugeNumber(text)
    return int(text)


def show_number(value: object) -> str:
    """A number for an error message, never longer than ~30 characters (a Python int of any size too)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**limits.MAX_JSON_INT_DIGITS:
        digits = int(abs(value).bit_length() * 0.30103) + 1
        return f"{'-' if value < 0 else ''}a number of about {digits:,} digits"
    return str(value)


def is_number(value: object) -> bool:
    """An integer as JSON would give it: a real int (not a bool) or a HugeNumber."""
    return isinstance(value, HugeNumber) or (isinstance(value, int) and not isinstance(value, bool))
