"""Shared fixtures: settings pointing at temporary files, and the console that drives the real tree."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from hypothesis import settings as hypothesis_settings

from bot.config import Settings
from bot.console import ConsoleSession

# Locally, property tests explore new random inputs on every run. CI runs a fixed (derandomised) set so a
# submission lands or fails on its own merits; anything exploration finds locally becomes a fixed test.
hypothesis_settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    hypothesis_settings.load_profile("ci")


@pytest.fixture(scope="session")
def shared_data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One catalog build per test session: building it is the slow part, and tests only read it."""
    return tmp_path_factory.mktemp("data")


@pytest.fixture
def settings(tmp_path: Path, shared_data_dir: Path) -> Settings:
    return Settings(token=None, db_path=tmp_path / "state.db", data_dir=shared_data_dir, log_level="WARNING",
                    sync_commands=False)


@pytest.fixture
async def console(settings: Settings) -> AsyncIterator[ConsoleSession]:
    session = await ConsoleSession.open(settings)
    try:
        yield session
    finally:
        await session.close()
