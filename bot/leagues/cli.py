"""`python -m bot league export --guild ID [--league NAME] --format csv|json` (contract 10).

Prints the league's standings and every result; without --league, the server's only league (or the one
open league). A refusal (no league, several to choose from, an unusable database) is one JSON line
`{"error", "field"}` and exit 2.
"""

from __future__ import annotations

import argparse
import json
import sys

from bot.cli_args import whole_number
from bot.config import Settings

_guild_id = whole_number(1, 2**63 - 1, "a server id is a number, got {text}",
                         "a server id is a positive 64-bit number, got {value}")


def add_subcommands(subparsers: argparse._SubParsersAction) -> None:
    league = subparsers.add_parser("league", help="server leagues in the state database")
    sub = league.add_subparsers(dest="league_command", required=True)
    export = sub.add_parser("export", help="print a league's standings and results (contract 10)")
    export.add_argument("--guild", type=_guild_id, required=True, help="the Discord server id")
    export.add_argument("--league", help="the league's name (default: the server's only or only open league)")
    export.add_argument("--format", choices=("json", "csv"), default="json")
    export.set_defaults(func=cmd_export)


def cmd_export(args: argparse.Namespace, settings: Settings) -> int:
    import sqlite3

    from bot.db import SchemaTooNew
    from bot.errors import UserError
    from bot.leagues.export import export_league, to_csv
    from bot.leagues.store import LeagueStore
    from bot.storage.base import StorageError
    from bot.storage.check import cause

    field = "league"
    try:
        store = LeagueStore(settings.database_url or settings.db_path)
        try:
            league = store.find(args.guild, args.league)
            data = export_league(league, store.members(league), store.results(league))
        finally:
            store.close()
    except UserError as error:
        message = str(error)
    except (sqlite3.Error, OSError, SchemaTooNew, StorageError) as error:
        message, field = f"the state database cannot be used: {cause(error)}", "COGITATOR_DB"
    else:
        if args.format == "csv":
            sys.stdout.write(to_csv(data))
        else:
            json.dump(data, sys.stdout, ensure_ascii=False)
            sys.stdout.write("\n")
        return 0
    print(json.dumps({"error": message, "field": field}, ensure_ascii=False))
    return 2
