"""Catalog fixtures, built once per session:

- `small_dir` / `small_catalog`: seeds + wh40kdc + the small exports in `tests/fixtures/` (written by us in the
  real Wahapedia and game-datacards formats, quirks included). Always available: a fresh clone has them.
- `full_dir` / `full_catalog`: seeds + wh40kdc + the complete shared datasets. Only where `COGITATOR_SHARED`
  or `../shared` exists (CI, the team's machines); elsewhere every test using them is skipped, and the
  pytest summary gives the reason.
"""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.catalog.service import Catalog, open_catalog
from bot.config import Settings
from tests.shared_data import HAVE_SHARED, NO_SHARED, REPO, SHARED, need_shared  # noqa: F401 - re-exported

WAHAPEDIA = SHARED / "datasets" / "wahapedia-10e"
GDC = SHARED / "datasets" / "gdc-11e"
SEEDS = REPO / "data" / "seeds"
FIXTURES = REPO / "tests" / "fixtures"
FIX_WAHAPEDIA = FIXTURES / "wahapedia-10e"
FIX_GDC = FIXTURES / "gdc-11e-small"  # the catalog fixtures; tests/fixtures/gdc-11e holds the errata tests' own


def settings_for(folder: Path) -> Settings:
    return Settings(token=None, db_path=folder / "state.db", data_dir=folder, log_level="WARNING",
                    sync_commands=False)


def _built_once(tmp_path_factory: pytest.TempPathFactory, name: str, sources: tuple[Path, Path] | None) -> Path:
    """Build into a fixed folder of this session's temp dir, once, even when the fixture is requested
    from two conftest files (tests/catalog and tests/rules); a marker file says the build finished."""
    folder = tmp_path_factory.getbasetemp() / name
    done = folder / ".built"
    if done.exists():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    catalog = open_catalog(settings_for(folder))
    try:
        if sources:
            catalog.import_dataset("wahapedia", sources[0])
            catalog.import_dataset("gdc", sources[1])
    finally:
        catalog.close()
    done.touch()
    return folder


@pytest.fixture(scope="session")
def full_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data dir whose catalog.sqlite holds everything; tests must not write to it."""
    need_shared()
    return _built_once(tmp_path_factory, "catalog-full", (WAHAPEDIA, GDC))


@pytest.fixture(scope="session")
def full_catalog(full_dir: Path) -> Iterator[Catalog]:
    catalog = open_catalog(settings_for(full_dir))
    yield catalog
    catalog.close()


@pytest.fixture(scope="session")
def base_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Seeds + wh40kdc only, built once; tests copy it before writing."""
    return _built_once(tmp_path_factory, "catalog-base", None)


@pytest.fixture(scope="session")
def small_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Seeds + wh40kdc + the repository's small Wahapedia and gdc fixtures; tests must not write to it."""
    return _built_once(tmp_path_factory, "catalog-small", (FIX_WAHAPEDIA, FIX_GDC))


@pytest.fixture(scope="session")
def small_catalog(small_dir: Path) -> Iterator[Catalog]:
    catalog = open_catalog(settings_for(small_dir))
    yield catalog
    catalog.close()


def copy_catalog(source_dir: Path, target_dir: Path) -> Path:
    """The catalog file and its kept imports (without them the copy would be out of step and rebuild)."""
    target_dir.mkdir(parents=True, exist_ok=True)
    if (source_dir / "imports").is_dir():
        shutil.copytree(source_dir / "imports", target_dir / "imports")
    src = sqlite3.connect(source_dir / "catalog.sqlite")
    dst = sqlite3.connect(target_dir / "catalog.sqlite")
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()
    return target_dir


def copy_fixture(source: Path, target: Path) -> Path:
    """A writable copy of one of the fixture folders (for tests that break files on purpose)."""
    shutil.copytree(source, target)
    for f in target.iterdir():
        f.chmod(0o644)
    return target


@pytest.fixture
def writable_catalog(base_dir: Path, tmp_path: Path) -> Iterator[Catalog]:
    """A private copy of the base catalog, for import tests that write."""
    catalog = open_catalog(settings_for(copy_catalog(base_dir, tmp_path / "data")))
    yield catalog
    catalog.close()
