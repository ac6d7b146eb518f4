"""Two real processes confirming the same results at the same moment: each result counts exactly once."""

from __future__ import annotations

import json
from pathlib import Path

from bot.leagues.store import LeagueStore
from tests.leagues.test_rebuild import body, check
from tests.procs import race, spawn

GUILD, ALICE, BOB = 501, 111, 222
RESULTS = 30

CONFIRMER = """
import json, sys
from bot.errors import UserError
from bot.leagues.store import LeagueStore
path, count = sys.argv[1], int(sys.argv[2])
store = LeagueStore(path)
print("ready", flush=True)
sys.stdin.readline()  # start together
outcomes = []
for rid in range(1, count + 1):
    try:
        store.confirm(501, 222, rid)
        outcomes.append("counted")
    except UserError as error:
        outcomes.append(str(error))
store.close()
print(json.dumps(outcomes))
"""


def test_two_processes_confirm_the_same_results_once(db_target: Path | str) -> None:
    store = LeagueStore(db_target)
    store.create(GUILD, ALICE, "L")
    for user in (ALICE, BOB):
        store.join(GUILD, user, f"p{user}", None, "L", None)
    for game in range(1, RESULTS + 1):
        store.propose(GUILD, ALICE, "L", body(game, ALICE, BOB, game % 2, 50, 40))
    store.close()

    outcomes = [json.loads(out) for out in race([spawn(CONFIRMER, str(db_target), str(RESULTS)) for _ in range(2)])]
    for rid, pair in enumerate(zip(*outcomes, strict=True), start=1):
        assert sorted(pair) == sorted(["counted", f"Result #{rid} is already confirmed: it counts once."]), pair

    store = LeagueStore(db_target)
    try:
        league = store.find(GUILD, "L")
        assert sum(e["type"] == "confirm" for e in store.log(league)) == RESULTS
        rows = {line.user_id: line for line in store.standing(GUILD, "L", None).rows}
        assert (rows[ALICE].games, rows[BOB].games) == (RESULTS, RESULTS)
        assert rows[ALICE].wins == rows[BOB].losses == RESULTS // 2
        check(store)
    finally:
        store.close()
