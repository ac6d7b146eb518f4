"""Rules text split into passages that a question can be answered from (issue 21, item 1).

Every rules text the catalog holds (the numbered 11e core rules and their sub-sections, the 10e core rules,
FAQ and errata, the keyword glossary, abilities, stratagems, detachment rules and enhancements) is cut into
short passages, each citing its entry, source, edition and rule number. A passage is indexed with what its
entry belongs to, as players name it with the rule: a numbered sub-section with its sections' names, an ability
with the datasheets that carry it, a detachment rule, stratagem or enhancement with its detachment. Datasheets and weapons are not split:
a question about a unit's profile is a name lookup. A core stratagem with metadata only (wh40kdc carries no rules
text) gives one passage from its community summary when it has one, marked `summary`: the answer labels it as such,
never as the rules text. A passage cites its thing's number and the other numbers its sources print
(`other_numbers`: Crushing Impact is 15.06 on the Orks seed page, 15.05 in game-datacards). One thing shared by several factions (bot/catalog/things.py)
gives its passages once, from its primary entry.

The passages live in the catalog file beside the entries (table `passages`, FTS5 index `passages_fts` with the
Porter stemmer, so "falling back" finds "Fall Back"), written in the same transaction as each import, never at
answer time; so is the passages' vocabulary (`passage_words`: each word and how many passages hold it), which a
question's typos are corrected against (bot/catalog/spelling.py). `search` ranks them with FTS5's own bm25(). What players ask when a core rule, keyword or faction entry is the
answer (bot/catalog/asks.py: document expansion) is indexed per entry in its own FTS5 table (`passage_asks`),
ranked by `search_asks` as a ranking of its own: FTS5's bm25() counts a row's length over all its columns, so
asks beside the text would lengthen the rule's passages and change how their own words rank. The asks are
never quoted.

The core rules and glossary (CORE_KINDS) are indexed once more on their own (`passages_core_fts`, contentless),
for `search(core=True)`: bm25()'s word weights (IDF) are those of the collection searched, and over every
passage "aura" is a common word (hundreds of faction abilities are tagged Aura) where among the core rules it
names one rule, 22.01 Aura Abilities.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from bot.catalog import asks as asks_mod
from bot.catalog.normalize import fold
from bot.catalog.things import faction_key, source_label

CORE_KINDS = ("rule", "keyword")  # the rules every army shares: the core rules and the keyword glossary
PASSAGE_KINDS = ("rule", "faq", "keyword", "ability", "stratagem", "detachment", "enhancement", "datasheet")
PASSAGE_CHARS = 480  # a passage gathers paragraphs up to about this many characters
MAX_PARAGRAPH = 720  # a longer paragraph is cut at sentence ends
MAX_PASSAGES = 40  # per entry: the longest core rule section has about 25
MAX_WORDS = 16  # query words sent to FTS5
VERSION = "10"  # bump when the passages are built differently: a catalog holding older ones rebuilds them on open
MAX_HOLDERS = 4  # datasheets named with an ability (a core ability such as Deep Strike has hundreds)
NAME_WEIGHT = 3.0  # bm25() weight of the entry's name against its text (a title says what the passage is about)

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'‘“(*A-Z0-9])")
_FLAVOUR = re.compile(r"^\*[^*].*[^*]\*$", re.S)  # a whole paragraph in italics: a stratagem's flavour line
_HYPHENATED = re.compile(r"\w+(?:[-‑‐]\w+)+")
_WORD = re.compile(r"[a-z]+")  # a vocabulary word: letters only (the words column is folded to ASCII)


@dataclass(frozen=True)
class Passage:
    rowid: int
    entry_id: str
    kind: str
    name: str
    number: str | None
    edition: str
    source: str
    text: str
    summary: bool = False  # a community summary (wh40kdc's notes), not the rules text
    other_numbers: str = ""  # "15.05 (game-datacards)": the numbers other sources of the thing print


def index_words(text: str) -> str:
    """What FTS5 indexes (and a query is read as): folded (case, diacritics), a hyphenated word both as its
    parts and joined ("re-roll" -> "re roll reroll": players type "reroll" and "fall back" alike)."""
    return _HYPHENATED.sub(lambda m: f"{' '.join(re.split('[-‑‐]', m.group(0)))} {re.sub('[-‑‐]', '', m.group(0))}",
                           fold(text))


def paragraphs(text: str) -> list[str]:
    """The text's paragraphs, flavour lines dropped, a lead-in ending in ":" kept with what follows it."""
    out: list[str] = []
    for block in re.split(r"\n\s*\n", text.replace("\r", "")):
        block = block.strip()
        if not block or _FLAVOUR.match(block):
            continue
        if out and out[-1].endswith(":"):
            out[-1] = f"{out[-1]}\n{block}"
        else:
            out.append(block)
    return out


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def split_text(text: str) -> list[str]:
    """Passages of about PASSAGE_CHARS: whole paragraphs gathered, a long one cut between sentences."""
    pieces: list[str] = []
    for para in paragraphs(text):
        if len(para) <= MAX_PARAGRAPH:
            pieces.append(para)
            continue
        chunk = ""
        for sentence in sentences(para):
            if chunk and len(chunk) + len(sentence) > PASSAGE_CHARS:
                pieces.append(chunk)
                chunk = ""
            chunk = f"{chunk} {sentence}".strip()
        if chunk:
            pieces.append(chunk)
    out: list[str] = []
    for piece in pieces:
        if out and len(out[-1]) + len(piece) <= PASSAGE_CHARS:
            out[-1] = f"{out[-1]}\n\n{piece}"
        else:
            out.append(piece[:MAX_PARAGRAPH * 2])
    return out[:MAX_PASSAGES]


def entry_texts(kind: str, text: str, data: dict) -> list[str]:
    """The passages of one entry (a FAQ keeps its question with its answer)."""
    if data.get("metadata_only"):  # wh40kdc's metadata: no rules text to quote, at most a core stratagem's summary
        # (all 367 11e faction stratagems' summaries too: one more confident wrong answer on the held-out set, no tuning
        # set answered differently; docs/architecture.md)
        notes = data.get("community_notes") if data.get("category") == "Core" else None
        return [notes.strip()[:MAX_PARAGRAPH * 2]] if isinstance(notes, str) and notes.strip() else []
    if kind == "keyword" and "categories" in data:  # a seed page's keyword list: the importer wrote "Used in
        # Leagues of Votann datasheets.", which matched every question naming the faction and answered none
        return []
    if kind == "faq" and data.get("question"):
        return [f"Q: {data['question']}\nA: {data.get('answer') or ''}".strip()[:MAX_PARAGRAPH * 2]]
    if kind == "datasheet":  # one line a profile, weapon or ability: each line is a paragraph
        return split_text(text.replace("\n", "\n\n"))
    return split_text(text)


def create(conn: sqlite3.Connection) -> None:
    """The passage table and its FTS5 index, when missing (inside the caller's transaction)."""
    conn.execute("CREATE TABLE IF NOT EXISTS passages (rowid INTEGER PRIMARY KEY, entry_id TEXT NOT NULL, "
                 "kind TEXT NOT NULL, name TEXT NOT NULL, number TEXT, edition TEXT NOT NULL, "
                 "source TEXT NOT NULL, text TEXT NOT NULL, title TEXT NOT NULL, words TEXT NOT NULL, "
                 "summary INTEGER NOT NULL DEFAULT 0, other_numbers TEXT NOT NULL DEFAULT '', "
                 "factions TEXT NOT NULL DEFAULT '')")
    conn.execute("CREATE INDEX IF NOT EXISTS passages_entry ON passages (entry_id)")
    conn.execute("CREATE TABLE IF NOT EXISTS passage_members (edition TEXT NOT NULL, holder TEXT NOT NULL, "
                 "entry_id TEXT NOT NULL)")
    conn.execute("CREATE INDEX IF NOT EXISTS passage_members_holder ON passage_members (edition, holder)")
    conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS passage_asks USING fts5(entry_id UNINDEXED, edition UNINDEXED, "
                 "kind UNINDEXED, asks, tokenize='porter unicode61 remove_diacritics 2')")
    conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS passages_fts USING fts5(title, words, content='passages', "
                 "content_rowid='rowid', tokenize='porter unicode61 remove_diacritics 2')")
    conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS passages_core_fts USING fts5(title, words, content='', "
                 "tokenize='porter unicode61 remove_diacritics 2')")
    conn.execute("CREATE TABLE IF NOT EXISTS passage_words (word TEXT PRIMARY KEY, passages INTEGER NOT NULL)")


def rebuild(conn: sqlite3.Connection) -> int:
    """All passages again from the entries (inside the caller's transaction); returns how many.

    Whole, not per dataset: which entry of a shared thing is primary can change with any import. The tables are
    made anew, so a catalog whose passages have other columns (an older VERSION) gets the current ones.
    """
    for table in ("passages_fts", "passages_core_fts", "passages", "passage_members", "passage_asks", "passage_words"):
        conn.execute(f"DROP TABLE IF EXISTS {table}")
    create(conn)
    marks = ",".join("?" * len(PASSAGE_KINDS))
    rows = conn.execute(
        "SELECT e.id, e.kind, e.name, e.number, e.edition, e.source, e.text, e.data FROM entries e "
        "LEFT JOIN things t ON t.entry_id = e.id "
        f"WHERE e.kind IN ({marks}) AND (t.thing IS NULL OR t.thing = e.id) ORDER BY e.rowid", PASSAGE_KINDS)
    sections = section_names(conn)
    numbers = thing_numbers(conn)
    factions = thing_factions(conn)
    asked = players_asks(conn)
    batch: list[tuple] = []
    vocabulary: Counter[str] = Counter()
    count = 0
    for entry_id, kind, name, number, edition, source, text, data in rows:
        data = json.loads(data or "{}")
        printed = numbers.get(entry_id, [])
        number = number or (printed[0][0] if printed else None)
        others = "; ".join(f"{n} ({src})" for n, src in printed if n != number)
        summary = int(bool(data.get("metadata_only")))
        asks = asks_for(asked.get(edition, {}), kind, name, number)
        pieces = entry_texts(kind, text, data)
        if asks and pieces:
            conn.execute("INSERT INTO passage_asks (entry_id, edition, kind, asks) VALUES (?, ?, ?, ?)",
                         (entry_id, edition, kind, index_words(" ".join(asks))))
        title = index_words(f"{number or ''} {name}")
        owners = holders(name, data)
        parents = index_words(" ".join(parent_names(sections, edition, number) + owners))
        conn.executemany("INSERT INTO passage_members (edition, holder, entry_id) VALUES (?, ?, ?)",
                         [(edition, fold(owner), entry_id) for owner in owners])
        for piece in pieces:
            words = f"{parents} {index_words(piece)}".strip()
            vocabulary.update(set(_WORD.findall(words)))
            batch.append((entry_id, kind, name, number, edition, source, piece, title, words, summary, others,
                          factions.get(entry_id, "")))
        if len(batch) >= 2000:
            count += _insert(conn, batch)
            batch = []
    count += _insert(conn, batch)
    conn.execute("INSERT INTO passages_fts(passages_fts) VALUES ('rebuild')")
    conn.execute("INSERT INTO passages_core_fts (rowid, title, words) SELECT rowid, title, words FROM passages "
                 f"WHERE kind IN ({','.join('?' * len(CORE_KINDS))})", CORE_KINDS)
    conn.executemany("INSERT INTO passage_words (word, passages) VALUES (?, ?)", vocabulary.items())
    conn.execute("INSERT INTO meta (key, value) VALUES ('passages_version', ?) "
                 "ON CONFLICT(key) DO UPDATE SET value = excluded.value", (VERSION,))
    return count


def thing_factions(conn: sqlite3.Connection) -> dict[str, str]:
    """Each thing's factions, as `search(faction=...)` filters them: "|orks|" (faction keys between bars; a thing
    several factions share lists them all). An entry in no thing is its own."""
    found: dict[str, set[str]] = {}
    for thing, faction in conn.execute("SELECT COALESCE(t.thing, e.id), e.faction FROM entries e "
                                       "LEFT JOIN things t ON t.entry_id = e.id WHERE e.faction IS NOT NULL"):
        found.setdefault(thing, set()).add(faction_key(faction))
    return {thing: "|" + "|".join(sorted(keys)) + "|" for thing, keys in found.items()}


def thing_numbers(conn: sqlite3.Connection) -> dict[str, list[tuple[str, str]]]:
    """A thing's primary entry id -> the (number, source) pairs its numbered stratagems and rules print, one per
    number, primary's first: what the passage cites, and any disagreement between the sources."""
    out: dict[str, list[tuple[str, str]]] = {}
    for thing, number, source, number_source in conn.execute(
            "SELECT t.thing, e.number, e.source, json_extract(e.data, '$.number_source') FROM things t "
            "JOIN entries e ON e.id = t.entry_id WHERE e.number IS NOT NULL AND e.kind IN ('stratagem', 'rule') "
            "ORDER BY t.thing, e.id != t.thing, e.rowid"):
        pairs = out.setdefault(thing, [])
        label = source_label(number_source or source, {})
        if all(n != number for n, _ in pairs):
            pairs.append((number, label))
    return out


def asks_for(asked: dict[str, list[str]], kind: str, name: str, number: str | None) -> list[str]:
    """The players' asks written for one entry of one edition: a core rule or keyword by its number or name,
    a faction's ability, stratagem, detachment or enhancement by its kind and name (bot/catalog/asks.py)."""
    if kind in CORE_KINDS:  # players' asks for a core rule or keyword are keyed by its number or name
        return asked.get(number or "", []) + asked.get(asks_mod.rule_key(name), [])
    return asked.get(asks_mod.rule_key(name, kind), []) if kind in asks_mod.FACTION_KINDS else []


def players_asks(conn: sqlite3.Connection) -> dict[str, dict[str, list[str]]]:
    """The players' asks the catalog was built with (asks.load's shape; none when it holds none)."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (asks_mod.META_KEY,)).fetchone()
    try:
        value = json.loads(row[0]) if row else {}
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def section_names(conn: sqlite3.Connection) -> dict[tuple[str, str], str]:
    """(edition, rule number) -> the numbered rule's name: what a sub-section's parents are called."""
    return {(edition, number): name for edition, number, name in conn.execute(
        "SELECT edition, number, name FROM entries WHERE kind = 'rule' AND number IS NOT NULL")}


def parent_names(sections: dict[tuple[str, str], str], edition: str, number: str | None) -> list[str]:
    """The names of the sections a numbered rule sits in, nearest first: 20.04 Ingress Move is in 20.00
    Strategic Reserves, 02.02.01 Modifiers in 02.02 Profiles and 02.00 Datasheets."""
    parts = (number or "").split(".")
    if len(parts) < 2 or not all(p.isdigit() for p in parts):
        return []
    parents = [".".join(parts[:i]) for i in range(len(parts) - 1, 1, -1)] + [f"{parts[0]}.{'0' * len(parts[1])}"]
    return [sections[(edition, p)] for p in dict.fromkeys(parents) if p != number and (edition, p) in sections]


def holders(name: str, data: dict) -> list[str]:
    """What an entry belongs to, as players name it with the question: a detachment rule, stratagem or
    enhancement its detachment ("war horde sustained hits" -> Get Stuck In), an ability the datasheets that
    carry it ("painboy fnp" -> Dok's Toolz)."""
    out = [data["detachment"]] if isinstance(data.get("detachment"), str) and data["detachment"] != name else []
    sheets = data.get("datasheets")
    if isinstance(sheets, list):
        out += [s for s in sheets[:MAX_HOLDERS] if isinstance(s, str)]
    return out


def members(conn: sqlite3.Connection, keys: list[tuple[str, str]]) -> dict[tuple[str, str], list[str]]:
    """(edition, folded name of a datasheet or detachment) -> the entries with passages that belong to it (see
    `holders`), in catalog order: a question naming the Warboss is asked about Might is Right too."""
    out: dict[tuple[str, str], list[str]] = {}
    for edition, holder in dict.fromkeys(keys[:100]):
        for (entry_id,) in conn.execute("SELECT entry_id FROM passage_members WHERE edition = ? AND holder = ? "
                                        "ORDER BY rowid", (edition, holder)):
            out.setdefault((edition, holder), []).append(entry_id)
    return out


def _insert(conn: sqlite3.Connection, batch: list[tuple]) -> int:
    conn.executemany("INSERT INTO passages (entry_id, kind, name, number, edition, source, text, title, words, "
                     "summary, other_numbers, factions) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", batch)
    return len(batch)


def fts_expression(words: Iterable[str]) -> str | None:
    """Any of the words, each quoted (no FTS5 syntax gets through); None when no word is left."""
    safe = []
    for word in words:
        word = re.sub(r"[^\w]", "", word)
        if word and word not in safe:
            safe.append(word)
    return " OR ".join(f'"{w}"' for w in safe[:MAX_WORDS]) or None


def search(conn: sqlite3.Connection, words: Iterable[str], *, limit: int = 50, edition: str | None = None,
           kinds: tuple[str, ...] | None = None, faction: str | None = None,
           core: bool = False) -> list[tuple[int, float]]:
    """(passage rowid, bm25) best first for passages holding any of `words` (bm25 is lower = better), of
    `edition`, `kinds` and `faction` (a faction key) when given; with `core`, the core rules and glossary ranked
    among themselves."""
    expr = fts_expression(words)
    if expr is None:
        return []
    table = "passages_core_fts" if core else "passages_fts"
    where, args = [f"{table} MATCH ?"], [expr]
    if edition:
        where.append("p.edition = ?")
        args.append(edition)
    if kinds:
        where.append(f"p.kind IN ({','.join('?' * len(kinds))})")
        args.extend(kinds)
    if faction:
        where.append("p.factions LIKE ?")
        args.append("%|" + faction.replace("%", "").replace("_", "") + "|%")
    sql = (f"SELECT f.rowid, bm25({table}, {NAME_WEIGHT}, 1.0) AS s FROM {table} f "
           + ("JOIN passages p ON p.rowid = f.rowid " if len(where) > 1 else "")
           + f"WHERE {' AND '.join(where)} ORDER BY s LIMIT ?")
    return [(int(r[0]), float(r[1])) for r in conn.execute(sql, (*args, limit)).fetchall()]


def search_asks(conn: sqlite3.Connection, words: Iterable[str], *, limit: int = 50,
                edition: str | None = None) -> list[str]:
    """The entries whose players' asks hold any of `words`, best bm25 first (of `edition` when given)."""
    expr = fts_expression(words)
    if expr is None:
        return []
    sql = "SELECT entry_id FROM passage_asks WHERE passage_asks MATCH ?" + (" AND edition = ?" if edition else "")
    args = [expr, edition] if edition else [expr]
    return [r[0] for r in conn.execute(sql + " ORDER BY bm25(passage_asks) LIMIT ?", (*args, limit))]


def fetch(conn: sqlite3.Connection, rowids: list[int]) -> dict[int, Passage]:
    out: dict[int, Passage] = {}
    for start in range(0, len(rowids), 500):
        chunk = rowids[start:start + 500]
        marks = ",".join("?" * len(chunk))
        for r in conn.execute("SELECT rowid, entry_id, kind, name, number, edition, source, text, summary, "
                              f"other_numbers FROM passages WHERE rowid IN ({marks})", chunk):
            out[int(r[0])] = Passage(int(r[0]), r[1], r[2], r[3], r[4], r[5], r[6], r[7], bool(r[8]), r[9])
    return out


def ids_of(conn: sqlite3.Connection, entry_ids: list[str]) -> dict[str, list[int]]:
    """The passage rowids of each entry, in order."""
    out: dict[str, list[int]] = {}
    marks = ",".join("?" * len(entry_ids[:500]))
    if marks:
        for rowid, entry_id in conn.execute(f"SELECT rowid, entry_id FROM passages WHERE entry_id IN ({marks}) "
                                            "ORDER BY rowid", entry_ids[:500]):
            out.setdefault(entry_id, []).append(int(rowid))
    return out


def defining(conn: sqlite3.Connection, term: str, edition: str | None = None) -> list[int]:
    """The core-rules passages (rules and glossary) that define `term`: print it in bold, as the 11e core rules
    print a term where they define it ("**Armour Penetration (AP)**: ..." in 02.04 Weapons)."""
    pattern = "%**" + term.replace("\\", "").replace("%", "").replace("_", "") + "%"
    sql = ("SELECT rowid FROM passages WHERE kind IN ('rule', 'keyword') AND text LIKE ? COLLATE NOCASE"
           + (" AND edition = ?" if edition else "") + " ORDER BY rowid LIMIT 5")
    return [int(r[0]) for r in conn.execute(sql, (pattern, edition) if edition else (pattern,))]


def vocabulary(conn: sqlite3.Connection) -> dict[str, int]:
    """Every word of the passages and how many passages hold it."""
    return {r[0]: int(r[1]) for r in conn.execute("SELECT word, passages FROM passage_words")}


def all_texts(conn: sqlite3.Connection) -> Iterable[tuple[int, str, str, str]]:
    """(rowid, edition, name, text) of every passage in rowid order: what the vectors are built from."""
    return conn.execute("SELECT rowid, edition, name, text FROM passages ORDER BY rowid")


def fingerprint(conn: sqlite3.Connection) -> str:
    """Which passages exist (count and rowid range and text size), to tell a vector file that belongs to them."""
    row = conn.execute("SELECT COUNT(*), COALESCE(MIN(rowid), 0), COALESCE(MAX(rowid), 0), "
                       "COALESCE(SUM(length(text)), 0) FROM passages").fetchone()
    return "-".join(str(int(v)) for v in row)
