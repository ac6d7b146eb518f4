"""`python -m engine [FILE|-]`: contract 1 of shared/DESIGN.md.

Reads one JSON request (or a list of them) from FILE or standard input and prints the result JSON
(a list for a list). Exit 0 on success; on invalid input exit 2 and print
{"error": "<what is wrong, in words>", "field": "<path>"} (for a list, the field starts with "[i]").
"""

from __future__ import annotations

import json
import sys
from typing import Any

from engine import limits
from engine.batch import evaluate_batch
from engine.errors import RequestError
from engine.numbers import parse_json_int
from engine.plan import simulate

USAGE = "usage: python -m engine [FILE|-]"


def _fail(message: str, field: str = "") -> int:
    print(json.dumps({"error": message, "field": field}))
    return 2


def _read(argv: list[str]) -> str:
    if len(argv) > 1:
        raise RequestError(USAGE, "")
    if not argv or argv[0] == "-":
        data = sys.stdin.buffer.read(limits.MAX_INPUT_BYTES + 1)
    else:
        try:
            with open(argv[0], "rb") as fh:
                data = fh.read(limits.MAX_INPUT_BYTES + 1)
        except OSError as exc:
            raise RequestError(f"cannot read {argv[0]}: {exc.strerror}", "") from None
    if len(data) > limits.MAX_INPUT_BYTES:
        raise RequestError(f"input is larger than {limits.MAX_INPUT_BYTES} bytes", "")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise RequestError("input is not UTF-8 text", "") from None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in ("-h", "--help"):
        print(USAGE)
        print(__doc__)
        return 0
    try:
        text = _read(argv)
        try:
            payload: Any = json.loads(text, parse_int=parse_json_int)
        except (json.JSONDecodeError, RecursionError, ValueError) as exc:
            raise RequestError(f"input is not valid JSON: {exc}"[:300], "") from None
        if isinstance(payload, list):
            if len(payload) > limits.MAX_BATCH:
                raise RequestError(f"{len(payload)} requests is more than the limit of {limits.MAX_BATCH}", "")
            out: Any = evaluate_batch(payload).results  # the whole list is refused before any of it runs
        else:
            out = simulate(payload)
    except RequestError as exc:
        return _fail(exc.message, exc.field)
    try:
        print(json.dumps(out, allow_nan=False))
        sys.stdout.flush()
    except BrokenPipeError:  # e.g. piped into `head`: not an error of the request
        sys.stdout = None
    return 0


if __name__ == "__main__":
    sys.exit(main())
