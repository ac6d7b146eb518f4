"""`python -m bot migrate-store`: copy every game, setting and overlay link from one backend to another.

Games move whole: a game's row, its complete event log and its checkpoints are copied in one transaction,
so an interrupted move leaves only complete games behind and `--resume` carries on with the rest.
A non-empty target is refused without `--resume`. Afterwards every game is verified on the target: its
log is re-folded and must equal its snapshot, and its contract-4 export must equal the source's.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from bot.games.store import GameStore
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
        for row in games:
            conn.execute(f"INSERT INTO games ({', '.join(GAME_COLUMNS)}) VALUES ({', '.join('?' * len(GAME_COLUMNS))})",
                         tuple(row))
        for row in events:
            conn.execute("INSERT INTO game_events (game_id, seq, ts, actor_user, type, body) VALUES (?, ?, ?, ?, ?, ?)",
                         tuple(row))
        for row in checkpoints:
            conn.execute("INSERT INTO game_checkpoints (game_id, depth, seq, state) VALUES (?, ?, ?, ?)", tuple(row))
    report.games += len(games)
    report.events += len(events)
    report.checkpoints += len(checkpoints)


def _copy_simple(source: Storage, target: Storage, table: str, columns: tuple[str, ...], key: str,
                 report: MoveReport) -> None:
    with source.read() as conn:
        rows = conn.execute(f"SELECT {', '.join(columns)} FROM {table}").fetchall()
    with target.transaction() as conn:
        for row in rows:
            conn.execute(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))}) "
                         f"ON CONFLICT ({key}) DO NOTHING", tuple(row))
    setattr(report, "guild_settings" if table == "guild_settings" else "overlay_links", len(rows))


def _verify(source: Storage, target: Storage, ids: list[int], report: MoveReport) -> None:
    """Re-fold every game's log on the target and compare its export with the source's (same clock)."""
    now = time.time()
    src, dst = GameStore(source, now=lambda: now), GameStore(target, now=lambda: now)
    with source.read() as conn:
        channels = {int(r[0]): int(r[1]) for r in conn.execute("SELECT id, channel_id FROM games").fetchall()}
    for game_id in ids:
        channel = channels[game_id]
        a, b = src.export(channel, game_id=game_id), dst.export(channel, game_id=game_id)
        if a != b:
            report.differences.append(f"game {game_id}: the export differs on the target")
        elif not dst.verify_game(game_id):
            report.differences.append(f"game {game_id}: the target's snapshot differs from its re-folded log")
        else:
            report.verified += 1


def report_json(report: MoveReport) -> str:
    return json.dumps(report.to_dict())
