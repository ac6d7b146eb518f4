"""/points unit, /points changes, `points changes` on the command line, /settings points_channel, and the
points news posted once per server and version (two stores = two processes, a restart, a race of processes;
SQLite and PostgreSQL)."""

from __future__ import annotations

import dataclasses
import json
import multiprocessing
import os
import shutil
import subprocess
import sys
from pathlib import Path

import discord
import pytest

from bot.config import Settings
from bot.console.session import ConsoleSession
from bot.discord_glue.points_news import announce, current_key
from bot.guild_settings import GuildSettings
from bot.points import book

from .conftest import MFM, REPO, with_points


def _second_version(data_dir: Path, tmp: Path) -> None:
    """Import an update of the fixture: Boyz dearer, a new date."""
    source = tmp / "mfm-next"
    shutil.copytree(MFM, source)
    orks = (source / "orks.yaml").read_text(encoding="utf-8")
    boyz = orks.index("- name: Boyz")
    orks = orks[:boyz] + orks[boyz:].replace("points: 75", "points: 80", 1)
    (source / "orks.yaml").write_text(orks, encoding="utf-8")
    meta = (source / "meta.yaml").read_text(encoding="utf-8").replace("2026-07-22", "2026-08-05")
    (source / "meta.yaml").write_text(meta, encoding="utf-8")
    assert book.import_folder(source, data_dir)[1]


@pytest.fixture
def two_versions(tmp_path: Path) -> Path:
    data = with_points(tmp_path / "data")
    _second_version(data, tmp_path)
    return data


async def test_points_unit_in_one_line(points_console: ConsoleSession) -> None:
    (reply,) = await points_console.send("/points unit unit:boyz models:15")
    assert not reply.ephemeral and "\n" not in reply.text()
    assert reply.text().startswith("Boyz (Orks) × 15 models: 160 pts (priced as 20)")
    assert reply.text().endswith("— MFM v1.1, 2026-07-22")
    (typo,) = await points_console.send("/points unit unit:Hearthkin Warriors")
    assert typo.text().startswith("Hearthkyn Warriors (Leagues of Votann): 10 models 100")
    (missing,) = await points_console.send("/points unit unit:Space Marine Captain")
    assert missing.ephemeral and "No unit called 'Space Marine Captain' in MFM v1.1, 2026-07-22" in missing.text()
    choices = await points_console.autocomplete("/points unit unit:hearth", "unit")
    assert choices[0]["value"] in ("Hearthkyn Warriors", "Einhyr Hearthguard")
    (one,) = await points_console.send("/points changes")
    assert one.ephemeral and "Only one points version is imported (MFM v1.1, 2026-07-22)" in one.text()


async def test_points_changes_in_discord_and_on_the_command_line(settings: Settings, two_versions: Path) -> None:
    session = await ConsoleSession.open(dataclasses.replace(settings, data_dir=two_versions))
    try:
        (reply,) = await session.send("/points changes")
        text = reply.text()
        assert "Points changes: MFM v1.1, 2026-07-22 → MFM v1.1, 2026-08-05" in text
        assert "Orks: Boyz" in text and "→" in text and "Votann" not in text
        (none,) = await session.send("/points changes faction:Leagues of Votann")
        assert "No points changed." in none.text()
    finally:
        await session.close()
    env = {**os.environ, "COGITATOR_DATA": str(two_versions)}
    run = subprocess.run([sys.executable, "-m", "bot", "points", "changes", "--since", "2026-07-22", "--json"],
                         cwd=REPO, env=env, capture_output=True, timeout=120, check=False)
    assert run.returncode == 0, run.stderr
    (step,) = json.loads(run.stdout)["steps"]
    assert step["from"] == "MFM v1.1, 2026-07-22" and [c["name"] for c in step["changes"]] == ["Boyz"]
    bad = subprocess.run([sys.executable, "-m", "bot", "points", "changes", "--since", "0.9"], cwd=REPO, env=env,
                         capture_output=True, timeout=120, check=False)
    assert bad.returncode == 2 and "no imported version '0.9'" in bad.stdout.decode()


async def test_news_is_posted_once_per_server_and_version(db_target, two_versions: Path) -> None:
    sent: list[tuple[int, str]] = []

    async def send(channel: int, embed: discord.Embed) -> None:
        sent.append((channel, embed.title or ""))

    first, second = GuildSettings(db_target), GuildSettings(db_target)  # two shard processes' stores
    try:
        first.set_points_channel(501, 9001)
        first.set_points_channel(502, 9002)
        first.set_points_channel(503, 9003)
        assert await announce(first, two_versions, [501, 502], send) == [501, 502]
        assert await announce(second, two_versions, [501, 502, 503], send) == [503]
        assert await announce(second, two_versions, None, send) == []
    finally:
        first.close()
        second.close()
    restarted = GuildSettings(db_target)
    try:
        assert await announce(restarted, two_versions, None, send) == []
    finally:
        restarted.close()
    assert sorted(c for c, _t in sent) == [9001, 9002, 9003]
    assert all(t == "Points changes: MFM v1.1, 2026-07-22 → MFM v1.1, 2026-08-05" for _c, t in sent)
    assert current_key(two_versions) == "1.1 2026-08-05"


async def test_no_news_without_a_change_and_a_failed_send_is_not_retried(tmp_path: Path) -> None:
    store = GuildSettings(tmp_path / "state.db")
    calls = []

    async def broken(channel: int, embed: discord.Embed) -> None:
        calls.append(channel)
        raise discord.HTTPException(type("R", (), {"status": 403, "reason": "Forbidden"})(), "missing access")

    try:
        store.set_points_channel(501, 9001)
        data = with_points(tmp_path / "data")
        assert await announce(store, data, None, broken) == []  # one version: nothing to announce
        _second_version(data, tmp_path)
        assert await announce(store, data, None, broken) == [] and calls == [9001]
        assert await announce(store, data, None, broken) == [] and calls == [9001]
    finally:
        store.close()


def _claim(target: str, barrier) -> bool:  # noqa: ANN001 - a multiprocessing barrier
    store = GuildSettings(target)
    try:
        barrier.wait(60)
        return store.claim_points_post(501, "1.1 2026-08-05")
    finally:
        store.close()


def test_processes_racing_for_one_post_claim_it_once(db_target) -> None:
    GuildSettings(db_target).close()  # the schema exists before the race, as in a running bot
    ctx = multiprocessing.get_context("spawn")
    with ctx.Manager() as manager:
        barrier = manager.Barrier(6)
        with ctx.Pool(6) as pool:
            won = pool.starmap(_claim, [(str(db_target), barrier)] * 6)
    assert sorted(won) == [False] * 5 + [True]


async def test_settings_points_channel(points_console: ConsoleSession) -> None:
    (refused,) = await points_console.send("/settings points_channel channel:1001")
    assert refused.kind == "client" and "permission" in refused.content
    points_console.set_permissions(111, "manage_guild")
    (done,) = await points_console.send("/settings points_channel channel:1001")
    assert "posted once in <#1001>" in done.text()
    settings = points_console.bot.services.guild_settings
    assert settings.points_channels() == {501: 1001}
    assert not settings.claim_points_post(501, current_key(points_console.bot.services.settings.data_dir))
    (off,) = await points_console.send("/settings points_channel")
    assert "no longer posted" in off.text() and settings.points_channels() == {}


def test_datasheet_points_field(points_dir: Path, tmp_path: Path) -> None:
    from bot.render.points import datasheet_points_field

    name, value = datasheet_points_field(points_dir, "Brôkhyr Thunderkyn", "Leagues of Votann")
    assert name == "Points · MFM v1.1, 2026-07-22"
    assert value.splitlines() == ["Your 1st To 2nd Units Cost — 3 models: 80, 6 models: 160",
                                  "Your 3rd + Unit Costs — 3 models: 90, 6 models: 170",
                                  "Requisition threshold: from the 3rd unit, the dearer cost"]
    assert datasheet_points_field(points_dir, "Squiggoth", "Orks") is None  # not in the MFM: no field
    assert datasheet_points_field(tmp_path, "Boyz", "Orks") is None  # no MFM imported


async def test_tenth_edition_points_name_their_source(console: ConsoleSession) -> None:
    (reply,) = await console.send("/points unit unit:Grimnyr models:2 edition:10e")
    assert reply.text() == ("Grimnyr (Leagues of Votann) × 2 models: 65 pts (priced as 3) — "
                            "Seed page: Leagues of Votann – Grimnyr (10th edition)")
    (missing,) = await console.send("/points unit unit:Zzyzx edition:10e")
    assert missing.ephemeral and "No 10e datasheet called 'Zzyzx' with points" in missing.text()
