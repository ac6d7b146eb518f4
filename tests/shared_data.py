"""Where the complete shared datasets are, and the guard that keeps CI's fresh-clone run honest.

The complete datasets (`../shared` or `COGITATOR_SHARED`) exist on the team's machines and in CI, never in a
user's clone. Tests that read them carry the `shared_data` mark: explicitly, or automatically when they use a
fixture built from them (`full_dir`, `full_catalog`). A test without the mark cannot behave differently when
the datasets are absent, so CI's second run (a fresh clone, nothing beside it) runs only the marked tests,
which must then skip with a reason or pass on the repository's own fixtures.

The mark is not trusted on faith: while the datasets are present, an audit hook records every test that
opens, lists or connects to anything under them, and the session fails when one of those tests is unmarked.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("COGITATOR_SHARED", REPO.parent / "shared"))
HAVE_SHARED = (SHARED / "datasets" / "wahapedia-10e").is_dir() and (SHARED / "datasets" / "gdc-11e").is_dir()
NO_SHARED = (f"complete shared datasets not found at {SHARED}/datasets (a fresh clone has none; "
             "set COGITATOR_SHARED to run the full-data tests)")
MARK = "shared_data"
FIXTURES_FROM_SHARED = frozenset({"full_dir", "full_catalog"})
_AUDITED_EVENTS = frozenset({"open", "os.listdir", "os.scandir", "sqlite3.connect"})


def need_shared() -> None:
    """Skip the calling test (or fixture) when the complete shared datasets are absent."""
    if not HAVE_SHARED:
        pytest.skip(NO_SHARED)


class SharedReadGuard:
    """Records which test reads under SHARED; `unmarked()` lists those that lack the `shared_data` mark."""

    def __init__(self, root: Path) -> None:
        self.prefixes = tuple({str(root) + os.sep, str(root.resolve()) + os.sep})
        self.current: pytest.Item | None = None
        self.readers: dict[str, bool] = {}   # nodeid -> marked

    def audit(self, event: str, args: tuple) -> None:
        if self.current is None or event not in _AUDITED_EVENTS or not args:
            return
        path = args[0]
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if isinstance(path, os.PathLike):
            path = os.fspath(path)
        if isinstance(path, str) and os.path.abspath(path).startswith(self.prefixes):  # '../shared/…' too
            item = self.current
            self.readers[item.nodeid] = item.get_closest_marker(MARK) is not None

    def unmarked(self) -> list[str]:
        return sorted(nodeid for nodeid, marked in self.readers.items() if not marked)


def install_guard() -> SharedReadGuard | None:
    """An audit hook for this process (audit hooks cannot be removed, so install it once per session)."""
    if not SHARED.exists():
        return None
    guard = SharedReadGuard(SHARED)
    sys.addaudithook(guard.audit)
    return guard
