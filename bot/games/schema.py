"""The game store's schema: its migrations on both backends and the snapshot format version.

`migrations[i]` is version i + 1 of the `games` namespace (`bot.db.apply_migrations`, and the PostgreSQL
backend's equivalent); never edit a released one, append a new one.
"""

from __future__ import annotations

from bot.storage.append_only import append_only_migration

# The log is append-only at the database level, not just by convention (version 3).
_APPEND_ONLY = append_only_migration("game_events")

# The tables of versions 1 and 2, written once for both backends: on PostgreSQL ids are 64-bit (Discord
# snowflakes) and times double precision; SQLite keeps the log and checkpoints WITHOUT ROWID. The texts are
# those released, letter for letter.
_GAMES = """
    CREATE TABLE games (
        id {serial} PRIMARY KEY,
        channel_id {big} NOT NULL,
        guild_id {big},
        status TEXT NOT NULL CHECK (status IN ('active', 'finished', 'abandoned')),
        edition TEXT NOT NULL,
        created_at {real} NOT NULL,
        ended_at {real},
        last_seq INTEGER NOT NULL,
        state TEXT NOT NULL
    );
    CREATE UNIQUE INDEX games_one_active ON games (channel_id) WHERE status = 'active';
    CREATE INDEX games_by_channel ON games (channel_id, id);
    CREATE TABLE game_events (
        game_id {big} NOT NULL REFERENCES games (id),
        seq INTEGER NOT NULL,
        ts {real} NOT NULL,
        actor_user {big},
        type TEXT NOT NULL,
        body TEXT NOT NULL,
        PRIMARY KEY (game_id, seq)
    ){without_rowid}
    """
# Undo re-folds the log; checkpoints of the fold every CHECKPOINT_EVERY effective events keep that
# cheap in long games. `depth` is the number of effective (not undone) events; 0 = unknown.
_CHECKPOINTS = """
    ALTER TABLE games ADD COLUMN depth INTEGER NOT NULL DEFAULT 0;
    CREATE TABLE game_checkpoints (
        game_id {big} NOT NULL REFERENCES games (id),
        depth INTEGER NOT NULL,
        seq INTEGER NOT NULL,
        state TEXT NOT NULL,
        PRIMARY KEY (game_id, depth)
    ){without_rowid}
    """
_SQLITE = {"serial": "INTEGER", "big": "INTEGER", "real": "REAL", "without_rowid": " WITHOUT ROWID"}
_POSTGRES = {"serial": "BIGSERIAL", "big": "BIGINT", "real": "DOUBLE PRECISION", "without_rowid": ""}
# The snapshot format each row was written in (`SNAPSHOT_SHAPE`; 0: before it was recorded). Opening the
# store rebuilds older snapshots from the log (`GameStore.upgrade_snapshots`).
_SHAPE = "ALTER TABLE games ADD COLUMN shape INTEGER NOT NULL DEFAULT 0"

SQLITE_MIGRATIONS = [_GAMES.format(**_SQLITE), _CHECKPOINTS.format(**_SQLITE), _APPEND_ONLY["sqlite"], _SHAPE]
POSTGRES_MIGRATIONS = [_GAMES.format(**_POSTGRES), _CHECKPOINTS.format(**_POSTGRES), _APPEND_ONLY["postgresql"],
                       _SHAPE]
MIGRATIONS = {"sqlite": SQLITE_MIGRATIONS, "postgresql": POSTGRES_MIGRATIONS}

# The snapshot format: raise it when a state field is added whose value the fold of an old log gives
# differently from its default (1: VP by round, secondaries, mission, clock). Older rows are rebuilt from
# their log when the store opens, so `verify` holds on a database written by an older release.
SNAPSHOT_SHAPE = 1
