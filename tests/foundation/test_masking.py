"""A PostgreSQL URL's secrets never reach a terminal or a log: every form the URL can carry them in, and
every command that prints a connection error, against a real PostgreSQL server that refuses the URL."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.masking import mask_text, mask_url, url_secrets

ROOT = Path(__file__).resolve().parents[2]
SECRETS = ("S3cretUser", "S3cretQuery", "S3cretSsl", "S3cretEncoded", "S3cretOther", "S3cret%zz")


@pytest.mark.parametrize(("url", "shown"), [
    ("postgresql://bob:S3cretUser@db:5432/cog", "postgresql://bob:***@db:5432/cog"),
    ("postgresql://:S3cretUser@db/cog", "postgresql://:***@db/cog"),
    ("postgresql://bob:p@ss/w?rd@db/cog?sslmode=require", "postgresql://bob:***@db/cog?sslmode=require"),
    ("postgres://db/cog?password=S3cretQuery&passfile=/etc/pgpass", "postgres://db/cog?password=***&passfile=/etc/pgpass"),
    ("postgresql://db/cog?sslpassword=S3cretSsl&pass%77ord=S3cretEncoded", "postgresql://db/cog?sslpassword=***&pass%77ord=***"),
    ("postgresql://db/cog?PASSWORD=S3cretQuery&future_secret=S3cretOther&bare", "postgresql://db/cog?PASSWORD=***&future_secret=***&***"),
    ("postgresql://bob@db/cog?application_name=a@b", "postgresql://bob@db/cog?application_name=a@b"),
    ("postgresql://db/cog?password=S3c@ret", "postgresql://db/cog?password=***"),
    ("postgresql://db/cog?S3c@ret", "postgresql://***@ret"),
])
def test_every_form_of_secret_is_masked(url: str, shown: str) -> None:
    assert mask_url(url) == shown


def test_error_text_quoting_a_piece_of_the_url_is_scrubbed() -> None:
    url = "postgresql://bob:p%zzS3cret@db/cog?password=S3cret%21Query"
    text = f'cannot use {url}: invalid percent-encoded token: "p%zzS3cret"; password S3cret!Query'
    masked = mask_text(text, url)
    assert "S3cret" not in masked and "postgresql://bob:***@db/cog?password=***" in masked
    assert url_secrets(None) == [] and url_secrets("postgresql://db/cog?sslmode=require") == []


def _commands(tmp_path: Path, url: str) -> list[list[str]]:
    return [["console"], ["run"], ["game", "export", "--channel", "1"], ["game", "verify", "--channel", "1"],
            ["migrate"], ["migrate-store", "--from", url, "--to", f"sqlite:{tmp_path / 'to.db'}"],
            ["migrate-store", "--from", f"sqlite:{tmp_path / 'from.db'}", "--to", url]]


def test_no_command_prints_a_secret_of_a_failing_url(tmp_path: Path, pg_server) -> None:  # noqa: ANN001
    import sqlite3

    sqlite3.connect(tmp_path / "from.db").close()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COGITATOR_", "DISCORD_"))}
    env |= {"COGITATOR_DATA": str(tmp_path / "data"), "COGITATOR_DB": str(tmp_path / "state.db")}
    base = f"127.0.0.1:{pg_server.port}"
    failing = [  # reaches the server, which has no such database; and one libpq refuses before connecting
        f"postgresql://cogitator:S3cretUser@{base}/no_such_db?password=S3cretQuery&sslpassword=S3cretSsl"
        "&pass%77ord=S3cretEncoded",
        f"postgresql://cogitator:S3cret%zz@{base}/postgres?other=S3cretOther",
    ]
    for url in failing:
        for command in _commands(tmp_path, url):
            done = subprocess.run([sys.executable, "-m", "bot", *command], cwd=ROOT, input="",
                                  env=env | {"COGITATOR_DATABASE_URL": url}, capture_output=True, text=True,
                                  timeout=120)
            output = done.stdout + done.stderr
            assert done.returncode == 2, (command, output)
            assert "Traceback" not in output and "***" in output, (command, output)
            assert not [s for s in SECRETS if s in output], (command, output)
