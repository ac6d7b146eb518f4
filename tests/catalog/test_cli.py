"""`python -m bot lookup` (contract 2) and `python -m bot import`, as real processes."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import FIX_GDC, REPO, copy_catalog


def run(args: list[str], data_dir: Path, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, COGITATOR_DATA=str(data_dir), COGITATOR_DB=str(data_dir / "state.db"),
               COGITATOR_LOG_LEVEL="WARNING")
    env.pop("DISCORD_TOKEN", None)
    return subprocess.run([sys.executable, "-m", "bot", *args], input=stdin, capture_output=True, text=True,
                          cwd=REPO, env=env, timeout=120)


def test_lookup_json(small_dir: Path) -> None:
    proc = run(["lookup", "dev wounds", "--kind", "rule", "--edition", "11e", "--limit", "3", "--json"], small_dir)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["query"] == "dev wounds"
    assert doc["results"][0]["name"] == "Devastating Wounds"
    assert set(doc["results"][0]) == {"id", "kind", "name", "edition", "source", "score"}
    assert all(r["kind"] == "rule" and r["edition"] == "11e" for r in doc["results"])
    assert len(doc["results"]) <= 3


def test_lookup_batch_from_stdin(small_dir: Path) -> None:
    queries = ["lethal hits", "CRR", "", "🙂", "x" * 10_000, "'; DROP TABLE entries; --", "24.23"]
    proc = run(["lookup", "-", "--json", "--limit", "2"], small_dir, stdin="\n".join(queries) + "\n")
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [d["query"] for d in lines] == queries
    assert lines[0]["results"][0]["name"] == "Lethal Hits"
    assert lines[1]["results"][0]["name"] == "Command Re-roll"
    assert lines[2]["results"] == [] and lines[3]["results"] == []
    assert (lines[6]["results"][0]["name"], lines[6]["results"][0]["edition"]) == ("Lethal Hits", "11e")


@pytest.mark.parametrize("args, field", [
    (["--kind", "spell"], "kind"), (["--edition", "9e"], "edition"), (["--limit", "0"], "limit"),
    (["--limit", "many"], "limit"),
])
def test_lookup_bad_options_exit_2_with_json(small_dir: Path, args: list[str], field: str) -> None:
    proc = run(["lookup", "x", "--json", *args], small_dir)
    assert proc.returncode == 2
    assert json.loads(proc.stdout)["field"] == field


def test_import_reports_errors_and_changes_nothing(small_dir: Path, tmp_path: Path) -> None:
    data = copy_catalog(small_dir, tmp_path / "data")
    bad = tmp_path / "bad.json"
    bad.write_text('{"name": "Orks", "source": "40k-11e",\n"datasheets": [}', encoding="utf-8")
    before = _snapshot(data)
    proc = run(["import", "gdc", str(bad), "--json"], data)
    assert proc.returncode == 2
    err = json.loads(proc.stdout)
    assert err["line"] == 2 and err["file"].endswith("bad.json") and "JSON" in err["error"]
    assert _snapshot(data) == before
    ok = run(["import", "gdc", str(FIX_GDC / "votann.json")], data)
    assert ok.returncode == 0 and "gdc:leagues-of-votann" in ok.stdout
    assert _snapshot(data)[0] == before[0]  # the same file again: replaced, not duplicated


def _snapshot(data: Path) -> tuple[int, str]:
    conn = sqlite3.connect(data / "catalog.sqlite")
    try:
        count = conn.execute("SELECT COUNT(*) FROM entries").fetchone()[0]
        ids = conn.execute("SELECT group_concat(id) FROM (SELECT id FROM entries ORDER BY id)").fetchone()[0]
    finally:
        conn.close()
    return count, hashlib.sha1(ids.encode()).hexdigest()
