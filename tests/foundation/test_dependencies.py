"""Every runtime dependency earns its place in writing: docs/architecture.md has a row for each one
(what it does, install size, import time; issue 20), so a new one cannot arrive unexplained."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_every_runtime_dependency_has_a_row_in_the_architecture_table() -> None:
    requirements = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    names = [re.split(r"[\s<>=!~;]", r, maxsplit=1)[0] for r in requirements]
    table = (REPO / "docs" / "architecture.md").read_text().split("## Dependencies, and what each earns", 1)[1]
    rows = {line.split("|")[1].strip() for line in table.splitlines() if line.startswith("| ")}
    missing = [name for name in names if name not in rows]
    assert not missing, f"add a row to docs/architecture.md's dependency table for: {missing}"
    assert "matplotlib" not in names
