"""The league store's schema on both backends (`leagues` namespace of `bot.storage` migrations).

`league_events` is the log (append-only in the database, as the game log is); the other tables are its
projections, written in the same transaction: the leagues with their standings snapshot, members, channel
bindings and results. `migrations[i]` is version i + 1; never edit a released one, append a new one.
"""

from __future__ import annotations

from bot.storage.append_only import append_only_migration

_APPEND_ONLY = append_only_migration("league_events")  # version 2

_TABLES = """
    CREATE TABLE leagues (
        id {serial} PRIMARY KEY,
        guild_id {big} NOT NULL,
        name TEXT NOT NULL,
        name_key TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('open', 'closed')),
        season_end TEXT,
        battle_size TEXT,
        edition TEXT,
        created_by {big} NOT NULL,
        created_at {real} NOT NULL,
        last_seq INTEGER NOT NULL,
        standings TEXT NOT NULL
    );
    CREATE UNIQUE INDEX leagues_by_name ON leagues (guild_id, name_key);
    CREATE TABLE league_events (
        league_id {big} NOT NULL REFERENCES leagues (id),
        seq INTEGER NOT NULL,
        ts {real} NOT NULL,
        actor_user {big},
        type TEXT NOT NULL,
        body TEXT NOT NULL,
        PRIMARY KEY (league_id, seq)
    );
    CREATE TABLE league_members (
        league_id {big} NOT NULL REFERENCES leagues (id),
        user_id {big} NOT NULL,
        name TEXT NOT NULL,
        faction TEXT,
        joined_seq INTEGER NOT NULL,
        PRIMARY KEY (league_id, user_id)
    );
    CREATE TABLE league_channels (
        channel_id {big} PRIMARY KEY,
        league_id {big} NOT NULL REFERENCES leagues (id)
    );
    CREATE TABLE league_results (
        id {serial} PRIMARY KEY,
        league_id {big} NOT NULL REFERENCES leagues (id),
        game_id {big} NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending', 'confirmed', 'void')),
        proposed_by {big} NOT NULL,
        confirmed_seq INTEGER,
        body TEXT NOT NULL
    );
    CREATE UNIQUE INDEX league_results_one_per_game ON league_results (league_id, game_id);
    CREATE INDEX league_results_by_league ON league_results (league_id, status, confirmed_seq)
"""

SQLITE_MIGRATIONS = [
    _TABLES.format(serial="INTEGER", big="INTEGER", real="REAL"),
    _APPEND_ONLY["sqlite"],
]

POSTGRES_MIGRATIONS = [
    _TABLES.format(serial="BIGSERIAL", big="BIGINT", real="DOUBLE PRECISION"),
    _APPEND_ONLY["postgresql"],
]

MIGRATIONS = {"sqlite": SQLITE_MIGRATIONS, "postgresql": POSTGRES_MIGRATIONS}
