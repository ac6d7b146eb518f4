"""The state database is checked before the bot serves anyone (issue 9, Build 4): every fault is one
clear line on stderr and exit 2 naming the path and the cause, for `run` and `console` alike; the
game CLI and `restore` refuse the same faults without a traceback. Real files, real SQLite, real
processes; the full disk is a real tiny tmpfs where this machine lets us mount one."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot import db
from bot.games.store import GameStore
from tests.e2e.botproc import REPO

NOBODY = 65534


def bot(args: list[str], db_path: Path | str, tmp: Path, *, user: int | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COGITATOR_", "DISCORD_"))}
    env |= {"COGITATOR_DB": str(db_path), "COGITATOR_DATA": str(tmp / "data"), "COGITATOR_SYNC": "false",
            "HOME": str(tmp)}
    return subprocess.run([sys.executable, "-m", "bot", *args], cwd=REPO, env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=120, user=user)


def assert_refused(p: subprocess.CompletedProcess[str], path: Path | str, *words: str) -> None:
    assert p.returncode == 2, (p.returncode, p.stderr[-2000:])
    assert "Traceback" not in p.stderr + p.stdout
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith(f"cogitator: the state database {path} cannot be used: "), lines[0]
    for word in words:
        assert word in lines[0], lines[0]


def make_game_db(path: Path) -> None:
    """A real state database with one game in it (the stores' own migrations and writes)."""
    store = GameStore(path)
    store.start(7, 1, user_id=1, user_name="a", opponent_id=2, opponent_name="b", edition="10e",
                faction="Orks", opponent_faction="Necrons")
    store.close()
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.close()


@pytest.mark.parametrize("command", [["run"], ["console"]])
def test_an_impossible_path_is_refused(tmp_path: Path, command: list[str]) -> None:
    assert_refused(bot(command, "/proc/x/y.db", tmp_path), "/proc/x/y.db", "folder")


@pytest.mark.parametrize(("content", "words"), [
    (b"garbage " * 1000, "not a SQLite database"),
    ("truncated", "corrupt"),
])
def test_garbage_and_truncated_files_are_refused(tmp_path: Path, content: bytes | str, words: str) -> None:
    path = tmp_path / "state.db"
    if content == "truncated":
        make_game_db(path)
        for i in range(300):  # enough pages that a cut file loses some the schema points to
            with contextlib.closing(sqlite3.connect(path)) as conn:
                conn.execute(f"CREATE TABLE pad{i} (x)")
                conn.execute(f"INSERT INTO pad{i} VALUES (randomblob(2000))")
                conn.commit()
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2])
    else:
        path.write_bytes(content)
    before = path.read_bytes()
    assert_refused(bot(["console"], path, tmp_path), path, words)
    assert path.read_bytes() == before  # nothing was written over the evidence


def test_a_database_from_a_newer_version_is_refused_naming_both_versions(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    make_game_db(path)
    known = len(db.state_schemas()["games"])
    with contextlib.closing(sqlite3.connect(path)) as conn:
        conn.execute("INSERT INTO schema_migrations VALUES ('games', ?)", (known + 3,))
        conn.commit()
    p = bot(["run"], path, tmp_path)
    assert_refused(p, path, "newer version", f"version {known + 3}", f"up to {known}")
    restore = bot(["restore", str(path), "--yes"], tmp_path / "live.db", tmp_path)
    assert restore.returncode == 2 and "Traceback" not in restore.stderr
    err = json.loads(restore.stdout.strip().splitlines()[-1])
    assert "newer version" in err["error"] and f"version {known + 3}" in err["error"]
    assert not (tmp_path / "live.db").exists()


@contextlib.contextmanager
def world_dir(mode: int) -> Iterator[Path]:
    """A folder an unprivileged user can reach (pytest's tmp_path is private to root)."""
    path = Path(tempfile.mkdtemp(prefix="cogitator-ro-"))
    path.chmod(0o777)
    try:
        yield path
    finally:
        path.chmod(0o777)
        for child in path.iterdir():
            child.chmod(0o666)
            child.unlink()
        path.rmdir()


def _unprivileged() -> int | None:
    """Root ignores file permissions: run the bot as `nobody` then, as a service would run. `nobody` must
    be able to reach the interpreter and the checkout (a clone inside a 0700 `mktemp -d` is not)."""
    if os.geteuid() != 0:
        return None
    for target in (Path(sys.executable), REPO):
        for folder in Path(target).resolve().parents:
            if not folder.stat().st_mode & 0o001:
                pytest.skip(f"running as root, and `nobody` cannot enter {folder} to run the bot")
    return NOBODY


@pytest.mark.parametrize("what", ["file", "folder"])
def test_read_only_file_or_folder_is_refused(tmp_path: Path, what: str) -> None:
    with world_dir(0o777) as folder:
        path = folder / "state.db"
        make_game_db(path)
        path.chmod(0o444 if what == "file" else 0o666)
        if what == "folder":
            folder.chmod(0o555)
        home = Path(tempfile.mkdtemp(prefix="cogitator-home-"))
        home.chmod(0o777)
        try:
            p = bot(["console"], path, home, user=_unprivileged())
        finally:
            subprocess.run(["rm", "-rf", str(home)], check=False)
        assert_refused(p, path)
        assert any(w in p.stderr for w in ("read-only", "permission", "cannot be opened")), p.stderr


def test_a_full_disk_is_refused_at_start_up(tiny_disk: Path, tmp_path: Path) -> None:
    path = tiny_disk / "state.db"
    make_game_db(path)
    with contextlib.suppress(OSError), open(tiny_disk / "filler", "wb") as fh:
        while True:
            fh.write(b"\0" * 4096)
            fh.flush()
    assert_refused(bot(["console"], path, tmp_path), path, "the disk is full")


@pytest.mark.parametrize("sub", ["export", "verify"])
@pytest.mark.parametrize("fault", ["garbage", "newer"])
def test_game_export_and_verify_exit_2_with_a_message(tmp_path: Path, sub: str, fault: str) -> None:
    path = tmp_path / "state.db"
    if fault == "garbage":
        path.write_bytes(b"\x00garbage" * 500)
    else:
        make_game_db(path)
        with contextlib.closing(sqlite3.connect(path)) as conn:
            conn.execute("INSERT INTO schema_migrations VALUES ('games', 99)")
            conn.commit()
    p = bot(["game", sub, "--channel", "7"], path, tmp_path)
    assert p.returncode == 2 and "Traceback" not in p.stderr + p.stdout, p.stderr
    err = json.loads(p.stdout.strip().splitlines()[-1])
    assert str(path) in err["error"]
    assert ("not a SQLite database" if fault == "garbage" else "newer version") in err["error"]


def test_a_good_database_starts(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    make_game_db(path)
    p = bot(["console", "--json"], path, tmp_path)
    assert p.returncode == 0, p.stderr


@pytest.mark.parametrize("command", [["run"], ["console"]])
def test_an_empty_file_is_refused_unless_init(tmp_path: Path, command: list[str]) -> None:
    path = tmp_path / "state.db"
    path.write_bytes(b"")
    assert_refused(bot(command, path, tmp_path), path, "empty (0 bytes)", "--init", "restore")
    assert path.stat().st_size == 0, "the evidence is left as it was"
    p = bot([*command, "--init"], path, tmp_path)
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    with contextlib.closing(sqlite3.connect(path)) as conn:
        assert conn.execute("SELECT COUNT(*) FROM games").fetchone() == (0,)
    assert bot(command, path, tmp_path).returncode == 0, "a database made by --init is used as it is"


def _start_on(path: str, barrier) -> str:  # noqa: ANN001 - a multiprocessing Barrier
    """One process's start-up check, released together with the others' (a worker of the test below)."""
    from bot.storage.check import StorageError, check_state_database

    barrier.wait()
    try:
        check_state_database(Path(path))
    except StorageError as error:
        return str(error)
    return "ok"


def test_processes_starting_together_on_a_new_path_all_start(tmp_path: Path) -> None:
    """The shards' race that failed CI once: several processes create the same new database at the same
    moment; none may see another's half-made (empty) file and refuse it."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    processes = 6
    with context.Manager() as manager, context.Pool(processes) as pool:
        for round_ in range(8):
            barrier = manager.Barrier(processes)
            path = tmp_path / f"round{round_}" / "state.db"
            results = pool.starmap(_start_on, [(str(path), barrier)] * processes)
            assert results == ["ok"] * processes, results
            # (-wal and -shm may stay: SQLite removes them only when a last closer gets the lock alone)
            assert [p.name for p in path.parent.iterdir() if ".partial-" in p.name] == [], "no partial file is left"
