"""`python -m bot league export` (contract 10) as a real process: JSON, CSV, and refusals."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

from bot.leagues import standings
from bot.leagues.store import LeagueStore
from tests.leagues.test_rebuild import body

ROOT = Path(__file__).resolve().parents[2]


def export(db: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, COGITATOR_DB=str(db), COGITATOR_LOG_LEVEL="WARNING")
    env.pop("COGITATOR_DATABASE_URL", None)
    return subprocess.run([sys.executable, "-m", "bot", "league", "export", *args], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=120)


def test_export_json_and_csv(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    store = LeagueStore(db)
    store.create(501, 1, "Autumn")
    for user in (111, 222, 333):
        store.join(501, user, f"=p{user}", "Orks", "Autumn", None)
    store.propose(501, 111, "Autumn", body(1, 111, 222, 0, 70, 40))
    store.confirm(501, 222, 1)
    store.propose(501, 222, "Autumn", body(2, 222, 333, None, 55, 55))
    store.create(501, 1, "Winter")
    store.close()

    done = export(db, "--guild", "501", "--league", "autumn")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["league"] == "Autumn" and data["guild_id"] == 501
    assert [(p["user_id"], p["games"], p["wins"], p["vp_for"], p["vp_against"]) for p in data["players"]] == [
        (111, 1, 1, 70, 40), (222, 1, 0, 40, 70), (333, 0, 0, 0, 0)]
    assert [(r["id"], r["status"], r["winner"]) for r in data["results"]] == [(1, "confirmed", 111), (2, "pending", None)]
    rebuilt = standings.ranked(standings.fold(data["results"]), [111, 222, 333])
    assert [round(line.rating, 1) for line in rebuilt] == [p["rating"] for p in data["players"]]

    done = export(db, "--guild", "501", "--league", "Autumn", "--format", "csv")
    assert done.returncode == 0, done.stderr
    players, results = done.stdout.split("\n\n")
    rows = list(csv.DictReader(io.StringIO(players)))
    assert rows[0]["name"] == "'=p111" and rows[0]["rating"] == "1516.0"  # no formula reaches a spreadsheet
    assert [r["status"] for r in csv.DictReader(io.StringIO(results))] == ["confirmed", "pending"]

    for args, pattern in ((("--guild", "501"), "several leagues"), (("--guild", "9"), "no league yet"),
                          (("--guild", "501", "--league", "Spring"), "no league called Spring")):
        done = export(db, *args)
        assert done.returncode == 2 and pattern in json.loads(done.stdout)["error"], done.stdout
    done = export(db, "--guild", "abc")
    assert done.returncode == 2 and "a server id is a number" in done.stderr
