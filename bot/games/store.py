"""Persistence for games on either state backend (`bot.storage`): migrations, an append-only event log,
locking, undo.

Every change is one transaction, serialised per channel across processes (SQLite: a per-channel lock
plus `BEGIN IMMEDIATE`; PostgreSQL: an advisory lock on the channel), that reads the channel's active
game, runs a command (which only returns events), appends the events and rewrites the JSON snapshot, so
no update is lost. The snapshot is a cache: `verify()` re-folds the log and compares. The log is
append-only in the database itself (triggers on both backends).

A snapshot that can't be read is rebuilt from the log inside the same transaction (`_heal`); a log that
can't be read either leaves only `/game end abandon:true` (`DamagedGame`). Snapshots of an older format are
rebuilt when the store opens (`upgrade_snapshots`).

Why one file of about 630 lines (issue 20 asks each product file over 500 lines for a reason): `GameStore`
is one class whose every public method is one transaction over the same three tables (games, events,
checkpoints), and the log helpers below it are what those transactions share; healing reads the same rows
inside the same transactions. The schema (bot/games/schema.py), the export (bot/games/export.py) and the
snapshot cache (bot/games/snapshots.py) live beside it.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from bot.errors import UserError
from bot.games import commands, events, rules
from bot.games.commands import Outcome
from bot.games.export import export_game
from bot.games.model import GameState, Player, Unit
from bot.games.schema import MIGRATIONS, SNAPSHOT_SHAPE
from bot.games.snapshots import SnapshotCache, dump_json
from bot.games.summary import summarise
from bot.ops.metrics import EVENTS_WRITTEN
from bot.storage import open_storage
from bot.storage.base import Conn, Storage
from bot.storage.registry import StoredFeature, register

CHECKPOINT_EVERY = 32

NO_GAME = "There is no game in this channel. Start one with /game start."
DAMAGED_ACTIVE = ("This channel's game can't be read: its stored record is damaged and can't be rebuilt from its "
                  "log. End it with /game end abandon:true (a player, or a member with Manage Channel), then "
                  "/game start a new one.")
DAMAGED_ENDED = "This channel's last game can't be shown: its stored record is damaged. /game start begins a new game."
# What a damaged stored value raises when parsed or checked (JSON, `GameState.check`, the fold).
UNREADABLE = (ValueError, TypeError, KeyError, AttributeError, IndexError, RecursionError)

log = logging.getLogger("cogitator.games")


class DamagedGame(UserError):
    """A game whose snapshot can't be read and whose log can't rebuild it: only abandoning it is left."""


@dataclass
class Result:
    """What a command did: the new state and the answer to show."""

    game_id: int
    state: GameState
    outcome: Outcome


class GameStore:
    """The game tracker's state service (`bot.services.games`)."""

    def __init__(self, storage: Storage | Path | str, *, now: Callable[[], float] = time.time) -> None:
        """`storage` is a `bot.storage` backend, or a file path / postgresql:// URL (this store then owns it)."""
        self._owned = not hasattr(storage, "transaction")
        self.storage: Storage = open_storage(storage)
        # Every event timestamp (and so the chess clock) comes from here; tests inject a fake clock.
        self.now = now
        self.snapshots = SnapshotCache()
        self.storage.migrate("games", MIGRATIONS)
        self.upgrade_snapshots()

    # ---- plumbing --------------------------------------------------------------------------------

    def _read(self) -> AbstractContextManager[Conn]:
        return self.storage.read()

    @contextmanager
    def _transaction(self, channel_id: int) -> Iterator[Conn]:
        """The channel's transaction; the events it appended count as written (metrics) once it commits."""
        _appended.count = 0
        with self.storage.transaction(channel_id) as conn:
            yield conn
        EVENTS_WRITTEN.inc(_appended.count)

    def close(self) -> None:
        """Close the storage if this store opened it; safe to call twice."""
        if self._owned:
            self.storage.close()

    # ---- reading ---------------------------------------------------------------------------------

    @staticmethod
    def _active_row(conn: Conn, channel_id: int) -> Any | None:
        return conn.execute(
            "SELECT id, state, last_seq, depth FROM games WHERE channel_id = ? AND status = 'active'", (channel_id,)
        ).fetchone()

    def active(self, channel_id: int) -> tuple[int, GameState] | None:
        """(game id, state) of the channel's active game, or None."""
        with self._read() as conn:
            row = self._active_row(conn, channel_id)
        return (int(row["id"]), self._state(channel_id, row)) if row else None

    # ---- damaged snapshots heal from the log -----------------------------------------------------

    def _load(self, game_id: int, text: Any, last_seq: int) -> GameState:
        """The stored snapshot, parsed and checked; raises one of UNREADABLE when it is damaged or stale."""
        state = self.snapshots.load(game_id, text)
        if state.seq != last_seq:
            raise ValueError(f"the snapshot is at event {state.seq}, the log at {last_seq}")
        return state

    def _state(self, channel_id: int, row: Any) -> GameState:
        """A game row's state (outside a transaction): a damaged snapshot is rebuilt from the log."""
        try:
            return self._load(int(row["id"]), row["state"], row["last_seq"])
        except UNREADABLE as error:
            with self._transaction(channel_id) as conn:
                return self._heal(conn, int(row["id"]), error)

    def _state_in(self, conn: Conn, channel_id: int, row: Any) -> tuple[GameState, Any]:
        """`_state` inside the channel's transaction, with the active row as healing left it."""
        try:
            return self._load(int(row["id"]), row["state"], row["last_seq"]), row
        except UNREADABLE as error:
            return self._heal(conn, int(row["id"]), error), self._active_row(conn, channel_id)

    def _heal(self, conn: Conn, game_id: int, cause: BaseException) -> GameState:
        """Rebuild a game's snapshot from its log (the truth) and store it, with a warning in the log; a
        log that can't be read either is a `DamagedGame`."""
        row = conn.execute("SELECT state, last_seq, status FROM games WHERE id = ?", (game_id,)).fetchone()
        try:
            return self._load(game_id, row["state"], row["last_seq"])  # healed meanwhile, by another process
        except UNREADABLE:
            pass
        try:
            state = self._rewrite(conn, game_id, _read_log(conn, game_id))
        except UNREADABLE as error:
            raise self._damaged(game_id, row["status"], error) from None
        log.warning("game snapshot rebuilt from its event log",
                    extra={"game_id": game_id, "cause": f"{type(cause).__name__}: {str(cause)[:200]}"})
        return state

    @staticmethod
    def _damaged(game_id: int, status: str, error: BaseException) -> DamagedGame:
        log.warning("game log unreadable", extra={"game_id": game_id, "error": f"{type(error).__name__}: "
                                                                                 f"{str(error)[:200]}"})
        return DamagedGame(DAMAGED_ACTIVE if status == "active" else DAMAGED_ENDED)

    def _log_of(self, conn: Conn, game_id: int, status: str) -> list[dict[str, Any]]:
        try:
            return _read_log(conn, game_id)
        except UNREADABLE as error:
            raise self._damaged(game_id, status, error) from None

    def upgrade_snapshots(self) -> int:
        """Rebuild from its log every snapshot written in an older format (`SNAPSHOT_SHAPE`); the number
        rebuilt. Runs when the store opens; several processes opening at once just find the work done."""
        with self._read() as conn:
            old = conn.execute("SELECT id, channel_id FROM games WHERE shape < ? ORDER BY id",
                               (SNAPSHOT_SHAPE,)).fetchall()
        done = 0
        for game_id, channel_id in old:
            with self._transaction(channel_id) as conn:
                row = conn.execute("SELECT shape, status, state FROM games WHERE id = ?", (game_id,)).fetchone()
                if row["shape"] >= SNAPSHOT_SHAPE:
                    continue
                if _has_every_field(row["state"]):  # written in this format before the column existed
                    conn.execute("UPDATE games SET shape = ? WHERE id = ?", (SNAPSHOT_SHAPE, game_id))
                    continue
                try:
                    self._rewrite(conn, game_id, _read_log(conn, game_id))
                    done += 1
                except UNREADABLE as error:  # left as it is: commands on it say what to do
                    self._damaged(game_id, row["status"], error)
        if old:
            log.info("game snapshots upgraded", extra={"games": len(old), "rebuilt": done, "shape": SNAPSHOT_SHAPE})
        return done

    def _rewrite(self, conn: Conn, game_id: int, rows: list[dict[str, Any]]) -> GameState:
        """Store the fold of `rows` (the game's whole log) as its snapshot, in the current format."""
        keep = events.effective(rows)
        state = events.fold(keep)
        state.seq = rows[-1]["seq"]
        state.check()
        conn.execute("UPDATE games SET state = ?, last_seq = ?, depth = ?, shape = ? WHERE id = ?",
                     (self.snapshots.dump(game_id, state), state.seq, len(keep), SNAPSHOT_SHAPE, game_id))
        conn.execute("DELETE FROM game_checkpoints WHERE game_id = ?", (game_id,))  # a cache, maybe stale too
        return state

    def repair(self, channel_id: int) -> bool | None:
        """Rewrite the channel's newest game's snapshot from its log if the two differ: True if rewritten,
        False if they agreed, None with no game. A log that can't be read is a `DamagedGame`."""
        with self._read() as conn:
            row = self._latest_game(conn, channel_id)
        if row is None:
            return None
        with self._transaction(channel_id) as conn:
            row = conn.execute("SELECT id, state, status FROM games WHERE id = ?", (row["id"],)).fetchone()
            rows = self._log_of(conn, int(row["id"]), row["status"])
            try:
                if snapshot_matches(row["state"], rows):
                    return False
            except UNREADABLE:
                pass
            try:
                self._rewrite(conn, int(row["id"]), rows)
            except UNREADABLE as error:
                raise self._damaged(int(row["id"]), row["status"], error) from None
        log.warning("game snapshot rewritten from its event log", extra={"game_id": int(row["id"])})
        return True

    def state(self, channel_id: int) -> GameState | None:
        """The channel's active game, or None."""
        found = self.active(channel_id)
        return found[1] if found else None

    def require_active(self, channel_id: int) -> tuple[int, GameState]:
        found = self.active(channel_id)
        if found is None:
            raise UserError(NO_GAME)
        return found

    def require(self, channel_id: int) -> GameState:
        state = self.state(channel_id)
        if state is None:
            raise UserError(NO_GAME)
        return state

    def _latest_game(self, conn: Conn, channel_id: int) -> Any | None:
        return conn.execute(
            "SELECT id, status, state, last_seq, created_at, ended_at FROM games WHERE channel_id = ? "
            "ORDER BY (status = 'active') DESC, id DESC LIMIT 1", (channel_id,)
        ).fetchone()

    def events(self, game_id: int, status: str = "active") -> list[dict[str, Any]]:
        """The game's log; a `DamagedGame` (its words chosen by the game's `status`) when it can't be read."""
        with self._read() as conn:
            return self._log_of(conn, game_id, status)

    def log(self, channel_id: int, *, limit: int | None = None) -> tuple[GameState, list[dict[str, Any]]]:
        """The channel's newest game (active, else the last finished one) and its log, newest last."""
        with self._read() as conn:
            row = self._latest_game(conn, channel_id)
        if row is None:
            raise UserError(NO_GAME)
        state = self._state(channel_id, row)
        events_ = self.events(row["id"], row["status"])
        _mark_undone(events_)
        return state, (events_[-limit:] if limit else events_)

    def summary(self, channel_id: int) -> tuple[int, GameState, dict[str, Any]]:
        """(game id, state, `bot.games.summary.summarise`) of the channel's newest game.

        Only the `cp` and `strat` rows are read with their bodies, and only the effective ones are parsed, in
        one pass (the stack of effective events comes from the event types alone), so a long game's score
        costs little more than a short one's.
        """
        with self._read() as conn:
            row = self._latest_game(conn, channel_id)
            if row is None:
                raise UserError(NO_GAME)
            game_id = int(row["id"])
            effective = set(_effective_seqs(conn, game_id))
            rows = conn.execute("SELECT seq, ts, actor_user, body FROM game_events WHERE game_id = ? "
                                "AND type IN ('cp', 'strat') ORDER BY seq", (game_id,)).fetchall()
            try:
                scored = parse_log([r for r in rows if r[0] in effective])
            except UNREADABLE as error:
                raise self._damaged(game_id, row["status"], error) from None
            first_ts, last_ts = conn.execute("SELECT MIN(ts), MAX(ts) FROM game_events WHERE game_id = ?",
                                             (game_id,)).fetchone()
        for ev in scored:
            ev["undone"] = False
        state = self._state(channel_id, row)
        try:
            return game_id, state, summarise(state, scored, self.now(), span=(first_ts, last_ts))
        except UNREADABLE as error:  # an event body that parses but does not say what its type needs
            raise self._damaged(game_id, row["status"], error) from None

    def history(self, channel_id: int, *, limit: int = 10) -> list[dict[str, Any]]:
        """The channel's ended games, newest first; one whose record is damaged beyond repair is left out."""
        with self._read() as conn:
            rows = conn.execute(
                "SELECT id, status, state, last_seq, created_at, ended_at FROM games WHERE channel_id = ? "
                "AND status != 'active' ORDER BY id DESC LIMIT ?", (channel_id, limit)
            ).fetchall()
        games = []
        for r in rows:
            try:
                state = self._state(channel_id, r)
            except DamagedGame:
                continue
            games.append({"game_id": r["id"], "status": r["status"], "created_at": r["created_at"],
                          "ended_at": r["ended_at"], "state": state})
        return games

    def export(self, channel_id: int, *, now: float | None = None, game_id: int | None = None) -> dict[str, Any] | None:
        """Contract 4: the channel's game (the active one, else the last finished) as JSON-able data.

        Clock times are as of `now` (default: the store's clock), derived from the logged timestamps.
        With `game_id`, that game of the channel, whatever came after it (the live board's link).
        """
        with self._read() as conn:
            row = (conn.execute("SELECT id, status, state, last_seq, created_at, ended_at FROM games WHERE id = ? "
                                "AND channel_id = ?", (game_id, channel_id)).fetchone()
                   if game_id is not None else self._latest_game(conn, channel_id))
        if row is None:
            return None
        state = self._state(channel_id, row)
        log = self.events(row["id"], row["status"])
        _mark_undone(log)
        return export_game(row, state, log, self.now() if now is None else now)

    def versions(self, game_ids: Sequence[int]) -> dict[int, tuple[int, str]]:
        """(last event seq, status) of each game: one cheap query, polled by the live board's change feed.

        Every committed change appends an event (undo too) and bumps `last_seq`, in whatever process it ran.
        """
        if not game_ids:
            return {}
        marks = ",".join("?" * len(game_ids))
        with self._read() as conn:
            rows = conn.execute(f"SELECT id, last_seq, status FROM games WHERE id IN ({marks})",
                                tuple(game_ids)).fetchall()
        return {int(r["id"]): (int(r["last_seq"]), r["status"]) for r in rows}

    def verify(self, channel_id: int) -> bool:
        """True when the stored snapshot equals the fold of the log (the log is the truth)."""
        with self._read() as conn:
            row = self._latest_game(conn, channel_id)
        return True if row is None else self._consistent(row)

    def verify_game(self, game_id: int) -> bool:
        """`verify` for one game by id (any status)."""
        with self._read() as conn:
            row = conn.execute("SELECT id, state, status FROM games WHERE id = ?", (game_id,)).fetchone()
        return row is not None and self._consistent(row)

    def _consistent(self, row: Any) -> bool:
        """A damaged snapshot is not consistent; a log that can't be read is a `DamagedGame`."""
        log_ = self.events(row["id"], row["status"])
        try:
            return snapshot_matches(row["state"], log_)
        except UNREADABLE:
            return False

    # ---- writing ---------------------------------------------------------------------------------

    def start(self, channel_id: int, guild_id: int | None, *, user_id: int, user_name: str, opponent_id: int,
              opponent_name: str, edition: str, faction: str, opponent_faction: str, starting_cp: int = 0,
              mission: dict[str, Any] | None = None, battle_size: str | None = None) -> Result:
        """Round 1, the invoker's Command phase; both players have starting_cp and gain the Command-phase CP.

        `mission` is a record from `bot.games.missions.mission_record` (or None).
        """
        rules.check_edition(edition)
        rules.check_amount(starting_cp, field="starting_cp", low=0, high=rules.MAX_STARTING_CP, what="starting_cp")
        if opponent_id == user_id:
            raise UserError("You cannot play against yourself: pick your opponent.", field="opponent")
        names = [rules.clean_name(n, field="name", what="Player name", limit=rules.MAX_PLAYER_NAME)
                 for n in (user_name, opponent_name)]
        factions = [rules.clean_name(f, field=k, what="Faction", limit=rules.MAX_FACTION)
                    for f, k in ((faction, "faction"), (opponent_faction, "opponent_faction"))]
        summary = (f"{names[0]} ({factions[0]}) vs {names[1]} ({factions[1]}), {edition}; "
                   f"round 1, {names[0]}'s Command phase")
        if mission:
            summary += f"; mission: {mission['name']}"
        if battle_size:
            battle_size = rules.clean_name(battle_size, field="battle_size", what="Battle size", limit=40)
            summary += f"; {battle_size}"
        start = commands.event("start", 0, summary, {
            "edition": edition, "starting_cp": starting_cp, "mission": mission, "battle_size": battle_size,
            "players": [{"user_id": uid, "name": n, "faction": f}
                        for uid, n, f in zip((user_id, opponent_id), names, factions, strict=True)],
        })
        with self._transaction(channel_id) as conn:
            if self._active_row(conn, channel_id) is not None:
                raise UserError("This channel already has a game. Finish it with /game end first.")
            state = events.initial_state(start)
            state.seq = 1
            now = self.now()
            game_id = int(conn.execute(
                "INSERT INTO games (channel_id, guild_id, status, edition, created_at, last_seq, state, depth, shape) "
                "VALUES (?, ?, 'active', ?, ?, 1, ?, 1, ?) RETURNING id",
                (channel_id, guild_id, edition, now, dump_json(state.to_dict()), SNAPSHOT_SHAPE),
            ).fetchone()[0])
            _insert_event(conn, game_id, 1, now, user_id, start)
        return Result(game_id, state, Outcome([start], summary))

    def act(self, channel_id: int, command: Callable[..., Outcome], *args: Any, **kwargs: Any) -> Result:
        """Run `command(state, *args, **kwargs)` on the active game and append its events, atomically."""
        with self._transaction(channel_id) as conn:
            row = self._active_row(conn, channel_id)
            if row is None:
                raise UserError(NO_GAME)
            game_id = int(row["id"])
            state, row = self._state_in(conn, channel_id, row)
            outcome = command(state, *args, **kwargs)
            seq, depth, now = int(row["last_seq"]), int(row["depth"]), self.now()
            dumped = None
            for ev in outcome.events:
                seq += 1
                ev["ts"] = now
                # The state takes the event as logged (parsed back), exactly what a re-fold of the log sees,
                # so the cached state never holds anything the snapshot text does not say.
                events.apply(state, {**json.loads(_event_body(ev)), "ts": now})
                state.seq = seq
                actor = ev.get("actor")
                _insert_event(conn, game_id, seq, now, None if actor is None else state.players[actor].user_id, ev)
                dumped = None
                if depth:
                    depth += 1
                    if depth % CHECKPOINT_EVERY == 0:
                        dumped = self.snapshots.dump(game_id, state)
                        conn.execute("INSERT INTO game_checkpoints (game_id, depth, seq, state) VALUES (?, ?, ?, ?) "
                                     "ON CONFLICT (game_id, depth) DO UPDATE SET seq = excluded.seq, "
                                     "state = excluded.state", (game_id, depth, seq, dumped))
            dumped = dumped or self.snapshots.dump(game_id, state)
            if outcome.events and outcome.events[-1]["type"] == "end":
                status = outcome.events[-1]["data"]["status"]
                conn.execute("UPDATE games SET status = ?, ended_at = ?, last_seq = ?, state = ?, depth = ? "
                             "WHERE id = ?", (status, now, seq, dumped, depth, game_id))
                conn.execute("DELETE FROM game_checkpoints WHERE game_id = ?", (game_id,))  # only undo needs them
            else:
                conn.execute("UPDATE games SET last_seq = ?, state = ?, depth = ? WHERE id = ?",
                             (seq, dumped, depth, game_id))
            return Result(int(row["id"]), state, outcome)

    def undo(self, channel_id: int, user_id: int) -> Result:
        """Append an `undo` that cancels the newest effective event, and re-fold the log."""
        with self._transaction(channel_id) as conn:
            row = self._active_row(conn, channel_id)
            if row is None:
                raise UserError(NO_GAME)
            game_id = int(row["id"])
            current, row = self._state_in(conn, channel_id, row)
            actor = commands.require_player(current, user_id)
            stack = _effective_seqs(conn, game_id)
            if len(stack) <= 1:
                raise UserError("Nothing to undo: only the start of the game is left (use /game end to drop it).")
            try:
                target = _load_events(conn, game_id, [stack[-1]])[0]
                state = _refold(conn, game_id, stack[:-1])
            except UNREADABLE as error:
                raise self._damaged(game_id, "active", error) from None
            summary = f"Undo: {target['summary']}"
            seq, now = int(row["last_seq"]) + 1, self.now()
            ev = commands.event("undo", actor, summary, {"target_seq": target["seq"]})
            _insert_event(conn, game_id, seq, now, user_id, ev)
            keep = stack[:-1]
            state.seq = seq
            conn.execute("UPDATE games SET last_seq = ?, state = ?, depth = ? WHERE id = ?",
                         (seq, self.snapshots.dump(game_id, state), len(keep), game_id))
            return Result(int(row["id"]), state, Outcome([ev], summary))

    def end(self, channel_id: int, user_id: int, *, manager: bool = False, abandon: bool = False) -> Result | None:
        """End the active game. A damaged game (`DamagedGame`) can still be abandoned: then None."""
        try:
            return self.act(channel_id, commands.end_game, user_id, manager=manager, abandon=abandon)
        except DamagedGame:
            if not abandon:
                raise
        self._abandon_damaged(channel_id, user_id, manager=manager)
        return None

    def _abandon_damaged(self, channel_id: int, user_id: int, *, manager: bool) -> None:
        """Record a damaged game as abandoned without reading its state: an `end` event appended after the
        last stored one, and the row closed, so the channel is free for `/game start`. The players are known
        from the log's actor column and, if it still parses, the start event."""
        with self._transaction(channel_id) as conn:
            row = conn.execute("SELECT id FROM games WHERE channel_id = ? AND status = 'active'",
                               (channel_id,)).fetchone()
            if row is None:
                raise UserError(NO_GAME)
            game_id = int(row["id"])
            if not manager and user_id not in _participants(conn, game_id):
                raise UserError("Only a player or a member with Manage Channel can end this game.", field="user")
            seq = int(conn.execute("SELECT COALESCE(MAX(seq), 0) FROM game_events WHERE game_id = ?",
                                   (game_id,)).fetchone()[0]) + 1
            now = self.now()
            ev = commands.event("end", None, "Game abandoned (its stored record was damaged)",
                                {"status": "abandoned", "by": user_id})
            _insert_event(conn, game_id, seq, now, user_id, ev)
            conn.execute("UPDATE games SET status = 'abandoned', ended_at = ?, last_seq = ? WHERE id = ?",
                         (now, seq, game_id))
            conn.execute("DELETE FROM game_checkpoints WHERE game_id = ?", (game_id,))
        log.warning("damaged game abandoned", extra={"game_id": game_id, "user_id": user_id})


def snapshot_matches(snapshot: str, log: list[dict[str, Any]]) -> bool:
    """True when the stored JSON snapshot equals the fold of the game's log (the log is the truth)."""
    derived = events.fold(events.effective(log))
    derived.seq = log[-1]["seq"]
    folded = derived.to_dict()
    if dump_json(folded) == snapshot:  # written by this version: the same text, no need to parse it
        return True
    # Through from_dict, so a snapshot written before a state field existed compares with its default.
    return folded == GameState.from_dict(json.loads(snapshot)).to_dict()


def parse_log(rows: Sequence[Sequence[Any]]) -> list[dict[str, Any]]:
    """A game's events from its (seq, ts, actor_user, body) rows, the bodies parsed in one pass (a log of a
    few hundred small objects parses in a fraction of the time of one `json.loads` each)."""
    log = json.loads("[" + ",".join([r[3] for r in rows]) + "]")
    if len(log) != len(rows) or not all(isinstance(ev, dict) for ev in log):
        raise ValueError("a stored event body is not one JSON object")
    for ev, row in zip(log, rows, strict=True):
        ev["seq"], ev["ts"], ev["actor_user"] = row[0], row[1], row[2]
    return log


def _has_every_field(text: Any) -> bool:
    """Whether a stored snapshot names every field of the state, its players and its units (a snapshot
    from before a field existed is read with that field's default, which its log may contradict)."""
    try:
        data = json.loads(text)
        return (data.keys() >= _FIELDS[GameState] and all(p.keys() >= _FIELDS[Player] for p in data["players"])
                and all(u.keys() >= _FIELDS[Unit] for u in data["units"]))
    except UNREADABLE:
        return False


_FIELDS = {cls: {f.name for f in fields(cls)} for cls in (GameState, Player, Unit)}


def _read_log(conn: Conn, game_id: int) -> list[dict[str, Any]]:
    """A game's whole log, checked: seqs 1, 2, 3, ... from a start event, each body one JSON object whose
    type is its row's. Raises one of UNREADABLE when a stored event is damaged."""
    rows = conn.execute("SELECT seq, ts, actor_user, body, type FROM game_events WHERE game_id = ? ORDER BY seq",
                        (game_id,)).fetchall()
    found = parse_log(rows)
    if not found or found[0].get("type") != "start":
        raise ValueError("the log does not begin with a start event")
    for number, (ev, row) in enumerate(zip(found, rows, strict=True), start=1):
        if ev["seq"] != number or ev.get("type") != row[4] or not isinstance(ev.get("data", {}), dict):
            raise ValueError(f"stored event {number} is damaged")
    return found


def _participants(conn: Conn, game_id: int) -> set[int]:
    """Who plays a game, without its state: every user in the log's actor column, and the start event's
    players if its body still parses."""
    users = {int(r[0]) for r in conn.execute("SELECT DISTINCT actor_user FROM game_events WHERE game_id = ? "
                                             "AND actor_user IS NOT NULL", (game_id,))}
    start = conn.execute("SELECT body FROM game_events WHERE game_id = ? AND seq = 1", (game_id,)).fetchone()
    try:
        users |= {int(p["user_id"]) for p in json.loads(start[0])["data"]["players"]}
    except (*UNREADABLE, TypeError):
        pass
    return users


def _effective_seqs(conn: Conn, game_id: int) -> list[int]:
    """The seqs of the events still in effect, from the event types alone (no JSON parsing)."""
    stack: list[int] = []
    for seq, kind in conn.execute("SELECT seq, type FROM game_events WHERE game_id = ? ORDER BY seq", (game_id,)):
        if kind == "undo":
            if len(stack) > 1:
                stack.pop()
        else:
            stack.append(seq)
    return stack


def _load_events(conn: Conn, game_id: int, seqs: list[int]) -> list[dict[str, Any]]:
    if not seqs:
        return []
    wanted = set(seqs)
    rows = conn.execute("SELECT seq, ts, actor_user, body FROM game_events WHERE game_id = ? AND seq >= ? ORDER BY seq",
                        (game_id, min(seqs)))
    return [_row_event(r) for r in rows if r["seq"] in wanted]


def _refold(conn: Conn, game_id: int, keep: list[int]) -> GameState:
    """The fold of the effective events `keep`, starting from the newest still-valid checkpoint.

    A checkpoint of depth k is valid while the k-th effective event is still the one it was taken after:
    the effective events form a stack, so everything below that one is unchanged too.
    """
    start, state = 0, None
    for row in conn.execute("SELECT depth, seq, state FROM game_checkpoints WHERE game_id = ? AND depth <= ? "
                            "ORDER BY depth DESC", (game_id, len(keep))):
        if keep[row["depth"] - 1] == row["seq"]:
            try:
                state = GameState.from_dict(json.loads(row["state"]))
                state.check()
            except UNREADABLE:  # a damaged checkpoint: an older one, or the start, serves instead
                state = None
                continue
            start = row["depth"]
            break
    for ev in _load_events(conn, game_id, keep[start:]):
        state = events.initial_state(ev) if state is None else events.apply(state, ev)
        state.seq = ev["seq"]
    assert state is not None
    return state


def _event_body(ev: dict[str, Any]) -> str:
    return dump_json({k: v for k, v in ev.items() if k != "ts"})  # the ts column is the one timestamp


_appended = threading.local()  # events appended by this thread's open transaction (GameStore._transaction)


def _insert_event(conn: Conn, game_id: int, seq: int, ts: float, actor_user: int | None,
                  ev: dict[str, Any]) -> None:
    _appended.count = getattr(_appended, "count", 0) + 1
    conn.execute("INSERT INTO game_events (game_id, seq, ts, actor_user, type, body) VALUES (?, ?, ?, ?, ?, ?)",
                 (game_id, seq, ts, actor_user, ev["type"], _event_body(ev)))


def _row_event(row: Any) -> dict[str, Any]:
    ev = json.loads(row["body"])
    ev["seq"], ev["ts"], ev["actor_user"] = row["seq"], row["ts"], row["actor_user"]
    return ev


def _mark_undone(log: list[dict[str, Any]]) -> None:
    """Flag the events an undo cancelled (for display; the log itself never changes)."""
    stack: list[dict[str, Any]] = []
    for ev in log:
        ev["undone"] = False
        if ev["type"] == "undo":
            if len(stack) > 1:
                stack.pop()["undone"] = True
        else:
            stack.append(ev)


def _log_is_snapshot(snapshot: str, rows: Sequence[Sequence[Any]]) -> bool:
    """What `migrate-store` checks of every game it moved: its snapshot is its log re-folded."""
    return snapshot_matches(snapshot, parse_log(rows))


register(StoredFeature(__name__, order=0, open=GameStore, log_check=_log_is_snapshot))
