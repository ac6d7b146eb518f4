"""`python -m bot migrate-store`: copy every game, setting, overlay link and league from one backend to another.

Games move whole, in batches: a batch's game rows, complete event logs and checkpoints are copied in one
transaction (COPY on PostgreSQL), so an interrupted move leaves only complete games behind and `--resume`
carries on with the rest. A non-empty target is refused without `--resume`.

Every game is verified, game by game, right after its batch commits:
- **the rows**: a SHA-256 of the game's rows (the game row, every event in seq order, every checkpoint)
  is computed on each side: by the target database itself over what it stored (PostgreSQL:
  `sha256(string_agg(...))`), and in Python over the rows read from the source. Both hash the same exact
  encoding (64-bit integers, IEEE doubles, UTF-8 text with its length, a flag for NULL), so any changed,
  missing or extra row or value is a difference. Equal rows give an equal contract-4 export, since the
  export is built from those rows.
- **the log**: the game's log, re-folded from those rows (proven equal on the target), must equal its
  snapshot.
Guild settings, aliases, lookup misses, overlay links and leagues (logs, projections) are compared as sets
of rows. Batches run in `jobs` worker processes (each with its own connections), so reading, hashing and
folding use every core while the database server stores the rows.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib
import itertools
import json
import multiprocessing
import os
import struct
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Any

from bot.storage.base import Conn, Storage, StorageError
from bot.storage.registry import SmallTable, registered

BATCH_GAMES = 200  # games per transaction
MAX_BATCH_GAMES = 5_000
MAX_JOBS = 32


@dataclass(frozen=True)
class Table:
    """A per-game table: its columns with their PostgreSQL types (`?`: may be NULL; the rest are NOT NULL in
    both backends' schemas), `game_id` first (for `games`, `id`), and the order of a game's rows."""

    name: str
    columns: tuple[tuple[str, str], ...]
    order: str

    @property
    def names(self) -> str:
        return ", ".join(c for c, _ in self.columns)

    @functools.cached_property
    def types(self) -> list[str]:
        return [t.rstrip("?") for _, t in self.columns]

    @functools.cached_property
    def kinds(self) -> str:
        """A letter per column for the digest: i (integer), f (double), t (text); upper case where the
        column may be NULL (a `?` after its type)."""
        return "".join(t[0].upper() if t.endswith("?") else t[0] for _, t in self.columns)


GAMES = Table("games", (("id", "int8"), ("channel_id", "int8"), ("guild_id", "int8?"), ("status", "text"),
                        ("edition", "text"), ("created_at", "float8"), ("ended_at", "float8?"), ("last_seq", "int4"),
                        ("state", "text"), ("depth", "int4"), ("shape", "int4")), "id")
EVENTS = Table("game_events", (("game_id", "int8"), ("seq", "int4"), ("ts", "float8"), ("actor_user", "int8?"),
                               ("type", "text"), ("body", "text")), "game_id, seq")
CHECKPOINTS = Table("game_checkpoints", (("game_id", "int8"), ("depth", "int4"), ("seq", "int4"), ("state", "text")),
                    "game_id, depth")


@dataclass
class MoveReport:
    games: int = 0
    skipped_games: int = 0
    events: int = 0
    checkpoints: int = 0
    guild_settings: int = 0
    points_channels: int = 0
    points_posts: int = 0
    guild_aliases: int = 0
    lookup_misses: int = 0
    overlay_links: int = 0
    leagues: int = 0
    league_events: int = 0
    league_members: int = 0
    league_channels: int = 0
    league_results: int = 0
    league_links: int = 0
    verified: int = 0
    differences: list[str] = field(default_factory=list)
    seconds: float = 0.0
    jobs: int = 1

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def add(self, part: MoveReport) -> None:
        for name in ("games", "events", "checkpoints", "verified"):
            setattr(self, name, getattr(self, name) + getattr(part, name))
        self.differences += part.differences


# ---- the exact encoding both sides hash -------------------------------------------------------------
#
# A game's digest is the SHA-256 of its three tables' encodings. A table's encoding (its rows in order):
# the row count as an int64; then for each row, for each column, a big-endian int64 or IEEE double (for
# text, its UTF-8 length), preceded by a 0/1 byte for NULL in the columns that may be NULL (a NULL's value
# is 0); then for each row the UTF-8 bytes of its text columns. Python packs it a column at a time;
# PostgreSQL builds the same bytes with two `string_agg`s over the rows it stored.

def _encode(rows: Sequence[Sequence[Any]], kinds: str, first: int) -> list[bytes]:
    """The encoding of `rows` (already in their order), from column `first` on."""
    out = [struct.pack(">q", len(rows))]
    if not rows:
        return out
    fixed: list[Sequence[Any]] = []
    texts: list[list[bytes]] = []
    layout = ""
    for column, kind in zip(list(zip(*rows, strict=True))[first:], kinds[first:], strict=True):
        if kind.isupper():  # may be NULL
            fixed.append([v is not None for v in column])
            layout += "B"
        if kind in "tT":
            texts.append([b"" if v is None else v.encode() for v in column] if kind == "T" else
                         [v.encode() for v in column])
            column = [len(v) for v in texts[-1]]
        elif kind.isupper() and None in column:
            column = [0 if v is None else v for v in column]
        fixed.append(column)
        layout += "d" if kind in "fF" else "q"
    out.append(struct.pack(">" + layout * len(rows), *itertools.chain.from_iterable(zip(*fixed, strict=True))))
    out.append(b"".join(itertools.chain.from_iterable(zip(*texts, strict=True))))
    return out


def _digest(game: Sequence[Any], events: Sequence[Sequence[Any]], checkpoints: Sequence[Sequence[Any]]) -> bytes:
    """SHA-256 of a game's rows: its game row, its events in seq order and checkpoints by depth (each
    without the game id, which the game row holds)."""
    out = _encode([game], GAMES.kinds, 0) + _encode(events, EVENTS.kinds, 1) + _encode(checkpoints, CHECKPOINTS.kinds, 1)
    return hashlib.sha256(b"".join(out)).digest()


def _sql_encoding(table: Table, first: int) -> str:
    """`_encode` as PostgreSQL aggregates over each game's rows of `table`."""
    order = table.order.split(", ")[-1]
    fixed, texts = [], []
    for (column, _), kind in zip(table.columns[first:], table.kinds[first:], strict=True):
        flag = f"(CASE WHEN {column} IS NULL THEN '\\x00'::bytea ELSE '\\x01'::bytea END) || " if kind.isupper() else ""
        if kind in "tT":
            data = f"convert_to({column}, 'UTF8')"
            fixed.append(f"{flag}int8send(COALESCE(octet_length({data}), 0)::int8)")
            texts.append(f"COALESCE({data}, ''::bytea)")
        else:
            cast = "float8" if kind in "fF" else "int8"
            fixed.append(f"{flag}{cast}send(COALESCE({column}, 0)::{cast})")
    key = table.columns[0][0]
    return (f"(SELECT {key} AS game_id, int8send(COUNT(*)) "
            f"|| string_agg({' || '.join(fixed)}, ''::bytea ORDER BY {order}) "
            f"|| string_agg({' || '.join(texts)}, ''::bytea ORDER BY {order}) AS b "
            f"FROM {table.name} WHERE {key} = ANY(?) GROUP BY {key})")


# The target's digests of a batch, computed by PostgreSQL over the rows it stored.
PG_DIGESTS = (f"SELECT g.game_id, sha256(g.b || COALESCE(e.b, int8send(0::int8)) || COALESCE(c.b, int8send(0::int8))) "
              f"FROM {_sql_encoding(GAMES, 0)} g LEFT JOIN {_sql_encoding(EVENTS, 1)} e ON e.game_id = g.game_id "
              f"LEFT JOIN {_sql_encoding(CHECKPOINTS, 1)} c ON c.game_id = g.game_id")


# ---- one batch -----------------------------------------------------------------------------------------

GameRows = tuple[tuple | None, list[tuple], list[tuple]]


def _read(storage: Storage, batch: Sequence[int]) -> dict[int, GameRows]:
    """The batch's rows, per game: (game row or None, event rows in seq order, checkpoint rows by depth)."""
    marks = ",".join("?" * len(batch))
    out: dict[int, list] = {gid: [None, [], []] for gid in batch}
    with storage.read() as conn:
        for i, table in enumerate((GAMES, EVENTS, CHECKPOINTS)):
            key = "id" if table is GAMES else "game_id"
            rows = _tuples(conn, f"SELECT {table.names} FROM {table.name} WHERE {key} IN ({marks}) "
                                 f"ORDER BY {table.order}", list(batch))
            for row in rows:
                if i == 0:
                    out[row[0]][0] = row
                else:
                    out[row[0]][i].append(row)
    return {gid: (g, e, c) for gid, (g, e, c) in out.items()}


def _tuples(conn: Any, sql: str, params: list[Any]) -> Iterator[tuple]:
    """Rows as plain tuples, without the name-addressable row objects of `Storage` (a third of the read)."""
    if hasattr(conn, "raw"):  # PostgreSQL
        from psycopg.rows import tuple_row

        from bot.storage.postgres import translate

        return conn.raw.cursor(row_factory=tuple_row).execute(translate(sql), params)
    cursor = conn.cursor()  # SQLite
    cursor.row_factory = None
    return cursor.execute(sql, params)


def _write(target: Storage, games: list[GameRows]) -> None:
    """One transaction: the games' rows, events and checkpoints (COPY on PostgreSQL)."""
    with target.transaction() as conn:
        for i, table in enumerate((GAMES, EVENTS, CHECKPOINTS)):
            rows = [g[0] for g in games] if i == 0 else [r for g in games for r in g[i]]
            if not rows:
                continue
            if target.dialect == "postgresql":  # binary COPY: a third of text COPY's work on both sides
                with conn.raw.cursor().copy(  # type: ignore[attr-defined]
                        f"COPY {table.name} ({table.names}) FROM STDIN (FORMAT BINARY)") as copy:
                    copy.set_types(table.types)
                    for row in rows:
                        copy.write_row(row)
            else:
                conn.executemany(f"INSERT INTO {table.name} ({table.names}) "
                                 f"VALUES ({', '.join('?' * len(table.columns))})", rows)


def _target_digests(target: Storage, batch: Sequence[int]) -> dict[int, bytes]:
    if target.dialect == "postgresql":
        with target.read() as conn:
            return {int(r[0]): bytes(r[1]) for r in conn.execute(PG_DIGESTS, (list(batch),) * 3)}
    return {gid: _digest(*rows) for gid, rows in _read(target, batch).items() if rows[0] is not None}


def move_batch(source: Storage, target: Storage, batch: Sequence[int], copy: set[int]) -> MoveReport:
    """Copy the games of `batch` that are in `copy`, then verify every game of `batch` on the target.

    The target stores the batch and hashes what it stored (on this process's I/O thread, mostly waiting for
    the server) while this thread hashes the source rows and re-folds the logs: the two overlap."""
    part = MoveReport()
    rows = _read(source, batch)
    wanted = [rows[gid] for gid in batch if gid in copy and rows[gid][0] is not None]
    stored_later = _io_thread().submit(_store, target, wanted, batch)
    state_at = GAMES.names.split(", ").index("state")
    ours = {gid: (_digest(game, events, checkpoints), _refolds(game[state_at], events))
            for gid, (game, events, checkpoints) in rows.items() if game is not None}
    stored = stored_later.result()
    part.games = len(wanted)
    part.events = sum(len(g[1]) for g in wanted)
    part.checkpoints = sum(len(g[2]) for g in wanted)
    for gid in batch:
        if gid not in ours:
            part.differences.append(f"game {gid}: gone from the source during the move")
        elif stored.get(gid) != ours[gid][0]:
            part.differences.append(f"game {gid}: the target's rows differ from the source's")
        elif not ours[gid][1]:
            part.differences.append(f"game {gid}: the target's snapshot differs from its re-folded log")
        else:
            part.verified += 1
    return part


def _store(target: Storage, wanted: list[GameRows], batch: Sequence[int]) -> dict[int, bytes]:
    """Copy `wanted` in one transaction, then the target's digests of every game of `batch`."""
    if wanted:
        _write(target, wanted)
    return _target_digests(target, batch)


_io: ThreadPoolExecutor | None = None


def _io_thread() -> ThreadPoolExecutor:
    """One I/O thread per process, so its connection to the target lasts from batch to batch."""
    global _io
    if _io is None:
        _io = ThreadPoolExecutor(1, thread_name_prefix="move-io")
    return _io


def _refolds(snapshot: str, events: list[tuple]) -> bool:
    try:  # (seq, ts, actor_user, body) of each (game_id, seq, ts, actor_user, type, body)
        return _log_check()(snapshot, [(r[1], r[2], r[3], r[5]) for r in events])
    except (ValueError, KeyError, TypeError, IndexError):  # a log that does not even fold
        return False


def _log_check() -> Callable[[str, Sequence[Sequence[Any]]], bool]:
    """The games feature's check that a snapshot is its re-folded log (bot.storage.registry)."""
    checks = [f.log_check for f in registered() if f.log_check is not None]
    if len(checks) != 1:
        raise StorageError("no feature registered the game log check: import the stores before moving")
    return checks[0]


def _small_tables() -> list[SmallTable]:
    return [table for feature in registered() for table in feature.small_tables]


# ---- the worker processes --------------------------------------------------------------------------------

_worker: tuple[Storage, Storage] | None = None


def _start_worker(source: str, target: str, parent: int, features: tuple[str, ...] = ()) -> None:
    """Open this worker's own connections; exit when the mover dies (even by SIGKILL), so a killed move
    leaves no process behind (its open transaction is rolled back by the server). `features`: the modules
    that registered what they store in the mover, imported here so that they register here too."""
    global _worker
    from bot.storage import open_storage

    for module in features:
        importlib.import_module(module)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.2)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()
    _worker = (open_storage(source), open_storage(target))


def _run_batch(batch: list[int], copy: set[int]) -> MoveReport:
    assert _worker is not None
    return _guarded(*_worker, batch, copy)


def _guarded(source: Storage, target: Storage, batch: list[int], copy: set[int]) -> MoveReport:
    """`move_batch`, with a database error turned into one (picklable) line for the mover."""
    try:
        return move_batch(source, target, batch, copy)
    except StorageError:
        raise
    except Exception as error:
        text = str(error).strip()
        raise StorageError(f"games {batch[0]}-{batch[-1]}: {type(error).__name__}"
                           f"{': ' + text.splitlines()[0] if text else ''}") from None


def _address(storage: Storage) -> str:
    """What a worker process opens to reach the same database."""
    return str(getattr(storage, "url", None) or storage.path)  # type: ignore[attr-defined]


# ---- the move ----------------------------------------------------------------------------------------------

def _open_stores(storage: Storage) -> None:
    """Create (migrate) every registered feature's tables on `storage`."""
    for feature in registered():
        feature.open(storage)


def _count(storage: Storage, table: str) -> int:
    with storage.read() as conn:
        return int(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])


def _chunks(ids: list[int], size: int) -> Iterator[list[int]]:
    for i in range(0, len(ids), size):
        yield ids[i:i + size]


def default_jobs(target: Storage) -> int:
    """One worker per core for a PostgreSQL target; SQLite takes one writer at a time anyway."""
    return min(MAX_JOBS, os.cpu_count() or 1) if target.dialect == "postgresql" else 1


def move(source: Storage, target: Storage, *, resume: bool = False,
         progress: Callable[[int, int], None] | None = None, jobs: int | None = None,
         batch_games: int = BATCH_GAMES) -> MoveReport:
    started = time.perf_counter()
    _log_check()  # the features are registered: a move without them would copy nothing it could verify
    _open_stores(source)
    _open_stores(target)
    report = MoveReport(jobs=jobs or default_jobs(target))
    if not resume and any(_count(target, t) for t in ("games", *(s.name for s in _small_tables()))):
        raise StorageError(f"the target {target.where} already holds data: move into an empty database, or pass "
                           f"--resume to continue an interrupted move")
    with source.read() as conn:
        ids = [int(r[0]) for r in conn.execute("SELECT id FROM games ORDER BY id").fetchall()]
    with target.read() as conn:
        present = {int(r[0]) for r in conn.execute("SELECT id FROM games").fetchall()}
    report.skipped_games = sum(1 for i in ids if i in present)
    relaxed = _drop_foreign_keys(target)
    try:
        _copy_games(source, target, ids, present, report, progress, batch_games)
    except BaseException:
        if relaxed:  # the target holds whole games only, so the keys go back on; if not, the start-up check says so
            with contextlib.suppress(Exception):
                _add_foreign_keys(target)
        raise
    if relaxed:
        _add_foreign_keys(target)
    for table in _small_tables():
        _copy_simple(source, target, table, report)
    if target.dialect == "postgresql":  # ids were copied as they were: move the sequence past them
        with target.transaction() as conn:
            conn.execute("SELECT setval(pg_get_serial_sequence('games', 'id'), COALESCE((SELECT MAX(id) FROM games), 1))")
    report.seconds = round(time.perf_counter() - started, 2)
    return report


# PostgreSQL checks a foreign key row by row (a lookup and a lock on the game's row for every event), which
# was half the server's work of a move. As PostgreSQL's manual advises for bulk loads, the move drops the
# two foreign keys to `games` while it copies and adds them back at the end, which checks every row in one
# pass (about a second for 10,000 games). A move killed in between leaves them off: the bot's start-up
# check then refuses the database until `migrate-store --resume` completes (`missing_foreign_keys`).
FOREIGN_KEYS = {"game_events": "game_events_game_id_fkey", "game_checkpoints": "game_checkpoints_game_id_fkey"}


def _drop_foreign_keys(target: Storage) -> bool:
    """True when the target's foreign keys to `games` are off for the copy (PostgreSQL, as the tables' owner)."""
    if target.dialect != "postgresql":
        return False
    try:
        with target.transaction() as conn:
            for table, name in FOREIGN_KEYS.items():
                conn.execute(f"ALTER TABLE {table} DROP CONSTRAINT IF EXISTS {name}")
    except Exception:  # not the tables' owner (least privilege): copy with the keys checked row by row
        return False
    return True


def _add_foreign_keys(target: Storage) -> None:
    with target.transaction() as conn:
        for table, name in FOREIGN_KEYS.items():
            conn.execute(f"ALTER TABLE {table} ADD CONSTRAINT {name} FOREIGN KEY (game_id) REFERENCES games (id)")


def missing_foreign_keys(conn: Conn) -> list[str]:
    """The PostgreSQL tables whose foreign key to `games` is off (a move was interrupted)."""
    have = {r[0] for r in conn.execute("SELECT conname FROM pg_constraint WHERE contype = 'f' "
                                       "AND conrelid IN ('game_events'::regclass, 'game_checkpoints'::regclass)")}
    return [table for table, name in FOREIGN_KEYS.items() if name not in have]


def _copy_games(source: Storage, target: Storage, ids: list[int], present: set[int], report: MoveReport,
                progress: Callable[[int, int], None] | None, batch_games: int) -> None:
    """Copy and verify every game, a batch at a time, in `report.jobs` processes."""
    batches = [(batch, {i for i in batch if i not in present}) for batch in _chunks(ids, batch_games)]
    done = 0

    def account(part: MoveReport, size: int) -> None:
        nonlocal done
        report.add(part)
        done += size
        if progress:
            progress(done, len(ids))

    if report.jobs == 1 or len(batches) <= 1:
        report.jobs = 1  # in this process
        for batch, copy in batches:
            account(_guarded(source, target, batch, copy), len(batch))
    else:
        # spawn, not fork: a forked child would share (and on exit, close) this process's connections
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(report.jobs, mp_context=context, initializer=_start_worker,
                                 initargs=(_address(source), _address(target), os.getpid(),
                                           tuple(f.module for f in registered()))) as pool:
            futures = [(pool.submit(_run_batch, batch, copy), len(batch)) for batch, copy in batches]
            try:
                for future, size in futures:
                    account(future.result(), size)
            except BrokenProcessPool:
                raise StorageError("a worker process of the move died; run it again with --resume") from None
            finally:
                pool.shutdown(cancel_futures=True)  # after an error, start no further batch


def _rows(conn: Conn, table: str, columns: Sequence[str]) -> set[tuple]:
    return {tuple(r) for r in conn.execute(f"SELECT {', '.join(columns)} FROM {table}")}


def _copy_simple(source: Storage, target: Storage, small: SmallTable, report: MoveReport) -> None:
    """Copy a small table (what the target lacks), then compare both sides as sets of rows."""
    table, columns = small.name, small.columns
    with source.read() as conn:
        rows = _rows(conn, table, columns)
    if rows:
        with target.transaction() as conn:
            conn.executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))}) "
                             f"ON CONFLICT ({', '.join(small.key or columns[:1])}) DO NOTHING", sorted(rows, key=repr))
    if small.serial and target.dialect == "postgresql":  # ids were copied as they were: move the sequence past them
        with target.transaction() as conn:
            conn.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                         f"COALESCE((SELECT MAX(id) FROM {table}), 1))")
    with target.read() as conn:
        missing = len(rows - _rows(conn, table, columns))
    if missing:
        report.differences.append(f"{table}: {missing} row(s) differ on the target")
    setattr(report, small.counted_as, len(rows))


def report_json(report: MoveReport) -> str:
    return json.dumps(report.to_dict())
