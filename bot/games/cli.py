"""`python -m bot game export --channel ID` (contract 4) and `game verify --channel ID [--repair]`.

Export prints the channel's game (the active one, else the last finished one) as one JSON document;
with no game it prints `{"error": ...}` and exits 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable

from bot.cli_args import whole_number
from bot.config import Settings

channel_id = whole_number(1, 2**64 - 1, "a channel id is a number, got {text}",
                          "a channel id is a positive 64-bit number, got {value}")


def add_subcommands(subparsers: argparse._SubParsersAction) -> None:
    game = subparsers.add_parser("game", help="inspect tracked games in the state database")
    sub = game.add_subparsers(dest="game_command", required=True)
    export = sub.add_parser("export", help="print a channel's game as JSON")
    export.add_argument("--channel", type=channel_id, required=True, help="the Discord channel id")
    export.set_defaults(func=cmd_export)
    verify = sub.add_parser("verify", help="check that the stored state equals the replayed event log")
    verify.add_argument("--channel", type=channel_id, required=True, help="the Discord channel id")
    verify.add_argument("--repair", action="store_true",
                        help="rewrite a snapshot that differs from its event log from the log (the log is the truth)")
    verify.set_defaults(func=cmd_verify)


def _store(settings: Settings):  # noqa: ANN202 - imported lazily so `--help` stays fast
    from bot.games.store import GameStore

    return GameStore(settings.database_url or settings.db_path)


def _guarded(run: Callable[[], int], settings: Settings) -> int:
    """Run a command against the state database; an unusable database (permission, full disk, not a
    database, corrupt, newer version) or unreadable stored data is one JSON error line and exit 2."""
    import sqlite3

    from bot.db import SchemaTooNew
    from bot.games.store import DamagedGame
    from bot.storage.check import cause

    try:
        return run()
    except (sqlite3.Error, OSError, SchemaTooNew) as error:
        message = f"the state database {settings.db_path} cannot be used: {cause(error)}"
    except DamagedGame as error:
        message = f"the stored game in {settings.db_path} cannot be read: {error}"
    except (ValueError, KeyError, TypeError) as error:
        message = f"the stored game in {settings.db_path} cannot be read: {type(error).__name__}: {str(error)[:200]}"
    print(json.dumps({"error": message, "field": "COGITATOR_DB"}, ensure_ascii=False))
    return 2


def cmd_export(args: argparse.Namespace, settings: Settings) -> int:
    return _guarded(lambda: _export(args, settings), settings)


def cmd_verify(args: argparse.Namespace, settings: Settings) -> int:
    return _guarded(lambda: _verify(args, settings), settings)


def _export(args: argparse.Namespace, settings: Settings) -> int:
    store = _store(settings)
    try:
        data = store.export(args.channel)
    finally:
        store.close()
    if data is None:
        print(json.dumps({"error": f"channel {args.channel} has no game", "field": "channel"}))
        return 2
    json.dump(data, sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0


def _verify(args: argparse.Namespace, settings: Settings) -> int:
    store = _store(settings)
    try:
        repaired = store.repair(args.channel) if args.repair else None
        ok = store.verify(args.channel)
    finally:
        store.close()
    report: dict = {"channel": args.channel, "consistent": ok}
    if args.repair:
        report["repaired"] = bool(repaired)
    print(json.dumps(report))
    return 0 if ok else 1
