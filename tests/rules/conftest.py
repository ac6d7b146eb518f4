"""A console over a catalog with imports (seeds + wh40kdc + the small Wahapedia and gdc fixtures), for
cross-source UX tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.config import Settings
from bot.console.session import ConsoleSession
from tests.catalog.conftest import base_dir, small_dir  # noqa: F401 - shared session fixtures


@pytest.fixture
async def imports_console(small_dir: Path, tmp_path: Path) -> AsyncIterator[ConsoleSession]:  # noqa: F811
    settings = Settings(token=None, db_path=tmp_path / "state.db", data_dir=small_dir, log_level="WARNING",
                        sync_commands=False)
    async with ConsoleSession.opened(settings) as session:
        yield session
