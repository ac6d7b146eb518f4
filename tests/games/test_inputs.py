"""Malformed and hostile input for the tracker's parsers: property tests and the console edge cases."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.console.session import ConsoleSession
from bot.errors import UserError
from bot.games import commands as gc
from bot.games import rules
from bot.games.store import GameStore

CH = 1001


@given(st.text(max_size=3000))
def test_clean_name_returns_a_tidy_name_or_refuses(raw: str) -> None:
    try:
        name = rules.clean_name(raw)
    except UserError as error:
        assert "Unit name" in str(error)
        return
    assert 0 < len(name) <= rules.MAX_NAME
    assert name == name.strip() and "  " not in name
    assert all(ch.isprintable() for ch in name)


@given(st.integers(min_value=-(2**70), max_value=2**70))
def test_check_amount_bounds(amount: int) -> None:
    try:
        value = rules.check_amount(amount, field="amount", low=1, high=20, what="CP")
    except UserError:
        assert not 1 <= amount <= 20
    else:
        assert value == amount and 1 <= amount <= 20


NAMES = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=0, max_size=120)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(names=st.lists(NAMES, min_size=1, max_size=8), amounts=st.lists(st.integers(-5, 5), min_size=1, max_size=8))
def test_any_unit_names_never_break_the_store(new_db_target: Callable[[], Path | str], names: list[str],
                                              amounts: list[int]) -> None:
    store = GameStore(new_db_target())
    try:
        store.start(CH, 1, user_id=111, user_name="A", opponent_id=222, opponent_name="B", edition="10e",
                    faction="Leagues of Votann", opponent_faction="Orks")
        for i, name in enumerate(names):
            amount = amounts[i % len(amounts)]
            for args, kwargs in (
                ((gc.judgement, 111, name, amount), {"remove": amount < 0}),
                ((gc.shock, 222, name), {"clear": amount % 2 == 0}),
                ((gc.riled, 222, name, "end-of-next-turn"), {}),
                ((gc.oathband_mark, 111, name), {}),
            ):
                with contextlib.suppress(UserError):
                    store.act(CH, *args, **kwargs)
        data = store.export(CH)
        json.dumps(data)
        assert all(0 <= u["judgement_tokens"] <= 2 for u in data["units"])
        assert all(0 < len(u["name"]) <= rules.MAX_NAME for u in data["units"])
        assert store.verify(CH)
    finally:
        store.close()


async def test_direct_messages_are_refused(console: ConsoleSession) -> None:
    await console.send(":guild none")
    reply = (await console.send("/game start opponent:222 faction:Orks opponent_faction:Necrons"))[-1]
    assert reply.ephemeral and "server channel" in reply.text()


async def test_end_board_and_history(console: ConsoleSession) -> None:
    await console.send("/game start opponent:222 faction:Orks opponent_faction:Necrons edition:10e")
    await console.send("/vp add amount:4")
    reply = (await console.send("/game end"))[-1]
    assert "Game finished · Battle round 1" in reply.text()
    reply = (await console.send("/game log"))[-1]
    assert "Game finished" in reply.text()
    reply = (await console.send("/game history"))[-1]
    assert "Alice 4 – 0 Bob" in reply.text() and "finished" in reply.text()


def test_export_of_a_db_that_never_had_games(db_target: Path | str) -> None:
    store = GameStore(db_target)
    assert store.export(5) is None
    assert store.verify(5)
    store.close()
