""""Not what I asked" under lookup answers and menus (through the real command tree), the misses store on
SQLite and PostgreSQL (no user id, one per answer, 90 days) and `python -m bot lookup misses`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from bot.catalog.misses import RETENTION_DAYS, LookupMisses
from bot.console.session import ConsoleSession

ROOT = Path(__file__).resolve().parents[2]


def only(replies: list) -> object:
    assert len(replies) == 1, [r.to_json() for r in replies]
    return replies[0]


def miss_button(reply) -> dict:  # noqa: ANN001 - a console Reply
    return next(c for c in reply.components if c.get("label") == "Not what I asked")


def lookup_misses(console: ConsoleSession, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COGITATOR_", "DISCORD_"))}
    env.update(COGITATOR_DB=str(console.settings.db_path), COGITATOR_DATA=str(console.settings.data_dir))
    return subprocess.run([sys.executable, "-m", "bot", "lookup", "misses", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


async def test_a_press_records_the_query_and_what_was_shown_once_per_answer(console: ConsoleSession) -> None:
    answer = only(await console.send("/rule query:lethal hits"))
    button = miss_button(answer)
    assert button["custom_id"] == "rules:miss:lethal hits"
    thanks = only(await console.click(button["custom_id"]))
    assert thanks.ephemeral and "noted" in thanks.text() and "/alias add" in thanks.text()
    only(await console.click(button["custom_id"], user=222))  # another player: still one miss for this answer
    await console.restart()  # the button carries its query
    menu = only(await console.send("/stratagem name:command re-roll edition:10e"))
    assert menu.embeds[0]["title"] == "Did you mean…"
    only(await console.click(miss_button(menu)["custom_id"]))
    console.guild_id = 5
    only(await console.click(miss_button(only(await console.send("/rule query:lethal hits")))["custom_id"]))
    listed = lookup_misses(console, "--json")
    assert listed.returncode == 0, listed.stderr
    rows = {m["query"]: m for m in json.loads(listed.stdout)["misses"]}
    assert rows["lethal hits"]["misses"] == 2 and "Lethal Hits" in rows["lethal hits"]["shown"]
    menu_row = rows["command re-roll"]
    assert menu_row["shown"].startswith("Did you mean…: Command Re-roll")
    mine = json.loads(lookup_misses(console, "--guild", "5", "--since", "7d", "--json").stdout)["misses"]
    assert [(m["query"], m["misses"]) for m in mine] == [("lethal hits", 1)]
    text = lookup_misses(console)
    assert text.returncode == 0 and text.stdout.splitlines()[0].split()[0] == "2"
    bad = lookup_misses(console, "--since", "soon")
    assert bad.returncode == 2 and "--since must be a period" in bad.stderr and "Traceback" not in bad.stderr


async def test_turning_a_page_or_choosing_in_the_menu_keeps_the_button(console: ConsoleSession) -> None:
    answer = only(await console.send("/rule query:leader edition:10e"))
    nxt = next(c for c in answer.components if c["label"] == "Next ▶")
    turned = only(await console.click(nxt["custom_id"]))
    assert miss_button(turned)["custom_id"] == "rules:miss:leader"
    menu = only(await console.send("/stratagem name:command re-roll edition:10e"))
    select = menu.components[0]
    chosen = only(await console.click(select["custom_id"], values=[select["options"][0]["value"]]))
    assert miss_button(chosen)["custom_id"] == "rules:miss:command re-roll"


def test_misses_keep_no_user_and_last_ninety_days(db_target: Path | str) -> None:
    clock = [1_000_000.0]
    store = LookupMisses(db_target, now=lambda: clock[0])
    try:
        assert store.record(1, 7, "morty\x1b\x07", "Mortarion")
        with store._storage.read() as conn:  # no control character reaches the operator's terminal
            assert conn.execute("SELECT query FROM lookup_misses").fetchone()[0] == "morty"
        assert not store.record(1, 7, "morty", "Mortarion")  # the same answer again
        store.record(2, 7, "MORTY", "Mortarion")
        clock[0] += (RETENTION_DAYS - 1) * 86400
        store.record(3, None, "big guns", "Big Guns Never Tire")
        found = store.most_missed()
        assert [(m.query, m.misses) for m in found] == [("MORTY", 2), ("big guns", 1)]
        assert [m.query for m in store.most_missed(since_seconds=86400)] == ["big guns"]
        clock[0] += 2 * 86400  # the first two are now older than 90 days: gone from the database
        assert [m.query for m in store.most_missed()] == ["big guns"]
        with store._storage.read() as conn:
            assert conn.execute("SELECT COUNT(*) FROM lookup_misses").fetchone()[0] == 1
            columns = [r[1] for r in conn.execute("PRAGMA table_info(lookup_misses)")] if isinstance(
                db_target, Path) else []
        assert not any("user" in c for c in columns)
    finally:
        store.close()
