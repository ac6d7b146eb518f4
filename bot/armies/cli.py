"""`python -m bot army parse [FILE|-] [--edition 10e|11e] --json` (contract 6).

Prints the army as JSON; a list it cannot read at all prints `{"error", "line"}` and exits 2. Reading stops at
the size limit, so a huge standard input is refused without being held in memory.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from bot.config import Settings


def add_subcommands(subparsers: argparse._SubParsersAction) -> None:
    army = subparsers.add_parser("army", help="read army lists (contract 6)")
    sub = army.add_subparsers(dest="army_command", required=True)
    parse = sub.add_parser("parse", help="parse a list (GW app, NewRecruit, ListForge, BattleScribe .ros/.rosz)")
    parse.add_argument("file", nargs="?", default="-", help="the list file, or '-' for standard input (default)")
    parse.add_argument("--edition", choices=("10e", "11e"), default="11e", help="rules edition (default 11e)")
    parse.add_argument("--json", action="store_true", help="print JSON (the only output form)")
    parse.set_defaults(func=cmd_parse)


def _read(path: str) -> tuple[bytes, str | None]:
    from bot.armies.decode import MAX_BYTES, ListError

    if path == "-":
        data = sys.stdin.buffer.read(MAX_BYTES + 1)
        name = None
    else:
        file = Path(path)
        if not file.is_file():
            raise ListError(f"No such file: {path}")
        with file.open("rb") as handle:
            data = handle.read(MAX_BYTES + 1)
        name = file.name
    if len(data) > MAX_BYTES:
        raise ListError(f"The list is over the {MAX_BYTES // 1024 // 1024} MB limit.")
    return data, name


def cmd_parse(args: argparse.Namespace, settings: Settings) -> int:
    from bot.armies.decode import ListError
    from bot.armies.parse import parse_list

    catalog = None
    try:
        data, name = _read(args.file)
        if args.edition == "10e":  # 10e datasheet ids come from the catalog (11e ones are wh40kdc's own)
            from bot.catalog.service import open_catalog

            catalog = open_catalog(settings)
        army = parse_list(data, filename=name, edition=args.edition, catalog=catalog)
    except ListError as error:
        print(json.dumps({"error": str(error), "line": error.line}, ensure_ascii=False))
        return 2
    except OSError as error:
        print(json.dumps({"error": f"cannot read {args.file}: {error.strerror}", "line": None}))
        return 2
    finally:
        if catalog is not None:
            catalog.close()
    json.dump(army.to_dict(), sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0
