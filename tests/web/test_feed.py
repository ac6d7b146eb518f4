"""The change feed on its own: a database outage is retried every tick and logged as one line, not a
traceback per poll, and the pages get the next change once the database is back."""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from bot.games import commands
from bot.games.store import GameStore
from bot.web.feed import GameFeed

pytestmark = pytest.mark.asyncio
CHANNEL = 77


class OutageStore(GameStore):
    """The real store, whose next `failing` reads of the feed fail as a locked database does."""

    failing = 0

    def versions(self, game_ids: Any) -> dict[int, tuple[int, str]]:
        if self.failing:
            self.failing -= 1
            raise sqlite3.OperationalError("database is locked")
        return super().versions(game_ids)


async def test_an_outage_is_one_line_and_the_feed_recovers(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    store = OutageStore(tmp_path / "state.db")
    store.start(CHANNEL, 1, user_id=1, user_name="A", opponent_id=2, opponent_name="B", edition="11e",
                faction="Orks", opponent_faction="Necrons")
    game_id = store.active(CHANNEL)[0]
    feed = GameFeed(lambda: store, interval=0.01)
    try:
        box, first = await feed.subscribe(game_id, CHANNEL)
        assert first is not None
        store.failing = 50
        await asyncio.to_thread(store.act, CHANNEL, commands.vp_set, 1, 6)
        while store.failing:
            await asyncio.sleep(0.01)
        update = await box.get(2.0)
        assert update is not None and json.loads(update)["players"][0]["vp"] == 6
    finally:
        await feed.close()
        store.close()
    lines = [r for r in caplog.records if "overlay feed poll failed" in r.getMessage()]
    assert len(lines) == 1 and lines[0].levelno == logging.WARNING and not lines[0].exc_info
    assert "database is locked" in lines[0].getMessage()
