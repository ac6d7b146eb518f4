"""`python -m bot data update` benchmark against a local HTTP server (aiohttp) serving the shared datasets.

  - full refresh: every file downloaded, checked, swapped in and imported (gdc, Wahapedia, MFM)  target < 60 s
  - unchanged refresh: every request conditional (304), zero files rewritten, no import        target < 2 s

The server serves ../shared/datasets/gdc-11e (5 files; or with --gdc the complete export, 32 files) and
../shared/datasets/wahapedia-10e (20 files) and ../shared/datasets/mfm-11e/data (the points: meta.yaml and the
factions; `data update` fetches every source, and a bench never reaches the internet) under the real file
names, with ETags. The catalog starts as the base build (seeds + wh40kdc), which is
not timed. The command runs as a subprocess, exactly as an operator runs it.

Run: `.venv/bin/python bench/bench_data_update.py [--shared PATH]` (default ../shared next to the repo).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.catalog.service import open_catalog  # noqa: E402
from bot.config import Settings  # noqa: E402
from tests.localserver import file_app, serving  # noqa: E402


def line(label: str, value: float, unit: str, target: float | None = None) -> None:
    ratio = f"   ({value / target:5.2f} x target {target:g} {unit}: {'OK' if value <= target else 'MISSED'})" \
        if target else ""
    print(f"  {label:<46} {value:10.2f} {unit}{ratio}")


async def main_async(shared: Path, gdc: Path | None) -> None:
    gdc_dir, wah_dir = gdc or shared / "datasets" / "gdc-11e", shared / "datasets" / "wahapedia-10e"
    files = {f"gdc/{p.name}": p.read_bytes() for p in gdc_dir.glob("*.json") if p.name != "core_rules.json"}
    files["gdc/core/core_rules.json"] = (gdc_dir / "core_rules.json").read_bytes()
    files.update({f"wahapedia/{p.name}": p.read_bytes() for p in wah_dir.glob("*.csv")})
    files.update({f"mfm/{p.name}": p.read_bytes() for p in (shared / "datasets" / "mfm-11e" / "data").glob("*.yaml")})
    gdc_files = tuple(sorted(n.removeprefix("gdc/") for n in files if n.startswith("gdc/")))
    async with serving(file_app(files)) as base:
        await measure(files, gdc_files, base)


async def measure(files: dict[str, bytes], gdc_files: tuple[str, ...], base: str) -> None:
    """A full then an unchanged `data update` against the server at `base`, printed."""
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        settings = Settings(token=None, db_path=data / "state.db", data_dir=data, log_level="WARNING",
                            sync_commands=False)
        open_catalog(settings).close()  # the base build, not timed
        env = {**os.environ, "COGITATOR_DATA": str(data), "COGITATOR_GDC_URL": f"{base}/gdc/",
               "COGITATOR_WAHAPEDIA_URL": f"{base}/wahapedia/", "COGITATOR_MFM_URL": f"{base}/mfm/"}
        code = ("import sys; from bot.catalog import update; update.GDC_FILES = " + repr(gdc_files)
                + "; from bot.__main__ import main; sys.exit(main(sys.argv[1:]))")

        cpu: list[float] = []

        async def run() -> tuple[float, list[dict]]:
            usage = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            proc = await asyncio.create_subprocess_exec(sys.executable, "-c", code, "data", "update", "--json",
                                                        cwd=ROOT, env=env, stdout=asyncio.subprocess.PIPE)
            out, _ = await proc.communicate()
            elapsed = time.perf_counter() - t0
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu.append(after.ru_utime + after.ru_stime - usage.ru_utime - usage.ru_stime)
            assert proc.returncode == 0, out
            return elapsed, [json.loads(x) for x in out.decode().splitlines()]

        def snapshot() -> dict[str, int]:
            return {str(p): p.stat().st_mtime_ns for p in (data / "downloads").rglob("*") if p.is_file()}

        full, reports = await run()
        before = snapshot()
        unchanged, again = await run()
        rewritten = sum(1 for k, v in snapshot().items() if before.get(k) != v)
    nbytes = sum(len(b) for b in files.values())
    print(f"data update from a local server: {len(files)} files, {nbytes / 1e6:.1f} MB "
          f"(machine shared with other jobs; wall-clock, one run)")
    for r in reports:
        print(f"  full: {r['source']}: {len(r['new'])} files, {r['seconds']:.2f}s download, "
              f"imported {sum(r['imported'].values()):,} entries")
    line("full refresh (download + check + import)", full, "s", 60)
    line("  its CPU time (user + system)", cpu[0], "s")
    line("unchanged refresh (all 304, no import)", unchanged, "s", 2)
    line("  its CPU time (user + system)", cpu[1], "s")
    print(f"  files rewritten by the unchanged refresh: {rewritten} (target 0); "
          f"files reported new: {sum(len(r['new']) for r in again)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    parser.add_argument("--gdc", type=Path, help="a folder with the complete game-datacards 11th/gdc export "
                                                 "(faction files, core_rules.json, faqs.json, keywords.json)")
    args = parser.parse_args()
    if not (args.shared / "datasets").exists():
        sys.exit(f"bench_data_update: no datasets under {args.shared} (pass --shared PATH)")
    asyncio.run(main_async(args.shared, args.gdc))


if __name__ == "__main__":
    main()
