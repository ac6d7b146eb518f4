"""The real bot process against the fake Discord: sync, round trips, deferrals, buttons, resume, 429s.

One bot process serves the whole module (starting one costs about a second). Tests that disturb the
connection (resume, invalid session, rate limits) check that the *next* interaction is still answered.
"""

from __future__ import annotations

import asyncio
import io
import time
from pathlib import Path
from typing import Any

import pytest

from bot.config import Settings
from bot.console.session import ConsoleSession
from tests.e2e.botproc import BotProcess
from tests.e2e.conftest import dump_on_failure, export_game
from tests.fakediscord import FakeDiscord
from tests.fakediscord.payloads import EPHEMERAL, LOADING, is_png

Single = tuple[FakeDiscord, BotProcess]
CALLBACK_PATH = r"^/interactions/\d+/[^/]+/callback$"
FOLLOWUP_PATH = r"^/webhooks/\d+/[^/]+$"


def _strip_server_fields(command: dict[str, Any]) -> dict[str, Any]:
    """What the bot sent, without what Discord adds (ids, versions) or defaults it fills in."""
    dropped = {"id", "application_id", "version", "guild_id"}
    return {k: v for k, v in command.items() if k not in dropped}


def _local_tree_payload(tmp_path: Path) -> list[dict[str, Any]]:
    """The commands a freshly built bot has, in Discord's JSON, from the cogs on disk."""
    async def build() -> list[dict[str, Any]]:
        settings = Settings(token=None, db_path=tmp_path / "tree.db", data_dir=tmp_path / "tree-data",
                            log_level="WARNING", sync_commands=False)
        session = await ConsoleSession.open(settings)
        try:
            return [c.to_dict(session.tree) for c in session.tree.get_commands()]
        finally:
            await session.close()
    return asyncio.run(build())


def _no_pings(body: dict[str, Any]) -> bool:
    mentions = body.get("allowed_mentions")
    return mentions is not None and mentions.get("parse") == [] and not mentions.get("users") and not mentions.get("roles")


def test_command_sync_publishes_every_command_with_its_options(single: Single, tmp_path: Path) -> None:
    fake, bot = single
    assert len(fake.command_puts) == 1, "one bulk overwrite at start-up"
    put = fake.command_puts[0]
    assert put.path == f"/applications/{fake.application_id}/commands" and put.status == 200
    assert put.authorization == f"Bot {fake.token}"
    assert fake.guild_commands == {}, "no COGITATOR_DEV_GUILD: commands are global"
    expected = {c["name"]: c for c in _local_tree_payload(tmp_path)}
    published = {c["name"]: _strip_server_fields(c) for c in put.body}
    assert set(published) == set(expected), dump_on_failure(bot)
    assert {"help", "about"} <= set(published)
    for name, command in expected.items():
        assert published[name]["options"] == command.get("options", []), name
        assert published[name]["description"] == command["description"]
    # What GET returns (what a client shows) is what was published, every option included.
    for stored in fake.global_commands:
        assert stored["options"] == expected[stored["name"]].get("options", [])


def test_help_round_trips_and_lists_every_published_command(single: Single) -> None:
    fake, bot = single
    record = fake.slash("help")
    cb = record.callback
    assert cb is not None and cb.type == 4, dump_on_failure(bot)
    assert cb.data["flags"] & EPHEMERAL
    assert _no_pings(cb.data)
    embed = cb.data["embeds"][0]
    assert embed["title"] == "Cogitator commands"
    listed = record.text()

    def leaves(prefix: str, options: list[dict[str, Any]]) -> list[str]:
        subs = [o for o in options if o["type"] in (1, 2)]
        if not subs:
            return [prefix]
        return [leaf for o in subs for leaf in leaves(f"{prefix} {o['name']}", o.get("options") or [])]

    for command in fake.global_commands:
        for path in leaves(command["name"], command.get("options") or []):
            assert f"`/{path}`" in listed, path
    assert record.latency is not None and record.latency < 3.0


def test_about_is_public(single: Single) -> None:
    fake, _ = single
    record = fake.slash("about")
    assert record.callback is not None and record.callback.type == 4
    assert not record.callback.data.get("flags", 0) & EPHEMERAL
    assert "About Cogitator" in record.text()


def test_sim_defers_then_follows_up_with_a_png(single: Single) -> None:
    fake, bot = single
    if "sim" not in {c["name"] for c in fake.global_commands}:
        pytest.fail("/sim is not published")
    record = fake.slash("sim custom", {"attacker": 'A=D6+2 BS=3 S=14 AP=-3 D=D6+2 kw="BLAST 2"',
                                       "target": "T=5 Sv=4 W=4 inv=4 models=3"}, followups=1, timeout=60)
    assert record.callback is not None and record.callback.type == 5, dump_on_failure(bot)
    [followup] = record.followups
    assert followup["_files"] == ["sim.png"]
    png = record.files["sim.png"]
    assert is_png(png)
    from PIL import Image

    image = Image.open(io.BytesIO(png))
    assert image.format == "PNG" and image.width >= 400
    embed = followup["embeds"][0]
    assert embed["image"]["url"] == "attachment://sim.png"
    assert "Expected kills" in record.text()
    assert _no_pings(followup)
    # The first follow-up replaced the deferred "thinking…" message: nothing is left loading.
    original = fake.message(record.original_message_id or 0)
    assert not original["flags"] & LOADING and original["attachments"][0]["filename"] == "sim.png"


def test_sim_bad_profile_is_an_ephemeral_error(single: Single) -> None:
    fake, _ = single
    record = fake.slash("sim custom", {"attacker": "A=banana", "target": "T=5 Sv=4 W=4"}, timeout=60)
    bodies = record.messages()
    assert bodies and all(b.get("flags", 0) & EPHEMERAL for b in bodies), bodies
    assert "Traceback" not in record.text()


def test_game_sequence_round_trips_with_buttons(single: Single) -> None:
    fake, bot = single
    guild = fake.guilds[fake.default_guild_id]
    channel = guild.channel_id
    start = fake.slash("game start", {"opponent": 222, "faction": "Orks", "opponent_faction": "Necrons",
                                      "edition": "11e"})
    assert start.callback is not None and start.callback.type == 4, dump_on_failure(bot)
    assert "Orks" in start.text() and "Necrons" in start.text()
    gain = fake.slash("cp gain", {"amount": 1})
    assert "1CP" in gain.text() or "CP" in gain.text()
    status = fake.slash("game status")
    message = fake.message(status.original_message_id or 0)
    ids = {c["custom_id"] for row in message["components"] for c in row["components"]}
    assert f"game:next:{channel}" in ids
    # Bob presses "next phase" on the board: the message is updated in place (callback type 7).
    click = fake.click(message, f"game:next:{channel}", user_id=222)
    assert click.callback is not None and click.callback.type == 7, click.callback
    assert "Movement" in click.text()
    # Someone who is not playing is refused, ephemerally, and the game does not move.
    stranger = fake.click(fake.message(message["id"]), f"game:next:{channel}", user_id=333)
    assert stranger.callback is not None and stranger.callback.data.get("flags", 0) & EPHEMERAL
    exported = export_game(bot.db, bot.data, channel)  # a second process reading the live WAL database
    assert exported["phase"] == "movement"
    assert [p["user_id"] for p in exported["players"]] == [111, 222]
    undo = fake.slash("game undo", user_id=222)
    assert undo.callback is not None and undo.callback.type == 4
    assert export_game(bot.db, bot.data, channel)["phase"] == "command"
    end = fake.slash("game end", {"abandon": True})
    assert end.callback is not None and not end.callback.data.get("flags", 0) & EPHEMERAL, end.text()


def test_game_autocomplete_round_trips(single: Single) -> None:
    fake, _ = single
    fake.slash("game start", {"opponent": 222, "faction": "Orks", "opponent_faction": "Necrons", "edition": "11e"},
               channel_id=None)
    command, _ = fake.find_command("riled", fake.default_guild_id)
    sub = next(o for o in command["options"] if o["type"] == 1)
    focused = next((o for o in sub.get("options") or [] if o.get("autocomplete")), None)
    if focused is None:
        pytest.skip("/riled has no autocomplete option")
    empty, record = fake.autocomplete(f"riled {sub['name']}", {}, focused["name"])  # nothing typed yet
    assert record.callback is not None and record.callback.type == 8 and len(empty) <= 25
    choices, record = fake.autocomplete(f"riled {sub['name']}", {focused["name"]: "boy"}, focused["name"])
    assert record.callback is not None and record.callback.type == 8
    assert 1 <= len(choices) <= 25 and any("boy" in c["name"].lower() for c in choices), choices
    fake.slash("game end", {"abandon": True})


def test_gateway_drop_then_resume_and_replay(single: Single) -> None:
    fake, bot = single
    identifies = len(fake.identifies)
    session = fake.drop((0, 1), mode="abort")
    # Sent while the bot is away: Discord keeps it in the session and replays it on RESUME.
    missed = fake.send_interaction(fake.interaction_payload(
        2, fake.build_command_data("about", {}, guild_id=fake.default_guild_id),
        user_id=111, guild_id=fake.default_guild_id))
    fake.wait_answered(missed, timeout=20)
    assert fake.resumes and fake.resumes[-1]["session_id"] == session.id
    assert fake.resumes[-1]["path"] == "/gateway-resume", "resumes at READY's resume_gateway_url"
    assert session.resumes == 1 and session.conn is not None
    assert len(fake.identifies) == identifies, "resumed, not re-identified"
    after = fake.slash("help")
    assert after.callback is not None and after.callback.type == 4, dump_on_failure(bot)


def test_gateway_close_4000_then_resume(single: Single) -> None:
    fake, _ = single
    session = fake.drop((0, 1), mode="close")
    fake.wait_until(lambda: session.conn is not None, 20, "a resume after close code 4000")
    record = fake.slash("about")
    assert record.callback is not None and record.callback.type == 4


def test_reconnect_request_is_followed_by_a_resume(single: Single) -> None:
    fake, _ = single
    live = fake.session_for_guild(fake.default_guild_id)
    before = live.resumes
    session = fake.request_reconnect((0, 1))
    assert session is live
    fake.wait_until(lambda: session.resumes > before and session.conn is not None, 20, "a resume after op 7 RECONNECT")
    record = fake.slash("about")
    assert record.callback is not None and record.session_id == session.id


def test_invalid_session_makes_the_bot_identify_again(single: Single) -> None:
    fake, bot = single
    identifies = len(fake.identifies)
    old = fake.invalidate((0, 1))
    fake.wait_until(lambda: len(fake.identifies) > identifies and any(
        s.conn is not None and not s.invalidated for s in fake.sessions.values()), 30, "a fresh IDENTIFY")
    assert fake.identifies[-1]["shard"] == [0, 1]
    record = fake.slash("help")
    assert record.callback is not None and record.callback.type == 4, dump_on_failure(bot)
    assert record.session_id != old.id


def test_callback_429_is_retried_after_retry_after(single: Single) -> None:
    fake, bot = single
    fake.rate_limit("POST", CALLBACK_PATH, count=1, retry_after=0.4)
    record = fake.slash("about")
    statuses = [a.status for a in record.attempts]
    assert statuses == [429, 200], statuses
    gap = record.attempts[1].at - record.attempts[0].at
    assert gap >= 0.4 - 0.01, f"retried after {gap:.3f} s, before retry_after"
    assert len(record.callbacks) == 1
    assert any("rate limited" in str(line.get("msg", "")).lower() for line in bot.logs())


def test_followup_429_is_retried_once_delivered_once(single: Single) -> None:
    fake, bot = single
    fake.rate_limit("POST", FOLLOWUP_PATH, count=2, retry_after=0.2)
    started = time.monotonic()
    record = fake.slash("sim custom", {"attacker": "A=10 BS=3 S=4 AP=0 D=1", "target": "T=4 Sv=4 W=1 models=10"},
                        followups=1, timeout=60)
    assert len(record.followups) == 1 and "sim.png" in record.files, dump_on_failure(bot)
    posts = [r for r in fake.requests if r.method == "POST" and record.token in r.path and "/webhooks/" in r.path]
    assert [p.status for p in posts] == [429, 429, 200]
    assert time.monotonic() - started >= 0.4


def test_rule_autocomplete_then_lookup_round_trips(single: Single) -> None:
    fake, bot = single
    choices, typing = fake.autocomplete("rule", {"query": "leth"}, "query")
    assert typing.callback is not None and typing.callback.type == 8, dump_on_failure(bot)
    assert 1 <= len(choices) <= 25
    lethal = next(c for c in choices if c["name"].startswith("Lethal Hits"))
    # The user picks the suggestion: the client sends the choice's value as the option.
    record = fake.slash("rule", {"query": lethal["value"]})
    assert record.callback is not None and record.callback.type == 4, dump_on_failure(bot)
    embed = record.callback.data["embeds"][0]
    assert "Lethal Hits" in embed["title"]
    assert "wound" in record.text().lower()
    assert _no_pings(record.callback.data)
    assert typing.latency is not None and record.latency is not None


def test_rule_picker_is_only_for_the_asker(single: Single) -> None:
    fake, bot = single
    ask = fake.slash("rule", {"query": "leth"})
    message = fake.message(ask.original_message_id or 0)
    [select] = [c for row in message["components"] for c in row["components"] if c["type"] == 3]
    assert select["custom_id"] == "rules:pick:111"
    value = select["options"][0]["value"]
    other = fake.click(message, select["custom_id"], values=[value], user_id=222)
    assert other.callback is not None and other.callback.type == 4
    assert other.callback.data.get("flags", 0) & EPHEMERAL, "someone else's choice is refused privately"
    chosen = fake.click(fake.message(message["id"]), select["custom_id"], values=[value], user_id=111)
    assert chosen.callback is not None and chosen.callback.type == 7, dump_on_failure(bot)
    assert fake.message(message["id"])["embeds"][0]["title"] != "Did you mean…"


def test_datasheet_and_stratagem_round_trip(single: Single) -> None:
    fake, _ = single
    sheet = fake.slash("datasheet", {"name": "stompa"})
    assert sheet.callback is not None and "Stompa" in sheet.callback.data["embeds"][0]["title"]
    choices, _ = fake.autocomplete("stratagem", {"name": "command re"}, "name")
    assert choices and len(choices) <= 25
    strat = fake.slash("stratagem", {"name": choices[0]["value"]})
    assert strat.callback is not None and strat.callback.type == 4 and "CP" in strat.text()


def test_settings_needs_manage_server_in_the_client_and_in_the_bot(single: Single) -> None:
    fake, bot = single
    from tests.fakediscord import FakeDiscordError
    from tests.fakediscord.payloads import MANAGE_GUILD

    with pytest.raises(FakeDiscordError, match="hides /settings"):
        fake.slash("settings edition", {"edition": "10e"}, user_id=333)
    with pytest.raises(FakeDiscordError, match="only available in servers"):
        fake.slash("game status", guild_id=0)
    # A stale client that still shows the command: the bot's own check refuses, privately.
    fake.set_permissions(444, MANAGE_GUILD)
    data = fake.build_command_data("settings edition", {"edition": "10e"}, guild_id=fake.default_guild_id, user_id=444)
    sneaky = fake.send_interaction(fake.interaction_payload(2, data, user_id=333, guild_id=fake.default_guild_id))
    fake.wait_answered(sneaky)
    assert sneaky.callback is not None and sneaky.callback.data.get("flags", 0) & EPHEMERAL
    assert "Manage Server" in sneaky.text() or "permission" in sneaky.text().lower()
    allowed = fake.slash("settings edition", {"edition": "10e"}, user_id=444)
    assert allowed.callback is not None and "10" in allowed.text(), dump_on_failure(bot)
    fake.slash("settings edition", {"edition": "11e"}, user_id=444)  # put it back for later tests


def test_zz_nothing_the_bot_sent_was_rejected_or_could_ping(single: Single) -> None:
    """Runs last in this module: a sweep over everything the bot sent during the tests above."""
    fake, bot = single
    rejected = [(r.method, r.path, r.status, r.body) for r in fake.requests if r.status >= 400 and r.status != 429]
    assert rejected == [], "Discord would have rejected these requests"
    bodies = 0
    for record in fake.interactions.values():
        for body in record.messages():
            if body.get("content") or body.get("embeds"):
                bodies += 1
                assert _no_pings(body), (record.payload["data"], body.get("allowed_mentions"))
    assert bodies >= 10
    errors = [(line.get("command"), line.get("msg"), str(line.get("traceback_text") or line.get("traceback"))[-1500:])
              for line in bot.logs() if line.get("level") in ("error", "critical")]
    assert errors == [], "\n".join(map(str, errors))
    # The token was in the bot's environment and in every REST call it made; it is in none of its log lines.
    log = bot.log_path.read_text(errors="replace")
    assert log.strip() and fake.token not in log
    assert fake.token.split(".")[-1] not in log  # not even the secret part


def test_army_lists_are_refused_or_read_in_the_list_worker(single: Single) -> None:
    """Issue 19: the audit's 4.8 MB list, uploaded as a file and downloaded by the bot, is refused at once
    by its line count; a real list is then read (in the list worker) and stored. No traceback anywhere."""
    from tests.fuzz import hostile_lists

    fake, bot = single
    channel = fake.guilds[fake.default_guild_id].channel_id + 77
    fake.slash("game start", {"opponent": 222, "edition": "11e", "faction": "Leagues of Votann",
                              "opponent_faction": "Orks"}, channel_id=channel)
    name, flood = hostile_lists.boyz_flood()
    record = fake.slash("army import", {"file": (name, flood)}, channel_id=channel, timeout=60)
    assert "more than 3,000 lines; the limit is 3,000" in record.text(), dump_on_failure(bot)
    assert record.messages()[-1].get("flags", 0) & EPHEMERAL
    real = hostile_lists.fixture("votann_gw_app.txt")
    record = fake.slash("army import", {"file": ("list.txt", real)}, channel_id=channel, timeout=60)
    assert "imports a Leagues of Votann army: 9 units" in record.text(), dump_on_failure(bot)
    assert "Traceback" not in bot.log_path.read_text(errors="replace")
