"""Hostile import files: time and peak RSS until each is refused (issue 9, Build item 5).

Each case runs in a fresh process (`python -m bot import ...` would also build the catalog, so the
importer is called directly); peak RSS is that process's ru_maxrss, next to that of a
reference: the import of a small valid file (the orks.json fixture). Targets: refused
(CatalogImportError), in under 2 s and under 100 MB above the reference.

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
    if fmt == "gdc":
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


def _write(path: Path, head: bytes, unit: bytes, count: int, tail: bytes) -> None:
    """head + unit * count + tail, written in pieces so this process stays small (a child's peak RSS
    counts the memory it was forked with)."""
    with open(path, "wb") as handle:
        handle.write(head)
        chunk = 1 << 20
        for start in range(0, count, chunk):
            handle.write(unit * min(chunk, count - start))
        handle.write(tail)


def cases(tmp: Path) -> list[tuple[str, str, Path]]:
    out = []
    deep = tmp / "deep.json"
    _write(deep, b'{"name": "Orks", "source": "40k-11e", "datasheets": ', b"[", 100_000, b"]" * 100_000 + b"}")
    out.append(("gdc JSON nested 100,000 deep", "gdc", deep))
    for mb in (30, 15):
        many = tmp / f"many{mb}.json"
        _write(many, b'{"name": "Orks", "source": "40k-11e", "datasheets": [', b"{},", mb * 1024 * 1024 // 3,
               b"{}]}")
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
        before, after = lines[3].split(b"|1|", 1)
        _write(path, b"\r\n".join(lines[:3]) + b"\r\n" + before + b"|1|", b"x", mb * 1024 * 1024,
               b" " + after + b"\r\n" + b"\r\n".join(lines[4:]))
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
        idle = probe(args.repo, "gdc", FIXTURES / "gdc-11e" / "orks.json")
        print(f"importers of {args.repo}; reference (the small orks.json fixture, accepted): {idle['s']:.2f} s, "
              f"{idle['mb']:.0f} MB (machine shared and loaded)")
        print(f"{'case':<40} {'time s':>7} {'x target':>8} {'RSS MB':>7} {'+ref':>6}  outcome")
        for label, fmt, path in cases(tmp):
            r = probe(args.repo, fmt, path)
            extra = r["mb"] - idle["mb"]
            print(f"{label:<40} {r['s']:7.2f} {r['s'] / TARGET_S:8.2f} {r['mb']:7.0f} {extra:6.0f}  {r['outcome']}")
        print(f"targets: refused, under {TARGET_S} s and under {TARGET_MB:.0f} MB above the reference")
    return 0


if __name__ == "__main__":
    sys.exit(main())
