"""What each runtime dependency costs: install size on disk and import time (issue 20).

    .venv/bin/python bench/bench_deps.py

Install size: the files each distribution's RECORD lists, summed (what `pip install` puts in
site-packages), for the dependency itself plus the distributions only it pulls in; the total is the
whole runtime closure of pyproject.toml's [project] dependencies, without the dev tools. Import time:
a fresh interpreter importing the module, minus a bare interpreter's start, median of 5 (the machine
is shared: compare numbers made back to back).
"""

from __future__ import annotations

import re
import statistics
import subprocess
import sys
import time
import tomllib
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The module the project imports from each distribution.
MODULES = {"discord.py": "discord", "numpy": "numpy", "rapidfuzz": "rapidfuzz", "sqlite-utils": "sqlite_utils",
           "pillow": "PIL.ImageFont", "wh40kdc": "wh40kdc", "tqdm": "tqdm",
           "psycopg": "psycopg", "pyyaml": "yaml", "prometheus-client": "prometheus_client"}


def _name(requirement: str) -> str:
    return re.split(r"[\s\[<>=!~;]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def _closure(name: str) -> set[str]:
    seen, todo = set(), [name]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        try:
            dist = metadata.distribution(current)
        except metadata.PackageNotFoundError:
            continue
        seen.add(current)
        for req in dist.requires or []:
            if "extra ==" in req and "binary" not in req:
                continue
            todo.append(_name(req))
    return seen


def _size(name: str) -> int:
    dist = metadata.distribution(name)
    total = 0
    for file in dist.files or []:
        path = Path(dist.locate_file(file))
        if path.is_file():
            total += path.stat().st_size
    return total


def _import_s(module: str) -> float:
    def once(code: str) -> float:
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        return time.perf_counter() - started

    base = statistics.median(once("pass") for _ in range(5))
    return statistics.median(once(f"import {module}") for _ in range(5)) - base


def main() -> int:
    deps = [_name(r) for r in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]]
    closures = {d: _closure(d) for d in deps}
    everything = set().union(*closures.values())
    print(f"{'dependency':<14} {'own MB':>7} {'with what only it needs, MB':>28} {'import ms':>10}  pulls in")
    for dep in deps:
        others = set().union(*(c for d, c in closures.items() if d != dep))
        own = closures[dep] - others
        mb = sum(_size(d) for d in own) / 1e6
        module = MODULES.get(dep, dep.replace("-", "_"))
        extra = sorted(own - {dep})
        print(f"{dep:<14} {_size(dep) / 1e6:7.1f} {mb:28.1f} {_import_s(module) * 1000:10.0f}  {', '.join(extra)}")
    print(f"runtime closure: {len(everything)} distributions, {sum(_size(d) for d in everything) / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
