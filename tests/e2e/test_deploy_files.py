"""deploy/ stays in step with the code: every `python -m bot …` it runs parses, every setting is documented."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bot.__main__ import build_parser

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
REPO = DEPLOY.parent
FILES = ["cogitator.service", "cogitator@.service", "cogitator-backup.service", "Containerfile",
         "compose.postgres.yaml"]


def bot_invocations(text: str) -> list[list[str]]:
    """The argument lists after `python -m bot` in a unit or container file (shell quoting undone)."""
    calls = []
    for match in re.finditer(r"python -m bot ([^\n'&;]*)", text):
        raw = match.group(1).rstrip().removesuffix('"]')  # the end of a JSON-form CMD
        words = shlex.split(raw.replace("%i", "0").replace("$${", "${"), posix=True)
        calls.append([w for w in words if not w.startswith("$") and "SHARD_COUNT" not in w])
    return calls


@pytest.mark.parametrize("name", FILES)
def test_every_bot_command_in_deploy_files_parses(name: str) -> None:
    calls = bot_invocations((DEPLOY / name).read_text())
    assert calls, f"{name} runs no `python -m bot` command"
    for args in calls:
        if args[:1] == ["run"] and "--shard-count" in args and args[-1] == "--shard-count":
            args = [*args, "2"]  # the value comes from the environment at run time
        parsed = build_parser().parse_args(args)
        assert getattr(parsed, "func", None) is not None, args


def test_example_env_documents_every_setting() -> None:
    example = (DEPLOY / "cogitator.env.example").read_text()
    sources = (REPO / "bot" / "config.py").read_text() + (REPO / "bot" / "endpoints.py").read_text()
    names = set(re.findall(r'"((?:COGITATOR|DISCORD)_[A-Z_]+)"', sources))
    assert {"DISCORD_TOKEN", "COGITATOR_DB", "COGITATOR_DATA"} <= names
    missing = sorted(n for n in names if n not in example)
    assert missing == [], f"not in deploy/cogitator.env.example: {missing}"


def test_container_build_inputs_exist() -> None:
    containerfile = (DEPLOY / "Containerfile").read_text()
    for line in containerfile.splitlines():
        if line.startswith("COPY "):
            for source in line.split()[1:-1]:
                assert (REPO / source).exists(), source
    compose = (DEPLOY / "compose.yaml").read_text()
    assert "dockerfile: deploy/Containerfile" in compose and "context: .." in compose


def test_units_run_as_an_unprivileged_user_and_restart_on_failure() -> None:
    for name in ("cogitator.service", "cogitator@.service"):
        unit = (DEPLOY / name).read_text()
        for setting in ("User=cogitator", "Restart=on-failure", "EnvironmentFile=/etc/cogitator/cogitator.env",
                        "NoNewPrivileges=yes", "ProtectSystem=strict", "KillSignal=SIGTERM"):
            assert setting in unit, (name, setting)


def test_units_let_simulation_workers_cap_their_address_space() -> None:
    """The units deny @resources, where setrlimit/prlimit64 live; the simulation workers need them to set
    RLIMIT_AS (bot/sim/worker.py), so they are allowed again after the deny list (systemd applies the
    SystemCallFilter= lines in order)."""
    for name in ("cogitator.service", "cogitator@.service"):
        filters = [line.split("=", 1)[1].split() for line in (DEPLOY / name).read_text().splitlines()
                   if line.startswith("SystemCallFilter=")]
        denied_at = next(i for i, f in enumerate(filters) if f[0].startswith("~") and "@resources" in f)
        allowed_after = {call for f in filters[denied_at + 1:] if not f[0].startswith("~") for call in f}
        assert {"setrlimit", "prlimit64"} <= allowed_after, (name, filters)
        assert "MemoryMax=832M" in (DEPLOY / name).read_text()


def test_units_are_watched_by_systemd() -> None:
    """Type=notify with a watchdog (bot/ops/sdnotify.py sends READY=1 and WATCHDOG=1 from the event loop)."""
    for name in ("cogitator.service", "cogitator@.service"):
        unit = (DEPLOY / name).read_text()
        for setting in ("Type=notify", "NotifyAccess=main", "WatchdogSec=30s"):
            assert f"\n{setting}\n" in unit, (name, setting)


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")
def test_systemd_accepts_the_units(tmp_path: Path) -> None:
    """`systemd-analyze verify` on copies whose interpreter path exists here: no unknown key or bad value."""
    for name in ("cogitator.service", "cogitator@.service", "cogitator-backup.service", "cogitator-backup.timer"):
        text = (DEPLOY / name).read_text().replace("/opt/cogitator/app/.venv/bin/python", sys.executable)
        (tmp_path / name).write_text(text)
    units = [str(tmp_path / n) for n in ("cogitator.service", "cogitator@0.service", "cogitator-backup.timer",
                                         "cogitator-backup.service")]
    done = subprocess.run(["systemd-analyze", "verify", "--man=no", *units], capture_output=True, text=True,
                          timeout=120)
    assert done.stdout + done.stderr == "", done.stdout + done.stderr


def test_container_health_check_asks_the_ops_port() -> None:
    containerfile = (DEPLOY / "Containerfile").read_text()
    assert "ENV" in containerfile and "COGITATOR_OPS_PORT=9464" in containerfile
    health = next(line for line in containerfile.splitlines() if line.startswith("HEALTHCHECK"))
    assert "/healthz" in containerfile.split(health, 1)[1].split("\n\n", 1)[0] or "/healthz" in health
