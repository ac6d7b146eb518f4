"""Leagues on either state backend (`bot.storage`): an append-only event log per league and its projections.

Every change is one transaction serialised per server (`storage.transaction(guild_id)`: SQLite's per-key
lock plus `BEGIN IMMEDIATE`, PostgreSQL's advisory lock), which reads the current rows, checks the change,
appends its event (`league_events`) and updates the projections: the league row with its standings
snapshot, members, channel bindings, results. Two processes confirming one result therefore queue on the
lock, and the second finds the result confirmed: it counts once.

The standings snapshot grows by one `standings.apply` per confirmation; a void re-folds the confirmed
results. Either way it equals `standings.fold` of the exported results (tests/leagues/test_rebuild.py).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.errors import UserError
from bot.leagues import results as checks
from bot.leagues import standings
from bot.storage import open_storage
from bot.storage.base import Conn, Storage
from bot.storage.registry import SmallTable, StoredFeature, register

from .schema import MIGRATIONS

NO_LEAGUE = "This server has no league yet. A member with Manage Server starts one with /league create."
LEAGUES_PER_GUILD_MAX = 25  # one autocomplete page
MEMBERS_MAX = 1000


@dataclass(frozen=True)
class League:
    id: int
    guild_id: int
    name: str
    status: str
    season_end: str | None
    battle_size: str | None
    edition: str | None
    last_seq: int


_LEAGUE_COLUMNS = "id, guild_id, name, status, season_end, battle_size, edition, last_seq"


def _league(row: Any) -> League:
    return League(int(row["id"]), int(row["guild_id"]), row["name"], row["status"], row["season_end"],
                  row["battle_size"], row["edition"], int(row["last_seq"]))


@dataclass(frozen=True)
class Member:
    user_id: int
    name: str
    faction: str | None


@dataclass(frozen=True)
class Standing:
    """What /league table shows: the league, its members' rows in ranking order and their names."""

    league: League
    rows: list[standings.Line]
    members: dict[int, Member]


class LeagueStore:
    """The league service's state (`bot.services.leagues`)."""

    def __init__(self, storage: Storage | Path | str, *, now: Callable[[], float] = time.time) -> None:
        self._owned = not hasattr(storage, "transaction")
        self.storage: Storage = open_storage(storage)
        self.now = now
        self.storage.migrate("leagues", MIGRATIONS)
        # (league id) -> (last_seq, parsed results): stats and exports of a 5,000-result league parse once per change.
        self._results: dict[int, tuple[int, list[dict[str, Any]]]] = {}
        # (league id) -> its last table: read again only once the league's last event (`League.last_seq`) moved.
        self._standings: dict[int, Standing] = {}
        self._guard = threading.Lock()

    def close(self) -> None:
        if self._owned:
            self.storage.close()

    # ---- finding a league ------------------------------------------------------------------------

    def names(self, guild_id: int) -> list[str]:
        with self.storage.read() as conn:
            return [r[0] for r in conn.execute("SELECT name FROM leagues WHERE guild_id = ? ORDER BY status DESC, "
                                               "name_key LIMIT ?", (guild_id, LEAGUES_PER_GUILD_MAX))]

    def find(self, guild_id: int, name: str | None = None, channel_id: int | None = None) -> League:
        with self.storage.read() as conn:
            return _resolve(conn, guild_id, name, channel_id)

    # ---- leagues ---------------------------------------------------------------------------------

    def create(self, guild_id: int, user_id: int, name: str, *, season_end: str | None = None,
               battle_size: str | None = None, edition: str | None = None) -> League:
        name = checks.league_name(name)
        end = checks.season_end(season_end)
        if battle_size is not None and battle_size not in checks.BATTLE_SIZES:
            raise UserError(f"battle_size is one of {', '.join(checks.BATTLE_SIZES)}.", field="battle_size")
        if edition is not None and edition not in checks.EDITIONS:
            raise UserError(f"edition is one of {', '.join(checks.EDITIONS)}.", field="edition")
        with self.storage.transaction(guild_id) as conn:
            if conn.execute("SELECT 1 FROM leagues WHERE guild_id = ? AND name_key = ?",
                            (guild_id, checks.name_key(name))).fetchone():
                raise UserError(f"This server already has a league called {name}.", field="name")
            count = conn.execute("SELECT COUNT(*) FROM leagues WHERE guild_id = ?", (guild_id,)).fetchone()[0]
            if count >= LEAGUES_PER_GUILD_MAX:
                raise UserError(f"A server can keep at most {LEAGUES_PER_GUILD_MAX} leagues.")
            league_id = int(conn.execute(
                "INSERT INTO leagues (guild_id, name, name_key, status, season_end, battle_size, edition, created_by, "
                "created_at, last_seq, standings) VALUES (?, ?, ?, 'open', ?, ?, ?, ?, ?, 0, '{}') RETURNING id",
                (guild_id, name, checks.name_key(name), end, battle_size, edition, user_id, self.now())).fetchone()[0])
            self._event(conn, league_id, "create", user_id, {"name": name, "guild_id": guild_id, "season_end": end,
                                                             "battle_size": battle_size, "edition": edition})
            return _resolve(conn, guild_id, name, None)

    def close_league(self, guild_id: int, user_id: int, name: str | None, channel_id: int | None) -> League:
        with self.storage.transaction(guild_id) as conn:
            league = _resolve(conn, guild_id, name, channel_id)
            if league.status == "closed":
                raise UserError(f"{league.name} is already closed.")
            self._event(conn, league.id, "close", user_id, {})
            conn.execute("UPDATE leagues SET status = 'closed' WHERE id = ?", (league.id,))
            return _resolve(conn, guild_id, league.name, None)

    def bind(self, guild_id: int, user_id: int, channel_id: int, name: str | None, *, unbind: bool = False) -> str:
        """Bind `channel_id` to a league (games ended there are put forward to it), or unbind it."""
        with self.storage.transaction(guild_id) as conn:
            bound = conn.execute("SELECT l.name FROM league_channels c JOIN leagues l ON l.id = c.league_id "
                                 "WHERE c.channel_id = ? AND l.guild_id = ?", (channel_id, guild_id)).fetchone()
            if unbind:
                if bound is None:
                    raise UserError("This channel is not bound to a league.")
                league = _resolve(conn, guild_id, bound[0], None)
                self._event(conn, league.id, "unbind", user_id, {"channel_id": channel_id})
                conn.execute("DELETE FROM league_channels WHERE channel_id = ?", (channel_id,))
                return f"This channel is no longer bound to {league.name}."
            league = _resolve(conn, guild_id, name, None)
            _require_open(league)
            self._event(conn, league.id, "bind", user_id, {"channel_id": channel_id})
            conn.execute("INSERT INTO league_channels (channel_id, league_id) VALUES (?, ?) ON CONFLICT (channel_id) "
                         "DO UPDATE SET league_id = excluded.league_id", (channel_id, league.id))
            return f"Games ended in this channel are now put forward to {league.name}."

    # ---- members ---------------------------------------------------------------------------------

    def join(self, guild_id: int, user_id: int, player_name: str, faction: str | None, name: str | None,
             channel_id: int | None, *, by: int | None = None) -> League:
        """`user_id` joins (or a moderator `by` adds them); joining again changes the declared faction."""
        faction = checks.faction_name(faction)
        with self.storage.transaction(guild_id) as conn:
            league = _resolve(conn, guild_id, name, channel_id)
            _require_open(league)
            you = "You are" if by is None else f"{checks.player_name(player_name)} is"
            known = conn.execute("SELECT faction FROM league_members WHERE league_id = ? AND user_id = ?",
                                 (league.id, user_id)).fetchone()
            if known is not None and (faction is None or faction == known[0]):
                raise UserError(f"{you} already in {league.name}.")
            if known is None and conn.execute("SELECT COUNT(*) FROM league_members WHERE league_id = ?",
                                              (league.id,)).fetchone()[0] >= MEMBERS_MAX:
                raise UserError(f"{league.name} is full: a league holds at most {MEMBERS_MAX} players.")
            seq = self._event(conn, league.id, "join", by or user_id,
                              {"user_id": user_id, "name": checks.player_name(player_name), "faction": faction})
            conn.execute("INSERT INTO league_members (league_id, user_id, name, faction, joined_seq) "
                         "VALUES (?, ?, ?, ?, ?) ON CONFLICT (league_id, user_id) DO UPDATE SET "
                         "faction = excluded.faction, name = excluded.name",
                         (league.id, user_id, checks.player_name(player_name), faction, seq))
            return league

    def leave(self, guild_id: int, user_id: int, name: str | None, channel_id: int | None, *,
              by: int | None = None) -> League:
        """Leave (or be removed): the player leaves the table; their confirmed results keep counting for
        their opponents."""
        with self.storage.transaction(guild_id) as conn:
            league = _resolve(conn, guild_id, name, channel_id)
            if conn.execute("SELECT 1 FROM league_members WHERE league_id = ? AND user_id = ?",
                            (league.id, user_id)).fetchone() is None:
                raise UserError(("You are" if by is None else "That player is") + f" not in {league.name}.")
            self._event(conn, league.id, "leave", by or user_id, {"user_id": user_id})
            conn.execute("DELETE FROM league_members WHERE league_id = ? AND user_id = ?", (league.id, user_id))
            return league

    # ---- results ---------------------------------------------------------------------------------

    def bound_league(self, guild_id: int, channel_id: int) -> str | None:
        with self.storage.read() as conn:
            row = conn.execute("SELECT l.name FROM league_channels c JOIN leagues l ON l.id = c.league_id "
                               "WHERE c.channel_id = ? AND l.guild_id = ?", (channel_id, guild_id)).fetchone()
        return row[0] if row else None

    def propose(self, guild_id: int, user_id: int, name: str, body: dict[str, Any]) -> tuple[League, int]:
        """Put a finished game's result (`results.from_game`) forward to league `name`: (league, result id)."""
        with self.storage.transaction(guild_id) as conn:
            league = _resolve(conn, guild_id, name, None)
            _require_open(league)
            if league.season_end and body["date"] > league.season_end:
                raise UserError(f"{league.name}'s season ended on {league.season_end}: this game can't count.")
            members = {int(r[0]) for r in conn.execute(
                "SELECT user_id FROM league_members WHERE league_id = ? AND user_id IN (?, ?)",
                (league.id, *body["players"]))}
            outside = [body["names"][str(u)] for u in body["players"] if u not in members]
            if outside:
                raise UserError(f"{' and '.join(outside)} {'is' if len(outside) == 1 else 'are'} not in "
                                f"{league.name}, so this game can't count there. Players join with /league join "
                                "(or a member with Manage Server adds them).")
            again = conn.execute("SELECT id FROM league_results WHERE league_id = ? AND game_id = ?",
                                 (league.id, body["game_id"])).fetchone()
            if again is not None:
                raise UserError(f"Game #{body['game_id']} was already put forward to {league.name} "
                                f"(result #{again[0]}).")
            body = {**body, "battle_size": body.get("battle_size") or league.battle_size}
            result_id = int(conn.execute(
                "INSERT INTO league_results (league_id, game_id, status, proposed_by, body) "
                "VALUES (?, ?, 'pending', ?, ?) RETURNING id",
                (league.id, body["game_id"], user_id, json.dumps(body, sort_keys=True))).fetchone()[0])
            self._event(conn, league.id, "propose", user_id, {**body, "result_id": result_id})
            return league, result_id

    def _result_row(self, conn: Conn, guild_id: int, result_id: int, name: str | None) -> tuple[League, Any]:
        row = conn.execute("SELECT r.id, r.league_id, r.status, r.proposed_by, r.body, l.name FROM league_results r "
                           "JOIN leagues l ON l.id = r.league_id WHERE r.id = ? AND l.guild_id = ?",
                           (result_id, guild_id)).fetchone()
        if row is None:
            raise UserError(f"There is no result #{result_id} on this server.", field="result")
        if name is not None:
            named = _resolve(conn, guild_id, name, None)
            if named.id != int(row["league_id"]):
                raise UserError(f"Result #{result_id} belongs to {row['name']}, not to {named.name}: nothing changed.",
                                field="result")
        return _resolve(conn, guild_id, row["name"], None), row

    def confirm(self, guild_id: int, user_id: int, result_id: int, name: str | None = None) -> tuple[League, dict]:
        """The other player agrees: the result counts (once)."""
        with self.storage.transaction(guild_id) as conn:
            league, row = self._result_row(conn, guild_id, result_id, name)
            body = json.loads(row["body"])
            if row["status"] == "confirmed":
                raise UserError(f"Result #{result_id} is already confirmed: it counts once.")
            if row["status"] == "void":
                raise UserError(f"Result #{result_id} was voided by a moderator: it does not count.")
            if user_id not in body["players"]:
                raise UserError(f"Only the players of game #{body['game_id']} can confirm its result.")
            if user_id == int(row["proposed_by"]):
                raise UserError("You put this result forward: your opponent confirms it.")
            _require_open(league)
            seq = self._event(conn, league.id, "confirm", user_id, {"result_id": result_id})
            conn.execute("UPDATE league_results SET status = 'confirmed', confirmed_seq = ? WHERE id = ? "
                         "AND status = 'pending'", (seq, result_id))
            table = standings.load(json.loads(_standings_text(conn, league.id)))
            result = _export_result(result_id, "confirmed", seq, body)
            standings.apply(table, result)
            conn.execute("UPDATE leagues SET standings = ? WHERE id = ?", (json.dumps(standings.dump(table)), league.id))
            return league, result

    def void(self, guild_id: int, user_id: int, result_id: int, reason: str, name: str | None = None) -> League:
        """A moderator's void (the caller checks Manage Server), with its reason in the log."""
        reason = checks.reason_text(reason)
        with self.storage.transaction(guild_id) as conn:
            league, row = self._result_row(conn, guild_id, result_id, name)
            if row["status"] == "void":
                raise UserError(f"Result #{result_id} is already void.")
            self._event(conn, league.id, "void", user_id, {"result_id": result_id, "reason": reason})
            conn.execute("UPDATE league_results SET status = 'void' WHERE id = ?", (result_id,))
            if row["status"] == "confirmed":
                table = standings.fold(_load_results(conn, league.id, confirmed_only=True))
                conn.execute("UPDATE leagues SET standings = ? WHERE id = ?",
                             (json.dumps(standings.dump(table)), league.id))
            return league

    # ---- reading ---------------------------------------------------------------------------------

    def standing(self, guild_id: int, name: str | None, channel_id: int | None, *,
                 league_id: int | None = None) -> Standing:
        """The table of the league named (or found as `_resolve` does), or of `league_id` (a live-board link)."""
        with self.storage.read() as conn:
            if league_id is not None:
                row = conn.execute(f"SELECT {_LEAGUE_COLUMNS} FROM leagues WHERE id = ? AND guild_id = ?",
                                   (league_id, guild_id)).fetchone()
                if row is None:
                    raise UserError("That league no longer exists.")
                league = _league(row)
            else:
                league = _resolve(conn, guild_id, name, channel_id)
            cached = self._standings.get(league.id)
            if cached is not None and cached.league == league:  # nothing happened since (its last event)
                return cached
            table = standings.load(json.loads(_standings_text(conn, league.id)))
            members = self._members(conn, league.id)
        found = Standing(league, standings.ranked(table, members), members)
        with self._guard:
            _bounded(self._standings, league.id)[league.id] = found
        return found

    @staticmethod
    def _members(conn: Conn, league_id: int) -> dict[int, Member]:
        return {int(r[0]): Member(int(r[0]), r[1], r[2]) for r in conn.execute(
            "SELECT user_id, name, faction FROM league_members WHERE league_id = ? ORDER BY joined_seq", (league_id,))}

    def members(self, league: League) -> dict[int, Member]:
        with self.storage.read() as conn:
            return self._members(conn, league.id)

    def results(self, league: League) -> list[dict[str, Any]]:
        """Every result of the league (contract 10's objects, with their extra keys), oldest first.

        Kept per league in memory and brought up to date from the log: only the events after the cached one
        are read (a proposal adds a result, a confirmation or a void changes one), so a 5,000-result league
        is parsed once per process, not once per change. The returned list is never changed afterwards."""
        with self.storage.read() as conn:
            last = int(conn.execute("SELECT last_seq FROM leagues WHERE id = ?", (league.id,)).fetchone()[0])
            cached = self._results.get(league.id)
            if cached is not None and cached[0] == last:
                return cached[1]
            if cached is None or cached[0] > last:
                found = _load_results(conn, league.id)
            else:
                rows = conn.execute("SELECT seq, type, body FROM league_events WHERE league_id = ? AND seq > ? "
                                    "AND seq <= ? AND type IN ('propose', 'confirm', 'void') ORDER BY seq",
                                    (league.id, cached[0], last)).fetchall()
                found = _caught_up(cached[1], rows)
        with self._guard:
            _bounded(self._results, league.id)[league.id] = (last, found)
        return found

    def log(self, league: League) -> list[dict[str, Any]]:
        """The league's events, oldest first (who did what; void reasons)."""
        with self.storage.read() as conn:
            rows = conn.execute("SELECT seq, ts, actor_user, type, body FROM league_events WHERE league_id = ? "
                                "ORDER BY seq", (league.id,)).fetchall()
        return [{"seq": r[0], "ts": r[1], "actor_user": r[2], "type": r[3], "data": json.loads(r[4])} for r in rows]

    # ---- the log ---------------------------------------------------------------------------------

    def _event(self, conn: Conn, league_id: int, kind: str, actor: int | None, body: dict[str, Any]) -> int:
        seq = int(conn.execute("SELECT last_seq FROM leagues WHERE id = ?", (league_id,)).fetchone()[0]) + 1
        conn.execute("INSERT INTO league_events (league_id, seq, ts, actor_user, type, body) VALUES (?, ?, ?, ?, ?, ?)",
                     (league_id, seq, self.now(), actor, kind, json.dumps(body, sort_keys=True)))
        conn.execute("UPDATE leagues SET last_seq = ? WHERE id = ?", (seq, league_id))
        return seq


CACHED_LEAGUES = 64  # leagues whose table and results a process keeps in memory (the least recently stored go)


def _bounded(cache: dict, key: int) -> dict:
    cache.pop(key, None)  # stored again: now the newest
    while len(cache) >= CACHED_LEAGUES:
        cache.pop(next(iter(cache)))
    return cache


def _resolve(conn: Conn, guild_id: int, name: str | None, channel_id: int | None) -> League:
    """The league named (case and spacing aside), else the channel's bound league, else the server's only
    open league; a refusal saying which to name otherwise."""
    if name is not None:
        text = " ".join(str(name).split())
        row = conn.execute(f"SELECT {_LEAGUE_COLUMNS} FROM leagues WHERE guild_id = ? AND name_key = ?",
                           (guild_id, checks.name_key(text))).fetchone() if len(text) <= 200 else None
        if row is None:
            known = [r[0] for r in conn.execute("SELECT name FROM leagues WHERE guild_id = ? ORDER BY name_key LIMIT 10",
                                                (guild_id,))]
            if not known:
                raise UserError(NO_LEAGUE)
            raise UserError(f"This server has no league called {text[:60]}. Its leagues: {', '.join(known)}.",
                            field="league")
        return _league(row)
    if channel_id is not None:
        row = conn.execute(f"SELECT {', '.join('l.' + c for c in _LEAGUE_COLUMNS.split(', '))} FROM league_channels c "
                           "JOIN leagues l ON l.id = c.league_id WHERE c.channel_id = ? AND l.guild_id = ?",
                           (channel_id, guild_id)).fetchone()
        if row is not None:
            return _league(row)
    rows = conn.execute(f"SELECT {_LEAGUE_COLUMNS} FROM leagues WHERE guild_id = ? ORDER BY status DESC, name_key",
                        (guild_id,)).fetchall()
    if not rows:
        raise UserError(NO_LEAGUE)
    open_ = [r for r in rows if r["status"] == "open"]
    if len(rows) == 1 or len(open_) == 1:
        return _league(rows[0] if len(rows) == 1 else open_[0])
    raise UserError(f"This server runs several leagues: name one with league: ({', '.join(r['name'] for r in rows[:10])}).",
                    field="league")


def _require_open(league: League) -> None:
    if league.status != "open":
        raise UserError(f"{league.name} is closed: its table is final.")


def _standings_text(conn: Conn, league_id: int) -> str:
    return conn.execute("SELECT standings FROM leagues WHERE id = ?", (league_id,)).fetchone()[0]


def _export_result(result_id: int, status: str, confirmed: int | None, body: dict[str, Any]) -> dict[str, Any]:
    """Contract 10's result object (plus the body's extra keys: VP by category, battle size, the game link)."""
    return {**body, "id": result_id, "status": status, "confirmed": confirmed}


def _caught_up(results: list[dict[str, Any]], rows: list[Any]) -> list[dict[str, Any]]:
    """`results` with the log's newer (seq, type, body) rows applied, as a new list (the old one is shared)."""
    found = list(results)
    index = {r["id"]: i for i, r in enumerate(found)}
    for seq, kind, text in rows:
        data = json.loads(text)
        if kind == "propose":
            rid = data.pop("result_id")
            index[rid] = len(found)
            found.append(_export_result(rid, "pending", None, data))
        else:
            i = index[data["result_id"]]
            status = "confirmed" if kind == "confirm" else "void"
            found[i] = {**found[i], "status": status, "confirmed": seq if kind == "confirm" else found[i]["confirmed"]}
    return found


def _load_results(conn: Conn, league_id: int, *, confirmed_only: bool = False) -> list[dict[str, Any]]:
    where = " AND status = 'confirmed'" if confirmed_only else ""
    rows = conn.execute(f"SELECT id, status, confirmed_seq, body FROM league_results WHERE league_id = ?{where} "
                        "ORDER BY id", (league_id,)).fetchall()
    bodies = json.loads("[" + ",".join(r[3] for r in rows) + "]")  # one parse for all of them
    return [_export_result(int(r[0]), r[1], r[2], b) for r, b in zip(rows, bodies, strict=True)]


# `migrate-store` copies the league tables whole (parents first) and compares them as sets of rows.
register(StoredFeature(__name__, order=3, open=LeagueStore, small_tables=(
    SmallTable("leagues", ("id", "guild_id", "name", "name_key", "status", "season_end", "battle_size", "edition",
                           "created_by", "created_at", "last_seq", "standings"), "leagues", serial=True),
    SmallTable("league_events", ("league_id", "seq", "ts", "actor_user", "type", "body"), "league_events",
               key=("league_id", "seq")),
    SmallTable("league_members", ("league_id", "user_id", "name", "faction", "joined_seq"), "league_members",
               key=("league_id", "user_id")),
    SmallTable("league_channels", ("channel_id", "league_id"), "league_channels"),
    SmallTable("league_results", ("id", "league_id", "game_id", "status", "proposed_by", "confirmed_seq", "body"),
               "league_results", serial=True),
)))
