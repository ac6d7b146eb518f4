"""`python -m bot army parse [FILE|-] [--edition 10e|11e] --json` (contract 6) and
`python -m bot army check FILE [--battle-size NAME] [--edition 10e|11e] --json` (contract 6b).

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
    check = sub.add_parser("check", help="cost a list by the points in force (11e: the MFM, 10e: the Wahapedia "
                                         "export) and check it against a battle size (contract 6b)")
    check.add_argument("file", help="the list file, or '-' for standard input")
    check.add_argument("--battle-size", default=None, help="Incursion, Strike Force (default) or Onslaught (11e; "
                                                           "the data has no 10e battle sizes)")
    check.add_argument("--edition", choices=("10e", "11e"), default="11e", help="rules edition (default 11e)")
    check.add_argument("--json", action="store_true", help="print JSON (the only output form)")
    check.set_defaults(func=cmd_check)


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


def cmd_check(args: argparse.Namespace, settings: Settings) -> int:
    """Contract 6's object plus `check` (contract 6b); exit 0 whatever the verdict, 2 when unreadable. A 10e
    list is costed by the Wahapedia export's points in the catalog, which parsing it opens anyway."""
    from bot.armies.check import check_in

    return cmd_parse(args, settings, lambda army, catalog: {**army, "check": check_in(
        army, settings.data_dir, args.battle_size, catalog)})


def cmd_parse(args: argparse.Namespace, settings: Settings, extend=None) -> int:  # noqa: ANN001

    from bot.armies.decode import ListError
    from bot.armies.parse import parse_list

    catalog = None
    try:
        data, name = _read(args.file)
        if args.edition == "10e":  # 10e datasheet ids come from the catalog (11e ones are wh40kdc's own)
            from bot.catalog.service import open_catalog

            catalog = open_catalog(settings)
        army = parse_list(data, filename=name, edition=args.edition, catalog=catalog)
        document = army.to_dict()
        if extend:
            document = extend(document, catalog)
    except ListError as error:
        print(json.dumps({"error": str(error), "line": error.line}, ensure_ascii=False))
        return 2
    except OSError as error:
        print(json.dumps({"error": f"cannot read {args.file}: {error.strerror}", "line": None}))
        return 2
    finally:
        if catalog is not None:
            catalog.close()
    json.dump(document, sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0
