"""A real PostgreSQL server for the test session: `initdb` + `pg_ctl` from Debian's packages, on loopback.

No mocks of the database: the store and tracker tests run against this server as well as SQLite.
Each test gets its own schema (`search_path` in the URL), so tests stay isolated without the cost of
creating a database each. Where the server binaries are missing the PostgreSQL cases are skipped, unless
COGITATOR_REQUIRE_POSTGRES=1 (CI), where that is a failure.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path
from urllib.parse import quote

import pytest

SUPERUSER = "cogitator"


def _bindir() -> Path | None:
    explicit = os.environ.get("COGITATOR_PG_BINDIR")
    candidates = [explicit] if explicit else []
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)
    if shutil.which("initdb"):
        candidates.append(str(Path(shutil.which("initdb")).resolve().parent))  # type: ignore[arg-type]
    for folder in candidates:
        if folder and (Path(folder) / "initdb").exists() and (Path(folder) / "pg_ctl").exists():
            return Path(folder)
    return None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class PostgresServer:
    """One throwaway cluster: started in a temp folder, trust auth on 127.0.0.1 only, removed at stop."""

    def __init__(self, bindir: Path) -> None:
        self.bindir = bindir
        self.root = Path(tempfile.mkdtemp(prefix="cogitator-pg-"))
        self.data = self.root / "data"
        self.port = _free_port()
        self._as: list[str] = []
        if os.geteuid() == 0:  # initdb refuses to run as root: run the server as the postgres (or nobody) user
            user = "postgres" if _user_exists("postgres") else "nobody"
            self._as = ["runuser", "-u", user, "--"]
            shutil.chown(self.root, user=user)
            os.chmod(self.root, 0o700)

    def _run(self, *args: str) -> None:
        done = subprocess.run([*self._as, *args], capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(args[:2])} failed: {done.stdout}{done.stderr}")

    def start(self) -> PostgresServer:
        self._run(str(self.bindir / "initdb"), "-D", str(self.data), "-U", SUPERUSER, "-A", "trust",
                  "--no-sync", "-E", "UTF8", "--locale=C")
        self.resume()
        return self

    def resume(self) -> None:
        """Start the server (again, after `pause`) on the same port and data."""
        options = (f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.root} -c fsync=off "
                   "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200")
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-o", options, "-l", str(self.root / "log"),
                  "-w", "-t", "60", "start")

    def pause(self) -> None:
        """Stop the server, keeping its data (an outage: `resume` brings it back)."""
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")

    def url(self, database: str = "postgres", *, schema: str | None = None) -> str:
        base = f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{database}"
        return base + (f"?options={quote(f'-csearch_path={schema}')}" if schema else "")

    def new_schema_url(self) -> str:
        """A fresh, empty schema for one test."""
        import psycopg

        schema = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {schema}")
        return self.url(schema=schema)

    def stop(self) -> None:
        subprocess.run([*self._as, str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop"],
                       capture_output=True, timeout=60)
        shutil.rmtree(self.root, ignore_errors=True)


def _user_exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def start_or_skip() -> PostgresServer:
    missing = None
    try:
        import psycopg  # noqa: F401
    except ImportError:
        missing = "psycopg is not installed"
    bindir = _bindir()
    if missing is None and bindir is None:
        missing = "PostgreSQL server binaries (initdb, pg_ctl) are not installed (apt-get install postgresql)"
    if missing:
        if os.environ.get("COGITATOR_REQUIRE_POSTGRES") == "1":
            pytest.fail(f"PostgreSQL tests are required here: {missing}")
        pytest.skip(missing)
    server = PostgresServer(bindir)  # type: ignore[arg-type]
    deadline = time.monotonic() + 5
    while True:
        try:
            return server.start()
        except RuntimeError:
            if time.monotonic() > deadline:
                raise
            server.port = _free_port()  # the port was taken between probing and starting
