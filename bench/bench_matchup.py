"""/sim matchup through the console (issue 22): a 20 x 20 matchup of two imported army lists, image included,
and /rule latency while a 30 x 30 matchup runs.

The lists are the repository's GW-app fixtures (Leagues of Votann, Orks) with their non-character units
repeated to 20 and 30 units, imported with /army import into a game, so every unit is fielded as listed
(full loadouts). The simulations run in the real /sim worker pool (2 warm processes, as `python -m bot run`).

Run: `.venv/bin/python bench/bench_matchup.py [N]` (N matchups of 20 x 20, default 10).
Targets: 20 x 20 p99 <= 1 s; /rule p99 during a 30 x 30 matchup <= 50 ms.
"""

from __future__ import annotations

import asyncio
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.config import Settings  # noqa: E402
from bot.console.session import ConsoleSession  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures" / "armies"
ALICE, BOB = 111, 222
MATCHUP_P99_TARGET_S = 1.0
RULE_P99_TARGET_S = 0.05


def grown_list(name: str, units: int) -> str:
    """The fixture list with its non-character units repeated until it has `units` units."""
    text = (FIXTURES / name).read_text(encoding="utf-8")
    header, _, body = text.partition("\nCHARACTERS\n")
    body = body.split("\nBATTLELINE\n", 1)[1]
    body = body.split("\nExported with", 1)[0]
    blocks = [b.strip("\n") for b in re.split(r"\n\s*\n", body) if re.search(r"\((\d[\d,]*) (?:Points|pts)\)", b)]
    repeated = [blocks[i % len(blocks)] for i in range(units)]
    return header + "\nOTHER DATASHEETS\n\n" + "\n\n".join(repeated) + "\n"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


async def game(console: ConsoleSession, channel: int, units: int, folder: Path) -> None:
    await console.send(f":channel {channel}")
    await console.send("/game start opponent:222 edition:11e faction:Leagues of Votann opponent_faction:Orks",
                       user=ALICE)
    for user, name in ((ALICE, "votann_gw_app.txt"), (BOB, "orks_gw_wtc.txt")):
        path = folder / f"{channel}-{user}-{name}"
        path.write_text(grown_list(name, units), encoding="utf-8")
        replies = await console.send(f"/army import file:@{path}", user=user)
        if any(r.ephemeral for r in replies):
            raise SystemExit(f"import failed: {[r.text() for r in replies]}")


async def matchup(console: ConsoleSession, channel: int, expect: str) -> float:
    await console.send(f":channel {channel}")
    start = time.perf_counter()
    replies = await console.send("/sim matchup", user=ALICE)
    elapsed = time.perf_counter() - start
    # The console's reply list is shared by commands sent meanwhile (the /rule loop): look at the messages.
    answered = [m for m in console.discord.messages.values()
                if any(expect in (e.get("title") or "") and e.get("image") for e in m.payload.get("embeds") or [])]
    if not answered:
        raise SystemExit(f"no matchup answer: {[r.to_json() for r in replies][-1:]}")
    return elapsed


async def main(runs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        console = await ConsoleSession.open(Settings(token=None, db_path=folder / "state.db",
                                                     data_dir=ROOT / "var" / "data", log_level="WARNING",
                                                     sync_commands=False))
        try:
            await asyncio.to_thread(console.bot.services.simulation.start)
            await game(console, 20, 20, folder)
            await game(console, 30, 30, folder)
            await console.send("/rule query:lethal hits")
            print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} shared cores")
            times = []
            for i in range(runs + 1):
                elapsed = await matchup(console, 20, "20 attackers × 20 targets")
                if i:
                    times.append(elapsed)
            p99 = percentile(times, 0.99)
            print(f"20 x 20 /sim matchup, image included, {runs} runs: p50 {statistics.median(times) * 1000:.0f} ms, "
                  f"p99 {p99 * 1000:.0f} ms (target <= 1000 ms: {'met' if p99 <= MATCHUP_P99_TARGET_S else 'NOT met'})")

            answered = asyncio.Event()
            record = console.discord.record

            def noting(kind: str, body: dict, files: dict, message_id: int | None) -> None:
                record(kind, body, files, message_id)
                if kind == "response" and any("Lethal Hits" in (e.get("title") or "") for e in body.get("embeds") or []):
                    answered.set()

            console.discord.record = noting  # type: ignore[method-assign]
            sends: list[asyncio.Task] = []

            async def rule() -> float:
                """From sending /rule to its answer being posted. (console.send itself returns only when every
                task started meanwhile has finished, the matchup's rows included.)"""
                answered.clear()
                start = time.perf_counter()
                sends.append(asyncio.create_task(console.send("/rule query:lethal hits")))
                await asyncio.wait_for(answered.wait(), 30)
                return time.perf_counter() - start

            idle = [await rule() for _ in range(40)]
            await asyncio.gather(*sends)
            running = asyncio.create_task(matchup(console, 30, "30 attackers × 30 targets"))
            await asyncio.sleep(0)
            during = []
            while not running.done():  # a player asking every 50 ms (a /rule send returns only once the
                during.append(await rule())  # matchup is done, so each is timed to its posted answer)
                await asyncio.sleep(0.05)
            big = await running
            await asyncio.gather(*sends)
            p99 = percentile(during, 0.99)
            print(f"/rule alone: p50 {statistics.median(idle) * 1000:.1f} ms, p99 {percentile(idle, 0.99) * 1000:.1f} ms")
            print(f"/rule during a 30 x 30 matchup ({big * 1000:.0f} ms, {len(during)} /rule): p50 "
                  f"{statistics.median(during) * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms (target <= 50 ms: "
                  f"{'met' if p99 <= RULE_P99_TARGET_S else 'NOT met'}); load average {os.getloadavg()[0]:.1f}")
        finally:
            await console.close()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 10))
