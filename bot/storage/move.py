"""`python -m bot migrate-store`: copy every game, setting and overlay link from one backend to another.

Games move whole: a game's row, its complete event log and its checkpoints are copied in one transaction,
so an interrupted move leaves only complete games behind and `--resume` carries on with the rest.
A non-empty target is refused without `--resume`. Afterwards every game is verified on the target: its
rows (game, every event, checkpoints) must equal the source's, so its contract-4 export is equal too, and
its log re-folded on the target must equal its snapshot.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from bot.games.store import GameStore, snapshot_matches
from bot.guild_settings import GuildSettings
from bot.storage.base import Storage, StorageError
from bot.web.tokens import OverlayTokens

BATCH_GAMES = 200
GAME_COLUMNS = ("id", "channel_id", "guild_id", "status", "edition", "created_at", "ended_at", "last_seq", "state",
                "depth")


@dataclass
class MoveReport:
    games: int = 0
    skipped_games: int = 0
    events: int = 0
    checkpoints: int = 0
    guild_settings: int = 0
    overlay_links: int = 0
    verified: int = 0
    differences: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _open_stores(storage: Storage) -> None:
    """Create (migrate) every feature's tables on `storage`."""
    GameStore(storage)
    GuildSettings(storage)
    OverlayTokens(storage)


def _count(storage: Storage, table: str) -> int:
    with storage.read() as conn:
        return int(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])


def _chunks(ids: list[int], size: int) -> Iterator[list[int]]:
    for i in range(0, len(ids), size):
        yield ids[i:i + size]


def move(source: Storage, target: Storage, *, resume: bool = False,
         progress: Callable[[int, int], None] | None = None) -> MoveReport:
    started = time.perf_counter()
    _open_stores(source)
    _open_stores(target)
    report = MoveReport()
    if not resume and any(_count(target, t) for t in ("games", "guild_settings", "overlay_tokens")):
        raise StorageError(f"the target {target.where} already holds data: move into an empty database, or pass "
                           f"--resume to continue an interrupted move")
    with source.read() as conn:
        ids = [int(r[0]) for r in conn.execute("SELECT id FROM games ORDER BY id").fetchall()]
    with target.read() as conn:
        present = {int(r[0]) for r in conn.execute("SELECT id FROM games").fetchall()}
    todo = [i for i in ids if i not in present]
    report.skipped_games = len(ids) - len(todo)
    for batch in _chunks(todo, BATCH_GAMES):
        _copy_games(source, target, batch, report)
        if progress:
            progress(report.games + report.skipped_games, len(ids))
    _copy_simple(source, target, "guild_settings", ("guild_id", "edition"), "guild_id", report)
    _copy_simple(source, target, "overlay_tokens", ("token_hash", "game_id", "channel_id", "created_by", "created_at"),
                 "token_hash", report)
    if target.dialect == "postgresql":  # ids were copied as they were: move the sequence past them
        with target.transaction() as conn:
            conn.execute("SELECT setval(pg_get_serial_sequence('games', 'id'), COALESCE((SELECT MAX(id) FROM games), 1))")
    _verify(source, target, ids, report)
    report.seconds = round(time.perf_counter() - started, 2)
    return report


def _copy_games(source: Storage, target: Storage, batch: list[int], report: MoveReport) -> None:
    marks = ",".join("?" * len(batch))
    with source.read() as conn:
        games = conn.execute(f"SELECT {', '.join(GAME_COLUMNS)} FROM games WHERE id IN ({marks})", batch).fetchall()
        events = conn.execute(f"SELECT game_id, seq, ts, actor_user, type, body FROM game_events "
                              f"WHERE game_id IN ({marks}) ORDER BY game_id, seq", batch).fetchall()
        checkpoints = conn.execute(f"SELECT game_id, depth, seq, state FROM game_checkpoints "
                                   f"WHERE game_id IN ({marks})", batch).fetchall()
    with target.transaction() as conn:
        conn.executemany(f"INSERT INTO games ({', '.join(GAME_COLUMNS)}) VALUES ({', '.join('?' * len(GAME_COLUMNS))})",
                         games)
        if events and target.dialect == "postgresql":  # COPY: the bulk of the data, in one stream
            with conn.raw.cursor().copy(  # type: ignore[attr-defined]
                    "COPY game_events (game_id, seq, ts, actor_user, type, body) FROM STDIN") as copy:
                for row in events:
                    copy.write_row(tuple(row))
        elif events:
            conn.executemany("INSERT INTO game_events (game_id, seq, ts, actor_user, type, body) "
                             "VALUES (?, ?, ?, ?, ?, ?)", events)
        if checkpoints:
            conn.executemany("INSERT INTO game_checkpoints (game_id, depth, seq, state) VALUES (?, ?, ?, ?)",
                             checkpoints)
    report.games += len(games)
    report.events += len(events)
    report.checkpoints += len(checkpoints)


def _copy_simple(source: Storage, target: Storage, table: str, columns: tuple[str, ...], key: str,
                 report: MoveReport) -> None:
    with source.read() as conn:
        rows = conn.execute(f"SELECT {', '.join(columns)} FROM {table}").fetchall()
    if rows:
        with target.transaction() as conn:
            conn.executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))}) "
                             f"ON CONFLICT ({key}) DO NOTHING", rows)
    setattr(report, "guild_settings" if table == "guild_settings" else "overlay_links", len(rows))


def _verify(source: Storage, target: Storage, ids: list[int], report: MoveReport) -> None:
    """Every game read back from the target must equal the source row for row (game, every event,
    checkpoints), which makes its contract-4 export equal too (the export is a function of those rows),
    and its log re-folded (from the rows read back from the target) must equal its snapshot."""
    state_at = GAME_COLUMNS.index("state")
    for batch in _chunks(ids, BATCH_GAMES):
        a, b = _rows(source, batch), _rows(target, batch)
        for game_id in batch:
            game, log_rows, _ = b.get(game_id, (None, (), ()))
            if a.get(game_id) != b.get(game_id) or game is None:
                report.differences.append(f"game {game_id}: the target's rows differ from the source's")
                continue
            log = [json.loads(body) | {"seq": seq, "ts": ts, "actor_user": actor}
                   for _, seq, ts, actor, _, body in log_rows]
            if snapshot_matches(game[state_at], log):
                report.verified += 1
            else:
                report.differences.append(f"game {game_id}: the target's snapshot differs from its re-folded log")


def _rows(storage: Storage, batch: list[int]) -> dict[int, tuple]:
    marks = ",".join("?" * len(batch))
    out: dict[int, list] = {gid: [None, [], []] for gid in batch}
    with storage.read() as conn:
        for row in conn.execute(f"SELECT {', '.join(GAME_COLUMNS)} FROM games WHERE id IN ({marks})", batch):
            out[int(row[0])][0] = tuple(row)
        for row in conn.execute(f"SELECT game_id, seq, ts, actor_user, type, body FROM game_events "
                                f"WHERE game_id IN ({marks}) ORDER BY game_id, seq", batch):
            out[int(row[0])][1].append(tuple(row))
        for row in conn.execute(f"SELECT game_id, depth, seq, state FROM game_checkpoints "
                                f"WHERE game_id IN ({marks}) ORDER BY game_id, depth", batch):
            out[int(row[0])][2].append(tuple(row))
    return {gid: (g, tuple(e), tuple(c)) for gid, (g, e, c) in out.items()}


def report_json(report: MoveReport) -> str:
    return json.dumps(report.to_dict())
