"""One console session for the whole fuzz module, on its own event loop (hypothesis tests are synchronous)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.config import Settings
from bot.console.session import ConsoleSession
from tests.fuzz.harness import Fuzz


@pytest.fixture(scope="module")
def fuzz(tmp_path_factory: pytest.TempPathFactory, shared_data_dir: Path) -> Iterator[Fuzz]:
    workdir = tmp_path_factory.mktemp("fuzz")
    settings = Settings(token=None, db_path=workdir / "state.db", data_dir=shared_data_dir, log_level="WARNING",
                        sync_commands=False)
    # asyncio.Runner keeps one context for every run(), so the console's capture adapter (a context variable)
    # stays in place between steps, as it does inside one pytest-asyncio test.
    with asyncio.Runner() as runner:
        session = runner.run(ConsoleSession.open(settings))
        harness = Fuzz(runner, session, workdir)
        root = logging.getLogger()
        root.addHandler(harness.records)
        try:
            yield harness
        finally:
            root.removeHandler(harness.records)
            print(f"\nfuzz console lines: {harness.lines}")
            print(f"fuzz replies by kind: {dict(harness.kinds.most_common())}")
            print("fuzz outcomes: " + ", ".join(f"{name} {dict(c)}" for name, c in sorted(harness.outcomes.items())))
            runner.run(session.close())
