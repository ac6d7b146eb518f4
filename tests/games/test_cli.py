"""Contract 4: `python -m bot game export --channel ID`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from bot.games import commands as gc
from bot.games.store import GameStore

ROOT = Path(__file__).resolve().parents[2]


def run(db: Path | str, *args: str, data: Path | None = None) -> subprocess.CompletedProcess:
    """`python -m bot game ...` on an SQLite file or a postgresql:// URL."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COGITATOR_", "DISCORD_"))}
    if isinstance(db, str):
        env["COGITATOR_DATABASE_URL"] = db
    else:
        env["COGITATOR_DB"] = str(db)
    env["COGITATOR_DATA"] = str(data or (db.parent / "data" if isinstance(db, Path) else ROOT / "var" / "data"))
    return subprocess.run([sys.executable, "-m", "bot", "game", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=60)


def test_export_contract(db_target: Path | str) -> None:
    db = db_target
    store = GameStore(db)
    store.start(42, 1, user_id=111, user_name="Alice", opponent_id=222, opponent_name="Bob", edition="10e",
                faction="Leagues of Votann", opponent_faction="Orks")
    store.act(42, gc.judgement, 111, "Boyz", 1, remove=False)
    store.act(42, gc.shock, 222, "Boyz")
    store.act(42, gc.riled, 222, "Nobz", "battle", force=True)  # riled up is 11e; this game is 10e
    store.act(42, gc.vp_add, 222, 4)
    store.close()
    done = run(db, "export", "--channel", "42")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    for key in ("edition", "round", "phase", "active_player", "players", "units", "stratagems_used", "log"):
        assert key in data
    assert (data["edition"], data["round"], data["phase"], data["active_player"]) == ("10e", 1, "command", 111)
    assert data["players"] == [
        {"user_id": 111, "name": "Alice", "faction": "Leagues of Votann", "cp": 1, "vp": 0},
        {"user_id": 222, "name": "Bob", "faction": "Orks", "cp": 1, "vp": 4},
    ]
    assert [{k: u[k] for k in ("owner", "name", "judgement_tokens", "riled_up", "battle_shocked")}
            for u in data["units"]] == [
        {"owner": 222, "name": "Boyz", "judgement_tokens": 1, "riled_up": False, "battle_shocked": True},
        {"owner": 222, "name": "Nobz", "judgement_tokens": 0, "riled_up": True, "battle_shocked": False},
    ]
    assert [e["type"] for e in data["log"]] == ["start", "judgement", "shock", "riled", "vp"]


def test_export_without_game_exits_2(db_target: Path | str) -> None:
    done = run(db_target, "export", "--channel", "7")
    assert done.returncode == 2
    assert "no game" in json.loads(done.stdout)["error"]
    bad = run(db_target, "export", "--channel", "-5")
    assert bad.returncode == 2 and "channel id" in bad.stderr


def test_verify_repair_rewrites_a_snapshot_from_the_log(db_target: Path | str) -> None:
    """`game verify` reports a snapshot that parses but differs from its log; `--repair` rewrites it."""
    store = GameStore(db_target)
    store.start(42, 1, user_id=111, user_name="Alice", opponent_id=222, opponent_name="Bob", edition="10e",
                faction="Leagues of Votann", opponent_faction="Orks")
    store.act(42, gc.vp_add, 222, 4)
    with store.storage.transaction(42) as conn:
        text = conn.execute("SELECT state FROM games WHERE channel_id = 42").fetchone()[0]
        conn.execute("UPDATE games SET state = ? WHERE channel_id = 42", (text.replace('"vp":4', '"vp":9'),))
    store.close()
    found = run(db_target, "verify", "--channel", "42")
    assert found.returncode == 1 and json.loads(found.stdout) == {"channel": 42, "consistent": False}
    fixed = run(db_target, "verify", "--channel", "42", "--repair")
    assert fixed.returncode == 0, fixed.stderr
    assert json.loads(fixed.stdout) == {"channel": 42, "consistent": True, "repaired": True}
    again = run(db_target, "verify", "--channel", "42", "--repair")
    assert json.loads(again.stdout) == {"channel": 42, "consistent": True, "repaired": False}
