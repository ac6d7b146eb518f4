"""A data folder with the points in force: the MFM fixture kept as a version and the Chapter Approved
fixture where `data update --source gdc` puts it (no network, no catalog build)."""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.config import Settings
from bot.console.session import ConsoleSession
from bot.points import book, sizes
from tests.catalog.conftest import small_catalog, small_dir  # noqa: F401 - the session's small catalog, read only

REPO = Path(__file__).resolve().parents[2]
MFM = REPO / "tests" / "fixtures" / "mfm"
SIZES = REPO / "tests" / "fixtures" / "chapter-approved" / "chapter_approved_2026_2027.json"
ARMIES = REPO / "tests" / "fixtures" / "armies"


def with_points(data_dir: Path) -> Path:
    book.import_folder(MFM, data_dir)
    target = data_dir / sizes.FILE
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(SIZES, target)
    return data_dir


@pytest.fixture(scope="session")
def points_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return with_points(tmp_path_factory.mktemp("points-data"))


@pytest.fixture
async def points_console(settings: Settings, points_dir: Path) -> AsyncIterator[ConsoleSession]:
    session = await ConsoleSession.open(dataclasses.replace(settings, data_dir=points_dir))
    try:
        yield session
    finally:
        await session.close()
