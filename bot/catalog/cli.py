"""Command-line access to the catalog (hooked into `python -m bot` by bot/__main__.py).

    python -m bot lookup "QUERY" [--kind K] [--edition 10e|11e] [--limit N] [--json]   (contract 2)
    python -m bot lookup - --json            one query per line on stdin, one JSON line per query
    python -m bot lookup misses [--since 7d] [--guild ID] [--json]   the queries players marked "Not what I asked"
    python -m bot lookup "QUERY" --answer --json   a question answered from the rules text (contract 9)
    python -m bot import wahapedia PATH      a Wahapedia CSV export folder
    python -m bot import gdc PATH            a game-datacards faction file, core_rules.json, or a folder
    python -m bot catalog build [--force]    (re)build the catalog from data/ and the kept imports
    python -m bot catalog info               what the catalog holds, and the kept imports
    python -m bot data update [--source gdc|wahapedia|mfm|all] [--check]   fetch the public data, import it

A catalog or imports folder that cannot be opened or written (permissions, full disk) is one line on
stderr (or a JSON error with --json) and exit 2, never a traceback. A corrupt catalog file is rebuilt.
"""

from __future__ import annotations

import argparse
import functools
import json
import re
import sqlite3
import sys
import time
from collections.abc import Callable
from pathlib import Path

from bot.catalog.answers import Answer
from bot.catalog.importers.common import MAX_CSV_BYTES, MAX_JSON_BYTES
from bot.catalog.model import EDITIONS, KINDS, CatalogImportError
from bot.catalog.normalize import clean_text
from bot.catalog.search import looks_like_question
from bot.config import Settings

MAX_LIMIT = 100


def add_subcommands(subparsers: argparse._SubParsersAction) -> None:
    lookup = subparsers.add_parser("lookup", help="search the rules catalog (contract 2)")
    lookup.add_argument("query", help="the text to look up, or '-' to read one query per line from stdin")
    lookup.add_argument("--kind", help=f"one of: {', '.join(KINDS)}")
    lookup.add_argument("--edition", help="10e or 11e")
    lookup.add_argument("--limit", default="10", help=f"number of results, 1-{MAX_LIMIT} (default 10)")
    lookup.add_argument("--json", action="store_true", help="print JSON (always one line per query)")
    lookup.add_argument("--since", help="with `misses`: only misses this recent, e.g. 7d, 24h (kept 90 days)")
    lookup.add_argument("--guild", help="with `misses`: only this server's misses (its id)")
    lookup.add_argument("--answer", action="store_true",
                        help="answer a question from the rules text (contract 9); names are looked up as without it")
    lookup.set_defaults(func=cmd_lookup)
    lookup.epilog = ("`lookup misses` lists the queries players marked \"Not what I asked\", most missed first, "
                     "for adding aliases or vocabulary.")

    imp = subparsers.add_parser("import", help="import a shared dataset into the catalog")
    imp.add_argument("format", choices=("wahapedia", "gdc"), help="wahapedia (CSV folder) or gdc (JSON)")
    imp.add_argument("path", type=Path, help="folder or file to import")
    imp.add_argument("--json", action="store_true", help="print the result (or error) as JSON")
    imp.set_defaults(func=cmd_import)
    imp.epilog = (f"Limits: CSV files over {MAX_CSV_BYTES // (1024 * 1024)} MB and JSON files over "
                  f"{MAX_JSON_BYTES // (1024 * 1024)} MB are refused. Re-importing replaces the earlier import.")

    cat = subparsers.add_parser("catalog", help="build or inspect the rules catalog")
    cat_sub = cat.add_subparsers(dest="catalog_command", required=True)
    build = cat_sub.add_parser("build", help="build the catalog from data/ (seeds + wh40kdc)")
    build.add_argument("--force", action="store_true", help="rebuild even when data/ has not changed")
    build.set_defaults(func=cmd_build)
    info = cat_sub.add_parser("info", help="datasets and entry counts")
    info.set_defaults(func=cmd_info)

    data = subparsers.add_parser("data", help="download the public data (game-datacards, Wahapedia, Munitorum Field Manual points)")
    data_sub = data.add_subparsers(dest="data_command", required=True)
    update = data_sub.add_parser("update", help="download what changed upstream and import it")
    update.add_argument("--source", choices=("gdc", "wahapedia", "mfm", "all"), default="all",
                        help="which source (default: all)")
    update.add_argument("--check", action="store_true", help="only report which files are newer upstream")
    update.add_argument("--json", action="store_true", help="print one JSON line per source")
    update.set_defaults(func=cmd_data_update)
    update.epilog = ("Base URLs: COGITATOR_GDC_URL, COGITATOR_WAHAPEDIA_URL and COGITATOR_MFM_URL. Files go to "
                     "COGITATOR_DATA/downloads/<source>/; a failed source keeps its previous files and data.")


def _fail(message: str, field: str | None, as_json: bool) -> int:
    if as_json:
        print(json.dumps({"error": message, "field": field}, ensure_ascii=False))
    else:
        print(f"cogitator: {message}", file=sys.stderr)
    return 2


def _clean(command: Callable[[argparse.Namespace, Settings], int]) -> Callable[[argparse.Namespace, Settings], int]:
    """Storage failures of the catalog (or of the kept imports) as one line and exit 2."""

    @functools.wraps(command)
    def wrapper(args: argparse.Namespace, settings: Settings) -> int:
        from bot.catalog.imports import KeptImportError
        from bot.catalog.store import CatalogDamaged

        where = Path(settings.data_dir) / "catalog.sqlite"
        try:
            return command(args, settings)
        except (sqlite3.Error, OSError) as exc:
            return _fail(f"catalog {where}: {exc.strerror if isinstance(exc, OSError) and exc.strerror else exc}",
                         None, getattr(args, "json", False))
        except (KeptImportError, CatalogDamaged) as exc:
            return _fail(f"catalog {where}: {exc}", None, getattr(args, "json", False))

    return wrapper


def _open(settings: Settings):  # noqa: ANN202 - imported lazily so `--help` stays fast
    from bot.catalog.service import open_catalog

    return open_catalog(settings)


@_clean
def cmd_lookup(args: argparse.Namespace, settings: Settings) -> int:
    as_json = args.json
    if args.query == "misses":
        return cmd_misses(args, settings)
    if args.since is not None or args.guild is not None:
        return _fail("--since and --guild go with `lookup misses`", "since", as_json)
    if args.kind is not None and args.kind not in KINDS:
        return _fail(f"unknown kind {args.kind[:40]!r}: use one of {', '.join(KINDS)}", "kind", as_json)
    if args.edition is not None and args.edition not in EDITIONS:
        return _fail(f"unknown edition {args.edition[:40]!r}: use 10e or 11e", "edition", as_json)
    try:
        limit = int(args.limit)
    except ValueError:
        return _fail(f"--limit must be a whole number, got {args.limit[:40]!r}", "limit", as_json)
    if not 1 <= limit <= MAX_LIMIT:
        return _fail(f"--limit must be between 1 and {MAX_LIMIT}, got {limit}", "limit", as_json)
    catalog = _open(settings)
    try:
        # Bytes that are not UTF-8 (on stdin, or in argv as surrogates) become U+FFFD, never a traceback.
        queries = (line.decode("utf-8", "replace") for line in sys.stdin.buffer) if args.query == "-" \
            else [args.query]
        for raw in queries:
            query = clean_text(raw.rstrip("\r\n") if args.query == "-" else raw)
            if args.answer and args.kind is None and (looks_like_question(query) or catalog.asks_the_rules(
                    query, catalog.resolve(query, edition=args.edition))):  # as /rule routes it
                _print_answer(catalog.answer(query, edition=args.edition), as_json)
                continue
            hits = catalog.search(query, kind=args.kind, edition=args.edition, limit=limit)
            results = [{"id": h.id, "kind": h.kind, "name": h.name, "edition": h.edition, "source": h.source,
                        "score": h.score} for h in hits]
            if as_json:
                print(json.dumps({"query": query, **({"question": False} if args.answer else {}),
                                  "results": results}, ensure_ascii=False), flush=True)
            else:
                print(f"{query}:" if args.query == "-" else "", end="\n" if args.query == "-" else "")
                if not results:
                    print("  no match")
                for r in results:
                    print(f"  {r['score']:6.2f}  {r['edition']}  {r['kind']:<11} {r['name']}  ({r['source']})")
    finally:
        catalog.close()
    return 0


_PERIOD = re.compile(r"(\d{1,5})([smhd])")
_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def cmd_misses(args: argparse.Namespace, settings: Settings) -> int:
    """The most-missed queries from the state database (bot/catalog/misses.py)."""
    from bot.catalog.misses import RETENTION_DAYS, LookupMisses
    from bot.storage import StorageError, settings_storage

    as_json = args.json
    since = None
    if args.since is not None:
        period = _PERIOD.fullmatch(args.since.strip())
        if period is None:
            return _fail(f"--since must be a period such as 7d, 24h or 30m, got {args.since[:40]!r}", "since", as_json)
        since = min(int(period[1]) * _SECONDS[period[2]], RETENTION_DAYS * 86400)
    guild = None
    if args.guild is not None:
        if not args.guild.strip().isdigit() or len(args.guild.strip()) > 20:
            return _fail(f"--guild must be a server id (digits), got {args.guild[:40]!r}", "guild", as_json)
        guild = int(args.guild)
    try:
        limit = int(args.limit)
    except ValueError:
        return _fail(f"--limit must be a whole number, got {args.limit[:40]!r}", "limit", as_json)
    try:
        store = LookupMisses(settings_storage(settings))
    except (StorageError, sqlite3.Error, OSError) as exc:
        return _fail(f"state database: {exc}", None, as_json)
    try:
        found = store.most_missed(since_seconds=since, guild_id=guild, limit=max(1, min(limit, MAX_LIMIT)))
    finally:
        store.close()
    if as_json:
        print(json.dumps({"misses": [{"query": m.query, "misses": m.misses, "shown": m.shown,
                                      "last": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(m.last))}
                                     for m in found]}, ensure_ascii=False))
        return 0
    if not found:
        print("no misses recorded" + (f" in the last {args.since}" if since else ""))
    for m in found:
        print(f"{m.misses:5d}  {m.query}  (shown: {m.shown}; last {time.strftime('%Y-%m-%d', time.gmtime(m.last))})")
    return 0


def _print_answer(answer: Answer, as_json: bool) -> None:
    if as_json:
        print(json.dumps(answer.as_json(), ensure_ascii=False), flush=True)
        return
    print(f"{answer.query}\n  {'answer' if answer.confident else 'not sure; the closest rules'}:")
    for q in answer.passages:
        print(f"  {q.passage.number or ''} {q.passage.name} ({q.passage.edition}, {q.passage.source})")
        print("    " + q.text.replace("\n", "\n    "))
    for label, items in (("related", answer.related), ("FAQ", answer.faq)):
        if items:
            print(f"  {label}: " + " · ".join(i.name for i in items))


@_clean
def cmd_import(args: argparse.Namespace, settings: Settings) -> int:
    catalog = _open(settings)
    started = time.perf_counter()
    skipped: list[str] = []
    try:
        counts = catalog.import_dataset(args.format, args.path, skipped)
    except CatalogImportError as error:
        if args.json:
            print(json.dumps({"error": error.reason, "file": error.path, "line": error.line}, ensure_ascii=False))
        else:
            print(f"cogitator: import failed, catalog unchanged: {error}", file=sys.stderr)
        return 2
    finally:
        catalog.close()
    elapsed = time.perf_counter() - started
    for line in skipped:
        print(f"cogitator: warning: skipped {line}", file=sys.stderr)
    if args.json:
        print(json.dumps({"imported": counts, "skipped": skipped, "seconds": round(elapsed, 2)}))
    else:
        for name, count in counts.items():
            print(f"{name}: {count} entries")
        print(f"done in {elapsed:.1f}s")
    return 0


@_clean
def cmd_build(args: argparse.Namespace, settings: Settings) -> int:
    from bot.catalog.service import open_catalog

    started = time.perf_counter()
    catalog = open_catalog(settings, rebuild=args.force)
    try:
        print(f"catalog: {catalog.count()} entries in {Path(settings.data_dir) / 'catalog.sqlite'} "
              f"({time.perf_counter() - started:.1f}s)")
    finally:
        catalog.close()
    return 0


@_clean
def cmd_info(args: argparse.Namespace, settings: Settings) -> int:
    catalog = _open(settings)
    try:
        for ds in catalog.datasets():
            print(f"{ds['name']:<28} {ds['entries']:>6}  {ds['source']}  (imported {ds['imported_at']})")
        print(f"total {catalog.count()} entries")
        entries = catalog.kept_imports()
        print(f"kept imports ({len(entries)}, replayed on every rebuild) in {Path(settings.data_dir) / 'imports'}:"
              if entries else "kept imports: none")
        for e in entries:
            print(f"  {e['imported_at']}  {e['format']:<9} {e['name']}  {e['bytes']:,} bytes  sha256 {e['sha256'][:16]}"
                  f"  -> {', '.join(e.get('datasets') or [])}")
    finally:
        catalog.close()
    return 0


def cmd_data_update(args: argparse.Namespace, settings: Settings) -> int:
    """Download (or with --check only compare) each source; import the sources whose files changed."""
    import asyncio

    from bot.catalog import update
    from bot.points.mfm import PointsDataError

    sources = update.SOURCES if args.source == "all" else (args.source,)
    progress = sys.stderr.isatty() and not args.json
    failed = False
    catalog = None
    try:
        for source in sources:
            if args.check:
                report = asyncio.run(update.check_source(source, update.url_for(settings, source),
                                                         settings.data_dir))
            else:
                report = asyncio.run(update.download_source(source, update.url_for(settings, source),
                                                            settings.data_dir, progress=progress))
                if report.error is None and (report.new or not update.is_imported(settings.data_dir, source)):
                    if source != "mfm":  # points are kept beside the catalog, which need not open
                        catalog = catalog or _open(settings)
                    try:
                        report.imported = update.import_source(catalog, source, settings.data_dir)
                    except CatalogImportError as error:
                        report.error = f"import failed, catalog unchanged: {error}"
                    except PointsDataError as error:
                        report.error = f"import failed, the points in force stay: {error}"
            failed = failed or report.error is not None
            _print_report(report, args)
    finally:
        if catalog is not None:
            catalog.close()
    return 2 if failed else 0


def _print_report(report, args: argparse.Namespace) -> None:  # noqa: ANN001 - update.SourceReport
    if args.json:
        print(json.dumps({**report.to_json(), "check": bool(args.check)}, ensure_ascii=False), flush=True)
        return
    if report.error is not None:
        print(f"cogitator: {report.source}: {report.error}; previous files and data kept", file=sys.stderr)
        return
    if args.check:
        newer = ", ".join(report.new[:10]) + (" …" if len(report.new) > 10 else "")
        print(f"{report.source}: {len(report.new)} newer upstream" + (f" ({newer})" if report.new else "")
              + f", {len(report.unchanged)} unchanged")
        return
    line = f"{report.source}: {len(report.new)} files updated ({report.bytes:,} bytes), " \
           f"{len(report.unchanged)} unchanged in {report.seconds:.1f}s"
    if report.imported:
        line += "; imported " + ", ".join(f"{name} {count}" for name, count in report.imported.items())
    print(line, flush=True)
