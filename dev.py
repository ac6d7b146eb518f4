"""`python3 dev.py run|test|lint|bench`: the Makefile's targets for a machine with Python and nothing else.

Creates ./.venv on first use (or when pyproject.toml / constraints.txt change), installs the project with
its dev tools at the pinned versions, then runs the task inside it.
"""

from __future__ import annotations

import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if sys.platform == "win32" else "bin")
PY = BIN / "python"
STAMP = VENV / ".installed-stamp"
INPUTS = (ROOT / "pyproject.toml", ROOT / "constraints.txt")

TASKS = {
    "run": [str(PY), "-m", "bot"],
    "console": [str(PY), "-m", "bot", "console"],
    "test": [str(PY), "-m", "pytest"],
    "lint": [str(BIN / "ruff"), "check", "."],
}


def install() -> None:
    """Same steps as the Makefile's stamp rule."""
    if STAMP.exists() and all(STAMP.stat().st_mtime >= p.stat().st_mtime for p in INPUTS):
        return
    if not PY.exists():
        venv.create(VENV, with_pip=True)
    pip = [str(PY), "-m", "pip", "install", "--quiet"]
    subprocess.run([*pip, "--upgrade", "pip"], check=True, cwd=ROOT)
    subprocess.run([*pip, "-c", "constraints.txt", "-e", ".[dev]"], check=True, cwd=ROOT)
    STAMP.touch()


def main(argv: list[str]) -> int:
    task = argv[0] if argv else ""
    if task not in (*TASKS, "bench", "install"):
        print(f"usage: python3 dev.py {{{'|'.join([*TASKS, 'bench', 'install'])}}}", file=sys.stderr)
        return 2
    install()
    if task == "install":
        return 0
    if task == "bench":
        for bench in sorted((ROOT / "bench").glob("bench_*.py")):
            code = subprocess.run([str(PY), str(bench)], cwd=ROOT).returncode
            if code:
                return code
        return 0
    return subprocess.run([*TASKS[task], *argv[1:]], cwd=ROOT).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
