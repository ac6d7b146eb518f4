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
from engine.api import estimate, prepare, simulate
from engine.errors import RequestError
from engine.numbers import parse_json_int

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
            if not payload:
                raise RequestError("expected at least one request in the list", "")
            if len(payload) > limits.MAX_BATCH:
                raise RequestError(f"{len(payload)} requests is more than the limit of {limits.MAX_BATCH}", "")
            total = 0.0
            for i, item in enumerate(payload):  # refuse the whole batch before computing any of it
                try:
                    total += estimate(*prepare(item))["seconds"]
                except RequestError as exc:
                    raise RequestError(exc.message, f"[{i}]" + (f".{exc.field}" if exc.field else "")) from None
                if total > limits.MAX_BATCH_ESTIMATED_SECONDS:
                    raise RequestError(
                        f"the first {i + 1} requests are estimated at {total:.1f} s together, more than the "
                        f"batch limit of {limits.MAX_BATCH_ESTIMATED_SECONDS:g} s; send fewer or smaller requests",
                        f"[{i}]")
            out: Any = [simulate(item) for item in payload]
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
