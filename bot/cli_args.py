"""argparse types the command lines share (`python -m bot game|league|sim|migrate-store`)."""

from __future__ import annotations

import argparse
from collections.abc import Callable


def whole_number(low: int, high: int, not_a_number: str, out_of_range: str, *,
                 echo: int = 40) -> Callable[[str], int]:
    """An argparse `type`: a whole number from `low` to `high`, else a one-line refusal (argparse exits 2).

    `not_a_number` is formatted with `text` (the repr of the typed text's first `echo` characters, so a
    pasted page stays one short line), `out_of_range` with `value`."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(not_a_number.format(text=repr(text[:echo]))) from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(out_of_range.format(value=value))
        return value

    return parse
