"""Standings rebuilt from the exported results alone equal the stored (incremental) standings, on random
join / put forward / confirm / void sequences, on both backends.

CI runs LEAGUE_EXAMPLES sequences (default 20 per backend, a few seconds); the issue's 1,000 run with
`LEAGUE_EXAMPLES=1000 pytest tests/leagues/test_rebuild.py` (docs/leagues.md has the numbers).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.errors import UserError
from bot.leagues import standings
from bot.leagues.export import export_league
from bot.leagues.store import LeagueStore, _load_results

GUILD = 501
USERS = [1000 + i for i in range(6)]
EXAMPLES = int(os.environ.get("LEAGUE_EXAMPLES", "20"))

user = st.sampled_from(USERS)
op = st.one_of(
    st.tuples(st.just("join"), user),
    st.tuples(st.just("leave"), user),
    st.tuples(st.just("game"), user, user, st.sampled_from([0, 1, None]), st.integers(0, 100), st.integers(0, 100),
              st.booleans()),
    st.tuples(st.just("confirm"), st.integers(0, 30)),
    st.tuples(st.just("void"), st.integers(0, 30)),
)


def body(game_id: int, a: int, b: int, winner: int | None, vp_a: int, vp_b: int) -> dict:
    return {"game_id": game_id, "date": "2026-12-03", "ended_at": 0.0, "players": [a, b],
            "names": {str(a): f"p{a}", str(b): f"p{b}"}, "winner": None if winner is None else (a, b)[winner],
            "vp": {str(a): vp_a, str(b): vp_b},
            "vp_by_category": {str(a): {"primary": vp_a, "secondary": 0, "other": 0},
                               str(b): {"primary": vp_b, "secondary": 0, "other": 0}},
            "factions": {str(a): f"F{a % 3}", str(b): f"F{b % 3}"}, "mission": "M", "battle_size": None,
            "link": "https://discord.com/channels/501/1", "channel_id": 1}


def run(store: LeagueStore, ops: list[tuple]) -> None:
    store.create(GUILD, 1, "L")
    proposed: list[tuple[int, int]] = []  # (result id, the opponent who may confirm)
    for step in ops:
        try:
            if step[0] == "join":
                store.join(GUILD, step[1], f"p{step[1]}", None, "L", None)
            elif step[0] == "leave":
                store.leave(GUILD, step[1], "L", None)
            elif step[0] == "game":
                _, a, b, winner, vp_a, vp_b, confirm = step
                if a == b:
                    continue
                _, rid = store.propose(GUILD, a, "L", body(len(proposed) + 1, a, b, winner, vp_a, vp_b))
                proposed.append((rid, b))
                if confirm:
                    store.confirm(GUILD, b, rid)
            elif proposed:
                rid, other = proposed[step[1] % len(proposed)]
                if step[0] == "confirm":
                    store.confirm(GUILD, other, rid)
                else:
                    store.void(GUILD, 1, rid, "test")
        except UserError:
            pass  # not a member, confirmed twice, already void: refused, and nothing may change
        store.results(store.find(GUILD, "L"))  # the in-memory results catch up from the log at every step


def stored_table(store: LeagueStore) -> standings.Table:
    with store.storage.read() as conn:
        return standings.load(json.loads(conn.execute("SELECT standings FROM leagues").fetchone()[0]))


def check(store: LeagueStore) -> None:
    league = store.find(GUILD, "L")
    with store.storage.read() as conn:
        assert store.results(league) == _load_results(conn, league.id)  # caught up = read afresh
    exported = json.loads(json.dumps(export_league(league, store.members(league), store.results(league))))
    rebuilt = standings.fold(exported["results"])  # from the results alone
    assert rebuilt == stored_table(store)
    members = store.members(league)
    assert [standings.ranked(rebuilt, members)] == [store.standing(GUILD, "L", None).rows]
    confirmed = [r for r in exported["results"] if r["status"] == "confirmed"]
    assert sum(line.games for line in rebuilt.values()) == 2 * len(confirmed)


def test_rebuild_equals_incremental(new_db_target: Callable[[], Path | str]) -> None:
    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.lists(op, max_size=40))
    def example(ops: list[tuple]) -> None:
        store = LeagueStore(new_db_target())
        try:
            run(store, ops)
            check(store)
        finally:
            store.close()

    example()


def test_a_long_season_rebuilds(tmp_path: Path) -> None:
    """One long deterministic sequence: many confirms and voids (void re-folds) keep the equality."""
    store = LeagueStore(tmp_path / "s.db")
    ops: list[tuple] = [("join", u) for u in USERS]
    for i in range(300):
        a, b = USERS[i % 6], USERS[(i * 5 + 1) % 6]
        ops.append(("game", a, b, [0, 1, None][i % 3], i % 90, (i * 7) % 90, i % 4 != 0))
        if i % 17 == 0:
            ops.append(("void", i))
        if i % 11 == 0:
            ops.append(("confirm", i * 3))
    run(store, ops)
    check(store)
    store.close()
