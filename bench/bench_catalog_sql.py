"""Hand-written SQL against sqlite-utils on the catalog's two hot spots (issue 20).

    .venv/bin/python bench/bench_catalog_sql.py [--shared PATH] [--rounds 5]

Builds the full catalog once (seeds, wh40kdc, the shared Wahapedia and gdc datasets), then times, in CPU
time of this thread (the machine is shared):
  - the FTS5 query behind /rule's full-text fallback for every labelled and player query: the
    hand-written `bm25(entries_fts, 4.0, 1.0)` query (bot.catalog.store.full_text) against sqlite-utils'
    `Table.search` on a copy whose FTS5 rank is configured to the same weights; both must return the
    same rows in the same order;
  - writing every entry row into an empty catalog: `executemany` with one INSERT against `insert_all`.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_catalog import settings_for  # noqa: E402
from bot.catalog import store as catalog_store  # noqa: E402
from bot.catalog.search import fts_words  # noqa: E402
from bot.catalog.service import open_catalog  # noqa: E402
from tests.catalog.labelled_queries import QUERIES  # noqa: E402
from tests.catalog.player_queries import PLAYER_QUERIES  # noqa: E402


def cpu_ms(fn, rounds: int) -> float:  # noqa: ANN001
    """Median CPU milliseconds of one call over `rounds` rounds."""
    samples = []
    for _ in range(rounds):
        started = time.thread_time()
        fn()
        samples.append((time.thread_time() - started) * 1000)
    return statistics.median(samples)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-catalog-sql-"))
    catalog = open_catalog(settings_for(folder))
    catalog.import_dataset("wahapedia", args.shared / "datasets" / "wahapedia-10e")
    catalog.import_dataset("gdc", args.shared / "datasets" / "gdc-11e")
    store = catalog.store
    path = store.path
    print(f"catalog: {catalog.count()} entries")

    # -- the FTS5 query ---------------------------------------------------------------------------
    words = [w for w in (fts_words(q[0]) for q in [*QUERIES, *PLAYER_QUERIES]) if w]
    expressions = []
    for ws in words:
        safe = [w for w in (re.sub(r"[^\w]", "", w) for w in ws) if w][:12]
        expressions += [" AND ".join(f'"{w}"*' for w in safe), " OR ".join(f'"{w}"*' for w in safe)]
    copy = folder / "ranked.db"
    shutil.copy(path, copy)
    ranked = sqlite3.connect(copy, isolation_level=None)
    ranked.execute("INSERT INTO entries_fts(entries_fts, rank) VALUES ('rank', 'bm25(4.0, 1.0)')")
    table = catalog_store._utils(ranked)["entries"]
    conn = store._conn
    sql = ("SELECT rowid, bm25(entries_fts, 4.0, 1.0) FROM entries_fts WHERE entries_fts MATCH ? "
           "ORDER BY bm25(entries_fts, 4.0, 1.0) LIMIT ?")

    def hand() -> list:
        return [[(r[0], r[1]) for r in conn.execute(sql, (e, 20))] for e in expressions]

    def utils() -> list:
        return [[(r["rowid"], r["rank"]) for r in table.search(e, columns=["rowid"], limit=20, include_rank=True)]
                for e in expressions]

    same = hand() == utils()
    a, b = cpu_ms(hand, args.rounds), cpu_ms(utils, args.rounds)
    n = len(expressions)
    print(f"FTS5 query x {n}: hand-written {a / n:.3f} ms each, sqlite-utils Table.search {b / n:.3f} ms each "
          f"({b / a:.2f}x); same rows and order: {same}")

    # -- writing the entry rows -------------------------------------------------------------------
    rows = [dict(r) for r in conn.execute("SELECT * FROM entries ORDER BY rowid")]
    columns = [c for c in rows[0] if c != "rowid"]
    insert = f"INSERT INTO entries ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
    tuples = [tuple(r[c] for c in columns) for r in rows]
    dicts = [{c: r[c] for c in columns} for r in rows]

    def fresh() -> sqlite3.Connection:
        target = sqlite3.connect(":memory:", isolation_level=None)
        target.row_factory = sqlite3.Row
        target.execute("BEGIN")
        catalog_store._create_schema(catalog_store._utils(target))
        return target

    def timed(fill) -> float:  # noqa: ANN001
        samples = []
        for _ in range(args.rounds):
            target = fresh()
            started = time.thread_time()
            fill(target)
            samples.append((time.thread_time() - started) * 1000)
            target.execute("COMMIT")
            target.close()
        return statistics.median(samples)

    old = timed(lambda t: t.executemany(insert, tuples))
    new = timed(lambda t: catalog_store._utils(t)["entries"].insert_all(dicts, batch_size=catalog_store._ROWS_PER_INSERT))
    print(f"write {len(rows)} entries (FTS triggers included): executemany {old:.0f} ms, insert_all {new:.0f} ms "
          f"({new / old:.2f}x)")
    catalog.close()
    ranked.close()
    shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
