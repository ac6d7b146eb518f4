"""Rules catalog benchmark: build time, memory, autocomplete and /rule latency, and search quality.

Everything from one run, with the catalog loaded from the seeds, wh40kdc and both shared datasets:
  - catalog build from scratch (seeds + wh40kdc, then the Wahapedia and gdc imports)   target < 30 s
  - RSS of a fresh bot process (console + full catalog, after lookups)                   target < 300 MB
  - autocomplete p50/p99, as typed (every prefix of every labelled query)                 target p99 < 10 ms
  - full /rule, /datasheet, /stratagem answers through the console (real CommandTree)     target p99 < 50 ms
  - top-1 accuracy on the labelled set vs a plain rapidfuzz extractOne(WRatio) baseline   target >= 95 %

Run: `.venv/bin/python bench/bench_catalog.py [--shared PATH]` (default ../shared next to the repo).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.catalog.service import open_catalog  # noqa: E402
from bot.config import Settings  # noqa: E402
from tests.catalog.labelled_queries import QUERIES  # noqa: E402
from tests.catalog.quality import evaluate  # noqa: E402


def settings_for(folder: Path) -> Settings:
    return Settings(token=None, db_path=folder / "state.db", data_dir=folder, log_level="WARNING",
                    sync_commands=False)


def machine_line() -> str:
    """What the machine was doing, printed above every latency so a reader can weigh it."""
    one, five, _ = os.getloadavg()
    return f"Machine: {os.cpu_count()} cores, load {one:.2f} (1 min) / {five:.2f} (5 min); latencies are under that load."


def build_full(folder: Path, datasets: Path) -> None:
    """The full-data catalog in `folder`: seeds + wh40kdc + Wahapedia 10e + game-datacards 11e."""
    catalog = open_catalog(settings_for(folder))
    try:
        catalog.import_dataset("wahapedia", datasets / "wahapedia-10e")
        catalog.import_dataset("gdc", datasets / "gdc-11e")
    finally:
        catalog.close()


def pct(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def line(label: str, value: float, unit: str, target: float | None = None, lower_is_better: bool = True) -> None:
    ratio = ""
    if target:
        r = value / target
        ok = r <= 1 if lower_is_better else r >= 1
        ratio = f"   ({r:5.2f} x target {target:g} {unit}: {'OK' if ok else 'MISSED'})"
    print(f"  {label:<46} {value:10.2f} {unit}{ratio}")


def build(folder: Path, shared: Path) -> dict[str, float]:
    times: dict[str, float] = {}
    t0 = time.perf_counter()
    catalog = open_catalog(settings_for(folder))
    times["seeds + wh40kdc"] = time.perf_counter() - t0
    t1 = time.perf_counter()
    catalog.import_dataset("wahapedia", shared / "datasets" / "wahapedia-10e")
    times["import wahapedia-10e"] = time.perf_counter() - t1
    t2 = time.perf_counter()
    catalog.import_dataset("gdc", shared / "datasets" / "gdc-11e")
    times["import gdc-11e"] = time.perf_counter() - t2
    times["total"] = time.perf_counter() - t0
    times["entries"] = catalog.count()
    catalog.close()
    return times


RSS_PROBE = r"""
import asyncio, json, sys
from pathlib import Path
sys.path.insert(0, sys.argv[2])
from bot.config import Settings
from bot.console.session import ConsoleSession

async def main():
    folder = Path(sys.argv[1])
    s = Settings(token=None, db_path=folder / "rss.db", data_dir=folder, log_level="WARNING", sync_commands=False)
    console = await ConsoleSession.open(s)
    for q in ["lethal hits", "stompa", "crr", "which rule mentions judgement tokens", "grimnir"]:
        await console.send("/rule query:" + q)
        await console.autocomplete("/rule query:" + q[:3], "query")
    rss = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmRSS:"))
    hwm = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:"))
    print(json.dumps({"rss_mb": rss / 1024, "peak_mb": hwm / 1024, "entries": console.bot.services.catalog.count()}))
    await console.close()

asyncio.run(main())
"""


def rss(folder: Path) -> dict:
    out = subprocess.run([sys.executable, "-c", RSS_PROBE, str(folder), str(ROOT)], capture_output=True, text=True,
                         env=dict(os.environ, COGITATOR_LOG_LEVEL="WARNING"), timeout=300)
    if out.returncode != 0:
        raise SystemExit(out.stderr)
    return json.loads(out.stdout.strip().splitlines()[-1])


CPU_SAMPLES: dict[str, list[float]] = {}


def autocomplete_latency(folder: Path) -> tuple[list[float], list[float]]:
    catalog = open_catalog(settings_for(folder))
    typed: list[tuple[str, str | None]] = []
    for query, kind, _edition, *_ in QUERIES:
        for i in range(1, min(len(query), 30) + 1):
            typed.append((query[:i], kind))
    for text, kind in typed[:50]:  # warm-up
        catalog.autocomplete(text, kind=kind)
    samples = []
    cpu = []
    for text, kind in typed:
        t, c = time.perf_counter(), time.thread_time()
        catalog.autocomplete(text, kind=kind)
        samples.append((time.perf_counter() - t) * 1000)
        cpu.append((time.thread_time() - c) * 1000)
    CPU_SAMPLES["autocomplete"] = cpu
    uncached = []
    for text, kind in typed:
        catalog._recent.clear()  # worst case: every keystroke is new to the process
        t = time.perf_counter()
        catalog.autocomplete(text, kind=kind)
        uncached.append((time.perf_counter() - t) * 1000)
    CPU_SAMPLES["uncached"] = uncached
    searches = []
    for query, kind, edition, *_ in QUERIES:
        t = time.perf_counter()
        catalog.resolve(query, kind=kind, edition=edition)
        searches.append((time.perf_counter() - t) * 1000)
    catalog.close()
    return samples, searches


async def console_latency(folder: Path) -> tuple[list[float], list[float], dict[str, int]]:
    from bot.console.session import ConsoleSession

    with tempfile.TemporaryDirectory() as tmp:
        s = Settings(token=None, db_path=Path(tmp) / "state.db", data_dir=folder, log_level="WARNING",
                     sync_commands=False)
        console = await ConsoleSession.open(s)
        commands = {None: "/rule query:", "datasheet": "/datasheet name:", "stratagem": "/stratagem name:"}
        lines = []
        for query, kind, edition, *_ in QUERIES:
            lines.append(commands[kind] + query + (f" edition:{edition}" if edition else ""))
        for ln in lines[:20]:
            await console.send(ln)  # warm-up (first catalog open, caches)
        answers: list[float] = []
        outcomes = {"answer": 0, "picker": 0, "no match": 0, "error": 0}
        for ln in lines:
            t = time.perf_counter()
            replies = await console.send(ln)
            answers.append((time.perf_counter() - t) * 1000)
            title = (replies[0].embeds[0]["title"] if replies and replies[0].embeds else "") or ""
            if any("Something went wrong" in r.text() for r in replies):
                outcomes["error"] += 1
            elif title == "Did you mean…":
                outcomes["picker"] += 1
            elif title == "No match":
                outcomes["no match"] += 1
            else:
                outcomes["answer"] += 1
        typed = []
        for query, kind, *_ in QUERIES[::3]:
            for i in range(1, min(len(query), 12) + 1):
                typed.append((commands[kind] + query[:i], "query" if kind is None else "name"))
        completes: list[float] = []
        for ln, option in typed:
            t = time.perf_counter()
            await console.autocomplete(ln, option)
            completes.append((time.perf_counter() - t) * 1000)
        await console.close()
    return answers, completes, outcomes


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    args = parser.parse_args()
    print("Rules catalog benchmark")
    print(f"  machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start "
          "(wall-clock percentiles include time other processes hold the CPU; CPU-time lines do not)")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        print("\nBuild from scratch (seeds + wh40kdc + Wahapedia 10e + game-datacards 11e)")
        times = build(folder, args.shared)
        for key in ("seeds + wh40kdc", "import wahapedia-10e", "import gdc-11e"):
            line(key, times[key], "s")
        line("total build", times["total"], "s", 30)
        print(f"  entries: {int(times['entries'])}")

        print("\nMemory (fresh process: console, real CommandTree, full catalog, after lookups)")
        mem = rss(folder)
        line("RSS", mem["rss_mb"], "MB", 300)
        line("peak RSS (VmHWM)", mem["peak_mb"], "MB", 300)

        print("\nCatalog service latency")
        ac, res = autocomplete_latency(folder)
        print(f"  autocomplete calls: {len(ac)} (every prefix of every labelled query, as typed)")
        line("autocomplete p50", statistics.median(ac), "ms")
        line("autocomplete p99", pct(ac, 99), "ms", 10)
        line("autocomplete p99, CPU time only", pct(CPU_SAMPLES["autocomplete"], 99), "ms", 10)
        line("autocomplete max", max(ac), "ms")
        line("autocomplete p50, answer cache disabled", statistics.median(CPU_SAMPLES["uncached"]), "ms")
        line("autocomplete p99, answer cache disabled", pct(CPU_SAMPLES["uncached"], 99), "ms", 10)
        line("resolve (search + FTS fallback) p50", statistics.median(res), "ms")
        line("resolve p99", pct(res, 99), "ms")

        print("\nThrough the console (real discord.py CommandTree, interaction -> reply)")
        answers, completes, outcomes = asyncio.run(console_latency(folder))
        print(f"  commands: {len(answers)}  outcomes: {outcomes}")
        line("full /rule|/datasheet|/stratagem answer p50", statistics.median(answers), "ms")
        line("full answer p99", pct(answers, 99), "ms", 50)
        line("autocomplete round trip p50", statistics.median(completes), "ms")
        line("autocomplete round trip p99", pct(completes, 99), "ms", 10)

        print(f"  load average now {os.getloadavg()[0]:.2f}")
        print("\nQuality (labelled set, top-1)")
        catalog = open_catalog(settings_for(folder))
        outcome = evaluate(catalog)
        catalog.close()
        print(f"  queries: {outcome.total}")
        line("catalog search accuracy", 100 * outcome.accuracy, "%", 95, lower_is_better=False)
        line("rapidfuzz extractOne(WRatio) baseline", 100 * outcome.baseline_accuracy, "%")
        print(f"  ratio search/baseline: {outcome.accuracy / outcome.baseline_accuracy:.2f}x; "
              f"errors removed: {outcome.total - outcome.baseline_correct} -> {outcome.total - outcome.correct}")
        for q, expected, got in outcome.misses:
            print(f"    miss: {q!r}: expected {expected}, got {got}")


if __name__ == "__main__":
    main()
