"""Start-up: bad settings stop with one clear line; the token never reaches a log line."""

from __future__ import annotations

import io
import logging
import subprocess
import sys

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from bot.config import load_settings
from bot.errors import ConfigError
from bot.logging_setup import configure_logging

TOKEN = "MTIzNDU2Nzg5MDEyMzQ1Njc4.GabcDE.abcdefghijklmnopqrstuvwxyz0123456789AB"


@pytest.mark.parametrize(
    ("env", "fragment"),
    [
        ({"DISCORD_TOKEN": "not a token"}, "DISCORD_TOKEN is malformed"),
        ({"COGITATOR_LOG_LEVEL": "LOUD"}, "COGITATOR_LOG_LEVEL must be one of"),
        ({"COGITATOR_DEV_GUILD": "abc"}, "COGITATOR_DEV_GUILD must be a guild id"),
        ({"COGITATOR_SYNC": "perhaps"}, "COGITATOR_SYNC must be true or false"),
        ({"COGITATOR_DB": "/"}, "COGITATOR_DB must be a file"),
        ({"COGITATOR_SIM_WORKERS": "17"}, "COGITATOR_SIM_WORKERS must be a whole number from 0 to 16"),
        ({"COGITATOR_SIM_WORKER_MB": "128"}, "COGITATOR_SIM_WORKER_MB must be a whole number from 256 to"),
        ({"COGITATOR_POINTS_POLL": "0"}, "COGITATOR_POINTS_POLL must be a whole number from 1 to 3600 seconds"),
    ],
)
def test_bad_setting_is_one_clear_line_and_exit_2(env, fragment, tmp_path):
    base = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "COGITATOR_DATA": str(tmp_path / "d")}
    run = subprocess.run([sys.executable, "-m", "bot", "console"], input="", capture_output=True, text=True,
                         env={**base, **env}, timeout=60)
    assert run.returncode == 2
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0] and "Traceback" not in run.stderr
    with pytest.raises(ConfigError):
        load_settings({**base, **env})


@given(workers=st.text(max_size=12), worker_mb=st.text(max_size=12))
@example(workers="²", worker_mb="")  # str.isdigit() accepts it, int() does not
@example(workers="", worker_mb="٣٠٠")
@settings(max_examples=200, deadline=None)
def test_simulation_worker_settings_are_bounded_or_refused(workers: str, worker_mb: str) -> None:
    """Any value either loads within the documented bounds (0-16 workers, at least 256 MB each) or is
    refused with a ConfigError naming the setting."""
    try:
        loaded = load_settings({"COGITATOR_SIM_WORKERS": workers, "COGITATOR_SIM_WORKER_MB": worker_mb,
                                "COGITATOR_DB": "/nonexistent/x.db", "COGITATOR_DATA": "/nonexistent/d"})
    except ConfigError as error:
        assert "COGITATOR_SIM_WORKER" in str(error)
        return
    assert 0 <= loaded.sim_workers <= 16 and 256 <= loaded.sim_worker_mb <= 1 << 20
    if not workers.strip():
        assert loaded.sim_workers == 2
    if not worker_mb.strip():
        assert loaded.sim_worker_mb == 384


def test_settings_repr_hides_the_token():
    settings = load_settings({"DISCORD_TOKEN": TOKEN})
    assert settings.token == TOKEN
    assert TOKEN not in repr(settings) and TOKEN not in str(settings)


def test_token_never_appears_in_a_log_line():
    stream = io.StringIO()
    configure_logging("DEBUG", secrets=[TOKEN], stream=stream)
    log = logging.getLogger("cogitator.test")
    log.info("connecting with %s", TOKEN)
    log.warning("header Authorization: Bot " + TOKEN, extra={"auth": TOKEN})
    try:
        raise RuntimeError(f"login failed for {TOKEN}")
    except RuntimeError:
        log.exception("boom")
    # A token we were never told about is still scrubbed by its shape.
    other = "OTk5OTk5OTk5OTk5OTk5OTk5.Gxyzab.ZYXWVUTSRQPONMLKJIHGFEDCBA9876543210zz"
    log.error("leaked %s", other)
    output = stream.getvalue()
    assert TOKEN not in output and other not in output
    assert output.count("[REDACTED]") >= 5
    configure_logging("WARNING")
