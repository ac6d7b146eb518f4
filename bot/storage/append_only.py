"""The migration that makes an event log append-only in the database itself, on both backends.

The game and league stores share it. A released migration must keep creating what it created: the stored
trigger and function definitions are the same letter for letter as those the first releases wrote (SQLite
stores `CREATE TRIGGER name …` without the `IF NOT EXISTS`, which is there because early game stores made
their triggers outside the migrations; a new league database never has them before this step).
"""

from __future__ import annotations


def append_only_migration(table: str) -> dict[str, str]:
    """One migration step, by dialect: triggers that refuse UPDATE and DELETE (and TRUNCATE on PostgreSQL)
    on `table`, with the message "<table> is append-only"."""
    sqlite = f"""
    CREATE TRIGGER IF NOT EXISTS {table}_no_update BEFORE UPDATE ON {table}
        BEGIN SELECT RAISE(ABORT, '{table} is append-only'); END;
    CREATE TRIGGER IF NOT EXISTS {table}_no_delete BEFORE DELETE ON {table}
        BEGIN SELECT RAISE(ABORT, '{table} is append-only'); END;
    """
    postgresql = f"""
    CREATE FUNCTION {table}_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION '{table} is append-only'; END; $$;
    CREATE TRIGGER {table}_no_update BEFORE UPDATE ON {table}
        FOR EACH ROW EXECUTE FUNCTION {table}_append_only();
    CREATE TRIGGER {table}_no_delete BEFORE DELETE ON {table}
        FOR EACH ROW EXECUTE FUNCTION {table}_append_only();
    CREATE TRIGGER {table}_no_truncate BEFORE TRUNCATE ON {table}
        FOR EACH STATEMENT EXECUTE FUNCTION {table}_append_only();
    """
    return {"sqlite": sqlite, "postgresql": postgresql}
