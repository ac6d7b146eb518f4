"""`python -m bot migrate-store --from sqlite:PATH --to postgresql://… [--resume]`.

A command line, so an entry point above the features (docs/architecture.md, "Floors"): it imports the
features that store something so that they register their tables for the move (bot.storage.registry).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from bot.cli_args import whole_number
from bot.config import Settings
from bot.storage.base import StorageError
from bot.storage.move import BATCH_GAMES, MAX_BATCH_GAMES, MAX_JOBS


def _target(text: str) -> str:
    if text.startswith(("postgresql://", "postgres://")):
        return text
    if text.startswith("sqlite:"):
        path = text[len("sqlite:"):]
        if not path:
            raise argparse.ArgumentTypeError("sqlite: needs a path, e.g. sqlite:var/cogitator.db")
        return path
    raise argparse.ArgumentTypeError(f"expected sqlite:PATH or postgresql://…, got {text[:60]!r}")


def _bounded(option: str, low: int, high: int) -> Callable[[str], int]:
    return whole_number(low, high, f"{option} takes a whole number, got {{text}}",
                        f"{option} must be between {low} and {high}, got {{value}}", echo=20)


def add_subcommands(sub: argparse._SubParsersAction) -> None:
    move = sub.add_parser("migrate-store", help="copy every game, setting and overlay link to another backend")
    move.add_argument("--from", dest="source", type=_target, required=True, help="sqlite:PATH or postgresql://…")
    move.add_argument("--to", dest="target", type=_target, required=True, help="sqlite:PATH or postgresql://…")
    move.add_argument("--resume", action="store_true", help="continue an interrupted move into a non-empty target")
    move.add_argument("--jobs", type=_bounded("--jobs", 1, MAX_JOBS), default=None,
                      help=f"worker processes (default: one per core for PostgreSQL, 1 for SQLite; at most {MAX_JOBS})")
    move.add_argument("--batch", type=_bounded("--batch", 1, MAX_BATCH_GAMES), default=BATCH_GAMES,
                      help=f"games per transaction (default {BATCH_GAMES}, at most {MAX_BATCH_GAMES})")
    move.set_defaults(func=cmd_migrate_store)


def cmd_migrate_store(args: argparse.Namespace, settings: Settings) -> int:
    from pathlib import Path

    import bot.catalog.guild_aliases
    import bot.catalog.misses
    import bot.games.store
    import bot.guild_settings
    import bot.leagues.store
    import bot.web.tokens  # noqa: F401 - with the five above: each registers what it stores (bot.storage.registry)
    from bot.storage import is_postgres_url, open_storage
    from bot.storage.move import move, report_json

    if not is_postgres_url(args.source) and not Path(args.source).is_file():
        print(f"cogitator: migrate-store: no SQLite database at {args.source}", file=sys.stderr)
        return 2
    source = target = None
    try:
        source, target = open_storage(args.source), open_storage(args.target)
        tty = sys.stderr.isatty()

        def progress(done: int, total: int) -> None:
            if tty:
                print(f"\rcopied {done}/{total} games", end="", file=sys.stderr, flush=True)

        report = move(source, target, resume=args.resume, progress=progress, jobs=args.jobs,
                      batch_games=args.batch)
        if tty:
            print(file=sys.stderr)
    except StorageError as error:
        print(f"cogitator: migrate-store: {error}", file=sys.stderr)
        return 2
    finally:
        for storage in (source, target):
            if storage is not None:
                storage.close()
    print(report_json(report))
    return 0 if not report.differences else 1
