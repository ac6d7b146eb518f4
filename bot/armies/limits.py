"""What an army list may cost to read, checked before the work that costs it.

Bytes alone do not bound the work: a 4.8 MB GW-app text of 960,000 `Boyz` lines took 17.5 s and 200 MB to
parse, and gzip(`[` x 200,000) is 200 KB of JSON that no decoder should recurse into. So each shape is
measured by what it costs while it is read, in one pass over the raw text and before any full parse:

- text: lines, characters per line, digits per number;
- JSON and XML trees: nesting depth and the number of nodes (values or elements);
- every number: finite, integral where it counts something, and in range, both in the tree
  (`check_tree`, before wh40kdc's adapters see it) and in the adapter's output (`check_parsed`,
  before wh40kdc's resolver and the tracker see it): units, models per unit, wargear, points.

A real 2,000-point list in any format uses a small fraction of each limit (tests/armies/test_limits.py).
Every refusal names the limit it hit.
"""

from __future__ import annotations

import math
import re
from typing import Any

from bot.armies.errors import ListError

MAX_LINES = 3_000  # a 2,000-point GW-app export is ~100-250 lines; an Onslaught list < 600
MAX_LINE_CHARS = 10_000  # a unit line is < 200; room for long names, which the tracker clips
MAX_DIGITS = 12  # no count or cost in a list has more
MAX_DEPTH = 64  # NewRecruit/BattleScribe trees nest ~12 deep
MAX_NODES = 200_000  # values of a JSON tree or elements of an XML roster; a 2,000-point NewRecruit export ~5,000
MAX_UNITS = 150  # an Onslaught list fields ~60 units
MAX_MODELS = 100  # models in one unit (the largest unit in the game fields 30); also what /unit damage accepts
MAX_WARGEAR = 1_000  # one wargear line's count
MAX_POINTS = 100_000  # any points value: a unit, an enhancement, a list total or limit

COUNT_KEYS = frozenset({"number", "count", "model_count"})  # keys whose numbers count things: whole numbers


# ---- text ------------------------------------------------------------------------------------------------

_LONG_NUMBER = re.compile(rf"\d{{{MAX_DIGITS + 1},}}")


def check_text(text: str) -> None:
    """Lines, line length and number length, in one pass that stops at the first line over a limit."""
    if text.count("\n") >= MAX_LINES:
        raise ListError(f"The list has more than {MAX_LINES:,} lines; the limit is {MAX_LINES:,} "
                             "(a 2,000-point list has a few hundred).")
    for number, line in enumerate(text.split("\n"), start=1):
        if len(line) > MAX_LINE_CHARS:
            raise ListError(f"Line {number} has {len(line):,} characters; the limit is {MAX_LINE_CHARS:,} "
                                 "per line.", line=number)
        if _LONG_NUMBER.search(line):
            raise ListError(f"Line {number} has a number of more than {MAX_DIGITS} digits: no count or cost "
                                 "in an army list is that large.", line=number)


# ---- JSON ------------------------------------------------------------------------------------------------

# One token at a time: a string (escapes included), a bracket, or a bare scalar (number, true, NaN, ...).
_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]|[^\s,:\[\]{}"]+')


def check_json_shape(text: str) -> None:
    """Nesting depth and node count of JSON text, streamed over its tokens (no recursion, no tree built):
    it stops at the first bracket past MAX_DEPTH or the first node past MAX_NODES."""
    depth = nodes = 0
    for match in _JSON_TOKEN.finditer(text):
        token = match.group()
        if token in ("]", "}"):
            depth -= 1
            continue
        nodes += 1
        if nodes > MAX_NODES:
            raise ListError(f"The JSON has more than {MAX_NODES:,} values; the limit is {MAX_NODES:,} "
                                 "(a 2,000-point export has a few thousand).")
        if token in ("[", "{"):
            depth += 1
            if depth > MAX_DEPTH:
                raise ListError(f"The JSON nests deeper than {MAX_DEPTH} levels; the limit is {MAX_DEPTH} "
                                     "(an army export nests about 12).")


def _refuse_constant(name: str) -> Any:
    raise ListError(f"The JSON holds the number {name}: every number in a list must be finite.")


def _checked_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise ListError(f"The JSON holds a number of more than {MAX_DIGITS} digits: no count or cost in an "
                             "army list is that large.")
    return int(text)


def _checked_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ListError(f"The JSON holds the number {text[:20]}, which is not finite: every number in a "
                             "list must be.")
    return value


# What json.loads calls for numbers: non-finite and overlong numbers are refused while the text is read
# (int() of a 5,000-digit number raises ValueError, 1e999 reads as inf, NaN and Infinity are not JSON).
JSON_HOOKS: dict[str, Any] = {"parse_constant": _refuse_constant, "parse_int": _checked_int,
                              "parse_float": _checked_float}


# ---- numbers in trees and in the adapters' output --------------------------------------------------------

def check_number(key: str, value: Any, *, where: str = "The list") -> None:
    """A number under `key` is finite; a count is a whole number from 0 to MAX_WARGEAR (models: MAX_MODELS);
    any other number lies within +-MAX_POINTS. Strings and booleans are not numbers here."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return
    if isinstance(value, float) and not math.isfinite(value):
        raise ListError(f"{where} has {key} = {value}: every number in a list must be finite.")
    if key in COUNT_KEYS:
        high = MAX_MODELS if key == "model_count" else MAX_WARGEAR
        if value != int(value) or not 0 <= value <= high:
            if key == "model_count":
                raise ListError(f"{where} has {_show(value)} models; a unit has a whole number of models from 0 "
                                f"to {high:,}.")
            raise ListError(f"{where} has {key} = {_show(value)}: a count must be a whole number from 0 to {high:,}.")
    elif abs(value) > MAX_POINTS:
        raise ListError(f"{where} has {key} = {_show(value)}; the limit is {MAX_POINTS:,}.")


def _show(value: float) -> str:
    return f"{value:g}" if isinstance(value, float) else f"{value:,}"


def check_tree(tree: Any) -> None:
    """Every number of a JSON/XML tree (iteratively: the depth is already bounded, but a walk needs no stack),
    and a roster's unit count."""
    check_roster_units(tree)
    pending: list[tuple[str, Any]] = [("", tree)]
    while pending:
        key, value = pending.pop()
        if isinstance(value, dict):
            pending.extend(value.items())
        elif isinstance(value, list):
            pending.extend((key, item) for item in value)
        else:
            check_number(key, value)


def check_roster_units(tree: Any) -> None:
    """A BattleScribe-schema roster (NewRecruit, ListForge, .ros): its forces' top-level unit and model
    selections, counted before wh40kdc's adapter walks them (28,000 units took it a second)."""
    roster = tree.get("roster") if isinstance(tree, dict) else None
    forces = list(roster.get("forces") or []) if isinstance(roster, dict) else []
    units = 0
    while forces:
        force = forces.pop()
        if not isinstance(force, dict):
            continue
        forces.extend(force.get("forces") or [])
        units += sum(1 for s in force.get("selections") or [] if isinstance(s, dict) and s.get("type") in
                     ("unit", "model"))
    if units > MAX_UNITS:
        raise ListError(f"The list has {units:,} units; the limit is {MAX_UNITS}.")


def check_parsed(parsed: dict[str, Any]) -> None:
    """The adapter's output, before wh40kdc's resolver and the tracker: units, models per unit, wargear
    counts and points (text formats carry their numbers as digits, so this is where those are checked)."""
    units = parsed.get("units") or []
    if len(units) > MAX_UNITS:
        raise ListError(f"The list has {len(units):,} units; the limit is {MAX_UNITS}.")
    for key in ("declared_limit", "total_reported", "total_computed"):
        check_number(key, parsed.get(key))
    for unit in units:
        where = f"Unit {str(unit.get('raw_name'))[:40]!r}"
        for key in ("model_count", "points", "enhancement_points"):
            check_number(key, unit.get(key), where=where)
        for wargear in unit.get("wargear") or []:
            check_number("count", wargear.get("count"), where=where)
        for group in unit.get("loadout_groups") or []:
            check_number("model_count", group.get("count"), where=where)
            for wargear in group.get("wargear") or []:
                check_number("count", wargear.get("count"), where=where)
