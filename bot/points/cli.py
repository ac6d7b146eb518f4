"""`python -m bot points changes [--faction NAME] [--since VERSION] [--json]` and
`python -m bot points unit NAME [--models N] [--json]`: the imported MFM versions, without Discord."""

from __future__ import annotations

import argparse
import json

from bot.config import Settings


def add_subcommands(subparsers: argparse._SubParsersAction) -> None:
    points = subparsers.add_parser("points", help="the Munitorum Field Manual versions the bot imported")
    sub = points.add_subparsers(dest="points_command", required=True)
    changes = sub.add_parser("changes", help="what changed between imported versions, unit by unit")
    changes.add_argument("--faction", help="only this faction (name or slug)")
    changes.add_argument("--since", help="from this version (e.g. 1.0) or date; default: the last update")
    changes.add_argument("--json", action="store_true", help="one JSON object")
    changes.set_defaults(func=cmd_changes)
    unit = sub.add_parser("unit", help="one unit's points in one line")
    unit.add_argument("name")
    unit.add_argument("--models", type=int, help="the unit's number of models")
    unit.add_argument("--json", action="store_true", help="one JSON object")
    unit.set_defaults(func=cmd_unit)


def _fail(message: str, as_json: bool) -> int:
    print(json.dumps({"error": message}, ensure_ascii=False) if as_json else f"cogitator: {message}")
    return 2


def cmd_changes(args: argparse.Namespace, settings: Settings) -> int:
    from bot.points.answers import changes
    from bot.points.book import steps
    from bot.points.mfm import PointsDataError

    try:
        pairs = steps(settings.data_dir, args.since)
    except PointsDataError as exc:
        return _fail(str(exc), args.json)
    if not pairs:
        return _fail("fewer than two MFM versions imported: nothing to compare (`data update --source mfm` "
                     "keeps each new one)", args.json)
    out = []
    for old, new in pairs:
        found = changes(old, new, args.faction)
        out.append({"from": old.label, "to": new.label, "changes": [c.__dict__ for c in found]})
        if not args.json:
            print(f"{old.label} → {new.label}: {len(found)} change{'s' if len(found) != 1 else ''}"
                  + (f" for {args.faction}" if args.faction else ""))
            for change in found:
                print(f"  {change.line()}")
    if args.json:
        print(json.dumps({"steps": out}, ensure_ascii=False))
    return 0


def cmd_unit(args: argparse.Namespace, settings: Settings) -> int:
    from bot.points.answers import NotFound, unit_line
    from bot.points.book import current
    from bot.points.mfm import PointsDataError

    try:
        book = current(settings.data_dir)
        if book is None:
            return _fail("no MFM imported: run `python -m bot data update --source mfm`", args.json)
        line = unit_line(book, args.name, args.models)
    except (NotFound, PointsDataError) as exc:
        return _fail(str(exc), args.json)
    print(json.dumps({"answer": line, "points_source": book.label}, ensure_ascii=False) if args.json else line)
    return 0
