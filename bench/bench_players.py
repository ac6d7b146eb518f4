"""How players type: the player set (tests/catalog/player_queries.py) through the real commands, one run.

Targets (issue 10):
  - full data (seeds + wh40kdc + Wahapedia + game-datacards): top-1 >= 95 %
  - default catalog (seeds + wh40kdc): >= 95 % right on top or answered honestly ("not loaded, here is
    how"), and zero confident wrong answers
  - full data: autocomplete p99 < 10 ms and a full answer (console round trip) p99 < 50 ms

Run: `.venv/bin/python bench/bench_players.py [--shared PATH]` (default ../shared next to the repo).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_catalog import build_full, machine_line, pct, settings_for  # noqa: E402
from bot.catalog.service import open_catalog  # noqa: E402
from bot.console.session import ConsoleSession  # noqa: E402
from tests.catalog.player_queries import PLAYER_QUERIES  # noqa: E402
from tests.catalog.players import _OPTION, run  # noqa: E402


async def score(folder: Path, label: str, full: bool) -> None:
    console = await ConsoleSession.open(settings_for(folder))
    try:
        result = await run(console)
        entries = console.bot.services.catalog.count()
        ok = result.right + (0 if full else result.honest)
        target = "top-1" if full else "right or honest"
        print(f"{label}: {entries} entries, {result.total} queries")
        print(f"  right on top            {result.right:4d}  ({result.right / result.total:6.1%})")
        if not full:
            print(f"  honest 'not loaded'     {result.honest:4d}  ({result.honest / result.total:6.1%})")
        ratio = ok / result.total
        print(f"  {target:<23} {ok:4d}  ({ratio:6.1%}; target 95%: {'OK' if ratio >= 0.95 else 'MISSED'})")
        print(f"  confident wrong answers {len(result.confident_wrong):4d}  (target 0: "
              f"{'OK' if not result.confident_wrong else 'MISSED'})")
        for query, what in result.confident_wrong:
            print(f"    WRONG {query!r}: {what}")
        for query, expected, got in result.misses:
            print(f"    miss  {query!r}: want {expected}; got {got}")
        if full:
            await latency(console)
    finally:
        await console.close()


async def latency(console: ConsoleSession) -> None:
    catalog = console.bot.services.catalog
    auto: list[float] = []
    for query, command, *_ in PLAYER_QUERIES:
        kind = None if command == "rule" else command
        for i in range(1, len(query) + 1):
            t = time.perf_counter()
            catalog.autocomplete(query[:i], kind=kind)
            auto.append((time.perf_counter() - t) * 1000)
    answers: list[float] = []
    for query, command, *_ in PLAYER_QUERIES:
        t = time.perf_counter()
        await console.send(f"/{command} {_OPTION[command]}:{query}")
        answers.append((time.perf_counter() - t) * 1000)
    for label, samples, target in (("autocomplete", auto, 10.0), ("full answer (console)", answers, 50.0)):
        p99 = pct(samples, 99)
        print(f"  {label:<23} p50 {pct(samples, 50):6.2f} ms  p99 {p99:6.2f} ms  ({p99 / target:4.2f} x target "
              f"{target:g} ms: {'OK' if p99 <= target else 'MISSED'}; n={len(samples)})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    args = parser.parse_args()
    print(machine_line())
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "base"
        open_catalog(settings_for(base)).close()
        asyncio.run(score(base, "default catalog", full=False))
        datasets = args.shared / "datasets"
        if not datasets.exists():
            print(f"full data: skipped ({datasets} is absent)")
            return 0
        full = Path(tmp) / "full"
        build_full(full, datasets)
        asyncio.run(score(full, "full data", full=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
