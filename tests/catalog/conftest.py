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


@pytest.fixture(scope="session")
def full_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data dir whose catalog.sqlite holds everything; tests must not write to it."""
    folder = tmp_path_factory.mktemp("catalog-full")
    catalog = open_catalog(settings_for(folder))
    try:
        catalog.import_dataset("wahapedia", WAHAPEDIA)
        catalog.import_dataset("gdc", GDC)
    finally:
        catalog.close()
    return folder


@pytest.fixture(scope="session")
def full_catalog(full_dir: Path) -> Iterator[Catalog]:
    catalog = open_catalog(settings_for(full_dir))
    yield catalog
    catalog.close()


@pytest.fixture(scope="session")
def base_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Seeds + wh40kdc only, built once; tests copy it before writing."""
    folder = tmp_path_factory.mktemp("catalog-base")
    open_catalog(settings_for(folder)).close()
    return folder


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


@pytest.fixture
def writable_catalog(base_dir: Path, tmp_path: Path) -> Iterator[Catalog]:
    """A private copy of the base catalog, for import tests that write."""
    catalog = open_catalog(settings_for(copy_catalog(base_dir, tmp_path / "data")))
    yield catalog
    catalog.close()
