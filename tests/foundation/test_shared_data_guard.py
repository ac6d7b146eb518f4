"""The guard behind CI's fresh-clone run: a test that reads the shared datasets must carry the mark."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.shared_data import MARK, SharedReadGuard


def test_a_read_under_the_root_is_recorded_until_the_test_is_marked(
        tmp_path: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "shared"
    (root / "datasets").mkdir(parents=True)
    (root / "datasets" / "a.csv").write_text("x")
    (tmp_path / "elsewhere.txt").write_text("y")
    (tmp_path / "elsewhere").mkdir()
    guard = SharedReadGuard(root)
    sys.addaudithook(guard.audit)   # inert once `current` is None again; hooks cannot be removed
    try:
        guard.current = request.node
        (tmp_path / "elsewhere.txt").read_text()
        assert guard.unmarked() == []
        (root / "datasets" / "a.csv").read_text()
        assert guard.unmarked() == [request.node.nodeid]
        monkeypatch.chdir(tmp_path / "elsewhere")   # a relative path into the root counts as well
        guard.readers.clear()
        Path("../shared/datasets/a.csv").read_text()
        assert guard.unmarked() == [request.node.nodeid]
        request.node.add_marker(MARK)
        list((root / "datasets").iterdir())
        assert guard.unmarked() == []
    finally:
        guard.current = None
