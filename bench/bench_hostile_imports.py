"""Hostile import files: time and peak RSS until each is refused (issue 9, Build item 5).

Each case runs in a fresh process (`python -m bot import ...` would also build the catalog, so the
importer is called directly); peak RSS is that process's ru_maxrss, next to an idle process's for
reference. Targets: refused (exit 2 / CatalogImportError), in under 2 s and under 100 MB above idle.

    .venv/bin/python bench/bench_hostile_imports.py [--repo OTHER_CHECKOUT]

`--repo` measures another checkout's importers on the same files (e.g. before a fix). The machine is
shared and loaded: treat times as upper bounds.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
TARGET_S = 2.0
TARGET_MB = 100.0

PROBE = """
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from bot.catalog.importers import gdc_json, wahapedia_csv
from bot.catalog.model import CatalogImportError
fmt, path = sys.argv[2], sys.argv[3]
start = time.perf_counter()
outcome = "accepted"
try:
    if fmt == "idle":
        pass
    elif fmt == "gdc":
        gdc_json.load_path(path)
    else:
        wahapedia_csv.load_folder(path)
except CatalogImportError as error:
    outcome = "refused: " + error.reason[:70]
except BaseException as error:
    outcome = "CRASH " + type(error).__name__
print(json.dumps({"s": time.perf_counter() - start, "mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "outcome": outcome}))
"""


def cases(tmp: Path) -> list[tuple[str, str, Path]]:
    out = []
    deep = tmp / "deep.json"
    deep.write_text('{"name": "Orks", "source": "40k-11e", "datasheets": ' + "[" * 100_000 + "]" * 100_000 + "}")
    out.append(("gdc JSON nested 100,000 deep", "gdc", deep))
    for mb in (30, 15):
        many = tmp / f"many{mb}.json"
        n = mb * 1024 * 1024 // 3
        many.write_text('{"name": "Orks", "source": "40k-11e", "datasheets": [' + "{}," * n + "{}]}")
        out.append((f"gdc JSON of {mb} MB of '{{}},'", "gdc", many))
    costly = tmp / "cost.json"
    doc = json.loads((FIXTURES / "gdc-11e" / "orks.json").read_text(encoding="utf-8"))
    doc["stratagems"][0]["cost"] = 10 ** 30
    costly.write_text(json.dumps(doc))
    out.append(("gdc stratagem costing 10^30 CP", "gdc", costly))
    for mb in (30, 15):
        folder = tmp / f"field{mb}"
        shutil.copytree(FIXTURES / "wahapedia-10e", folder)
        path = folder / "Stratagems.csv"
        lines = path.read_bytes().split(b"\r\n")
        lines[3] = lines[3].replace(b"|1|", b"|1|" + b"x" * (mb * 1024 * 1024) + b" ", 1)
        path.write_bytes(b"\r\n".join(lines))
        out.append((f"Wahapedia CSV with one {mb} MB field", "wahapedia", folder))
    folder = tmp / "cp"
    shutil.copytree(FIXTURES / "wahapedia-10e", folder)
    path = folder / "Stratagems.csv"
    path.write_bytes(path.read_bytes().replace(b"Strategic Ploy Stratagem|1|",
                                               ("Strategic Ploy Stratagem|1" + "0" * 30 + "|").encode()))
    out.append(("Wahapedia stratagem costing 10^30 CP", "wahapedia", folder))
    return out


def probe(repo: Path, fmt: str, path: Path) -> dict:
    proc = subprocess.run([sys.executable, "-c", PROBE, str(repo), fmt, str(path)], capture_output=True, text=True,
                          timeout=600)
    if proc.returncode:
        return {"s": float("nan"), "mb": float("nan"), "outcome": "process failed: " + proc.stderr[-80:]}
    return json.loads(proc.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, default=ROOT, help="checkout whose importers are measured")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        idle = probe(args.repo, "idle", tmp)
        print(f"importers of {args.repo}; idle process {idle['mb']:.0f} MB (machine shared and loaded)")
        print(f"{'case':<40} {'time s':>7} {'x target':>8} {'RSS MB':>7} {'+idle':>6}  outcome")
        for label, fmt, path in cases(tmp):
            r = probe(args.repo, fmt, path)
            extra = r["mb"] - idle["mb"]
            print(f"{label:<40} {r['s']:7.2f} {r['s'] / TARGET_S:8.2f} {r['mb']:7.0f} {extra:6.0f}  {r['outcome']}")
        print(f"targets: refused, under {TARGET_S} s and under {TARGET_MB:.0f} MB above idle")
    return 0


if __name__ == "__main__":
    sys.exit(main())
