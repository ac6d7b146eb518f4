"""Shared fixtures: settings pointing at temporary files, and the console that drives the real tree."""

from __future__ import annotations

import dataclasses
import itertools
import os
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import settings as hypothesis_settings

from bot.config import Settings
from bot.console.session import ConsoleSession
from tests.pgserver import PostgresServer, start_or_skip
from tests.shared_data import FIXTURES_FROM_SHARED, MARK, SharedReadGuard, install_guard

# Locally, property tests explore new random inputs on every run. CI runs a fixed (derandomised) set so a
# submission lands or fails on its own merits; anything exploration finds locally becomes a fixed test.
hypothesis_settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    hypothesis_settings.load_profile("ci")


_guard: SharedReadGuard | None = None


def pytest_configure(config: pytest.Config) -> None:
    global _guard
    config.addinivalue_line("markers", f"{MARK}: reads the complete shared datasets (see tests/shared_data.py)")
    if _guard is None:
        _guard = install_guard()


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the tests built on the full datasets before `-m` selects (CI's fresh clone runs `-m shared_data`)."""
    for item in items:
        if FIXTURES_FROM_SHARED.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(MARK)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    if _guard is not None:
        _guard.current = item
    try:
        yield
    finally:
        if _guard is not None:
            _guard.current = None


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Fail the run when a test read the shared datasets without the mark: CI's fresh clone would skip it."""
    unmarked = _guard.unmarked() if _guard is not None else []
    if unmarked:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        lines = [f"{len(unmarked)} test(s) read the shared datasets without @pytest.mark.{MARK}:", *unmarked]
        if reporter is not None:
            reporter.write_line("\n".join(lines), red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PostgresServer]:
    """A real PostgreSQL server for the session (started on first use; skipped where none is installed)."""
    server = start_or_skip()
    yield server
    server.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def db_target(request: pytest.FixtureRequest, tmp_path: Path) -> Path | str:
    """The state database of one test, on each backend in turn: an SQLite file, or a fresh PostgreSQL schema.

    Store and tracker tests take this instead of a file path, so every one of them runs on both backends.
    """
    if request.param == "sqlite":
        return tmp_path / "state.db"
    return request.getfixturevalue("pg_server").new_schema_url()


@pytest.fixture(params=["sqlite", "postgresql"])
def new_db_target(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], Path | str]:
    """Makes a fresh, empty state database per call, on each backend in turn: for property tests, whose
    Hypothesis examples run in one test function and so must not share `db_target`'s one database."""
    if request.param == "sqlite":
        count = itertools.count()
        return lambda: tmp_path / f"state-{next(count)}.db"
    return request.getfixturevalue("pg_server").new_schema_url


def backend_settings(base: Settings, db_target: Path | str) -> Settings:
    """`base` with its state database replaced by `db_target` (either backend)."""
    if isinstance(db_target, str):
        return dataclasses.replace(base, database_url=db_target)
    return dataclasses.replace(base, db_path=db_target, database_url=None)


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
    async with ConsoleSession.opened(settings) as session:
        yield session
