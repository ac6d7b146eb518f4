"""The league store's log is append-only in the database itself (bot/storage/append_only.py), on both backends."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.leagues.store import LeagueStore


def test_the_league_log_refuses_changes(db_target: Path | str) -> None:
    store = LeagueStore(db_target)
    try:
        store.create(501, 1, "L")
        for tamper in ("DELETE FROM league_events", "UPDATE league_events SET type = 'x'"):
            with pytest.raises(Exception, match="league_events is append-only"), store.storage.transaction() as conn:
                conn.execute(tamper)
        with store.storage.read() as conn:
            assert conn.execute("SELECT COUNT(*) FROM league_events").fetchone()[0] == 1
    finally:
        store.close()
