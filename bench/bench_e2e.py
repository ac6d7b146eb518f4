"""End-to-end benchmark: interaction round trips through the fake Discord, and the bot's memory.

    .venv/bin/python bench/bench_e2e.py [--n 200] [--sim-n 40] [--no-import]

A real `python -m bot run` process talks over real sockets to tests/fakediscord. Latency is measured
inside the fake: from writing INTERACTION_CREATE on the gateway until the interaction callback
arrives (for a deferred command also until the first follow-up, which is when the user sees the
answer). The catalog is built, and unless --no-import the shared Wahapedia (10e) and game-datacards
(11e) datasets are imported, so RSS is measured with the full catalog loaded.

Targets (issue 6): /rule p99 < 50 ms; a typical /sim with its plot p99 < 500 ms; RSS < 300 MB.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests import procs  # noqa: E402
from tests.e2e.botproc import REPO, BotProcess  # noqa: E402
from tests.fakediscord import FakeDiscord, InteractionRecord  # noqa: E402

RULE_P99_MS = 50.0
SIM_P99_MS = 500.0
RSS_MB = 300.0
DATASETS = Path(__file__).resolve().parents[2] / "shared" / "datasets"  # ../shared next to the repo
RULE_QUERIES = ["lethal hits", "sustained hits", "devastating wounds", "command re-roll", "stompa", "grimnyr",
                "heavy intercessor", "leth hits", "fire overwatch", "insane bravery", "deep strike", "lone operative",
                "anti-infantry", "battle-shock", "feel no pain", "waaagh", "judgement tokens", "precision"]
SIM_PROFILES = [
    ("A=D6+2 BS=3 S=14 AP=-3 D=D6+2 kw=\"BLAST 2\"", "T=5 Sv=4 W=4 inv=4 models=3"),
    ("A=10 BS=3 S=4 AP=0 D=1", "T=4 Sv=4 W=1 models=10"),
    ("A=2 BS=3 S=9 AP=-4 D=D6 kw=\"MELTA 2\" models=2", "T=10 Sv=2 W=13 inv=5"),
    ("A=4 WS=2 S=8 AP=-2 D=2 kw=\"LETHAL HITS\" models=5", "T=6 Sv=3 W=3 models=5"),
]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    k = (len(ordered) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def summary(name: str, values_s: list[float], target_ms: float | None = None) -> str:
    ms = [v * 1000 for v in values_s]
    p50, p99 = percentile(ms, 0.5), percentile(ms, 0.99)
    line = f"{name:<34} n={len(ms):<4} p50={p50:8.1f} ms  p99={p99:8.1f} ms  max={max(ms):8.1f} ms"
    if target_ms:
        line += f"  target<{target_ms:.0f} ms  ratio p99/target={p99 / target_ms:5.2f}  {'OK' if p99 < target_ms else 'MISS'}"
    return line


def cli(data: Path, db: Path, *args: str) -> str:
    env = {"COGITATOR_DATA": str(data), "COGITATOR_DB": str(db), "PATH": "/usr/bin:/bin", "COGITATOR_LOG_LEVEL": "WARNING"}
    done = subprocess.run([sys.executable, "-m", "bot", *args], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=1200)
    if done.returncode != 0:
        raise SystemExit(f"python -m bot {' '.join(args)} failed: {done.stdout}{done.stderr}")
    return done.stdout


def rss_mb(pid: int) -> tuple[float, float]:
    return procs.memory(pid) / 2**20, procs.memory(pid, "VmHWM") / 2**20


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=200, help="round trips per fast command")
    parser.add_argument("--sim-n", type=int, default=40, help="round trips of /sim")
    parser.add_argument("--no-import", action="store_true", help="skip importing the shared datasets")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (catalog, DB, bot log)")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="bench-e2e-"))
    data, db = work / "data", work / "state.db"
    started = time.perf_counter()
    cli(data, db, "catalog", "build")
    imported = []
    if not args.no_import:
        for fmt, path in (("wahapedia", DATASETS / "wahapedia-10e"), ("gdc", DATASETS / "gdc-11e")):
            if path.exists():
                cli(data, db, "import", fmt, str(path))
                imported.append(fmt)
    print(f"catalog ready in {time.perf_counter() - started:.1f} s (imported: {', '.join(imported) or 'none'})")

    fake = FakeDiscord().start()
    bot = BotProcess(fake, work, data=data, db=db)
    fake.watchdog = lambda: None if bot.alive() else f"bot exited:\n{bot.log_text()}"  # type: ignore[method-assign]
    bot.start()
    try:
        t0 = time.perf_counter()
        fake.wait_for_commands()
        fake.wait_for_sessions([(0, 1)])
        print(f"bot process connected and synced in {time.perf_counter() - t0:.2f} s "
              f"({len(fake.global_commands)} commands)")
        names = {c["name"] for c in fake.global_commands}
        rss_idle = rss_mb(bot.pid)

        results: list[str] = []
        help_lat = [fake.slash("help").latency or 0.0 for _ in range(args.n)]
        results.append(summary("/help (baseline)", help_lat))

        if "rule" in names:
            command, _ = fake.find_command("rule", fake.default_guild_id)
            option = (command.get("options") or [{}])[0].get("name", "query")
            for q in RULE_QUERIES[:3]:  # warm-up: the first lookup opens the catalog
                fake.slash("rule", {option: q})
            rule_lat, ac_lat = [], []
            by_query: dict[str, list[float]] = {}
            for i in range(args.n):
                query = RULE_QUERIES[i % len(RULE_QUERIES)]
                rec = fake.slash("rule", {option: query})
                rule_lat.append(rec.answer_latency or 0.0)
                by_query.setdefault(query, []).append((rec.answer_latency or 0.0) * 1000)
            for i in range(args.n):
                text = RULE_QUERIES[i % len(RULE_QUERIES)][: 3 + i % 6]
                _, ac = fake.autocomplete("rule", {option: text}, option)
                ac_lat.append(ac.latency or 0.0)
            results.append(summary("/rule lookup", rule_lat, RULE_P99_MS))
            slow = sorted(by_query.items(), key=lambda kv: -max(kv[1]))[:4]
            results.append("  slowest /rule queries (max ms): " + ", ".join(f"{q!r} {max(v):.0f}" for q, v in slow))
            results.append(summary("/rule autocomplete", ac_lat, RULE_P99_MS))
        else:
            results.append("/rule                              not registered (cogs/rules.py has not landed)")
            if "sim" in names:  # still load the catalog for the memory figure
                fake.autocomplete("sim unit", {}, "attacker")

        if "sim" in names:
            fake.slash("sim custom", {"attacker": SIM_PROFILES[0][0], "target": SIM_PROFILES[0][1]}, followups=1, timeout=120)
            defer_lat, answer_lat = [], []
            by_profile: dict[int, list[float]] = {}
            for i in range(args.sim_n):
                attacker, target = SIM_PROFILES[i % len(SIM_PROFILES)]
                rec: InteractionRecord = fake.slash("sim custom", {"attacker": attacker, "target": target},
                                                    followups=1, timeout=120)
                assert "sim.png" in rec.files, rec.text()
                defer_lat.append(rec.latency or 0.0)
                answer_lat.append(rec.answer_latency or 0.0)
                by_profile.setdefault(i % len(SIM_PROFILES), []).append((rec.answer_latency or 0.0) * 1000)
            results.append(summary("/sim custom: defer callback", defer_lat))
            results.append(summary("/sim custom: answer with PNG", answer_lat, SIM_P99_MS))
            results.append("  /sim median by profile (ms): " + ", ".join(
                f"#{k} {percentile(v, 0.5):.0f}" for k, v in sorted(by_profile.items()))
                + "  (#0 BLAST D6+2 vs 3×W4, #1 10 shots vs 10×W1, #2 MELTA vs W13, #3 LETHAL vs 5×W3)")

        rss, peak = rss_mb(bot.pid)
        print("\n".join(results))
        print(f"{'RSS of one bot process':<34} idle={rss_idle[0]:6.1f} MB  after load={rss:6.1f} MB  peak={peak:6.1f} MB"
              f"  target<{RSS_MB:.0f} MB  ratio peak/target={peak / RSS_MB:4.2f}  {'OK' if peak < RSS_MB else 'MISS'}")
        code, elapsed = bot.terminate()
        print(f"SIGTERM to exit: {elapsed * 1000:.0f} ms (exit code {code})")
    finally:
        bot.stop()
        fake.stop()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
