"""The game tracker through the real command tree (the console): scripted battles, restarts, refusals."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bot.console.session import ConsoleSession
from bot.services import Services
from tests.games.fakes import FakeCatalog

CH = 1001
Step = str | tuple


@pytest.fixture
def fake_catalog(monkeypatch: pytest.MonkeyPatch) -> FakeCatalog:
    """A small stand-in with the catalog's methods, for tests about the contract rather than the data."""
    catalog = FakeCatalog()
    monkeypatch.setattr(Services, "catalog", property(lambda self: catalog))
    return catalog


@pytest.fixture
def real_catalog() -> None:
    """The real catalog built from the seed pages and wh40kdc (once per session, in the shared data dir)."""
    pytest.importorskip("bot.catalog.service")


def export(console: ConsoleSession, channel: int = CH) -> dict[str, Any]:
    data = console.bot.services.games.export(channel)
    assert data is not None
    return data


def unit(data: dict[str, Any], name: str) -> dict[str, Any]:
    return next(u for u in data["units"] if u["name"] == name)


def cps(data: dict[str, Any]) -> tuple[int, int]:
    return tuple(p["cp"] for p in data["players"])  # type: ignore[return-value]


def nxt(n: int) -> list[str]:
    return ["/game next"] * n


async def play(console: ConsoleSession, script: list[Step], *, restart_every: int = 0) -> None:
    """Run a script: plain lines must succeed publicly; ("refuse", line, pattern) must be refused
    ephemerally with that reason; ("check", fn) asserts on the exported game."""
    count = 0
    for step in script:
        if isinstance(step, tuple) and step[0] == "check":
            step[1](export(console))
            continue
        line, pattern = (step[1], step[2]) if isinstance(step, tuple) else (step, None)
        replies = await console.send(line)
        if line.startswith(":"):
            continue
        assert replies, line
        reply = replies[0]  # the answer; a live board's edit may follow it
        if pattern is None:
            assert not reply.ephemeral, f"{line!r} was refused: {reply.text()}"
        else:
            assert reply.ephemeral, f"{line!r} was not refused"
            assert re.search(pattern, reply.text()), f"{line!r}: {reply.text()!r} does not match {pattern!r}"
        count += 1
        if restart_every and count % restart_every == 0:
            await console.restart()


def script_10e() -> list[Step]:
    """Alice (Votann, starts) vs Bob (Orks), 10e. CP worked out by hand in the comments (A, B)."""
    return [
        ":as 111",
        "/game start opponent:222 edition:10e faction:Leagues of Votann opponent_faction:Orks",  # A1 B1
        ("check", lambda d: (d["round"], d["phase"], d["active_player"], cps(d)) == (1, "command", 111, (1, 1))
         or pytest.fail(str(d))),
        "/oathband mark unit:Boyz",
        "/oathband mark unit:Nobz",
        "/cp gain amount:1",  # A2 (round 1's one extra CP)
        *nxt(4),
        "/judgement add unit:Boyz",  # Bob's Boyz: 1 token
        "/game next",  # round 1, Bob's Command phase: A3 B2
        ":as 222",
        "/shock unit:Grots",
        ("refuse", "/strat use name:Command Re-roll unit:Grots", "battle-shocked"),
        "/strat use name:Insane Bravery unit:Grots",  # B1; treated as passed
        "/riled add unit:Nobz until:start-of-your-next-turn force:true",  # riled up is an 11e rule: forced in 10e
        *nxt(4),
        "/vp add amount:5",
        "/game next",  # round 2, Alice's Command phase: A4 B2
        ("check", lambda d: (unit(d, "Nobz")["riled_up"], unit(d, "Grots")["battle_shocked"], cps(d))
         == (True, False, (4, 2)) or pytest.fail(str(d))),
        ":as 111",
        "/judgement add unit:Boyz amount:2",  # 2 tokens; the extra one is ignored
        "/vp add amount:10",
        "/oathband destroyed unit:Boyz",
        "/oathband claim amount:2",  # A6: Ruthless Efficiency, exempt from the 1CP limit
        "/cp gain amount:1",  # A7
        ("refuse", "/cp gain amount:1", "at most 1CP per battle round"),
        ("refuse", "/strat use name:Counter-offensive", "Counter-offensive is used in Fight phase"),
        *nxt(4),  # Alice's Fight phase
        "/strat use name:Counter-offensive",  # A5
        ("refuse", "/strat use name:Counter-offensive", "already used Counter-offensive this phase"),
        "/strat use name:Counter-offensive force:true",  # A3
        "/game next",  # round 2, Bob's Command phase: A4 B3; Nobz no longer riled
        ("check", lambda d: (unit(d, "Nobz")["riled_up"], cps(d)) == (False, (4, 3)) or pytest.fail(str(d))),
        ":as 222",
        "/shock unit:Boyz",
        *nxt(5),  # round 3, Alice's Command phase: A5 B4; Boyz still battle-shocked
        ("check", lambda d: unit(d, "Boyz")["battle_shocked"] or pytest.fail(str(d))),
        ":as 111",
        *nxt(5),  # round 3, Bob's Command phase: A6 B5; 10e: battle-shock ends
        ("check", lambda d: (unit(d, "Boyz")["battle_shocked"], cps(d)) == (False, (6, 5)) or pytest.fail(str(d))),
        ":as 222",
        ("refuse", "/strat use name:Insane Bravery unit:Boyz force:true", "once per battle"),
        "/cp spend amount:2",  # B3
        *nxt(5),  # round 4, Alice: A7 B4
        "/riled add unit:Stompa until:battle force:true",
        *nxt(5),  # round 4, Bob: A8 B5
        *nxt(5),  # round 5, Alice: A9 B6
        ":as 111",
        "/vp add amount:3",
        *nxt(5),  # round 5, Bob: A10 B7
        ":as 222",
        "/shock unit:Grots",
        "/vp set amount:12",
        *nxt(4),
        "/game next",  # the battle ends
        ("refuse", "/cp gain amount:1", "battle is over"),
    ]


def check_10e_final(d: dict[str, Any]) -> None:
    assert d["phase"] == "over" and d["round"] == 5
    assert cps(d) == (10, 7)
    assert [p["vp"] for p in d["players"]] == [13, 12]
    got = {u["name"]: (u["owner"], u["judgement_tokens"], u["riled_up"], u["battle_shocked"]) for u in d["units"]}
    assert got == {"Boyz": (222, 2, False, False), "Nobz": (222, 0, False, False), "Grots": (222, 0, False, True),
                   "Stompa": (222, 0, True, False)}
    assert unit(d, "Boyz")["oathband_marked"] and unit(d, "Boyz")["destroyed"]
    uses = [(s["player"], s["name"], s["cp"], s["round"], s["unit"], s["forced"]) for s in d["stratagems_used"]]
    assert uses == [(222, "Insane Bravery", 1, 1, "Grots", False), (111, "Counter-offensive", 2, 2, None, False),
                    (111, "Counter-offensive", 2, 2, None, True)]
    forced = [e for e in d["log"] if e["forced"]]
    assert len(forced) == 3 and "already used" in forced[1]["overrides"][0]
    assert all("11e rule" in forced[i]["overrides"][0] for i in (0, 2))


def script_11e() -> list[Step]:
    """Alice (Orks, starts) vs Bob (Votann), 11e, 2 starting CP."""
    return [
        ":as 111",
        "/game start opponent:222 edition:11e faction:Orks opponent_faction:Leagues of Votann starting_cp:2",  # A3 B3
        "/riled add unit:Stompa until:end-of-this-turn",
        "/riled add unit:Nobz until:start-of-your-next-turn",
        "/cp gain amount:1",  # A4
        "/cp gain amount:1",  # A5: no per-round limit in 11e
        ("refuse", "/strat use name:Heroic Intervention unit:Nobz extra:true", "used in your opponent's Charge phase"),
        *nxt(5),  # round 1, Bob: A6 B4
        ("check", lambda d: (unit(d, "Stompa")["riled_up"], unit(d, "Nobz")["riled_up"], cps(d))
         == (False, True, (6, 4)) or pytest.fail(str(d))),
        ":as 222",
        "/judgement add unit:Boyz amount:2",
        "/judgement remove unit:Boyz",
        ":as 111",
        "/shock unit:Gretchin",
        *nxt(3),  # Bob's Charge phase (either player may advance)
        "/strat use name:Heroic Intervention unit:Nobz extra:true",  # 1CP + 1CP section: A4
        *nxt(2),  # round 2, Alice: A5 B5; 11e: still battle-shocked until a roll succeeds
        ("check", lambda d: (unit(d, "Nobz")["riled_up"], unit(d, "Gretchin")["battle_shocked"], cps(d))
         == (False, True, (5, 5)) or pytest.fail(str(d))),
        ("refuse", "/strat use name:Command Re-roll unit:Gretchin", "battle-shocked"),
        "/strat use name:Insane Bravery unit:Gretchin",  # A4; the roll succeeds
        "/waaagh",
        "/vp add amount:4",
        ("check", lambda d: all(u["riled_up"] for u in d["units"] if u["owner"] == 111) or pytest.fail(str(d))),
        *nxt(5),  # round 2, Bob: A5 B6; the Waaagh! lasts until the end of this (the next) turn
        ("check", lambda d: all(u["riled_up"] for u in d["units"] if u["owner"] == 111) or pytest.fail(str(d))),
        "/shock unit:Boyz",
        ":as 222",
        "/vp add amount:7",
        *nxt(5),  # round 3, Alice: A6 B7
        ("check", lambda d: (not any(u["riled_up"] for u in d["units"]), unit(d, "Boyz")["battle_shocked"])
         == (True, True) or pytest.fail(str(d))),
        ":as 111",
        ("refuse", "/waaagh force:true", "once per battle"),
        "/shock unit:Boyz clear:true",
        "/strat use name:Command Re-roll unit:Boyz",  # A5
        ("refuse", "/strat use name:Counteroffensive unit:Boyz", "already targeted"),
        *nxt(5),  # round 3, Bob: A6 B8
        *nxt(5),  # round 4, Alice: A7 B9
        "/vp add amount:6",
        *nxt(4),  # Alice's Fight phase
        ":as 222",
        "/strat use name:Counteroffensive",  # in his opponent's Fight phase: B7
        "/game next",  # round 4, Bob: A8 B8
        "/vp set amount:9",
        *nxt(5),  # round 5, Alice: A9 B9
        ":as 111",
        "/shock unit:Gretchin",
        *nxt(5),  # round 5, Bob: A10 B10
        *nxt(5),
        ("refuse", "/game next", "battle is over"),
    ]


def check_11e_final(d: dict[str, Any]) -> None:
    assert d["phase"] == "over" and d["edition"] == "11e"
    assert cps(d) == (10, 10)
    assert [p["vp"] for p in d["players"]] == [10, 9]
    got = {u["name"]: (u["owner"], u["judgement_tokens"], u["riled_up"], u["battle_shocked"]) for u in d["units"]}
    assert got == {"Stompa": (111, 0, False, False), "Nobz": (111, 0, False, False), "Boyz": (111, 1, False, False),
                   "Gretchin": (111, 0, False, True)}
    uses = [(s["player"], s["name"], s["cp"], s["unit"]) for s in d["stratagems_used"]]
    assert uses == [(111, "Heroic Intervention", 2, "Nobz"), (111, "Insane Bravery", 1, "Gretchin"),
                    (111, "Command Re-roll", 1, "Boyz"), (222, "Counteroffensive", 2, None)]


SCRIPTS: dict[str, tuple[Callable[[], list[Step]], Callable[[dict[str, Any]], None]]] = {
    "10e": (script_10e, check_10e_final),
    "11e": (script_11e, check_11e_final),
}


@pytest.mark.parametrize("edition", ["10e", "11e"])
async def test_scripted_five_round_game(console: ConsoleSession, real_catalog: None, edition: str) -> None:
    script, check = SCRIPTS[edition]
    await play(console, script())
    check(export(console))
    assert console.bot.services.games.verify(CH)


@pytest.mark.parametrize("edition", ["10e", "11e"])
async def test_restarts_lose_nothing(console: ConsoleSession, fake_catalog: FakeCatalog, edition: str) -> None:
    """The same battle with a restart after every third command ends identically. (The small catalog
    stand-in keeps the many restarts fast; the catalog is read-only and not what a restart tests.)"""
    script, check = SCRIPTS[edition]
    await play(console, script(), restart_every=3)
    check(export(console))


def _without_times(d: dict[str, Any]) -> dict[str, Any]:
    return {**d, "log": [{k: v for k, v in e.items() if k != "ts"} for e in d["log"]]}


async def test_restart_after_each_command_same_export(console: ConsoleSession, fake_catalog: FakeCatalog) -> None:
    script = script_11e()[:30]
    await play(console, script)
    plain = _without_times(export(console))
    await console.send("/game end abandon:true")
    await console.send(":channel 2002")
    for line in script:
        if isinstance(line, str) and line.startswith("/"):
            await console.send(line)
            await console.restart()
        elif isinstance(line, tuple) and line[0] == "refuse":
            await console.send(line[1])
        elif isinstance(line, str):
            await console.send(line)
    again = _without_times(export(console, 2002))
    assert {k: v for k, v in again.items() if k != "game_id"} == {k: v for k, v in plain.items() if k != "game_id"}


async def test_board_buttons_survive_restart(console: ConsoleSession, real_catalog: None) -> None:
    await console.send("/game start opponent:222 faction:Orks opponent_faction:Necrons edition:11e")
    replies = await console.send("/game status")
    ids = {c["custom_id"] for c in replies[-1].components}
    assert ids == {f"game:next:{CH}", f"game:cp:{CH}", f"game:undo:{CH}", f"game:refresh:{CH}"}
    await console.restart()
    replies = await console.click(f"game:next:{CH}", user=222)
    assert replies[-1].kind == "update" and "Movement phase" in replies[-1].text()
    replies = await console.click(f"game:cp:{CH}", user=111)
    assert "Alice gains 1CP" in replies[-1].text()
    assert cps(export(console)) == (2, 1)
    replies = await console.click(f"game:undo:{CH}", user=222)
    assert cps(export(console)) == (1, 1)
    replies = await console.click(f"game:next:{CH}", user=333)
    assert replies[-1].ephemeral and "Only the players" in replies[-1].text()
    assert export(console)["phase"] == "movement"
    await console.send("/vp add amount:6", user=222)  # a slash command elsewhere; the board catches up
    replies = await console.click(f"game:refresh:{CH}", user=333)  # anyone may refresh (read)
    assert replies[-1].kind == "update" and "**6 VP**" in replies[-1].text()


async def test_board_follows_every_change_in_place(console: ConsoleSession, fake_catalog: FakeCatalog) -> None:
    (board,) = await console.send("/game start opponent:222 faction:Orks opponent_faction:Necrons edition:11e")
    replies = await console.send("/cp spend amount:1")
    assert [r.kind for r in replies] == ["response", "edit"]
    edit = replies[1]
    assert edit.message_id == board.message_id and "**0 CP**" in edit.text()
    assert {c["custom_id"] for c in edit.components} >= {f"game:next:{CH}", f"game:undo:{CH}"}
    # A newer board takes over; pressing its buttons keeps it live.
    (newer,) = await console.send("/game status")
    await console.click(f"game:next:{CH}", user=222)
    replies = await console.send("/vp add amount:3", user=222)
    assert replies[-1].kind == "edit" and replies[-1].message_id == newer.message_id
    assert "**3 VP**" in replies[-1].text() and "Movement phase" in replies[-1].text()
    # Refusals change nothing, so they edit nothing.
    replies = await console.send("/cp spend amount:9")
    assert [r.kind for r in replies] == ["response"] and replies[0].ephemeral


async def test_refusals(console: ConsoleSession, real_catalog: None) -> None:
    await console.send("/game start opponent:222 faction:Orks opponent_faction:Necrons")
    cases = [
        (333, "/cp gain amount:1", "Only the players"),
        (333, "/game next", "Only the players"),
        (333, "/judgement add unit:Boyz", "Only the players"),
        (333, "/game end", "Manage Channel"),
        (111, "/cp spend amount:1 player:222", "your own CP"),
        (111, "/vp set amount:3 player:222", "your own CP"),
        (111, "/cp spend amount:5", "Not enough CP"),
    ]
    for user, line, pattern in cases:
        reply = (await console.send(line, user=user))[0]
        assert reply.ephemeral and re.search(pattern, reply.text()), (line, reply.text())
    # the players of another channel's game cannot touch this one
    await console.send(":channel 2002")
    await console.send("/game start opponent:555 faction:Orks opponent_faction:Necrons", user=444)
    await console.send(":channel 1001")
    for line in ("/game next", "/cp gain amount:1", "/game undo"):
        reply = (await console.send(line, user=444))[0]
        assert reply.ephemeral and "Only the players" in reply.text()
    assert len(export(console)["log"]) == 1
    # a member with Manage Channel may end it
    console.set_permissions(333, "manage_channels")
    reply = (await console.send("/game end abandon:true", user=333))[0]
    assert not reply.ephemeral
    assert export(console)["status"] == "abandoned"


async def test_bad_input(console: ConsoleSession, real_catalog: None) -> None:
    reply = (await console.send("/cp gain amount:1"))[0]
    assert reply.ephemeral and "no game" in reply.text()
    await console.send("/game start opponent:222 faction:Orks opponent_faction:Necrons edition:11e")
    for line, pattern in [
        ("/judgement remove unit:Nobody", "no unit called"),
        ("/shock unit:Nobody clear:true", "no unit called"),
        ("/cp gain amount:-1", r"between|doesn't fit|must be|valid integer|at (least|most)"),
        ("/cp gain amount:0", r"between|doesn't fit|must be|valid integer|at (least|most)"),
        ("/cp spend amount:99999999999999999999999", r"between|doesn't fit|must be|valid integer|at (least|most)"),
        ("/vp add amount:1000000", r"between|doesn't fit|must be|valid integer|at (least|most)"),
        ("/judgement add unit:Boyz amount:7", r"between|doesn't fit|must be|valid integer|at (least|most)"),
        ("/strat use name:Totally Made Up", "No 11e stratagem"),
        ("/strat use name:Newfound Nemesis", "No 11e stratagem"),  # a 10e-only name
        ("/judgement add unit:" + "x" * 2000, "too long"),
        ("/riled add unit:Boyz until:forever", r"doesn't fit|Unknown|choose"),
        ("/game start opponent:222 faction:Orks opponent_faction:Necrons", "already has a game"),
    ]:
        reply = (await console.send(line))[0]
        assert reply.ephemeral and re.search(pattern, reply.text()), (line, reply.text())
    assert len(export(console)["log"]) == 1
    await console.send("/game end")
    reply = (await console.send("/game next"))[0]
    assert reply.ephemeral and "no game" in reply.text()


HOSTILE = "**@everyone** <@123456789012345678> __x__ `y` [link](https://evil.invalid) ||s||"


async def test_hostile_names_are_escaped(console: ConsoleSession, real_catalog: None) -> None:
    await console.send(":name @everyone **boss**")
    reply = (await console.send("/game start opponent:222 faction:**@everyone** <@222> opponent_faction:Orks"))[0]
    assert not reply.ephemeral, reply.text()
    reply = (await console.send(f"/judgement add unit:{HOSTILE} force:true"))[0]  # an unrecognisable faction
    assert not reply.ephemeral, reply.text()
    texts = [r.text() for r in await console.send("/game status")]
    texts += [r.text() for r in await console.send("/game log")]
    texts += [r.text() for r in await console.send(f"/strat use name:{HOSTILE}")]
    joined = "\n".join(texts)
    assert "@everyone" not in joined.replace("@\u200beveryone", "")
    assert "<@123456789012345678>" not in joined
    assert "**@" not in joined and "\\*\\*" in joined
    assert "`y`" not in joined
    assert console.bot.allowed_mentions.everyone is False and console.bot.allowed_mentions.users is False


def test_every_game_message_disables_mentions() -> None:
    """Every send/edit in the game cogs passes allowed_mentions=NO_MENTIONS."""
    root = Path(__file__).resolve().parents[2]
    for name in ("cogs/game.py", "cogs/game_resources.py"):
        tree = ast.parse((root / name).read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in (
                    "send_message", "edit_message", "send", "edit"):
                kws = {k.arg: k.value for k in node.keywords}
                assert "allowed_mentions" in kws, f"{name}:{node.lineno}"
                assert ast.unparse(kws["allowed_mentions"]) == "NO_MENTIONS", f"{name}:{node.lineno}"


async def test_autocomplete_fake_catalog(console: ConsoleSession, fake_catalog: FakeCatalog) -> None:
    await console.send("/game start opponent:222 faction:Orks opponent_faction:Leagues of Votann edition:11e")
    choices = await console.autocomplete("/strat use name:heroic", "name")
    assert choices and choices[0]["value"] == "11e:stratagem:fake:heroic-intervention"
    assert len(choices) <= 25
    replies = await console.send("/strat use name:11e:stratagem:fake:heroic-intervention unit:Boyz force:true")
    assert "Heroic Intervention on Boyz for 1CP" in replies[0].text()
    await console.send("/judgement add unit:Warriors", user=222)  # tokens on Alice's Warriors
    choices = await console.autocomplete("/judgement add unit:war", "unit", user=222)
    assert choices[0] == {"name": "Warriors · unlisted", "value": "Warriors"}
    choices = await console.autocomplete("/judgement add unit:war", "unit", user=111)
    assert all(c["value"] != "Warriors" for c in choices)  # Alice's own unit is no target for her
    choices = await console.autocomplete("/riled add unit:bo", "unit", user=111)
    assert {"name": "Boyz · unlisted", "value": "Boyz"} in choices


async def test_stratagems_from_the_real_catalog(console: ConsoleSession, real_catalog: None) -> None:
    """Costs come from the seed pages: 11e Heroic Intervention 1CP + the Into the Fray +1CP section."""
    await console.send("/game start opponent:222 faction:Orks opponent_faction:Leagues of Votann edition:11e starting_cp:4")
    choices = await console.autocomplete("/strat use name:heroic interv", "name")
    assert 0 < len(choices) <= 25
    value = next(c["value"] for c in choices if c["name"].startswith("Heroic Intervention"))
    reply = (await console.send(f"/strat use name:{value} unit:Boyz extra:true"))[0]
    assert reply.ephemeral and "used in your opponent's Charge phase" in reply.text()  # WHEN, from the catalog
    for _ in range(8):  # to Bob's Charge phase
        await console.send("/game next")
    reply = (await console.send(f"/strat use name:{value} unit:Boyz extra:true"))[0]
    assert not reply.ephemeral and "for 2CP (6 → 4)" in reply.text()
    uses = export(console)["stratagems_used"]
    assert uses[0]["entry_id"] == value and uses[0]["cp"] == 2
    await console.send("/game next")
    await console.send("/game next")  # Alice's Command phase, round 2: 5CP
    reply = (await console.send("/strat use name:Insane Bravery unit:Nobz"))[0]
    assert "for 1CP (5 → 4)" in reply.text()
    await console.send("/game next")
    reply = (await console.send("/strat use name:Insane Bravery unit:Grots force:true"))[0]
    assert reply.ephemeral and "once per battle" in reply.text()


async def test_10e_insane_bravery_prefers_the_core_stratagem(console: ConsoleSession, real_catalog: None) -> None:
    await console.send("/game start opponent:222 faction:Leagues of Votann opponent_faction:Orks edition:10e starting_cp:3")
    await console.send("/strat use name:Insane Bravery unit:Warriors")
    use = export(console)["stratagems_used"][0]
    assert use["entry_id"] == "10e:stratagem:seed.core:insane-bravery"
    reply = (await console.send("/strat use name:Insane Bravery unit:Warriors force:true"))[0]
    assert reply.ephemeral and "once per battle" in reply.text()


async def test_plus_one_cp_button_respects_the_10e_limit(console: ConsoleSession, fake_catalog: FakeCatalog) -> None:
    await console.send("/game start opponent:222 faction:Leagues of Votann opponent_faction:Orks edition:10e")
    await console.send("/game status")
    await console.click(f"game:cp:{CH}", user=222)
    reply = (await console.click(f"game:cp:{CH}", user=222))[-1]
    assert reply.ephemeral and "at most 1CP" in reply.text() and "force:true" in reply.text()
    assert cps(export(console)) == (1, 2)
