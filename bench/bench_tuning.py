"""Issue 21's tuning sets, whose misses may be printed and studied (unlike the frozen and held-out sets of
bench_answers.py, which print aggregates only):
  - tuning_names (default): name queries written by the helper who tuned the name search; right = on top;
  - tuning_questions: questions written by the helpers who tuned the answers; right = accepted within 3;
  - tuning_blind_questions: 160 questions written blind to the code by another session, for tuning (its README
    is /work/blind/questions/README.md when it was written); right = accepted within 3;
  - tuning_blind_questions2: 200 more, written later by another blind session (bench/queries/README.md);
  - tuning_blind_questions3: 150 more, by a fourth blind session (bench/queries/README.md);
  - tuning_blind_questions4: 150 more, by a sixth blind session (bench/queries/README.md);
  - tuning_blind_questions5 and 6, 7 and 8, and 9: 150 each, by five more blind sessions (bench/queries/README.md);
  - tuning_blind_names, tuning_blind_names2, tuning_blind_names3, tuning_blind_names4: 260, 250, 250 and 250
    names written blind to the code by other sessions (bench/queries/README.md); right = on top.

A name row's edition is the one its writer found the name in. tuning_blind_names2's (and 3's and 4's) writer did not read wh40kdc,
so a name it found only in Wahapedia is labelled 10e although the bot rightly answers wh40kdc's 11e copy of it on
an 11e server when the query names no edition: a second line scores names with the edition counted only when the
query names one (the players' sets' convention, where such a row is `null`).

Run: `.venv/bin/python bench/bench_tuning.py [--catalog DIR] [--shared PATH] [--set NAME]`. With --catalog, a
folder holding an already built full-data catalog is used as it is; otherwise one is built in a temporary folder.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_answers import accepted, load_set, seen  # noqa: E402
from bench.bench_catalog import build_full, machine_line, pct, settings_for  # noqa: E402
from bot.catalog.search import query_edition  # noqa: E402
from bot.console.session import ConsoleSession  # noqa: E402


async def run(folder: Path, name: str) -> None:
    import time

    console = await ConsoleSession.open(settings_for(folder))
    try:
        catalog = console.bot.services.catalog
        rows = load_set(name)
        right = wrong = right_typed = wrong_typed = 0
        times = []
        for row in rows:
            started = time.perf_counter()
            s = seen(await console.send(f"/rule query:{row['query']}"), catalog)
            times.append((time.perf_counter() - started) * 1000)
            hits = [accepted(item, row) for item in s.items]
            ok = any(hits[:3]) if row["kind"] == "question" else bool(hits[:1] and hits[0])
            claimed_wrong = s.form == "answer" and not (hits[:1] and hits[0])
            right += ok
            wrong += claimed_wrong
            if row["kind"] == "name":  # the edition counted only when the query names one (see above)
                typed = dict(row, edition=row["edition"] if query_edition(row["query"]) else None)
                top_typed = bool(s.items) and accepted(s.items[0], typed)
                right_typed += top_typed
                wrong_typed += s.form == "answer" and not top_typed
            if not ok or claimed_wrong or (s.form != "answer" and row["kind"] != "question"):
                shown = ", ".join(f"{i.name} ({i.edition})" for i in s.items[:3])
                print(f"  {'WRONG ' if claimed_wrong else 'miss  ' if not ok else 'menu  '}"
                      f"{row['query']!r} -> {s.form}: {shown}")
        right_is = "accepted within 3" if all(r["kind"] == "question" for r in rows) else "right on top"
        print(f"{name}: {len(rows)} queries; {right_is} {right} ({right / len(rows):.1%}); confident wrong {wrong} "
              f"({wrong / len(rows):.1%}); p99 {pct(times, 99):.1f} ms")
        if (right_typed, wrong_typed) != (right, wrong) and right_is == "right on top":
            print(f"{name}, the edition counted only when the query names one: right on top {right_typed} "
                  f"({right_typed / len(rows):.1%}); confident wrong {wrong_typed} ({wrong_typed / len(rows):.1%})")
    finally:
        await console.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--catalog", type=Path)
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    parser.add_argument("--set", default="tuning_names")
    args = parser.parse_args()
    print(machine_line())
    if args.catalog is not None:
        asyncio.run(run(args.catalog, args.set))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        build_full(Path(tmp), args.shared / "datasets")
        asyncio.run(run(Path(tmp), args.set))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
