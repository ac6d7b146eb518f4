"""deploy/grafana/cogitator.json and deploy/prometheus/alerts.yml stay in step with what /metrics exposes:
every metric they name exists, every metric the bot exposes has a panel, the PromQL parses (promtool), and
the alerts fire, or not, on the series of deploy/prometheus/alerts.test.yml (promtool test rules)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families

from bot.console.session import ConsoleSession
from tests.ops.conftest import get, ops_url

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
DASHBOARD = DEPLOY / "grafana" / "cogitator.json"
ALERTS = DEPLOY / "prometheus" / "alerts.yml"
NAME = re.compile(r"\b(cogitator_[a-z_]+)")
SUFFIXES = ("_bucket", "_count", "_sum", "_total")
# Exposed by the process collector, and not worth a panel.
UNPANELLED = {"cogitator_process_virtual_memory_bytes", "cogitator_process_start_time_seconds"}


@pytest.fixture
def promtool() -> str:
    """promtool's path; skipped where it is not installed, unless COGITATOR_REQUIRE_PROMTOOL=1 (CI)."""
    found = shutil.which("promtool")
    if found is None:
        missing = "promtool is not installed (Debian: apt-get install prometheus)"
        if os.environ.get("COGITATOR_REQUIRE_PROMTOOL") == "1":
            pytest.fail(missing)
        pytest.skip(missing)
    return found


def panel_exprs() -> list[str]:
    dashboard = json.loads(DASHBOARD.read_text())
    panels = dashboard["panels"]
    ids = [p["id"] for p in panels]
    assert len(ids) == len(set(ids)), "panel ids are unique"
    return [t["expr"] for p in panels for t in p.get("targets", [])]


async def exposed(console: ConsoleSession, http: aiohttp.ClientSession) -> set[str]:
    await console.send("/help")
    _, text = await get(http, ops_url(console, "/metrics"))
    names = set()
    for family in text_string_to_metric_families(text):
        names.add(family.name)
        names.update(sample.name for sample in family.samples)
    return names


async def test_every_named_metric_exists_and_every_metric_has_a_panel(ops_console: ConsoleSession,
                                                                     http: aiohttp.ClientSession) -> None:
    names = await exposed(ops_console, http)
    exprs = panel_exprs()
    used = {name for expr in exprs for name in NAME.findall(expr)}
    alerting = set(NAME.findall(ALERTS.read_text()))
    # Series that appear once something happened (a worker death, a page) are declared at 0 from the start.
    assert used <= names, f"panels name metrics /metrics does not expose: {sorted(used - names)}"
    assert alerting <= names, f"alerts name metrics /metrics does not expose: {sorted(alerting - names)}"

    def family(name: str) -> str:
        for suffix in SUFFIXES:
            if name.endswith(suffix):
                return name[: -len(suffix)]
        return name
    panelled = {family(name) for name in used}
    missing = {family(name) for name in names if name.startswith("cogitator_")} - panelled - UNPANELLED
    assert not missing, f"metrics without a panel: {sorted(missing)}"


def test_panel_queries_parse(tmp_path: Path, promtool: str) -> None:
    """Each panel's PromQL, with Grafana's variables filled in, as a recording rule that promtool checks."""
    rules = ["groups:", "  - name: panels", "    rules:"]
    for i, expr in enumerate(panel_exprs()):
        filled = expr.replace("$__rate_interval", "5m").replace("$instance", ".*")
        rules += [f"      - record: panel_{i}", f"        expr: {json.dumps(filled)}"]
    (tmp_path / "panels.yml").write_text("\n".join(rules) + "\n")
    done = subprocess.run([promtool, "check", "rules", str(tmp_path / "panels.yml")], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr


def test_alert_rules_check_and_their_unit_tests_pass(promtool: str) -> None:
    for args in (["check", "rules", "alerts.yml"], ["test", "rules", "alerts.test.yml"]):
        done = subprocess.run([promtool, *args], cwd=ALERTS.parent, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
