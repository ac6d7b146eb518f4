"""Per-server aliases (/alias add, remove, list) through the real command tree, on SQLite and PostgreSQL:
used by /rule, /datasheet, /sim and autocomplete, said in the answer, bounded and refused when hostile."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.catalog.guild_aliases import MAX_ALIASES, GuildAliases
from bot.catalog.service import Catalog, open_catalog
from bot.config import Settings
from bot.console.session import ConsoleSession
from bot.errors import UserError
from tests.conftest import backend_settings


def only(replies: list) -> object:
    assert len(replies) == 1, [r.to_json() for r in replies]
    return replies[0]


@pytest.fixture
async def admin(settings: Settings, db_target: Path | str) -> AsyncIterator[ConsoleSession]:
    """A console whose user has Manage Server, on each state backend in turn."""
    session = await ConsoleSession.open(backend_settings(settings, db_target))
    session.set_permissions(session.user_id, "manage_guild")
    try:
        yield session
    finally:
        await session.close()


async def test_an_alias_answers_every_lookup_and_says_so(admin: ConsoleSession) -> None:
    saved = only(await admin.send("/alias add term:Da Boss target:ghazghkull thraka"))
    assert not saved.ephemeral and "**Da Boss** stands for **Ghazghkull Thraka**" in saved.embeds[0]["description"]
    answer = only(await admin.send("/rule query:da boss")).embeds[0]
    assert answer["title"] == "Ghazghkull Thraka"
    assert answer["description"].startswith("*Server alias:* **Da Boss** → Ghazghkull Thraka")
    assert only(await admin.send("/datasheet name:DA BOSS")).embeds[0]["title"] == "Ghazghkull Thraka"
    choices = await admin.autocomplete("/datasheet name:da boss", "name")
    assert choices and choices[0]["name"].startswith("Ghazghkull Thraka")
    sim = (await admin.send("/sim unit attacker:da boss target:stompa"))[-1]
    assert sim.kind == "followup" and "Ghazghkull Thraka" in sim.embeds[0]["title"]
    listed = only(await admin.send("/alias list"))
    assert listed.ephemeral and "**Da Boss** → Ghazghkull Thraka" in listed.embeds[0]["description"]
    await admin.restart()  # kept in the state database
    assert only(await admin.send("/rule query:da boss")).embeds[0]["title"] == "Ghazghkull Thraka"
    admin.guild_id += 1  # another server does not have it
    assert only(await admin.send("/rule query:da boss")).embeds[0]["title"] != "Ghazghkull Thraka"
    admin.guild_id -= 1
    removed = only(await admin.send("/alias remove term:da boss"))
    assert "no longer stands for" in removed.embeds[0]["description"]
    assert only(await admin.send("/rule query:da boss")).embeds[0]["title"] != "Ghazghkull Thraka"
    again = only(await admin.send("/alias remove term:da boss"))
    assert again.ephemeral and "no such alias" in again.text()


async def test_strat_use_reads_the_servers_alias(admin: ConsoleSession) -> None:
    only(await admin.send("/alias add term:reroll pls target:Command Re-roll"))
    only(await admin.send("/game start opponent:222 edition:11e faction:Orks opponent_faction:Orks"))
    used = (await admin.send("/strat use name:reroll pls cost:1"))[0]
    assert not used.ephemeral and "Command Re-roll" in used.text()


async def test_adding_and_removing_need_manage_server(console: ConsoleSession) -> None:
    refused = only(await console.send("/alias add term:da boss target:ghazghkull thraka"))
    assert refused.ephemeral and "Manage Guild permission" in refused.text()
    assert only(await console.send("/alias remove term:da boss")).ephemeral
    listed = only(await console.send("/alias list"))  # anyone may read the list
    assert "No aliases yet" in listed.embeds[0]["description"]


@pytest.mark.parametrize(("line", "why"), [
    ("term:zork target:qqqzzzxxv", "names no entry"),
    ("term:stompa target:ghazghkull thraka", "already the name of an entry"),
    ("term:lethal hit target:sustained hits", "already the name of an entry"),
    ("term:24.33 target:sustained hits", "rule number"),
    ("term:<@123> target:stompa", "mention"),
    ("term:@everyone target:stompa", "mention"),
    ("term:**big** target:stompa", "can't contain `*`"),
    ("term:big_one target:stompa", "can't contain"),
    ("term:`x` target:stompa", "can't contain"),
    ("term:see https://x.y target:stompa", "link"),
    ("term:" + "x" * 41 + " target:stompa", "at most 40"),
    ("term:zork target:<@&5>", "mention"),
    ("term:🙂 target:stompa", "can't contain"),
    ("term:zork target:zork", "itself"),
])
async def test_hostile_or_pointless_aliases_are_refused(admin: ConsoleSession, line: str, why: str) -> None:
    reply = only(await admin.send(f"/alias add {line}"))
    assert reply.ephemeral and why in reply.text(), reply.text()
    assert "No aliases yet" in only(await admin.send("/alias list")).embeds[0]["description"]


async def test_aliases_never_chain_so_never_loop(admin: ConsoleSession) -> None:
    only(await admin.send("/alias add term:da boss target:ghazghkull thraka"))
    chain = only(await admin.send("/alias add term:warboss zog target:da boss"))
    assert chain.ephemeral and "itself an alias" in chain.text()
    # b -> a after a -> b: "da boss" is an alias, so it can't be a target; and a real name can't become a term
    loop = only(await admin.send("/alias add term:ghazghkull thraka target:da boss"))
    assert loop.ephemeral and ("already the name" in loop.text() or "itself an alias" in loop.text())
    repointed = only(await admin.send("/alias add term:da boss target:stompa"))
    assert "now stands for **Stompa**" in repointed.embeds[0]["description"]


async def test_the_count_is_bounded(admin: ConsoleSession) -> None:
    services = admin.bot.services  # type: ignore[attr-defined]
    store, catalog = services.guild_aliases, services.catalog
    for i in range(MAX_ALIASES):
        store.add(admin.guild_id, f"zork {i}", "stompa", catalog)
    full = only(await admin.send("/alias add term:one more target:stompa"))
    assert full.ephemeral and f"{MAX_ALIASES} aliases" in full.text()
    repoint = only(await admin.send("/alias add term:zork 7 target:ghazghkull thraka"))  # repointing is fine
    assert not repoint.ephemeral
    listed = only(await admin.send("/alias list")).embeds[0]
    assert listed["title"] == f"Server aliases ({MAX_ALIASES}/{MAX_ALIASES})" and len(listed["description"]) <= 4096


_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)) | st.sampled_from("*_`~|><@#:/\ud800 "),
                max_size=60)


@pytest.fixture(scope="module")
def catalog(shared_data_dir: Path) -> Iterator[Catalog]:
    opened = open_catalog(Settings(token=None, db_path=shared_data_dir / "unused.db", data_dir=shared_data_dir,
                                   log_level="WARNING", sync_commands=False))
    yield opened
    opened.close()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(term=_TEXT, target=st.sampled_from(["stompa", "ghazghkull thraka", "", "lethal hits", "qqzzx"]))
def test_any_text_is_saved_clean_or_refused_clearly(catalog: Catalog, tmp_path_factory: pytest.TempPathFactory,
                                                     term: str, target: str) -> None:
    store = GuildAliases(tmp_path_factory.mktemp("aliases") / "state.db")
    try:
        try:
            alias, _ = store.add(1, term, target, catalog)
        except UserError as refusal:
            assert str(refusal) and "\n" not in str(refusal)
            assert store.listed(1) == []
            return
        assert not re.search(r"[*_`~|><@#:/\\]", alias.term) and len(alias.term) <= 40
        assert store.find(1, term) == alias and store.find(2, term) is None
    finally:
        store.close()
