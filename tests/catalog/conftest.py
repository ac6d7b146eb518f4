"""Catalog fixtures: one fully loaded catalog (seeds + wh40kdc + both shared datasets) per session."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.catalog.service import Catalog, open_catalog
from bot.config import Settings

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("COGITATOR_SHARED", REPO.parent / "shared"))
WAHAPEDIA = SHARED / "datasets" / "wahapedia-10e"
GDC = SHARED / "datasets" / "gdc-11e"
SEEDS = REPO / "data" / "seeds"


def settings_for(folder: Path) -> Settings:
    return Settings(token=None, db_path=folder / "state.db", data_dir=folder, log_level="WARNING",
                    sync_commands=False)


def _built_once(tmp_path_factory: pytest.TempPathFactory, name: str, full: bool) -> Path:
    """Build into a fixed folder of this session's temp dir, once, even when the fixture is requested
    from two conftest files (tests/catalog and tests/rules); a marker file says the build finished."""
    folder = tmp_path_factory.getbasetemp() / name
    done = folder / ".built"
    if done.exists():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    catalog = open_catalog(settings_for(folder))
    try:
        if full:
            catalog.import_dataset("wahapedia", WAHAPEDIA)
            catalog.import_dataset("gdc", GDC)
    finally:
        catalog.close()
    done.touch()
    return folder


@pytest.fixture(scope="session")
def full_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data dir whose catalog.sqlite holds everything; tests must not write to it."""
    return _built_once(tmp_path_factory, "catalog-full", full=True)


@pytest.fixture(scope="session")
def full_catalog(full_dir: Path) -> Iterator[Catalog]:
    catalog = open_catalog(settings_for(full_dir))
    yield catalog
    catalog.close()


@pytest.fixture(scope="session")
def base_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Seeds + wh40kdc only, built once; tests copy it before writing."""
    return _built_once(tmp_path_factory, "catalog-base", full=False)


def copy_catalog(source_dir: Path, target_dir: Path) -> Path:
    target_dir.mkdir(parents=True, exist_ok=True)
    src = sqlite3.connect(source_dir / "catalog.sqlite")
    dst = sqlite3.connect(target_dir / "catalog.sqlite")
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()
    return target_dir


def small_wahapedia(target: Path, rows: int = 150) -> Path:
    """The real export cut to its first `rows` data lines per file: same dialect (BOM, CRLF, trailing '|'),
    a fraction of the parse time, for tests that import it several times."""
    target.mkdir(parents=True, exist_ok=True)
    for src in WAHAPEDIA.glob("*.csv"):
        lines = src.read_bytes().split(b"\r\n")
        (target / src.name).write_bytes(b"\r\n".join(lines[: rows + 1]) + b"\r\n")
    return target


@pytest.fixture
def writable_catalog(base_dir: Path, tmp_path: Path) -> Iterator[Catalog]:
    """A private copy of the base catalog, for import tests that write."""
    catalog = open_catalog(settings_for(copy_catalog(base_dir, tmp_path / "data")))
    yield catalog
    catalog.close()
