"""League tests through the console run on both state backends (SQLite and PostgreSQL)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.config import Settings
from tests.conftest import backend_settings


@pytest.fixture
def settings(tmp_path: Path, shared_data_dir: Path, db_target: Path | str) -> Settings:
    base = Settings(token=None, db_path=tmp_path / "state.db", data_dir=shared_data_dir, log_level="WARNING",
                    sync_commands=False)
    return backend_settings(base, db_target)
