"""Points news end to end: the real bot process against the fake Discord, the points updated by the real
`python -m bot data update --source mfm` from a local HTTP server (tests/localserver.py): real sockets, real
files, a real state DB.

One update that changed points is posted once to a server's points channel; a deleted channel and a channel
without Send Messages are one logged line each, never a crash and never a retry; a restarted bot does not post
the same version again; an update that changed no points posts nothing.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.catalog.conftest import copy_catalog
from tests.e2e.botproc import REPO, BotProcess
from tests.e2e.conftest import dump_on_failure, start_bots
from tests.fakediscord import FakeDiscord
from tests.fakediscord.payloads import MANAGE_GUILD, Guild
from tests.localserver import file_app, start

MFM = REPO / "tests" / "fixtures" / "mfm"
FILES = ("meta.yaml", "leagues-of-votann.yaml", "orks.yaml")
OK, GONE, MUTE = (Guild((3000 << 22) | n, f"Points Club {n}", (3000 << 22) | (100 + n), 111) for n in (1, 2, 3))


def _publish(fake: FakeDiscord, *, orks: bytes, date: str) -> tuple[object, str]:
    """Upstream publishes a version: the MFM files served over HTTP on 127.0.0.1 (ETags, 304s) from the fake's
    event loop; returns the server (to stop) and its base URL."""
    files = {name: (MFM / name).read_bytes() for name in FILES} | {"orks.yaml": orks}
    files["meta.yaml"] = files["meta.yaml"].replace(b"2026-07-22", date.encode())
    runner, port = fake.call(start(file_app(files, "/data/")))
    return runner, f"http://127.0.0.1:{port}/data/"


def _update(fake: FakeDiscord, data: Path, *, orks: bytes, date: str) -> None:
    """`python -m bot data update --source mfm` from that upstream, as an operator or a cron job runs it."""
    runner, url = _publish(fake, orks=orks, date=date)
    env = {"COGITATOR_DATA": str(data), "COGITATOR_MFM_URL": url, "COGITATOR_DB": str(data / "cli.db"),
           "PATH": "/usr/bin:/bin", "COGITATOR_LOG_LEVEL": "WARNING"}
    done = subprocess.run([sys.executable, "-m", "bot", "data", "update", "--source", "mfm"], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    fake.call(runner.cleanup())  # type: ignore[attr-defined]
    assert done.returncode == 0, done.stdout + done.stderr


def _checked(bot: BotProcess, version: str) -> list[dict]:
    return [line for line in bot.logs() if line.get("msg") == "points news checked" and line.get("version") == version]


def _bot(fake: FakeDiscord, workdir: Path, data: Path, db: Path, name: str) -> BotProcess:
    bot = BotProcess(fake, workdir, name=name, data=data, db=db, env={"COGITATOR_POINTS_POLL": "1"})
    start_bots(fake, [bot])
    fake.wait_for_sessions([(0, 1)])
    return bot


def test_points_news_posts_once_per_version_and_survives_bad_channels(
        tmp_path: Path, e2e_data_dir: Path) -> None:
    data = copy_catalog(e2e_data_dir, tmp_path / "data")
    orks = (MFM / "orks.yaml").read_bytes()
    fake = FakeDiscord(guilds=[OK, GONE, MUTE]).start()
    bot = None
    try:
        _update(fake, data, orks=orks, date="2026-07-22")  # MFM v1.1 2026-07-22 in force before the bot starts
        db = tmp_path / "state.db"
        bot = _bot(fake, tmp_path, data, db, "bot")
        fake.wait_for_commands()
        fake.set_permissions(111, MANAGE_GUILD)
        for guild in (OK, GONE, MUTE):
            record = fake.slash("settings points_channel", {"channel": guild.channel_id}, guild_id=guild.id)
            assert "a summary is posted once in" in record.text(), dump_on_failure(bot)
        fake.deleted_channels.add(GONE.channel_id)
        fake.forbidden_channels.add(MUTE.channel_id)

        changed = orks.replace(b"points: 80", b"points: 85", 1)
        assert changed != orks
        _update(fake, data, orks=changed, date="2026-08-05")
        fake.wait_until(lambda: _checked(bot, "1.1 2026-08-05"), what="the bot's look at v1.1 2026-08-05")
        assert [c for c, _body in fake.channel_posts] == [OK.channel_id], dump_on_failure(bot)
        embed = fake.channel_posts[0][1]["embeds"][0]
        assert embed["title"] == "Points changes: MFM v1.1, 2026-07-22 → MFM v1.1, 2026-08-05"
        assert embed["description"] == "• Orks: Beastboss 1 80 → 1 85"
        assert fake.channel_posts[0][1]["allowed_mentions"]["parse"] == []
        refused = {int(line["guild_id"]): line for line in bot.logs()
                   if line.get("msg") == "points news not delivered (not retried)"}
        assert set(refused) == {GONE.id, MUTE.id}, dump_on_failure(bot)
        assert "Unknown Channel" in refused[GONE.id]["error"] and "Missing Permissions" in refused[MUTE.id]["error"]
        assert not [line for line in bot.logs() if "traceback" in line], dump_on_failure(bot)
        attempts = len([r for r in fake.requests if r.path.startswith("/channels/")])

        assert bot.terminate()[0] == 0
        bot = _bot(fake, tmp_path, data, db, "restarted")  # same state DB and data: the claims are kept
        fake.wait_until(lambda: _checked(bot, "1.1 2026-08-05"), what="the restarted bot's first look")
        assert _checked(bot, "1.1 2026-08-05")[0]["posted"] == "[]"
        assert len(fake.channel_posts) == 1, "never twice for one version, also across a restart"

        _update(fake, data, orks=changed, date="2026-08-19")  # a new version with the same points
        fake.wait_until(lambda: _checked(bot, "1.1 2026-08-19"), what="the bot's look at v1.1 2026-08-19")
        assert len(fake.channel_posts) == 1, "nothing is posted when no points changed"
        assert len([r for r in fake.requests if r.path.startswith("/channels/")]) == attempts  # no retries
        assert bot.alive()
    finally:
        if bot is not None:
            bot.stop()
        fake.stop()
