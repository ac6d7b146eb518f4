"""Issue 21: the blind player query sets and the FAQ as a question set, through the real console, one run.

The sets (bench/queries/README.md) were written by a reviewer who never saw the search code. They are
*reported*, never tuned on: this bench prints aggregates only, never a set's individual misses.

Per set (frozen, held-out), on the embedded data and with the full data (Wahapedia 10e + game-datacards 11e):
  - names right on top: the first thing shown (direct answer, or the picker's first choice) is accepted
  - questions: an accepted entry among the first 3 shown (a direct answer shows one thing)
  - confident wrong answers: a direct answer naming nothing accepted
  - on the embedded data also "honest": "not in the loaded data", or the other edition's text saying the asked
    one is not loaded, when no accepted entry is loaded; and "silent No match" (the worst answer: a No match
    that does not say how to load the complete rules)
  - answer time p99 (console round trip) for names and for questions; autocomplete p99 (every prefix)

The FAQ as a question set (full data only): each entry of game-datacards `faqs.json`, its question (or errata
header) as the query, that FAQ entry itself excluded from the hits; right when one of the entries it concerns
(its targets, by kind and name) is among the first 3 hits. Tune on even ids, report odd ids: an id's parity is
that of its UUID read as a hex number.

What counts as shown: an entry's own name, or a number it prints, or the number another source prints for the
same rule (the answer cites both), or the name of a detachment rule the shown detachment's card prints whole
under its name ("farseekers rule" shows the Farseekers card, which opens with its rule Eye of the Hunt).

A question is answered from the rules passages (bot/catalog/answers.py): its reply is read by the answer footer,
the menu listing the quoted passages' entries first; it is an "answer" (confident) unless it says "I'm not sure".

The comparison (full data, one run): each ranker alone and fused, on the question rows of both blind sets and
on the FAQ (odd ids reported, even ids the tuning half): an accepted / concerned entry among the first 3
passages, confident wrong answers, time per question. "name search (before)" is the catalog search as it
answered questions before the passages. The semantic rows need `wordllama` installed (bench/semantic.py);
the bot does not ship it (docs/architecture.md says why). Last, the RSS of a fresh process with the full data
loaded and questions answered, with and without the passage vectors.

Targets (issue 21, full data): names >= 95 % on top, questions >= 85 % within 3, confident wrong <= 1 %,
FAQ odd ids >= 70 %, name answer p99 <= 50 ms, question answer p99 <= 150 ms, autocomplete p99 <= 10 ms.

Run: `.venv/bin/python bench/bench_answers.py [--shared PATH] [--catalog DIR]` (default ../shared next to the
repo). With --catalog, a folder holding an already built full-data catalog is measured as it is (the embedded
data's run is skipped).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_catalog import build_full, machine_line, pct, settings_for  # noqa: E402
from bot.catalog.answers import Answerer  # noqa: E402
from bot.catalog.model import FAQ_TARGET_KINDS  # noqa: E402
from bot.catalog.normalize import normalize  # noqa: E402
from bot.catalog.service import Catalog, open_catalog  # noqa: E402
from bot.catalog.things import name_key  # noqa: E402
from bot.console.lines import ConsoleInputError  # noqa: E402
from bot.console.session import ConsoleSession  # noqa: E402
from bot.guild_settings import CURRENT_EDITION  # noqa: E402
from bot.render.answers import ANSWER_FOOTER, NOT_SURE  # noqa: E402

SETS = ("players_frozen", "players_heldout")
TUNING = "tuning_questions"  # questions written by the helpers who tuned the answers, to tune on (not blind)
BLIND_TUNING = "tuning_blind_questions"  # written blind to the code by another session, to tune on
BLIND_TUNING2 = "tuning_blind_questions2"  # a second such set (200), written later by another blind session
BLIND_TUNING3 = "tuning_blind_questions3"  # a third, written by a fourth blind session (bench/queries/README.md)
BLIND_TUNING4 = "tuning_blind_questions4"  # a fourth, written by a sixth blind session (bench/queries/README.md)
QUERIES = ROOT / "bench" / "queries"
_NUMBER = re.compile(r"^\d{2}\.\d{2}(\.\d{2})?$")
# the 10e seed's "2. Battle-shock" is the rule Battle-shock, whether the shown name or the accepted one says so
_LIST_NUMBER = re.compile(r"^\d+\.\s+")
_TITLE_NUMBER = re.compile(r"^(\d+(?:\.\d+)+)\s+(.*)$")
_OTHER_NUMBER = re.compile(r"\b\d{2}\.\d{2}(?:\.\d{2})?\b")
_KIND_OF_LABEL = {"Datasheet": "datasheet", "Weapon": "weapon", "Ability": "ability", "Stratagem": "stratagem",
                  "Rule": "rule", "Detachment rule": "detachment", "Detachment": "detachment",
                  "Enhancement": "enhancement", "Keyword": "keyword", "FAQ": "faq", "Errata": "faq"}


@dataclass(frozen=True)
class Item:
    """One thing shown to the player: a direct answer or one picker choice."""

    name: str
    edition: str | None
    number: str | None
    also: tuple[str, ...] = ()  # the numbers other sources print for it, which the answer cites beside its own
    shows: tuple[str, ...] = ()  # the names of what it prints whole: a detachment card opens with its rules


@dataclass
class Seen:
    form: str  # answer | passages | picker | not-loaded | no-match | error
    items: list[Item] = field(default_factory=list)
    body: str = ""


@dataclass
class SetScore:
    names: int = 0
    questions: int = 0
    names_right: int = 0
    questions_within3: int = 0
    confident_wrong: int = 0
    confident_wrong_questions: int = 0  # of confident_wrong: aggregates only, the rows are never printed
    honest: int = 0
    silent_no_match: int = 0
    name_ms: list[float] = field(default_factory=list)
    question_ms: list[float] = field(default_factory=list)


def load_set(name: str) -> list[dict]:
    with open(QUERIES / f"{name}.jsonl", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def seen(replies: list, catalog: Catalog) -> Seen:
    """What the first visible reply shows (the picker's options resolved to their entries for the number)."""
    for reply in replies:
        if reply.kind == "autocomplete" or not (reply.embeds or reply.content):
            continue
        embed = reply.embeds[0] if reply.embeds else {}
        title = embed.get("title") or ""
        body = reply.text()
        if title == "Not in the loaded data":
            return Seen("not-loaded", body=body)
        if title == "No match":
            return Seen("no-match", body=body)
        footer = embed.get("footer") or ""
        passages = footer.startswith(ANSWER_FOOTER)  # a question answered from the rules text: its menu lists
        # the quoted passages' entries first, then the related ones; confident unless it says "I'm not sure"
        for comp in reply.components:
            if comp.get("type") == "select" and comp.get("options"):
                items = []
                for option in comp["options"]:
                    idx = catalog.index.by_id.get(option.get("value"))
                    rec = catalog.index.records[idx] if idx is not None else None
                    items.append(Item(option["label"], rec.edition if rec else None, rec.number if rec else None,
                                      other_numbers(catalog, [rec.id] if rec else []),
                                      printed_whole(catalog, [rec.id] if rec else [])))
                sure = passages and not (embed.get("description") or "").startswith(NOT_SURE)
                return Seen("answer" if sure else "passages" if passages else "picker", items, body)
        edition = "11e" if footer.startswith("11th") else "10e" if footer.startswith("10th") else None
        if title and edition:
            m = _TITLE_NUMBER.match(title)
            number = ".".join(f"{int(p):02d}" for p in m.group(1).split(".")) if m else None
            same = [catalog.index.records[i].id for i in catalog.index.by_number.get(number or "", ())
                    if catalog.index.records[i].edition == edition]
            name = m.group(2) if m else title
            named = [catalog.index.records[i].id for i in catalog.index.by_key.get(name_key(normalize(name)), ())
                     if catalog.index.records[i].edition == edition]
            return Seen("answer", [Item(name, edition, number, other_numbers(catalog, same),
                                        printed_whole(catalog, named))], body)
        return Seen("error", body=body)
    return Seen("error")


def other_numbers(catalog: Catalog, entry_ids: list[str]) -> tuple[str, ...]:
    """The numbers other sources print for these entries' rules, as their passages cite them ("15.06 Crushing
    Impact" cites "15.05 (game-datacards)": the sources disagree and the answer shows both)."""
    found = catalog.store.passage_ids(entry_ids)
    firsts = [rows[0] for rows in found.values() if rows]
    passages = catalog.store.passage_rows(firsts).values() if firsts else []
    return tuple(n for p in passages for n in _OTHER_NUMBER.findall(p.other_numbers))


def printed_whole(catalog: Catalog, entry_ids: list[str]) -> tuple[str, ...]:
    """The rules a detachment card prints in full under its name ("farseekers rule" shows Farseekers, opening with
    its rule Eye of the Hunt): shown, so they count as shown."""
    names: list[str] = []
    for entry_id in entry_ids:
        entry = catalog.get(entry_id)
        if entry is not None and entry.data.get("role") == "detachment":
            names += [rule.get("name", "") for rule in entry.data.get("rules") or [] if isinstance(rule, dict)]
    return tuple(names)


def accepted(item: Item, row: dict) -> bool:
    if row.get("edition") and item.edition != row["edition"]:
        return False
    for want in row["accept"]:
        if _NUMBER.match(want):
            if want == item.number or want in item.also:
                return True
        elif any(name_key(normalize(_LIST_NUMBER.sub("", shown))) == name_key(normalize(_LIST_NUMBER.sub("", want)))
                 for shown in (item.name, *item.shows)):
            return True
    return False


def loaded(catalog: Catalog, row: dict) -> bool:
    """Whether any accepted entry (in the asked edition) is in the catalog at all."""
    index = catalog.index
    for want in row["accept"]:
        idxs = index.by_number.get(want, ()) if _NUMBER.match(want) else index.by_key.get(name_key(normalize(want)), ())
        if any(not row.get("edition") or index.records[i].edition == row["edition"] for i in idxs):
            return True
    return False


async def score_set(console: ConsoleSession, rows: list[dict]) -> SetScore:
    catalog = console.bot.services.catalog
    out = SetScore()
    for row in rows:
        started = time.perf_counter()
        try:
            replies = await console.send(f"/rule query:{row['query']}")
        except ConsoleInputError:
            replies = []
        ms = (time.perf_counter() - started) * 1000
        s = seen(replies, catalog)
        hits = [accepted(item, row) for item in s.items]
        if row["kind"] == "name":
            out.names += 1
            out.name_ms.append(ms)
            out.names_right += bool(hits[:1] and hits[0])
        else:
            out.questions += 1
            out.question_ms.append(ms)
            out.questions_within3 += any(hits[:3])
        if s.form == "answer" and not hits[0]:
            out.confident_wrong += 1
            out.confident_wrong_questions += row["kind"] == "question"
        if not any(hits) and not loaded(catalog, row) and (
                s.form == "not-loaded" or (s.form == "answer" and "edition answer:** no" in s.body)):
            out.honest += 1
        if s.form == "no-match" and "data update" not in s.body:
            out.silent_no_match += 1  # a No match that does not say how to load the complete rules
    return out


def autocomplete_ms(catalog: Catalog, rows: list[dict]) -> list[float]:
    samples = []
    for row in rows:
        query = row["query"]
        for i in range(1, len(query) + 1):
            started = time.perf_counter()
            catalog.autocomplete(query[:i])
            samples.append((time.perf_counter() - started) * 1000)
    return samples


def ratio(n: int, total: int) -> str:
    return f"{n:4d}/{total:<4d} ({n / total:6.1%})" if total else "   -"


def report(label: str, s: SetScore, auto: list[float], full: bool) -> None:
    total = s.names + s.questions
    print(f"  {label}: {total} queries ({s.names} names, {s.questions} questions)")
    print(f"    names right on top            {ratio(s.names_right, s.names)}" + ("  target 95%" if full else ""))
    print(f"    questions accepted in top 3   {ratio(s.questions_within3, s.questions)}"
          + ("  target 85%" if full else ""))
    print(f"    confident wrong answers       {ratio(s.confident_wrong, total)}" + ("  target <= 1%" if full else "")
          + f"  (names {s.confident_wrong - s.confident_wrong_questions}, questions {s.confident_wrong_questions})")
    if not full:
        print(f"    honest 'not loaded' (right)   {ratio(s.honest, total)}")
    print(f"    silent 'No match'             {ratio(s.silent_no_match, total)}")
    for what, samples, target in (("name answer", s.name_ms, 50.0), ("question answer", s.question_ms, 150.0),
                                  ("autocomplete", auto, 10.0)):
        if samples:
            p99 = pct(samples, 99)
            print(f"    {what:<18} p50 {pct(samples, 50):7.2f} ms  p99 {p99:7.2f} ms  (target {target:g} ms: "
                  f"{'OK' if p99 <= target else 'MISSED'}; n={len(samples)})")


async def run_sets(folder: Path, label: str, full: bool) -> None:
    console = await ConsoleSession.open(settings_for(folder))
    try:
        catalog = console.bot.services.catalog
        print(f"{label}: {catalog.count()} entries")
        for name in SETS:
            rows = load_set(name)
            s = await score_set(console, rows)
            report(name, s, autocomplete_ms(catalog, rows), full)
    finally:
        await console.close()


# ---------------------------------------------------------------------------------------------
# The FAQ as a question set

_MARKUP = re.compile(r"<[^>]+>|\*\*")


def faq_query(item: dict) -> str:
    text = (item.get("question") or {}).get("en") or (item.get("errataHeader") or {}).get("en") or ""
    return " ".join(_MARKUP.sub(" ", text).split())


CONFIGS = {"name search (before)": None, "lexical (bm25)": ("lexical",), "semantic": ("semantic",),
           "lexical + named": ("lexical", "named"), "lex + core + named": ("lexical", "core", "named"),
           "lex + core + named + asks": ("lexical", "core", "named", "asks"),
           "lex + core + named + asks + scoped *": ("lexical", "core", "named", "asks", "scoped"),
           "* + semantic": ("lexical", "core", "named", "asks", "scoped", "semantic")}
# * = shipped; asks: players' asks; scoped: the stratagems / enhancements / faction the question names


@dataclass
class Tally:
    right: int = 0
    total: int = 0
    confident_wrong: int = 0
    ms: list[float] = field(default_factory=list)

    def add(self, ok: bool, confident_wrong: bool, ms: float) -> None:
        self.right += ok
        self.total += 1
        self.confident_wrong += confident_wrong
        self.ms.append(ms)


def shown(catalog: Catalog, answerer: Answerer, query: str, use: tuple[str, ...] | None) -> tuple[list, bool, float]:
    """The first 3 things a ranker shows for `query` as (kind, name, edition, number, other sources' numbers),
    whether it claims the first, and the time it took. `use` None: the name search as before issue 21 (never confident on questions)."""
    started = time.perf_counter()
    if use is None:
        hits = catalog.search(query, limit=10)
        out = [(h.kind, h.name, h.edition, _number(catalog, h.id), other_numbers(catalog, [h.id]))
               for h in hits if h.kind != "faq"][:3]
        return out, False, (time.perf_counter() - started) * 1000
    answer = answerer.answer(query, use=use, prefer_edition=CURRENT_EDITION)  # as the bot asks
    out = [(q.passage.kind, q.passage.name, q.passage.edition, q.passage.number,
            tuple(_OTHER_NUMBER.findall(q.passage.other_numbers))) for q in answer.passages]
    return out, answer.confident, (time.perf_counter() - started) * 1000


def _number(catalog: Catalog, entry_id: str) -> str | None:
    idx = catalog.index.by_id.get(entry_id)
    return catalog.index.records[idx].number if idx is not None else None


def faq_rows(faqs_path: Path) -> list[tuple[str, str, list[dict]]]:
    """(parity, query, targets) of every FAQ entry with a question or errata header and a target."""
    rows = []
    for item in json.loads(faqs_path.read_text(encoding="utf-8"))["faqs"]:
        query = faq_query(item)
        targets = [t for t in item.get("targets") or [] if t.get("type") in FAQ_TARGET_KINDS]
        if query and targets:
            rows.append(("odd" if int(str(item["id"]).replace("-", ""), 16) % 2 else "even", query, targets))
    return rows


def compare(catalog: Catalog, faqs_path: Path) -> None:
    """Issue 21's comparison, one run: each ranker on the question rows of both blind sets and on the FAQ."""
    from bench import semantic as semantic_mod

    model = semantic_mod.load_model()
    vectors = semantic_mod.build(catalog.store.passage_texts(), model) if model is not None else None
    answerer = Answerer(catalog, vectors)
    semantic = vectors is not None
    labels = {TUNING: "tuning (ours)", BLIND_TUNING: "tuning (blind)", BLIND_TUNING2: "tuning (blind 2)",
              BLIND_TUNING3: "tuning (blind 3)", BLIND_TUNING4: "tuning (blind 4)"}
    questions = {name: [r for r in load_set(name) if r["kind"] == "question"]
                 for name in (*SETS, *labels) if (QUERIES / f"{name}.jsonl").exists()}
    faqs = faq_rows(faqs_path)
    print("Questions answered from the rules passages: an accepted (or concerned) entry among the first 3, "
          "confident wrong answers, time per question")
    print(f"  {'ranker':<38}" + "".join(f"{labels.get(h, h):>26}" for h in (*questions, "FAQ odd ids",
                                                                            "FAQ even ids (tuning)"))
          + f"{'p99 ms':>9}")
    for label, use in CONFIGS.items():
        if use is not None and "semantic" in use and not semantic:
            print(f"  {label:<38}  (no passage vectors loaded)")
            continue
        tallies = {key: Tally() for key in (*questions, "odd", "even")}
        for name, rows in questions.items():
            for row in rows:
                items, sure, ms = shown(catalog, answerer, row["query"], use)
                hits = [accepted(Item(n, e, num, also), row) for _k, n, e, num, also in items]
                tallies[name].add(any(hits[:3]), sure and not (hits and hits[0]), ms)
        for parity, query, targets in faqs:
            items, sure, ms = shown(catalog, answerer, query, use)
            ok = [concerned(k, n, targets) for k, n, _e, _num, _also in items]
            tallies[parity].add(any(ok[:3]), sure and not (ok and ok[0]), ms)
        cells = "".join(f"{ratio(t.right, t.total):>20} cw {t.confident_wrong:<3}" for t in tallies.values())
        every = [m for t in tallies.values() for m in t.ms]
        print(f"  {label:<38}{cells}{pct(every, 99):9.1f}")


def concerned(kind: str, name: str, targets: list[dict]) -> bool:
    key = name_key(normalize(name))
    return any(kind in FAQ_TARGET_KINDS.get(t.get("type"), ()) and key == name_key(normalize(t["name"]["en"]))
               for t in targets if isinstance(t.get("name"), dict) and t["name"].get("en"))


_RSS_SCRIPT = """
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[2])
from bench.bench_catalog import settings_for
from bot.catalog.service import open_catalog
catalog = open_catalog(settings_for(Path(sys.argv[1])))
catalog.answer("can i shoot after falling back")
catalog.resolve("lethal hits")
if len(sys.argv) > 3:
    from bench import semantic
    model = semantic.load_model()
    if model is None:
        sys.exit("wordllama is not installed")
    catalog.answerer.vectors = semantic.build(catalog.store.passage_texts(), model)
    catalog.answer("can i reroll a reroll")
print(next(line.split()[1] for line in open("/proc/self/status") if line.startswith("VmRSS")))
"""


def rss_line(folder: Path) -> None:
    """RSS of a fresh process with the full catalog, its search index and passages loaded and questions answered
    (and, when wordllama is installed, with the passage vectors too), target <= 250 MB."""
    import subprocess

    for label, extra in (("lexical (shipped)", []), ("with the passage vectors", ["vectors"])):
        out = subprocess.run([sys.executable, "-c", _RSS_SCRIPT, str(folder), str(ROOT), *extra],
                             capture_output=True, text=True)
        kb = out.stdout.strip().splitlines()[-1] if out.returncode == 0 and out.stdout.strip() else None
        print(f"RSS, full data loaded, {label}: " + (f"{int(kb) / 1024:.0f} MB (target 250 MB)" if kb
                                                     else f"not measured ({out.stderr.strip()[-120:]})"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    parser.add_argument("--catalog", type=Path, help="an already built full-data catalog folder, used as it is")
    parser.add_argument("--sets-only", action="store_true", help="with --catalog: the query sets only (no FAQ "
                        "comparison, no RSS), a quicker check")
    args = parser.parse_args()
    print(machine_line())
    if args.catalog is not None:
        if args.sets_only:
            asyncio.run(run_sets(args.catalog, "full data (+ Wahapedia 10e + game-datacards 11e)", full=True))
        else:
            full_run(args.catalog, args.shared / "datasets")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "base"
        open_catalog(settings_for(base)).close()
        asyncio.run(run_sets(base, "embedded data (seeds + wh40kdc)", full=False))
        datasets = args.shared / "datasets"
        if not datasets.exists():
            print(f"full data: skipped ({datasets} is absent)")
            return 0
        full = Path(tmp) / "full"
        build_full(full, datasets)
        full_run(full, datasets)
    return 0


def full_run(full: Path, datasets: Path) -> None:
    asyncio.run(run_sets(full, "full data (+ Wahapedia 10e + game-datacards 11e)", full=True))
    catalog = open_catalog(settings_for(full))
    try:
        compare(catalog, datasets / "gdc-11e" / "faqs.json")
    finally:
        catalog.close()
    rss_line(full)


if __name__ == "__main__":
    raise SystemExit(main())
