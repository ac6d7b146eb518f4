"""The catalog service: builds the SQLite catalog when needed, imports datasets, searches.

`open_catalog(settings)` is what the rest of the bot uses (contract in the team brief). The built file
lives at `settings.data_dir / "catalog.sqlite"` and is only a cache: it is rebuilt from the seed pages,
wh40kdc and the kept imports (`bot/catalog/imports.py`, under `settings.data_dir / "imports"`) whenever it
is missing, empty, corrupt (fails to open or `PRAGMA quick_check`), outdated (the fingerprint of seeds,
aliases, wh40kdc overrides, wh40kdc version and builder version changed) or out of step with the kept
imports. Every rebuild but the very first logs a warning naming why and which imports were replayed.
Builds and imports are serialised across processes by a file lock beside the catalog.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from pathlib import Path

from bot.catalog import imports as kept
from bot.catalog import known as known_mod
from bot.catalog import known_list, shorthand, things
from bot.catalog.answers import Answer, Answerer, reads_as_name
from bot.catalog.building import (
    adopt_legacy,
    build_base,
    build_lock,
    fingerprint,
    kept_ids,
    open_checked,
    rebuild_from_sources,
)
from bot.catalog.defined_terms import defining_rule
from bot.catalog.faq_subject import faq_subject
from bot.catalog.importers.formats import IMPORT_FORMATS, load_import
from bot.catalog.known import KnownName, KnownNames
from bot.catalog.model import KINDS, CatalogImportError, Entry, Hit, Resolution
from bot.catalog.normalize import clean_text, normalize
from bot.catalog.search import (
    MENTION_SCORE,
    SearchIndex,
    confident,
    ends_a_unit,
    fts_words,
    kind_hint,
    load_aliases,
    looks_hostile,
    looks_like_question,
    only_begins,
    query_edition,
)
from bot.catalog.store import CatalogDamaged, CatalogStore
from bot.catalog.things import name_key
from bot.config import DATA_ROOT, Settings
from bot.guild_settings import CURRENT_EDITION

log = logging.getLogger(__name__)

CATALOG_FILE = "catalog.sqlite"
RECENT_AUTOCOMPLETE = 2048  # cached autocomplete answers (cleared whenever the catalog changes)

Kinds = str | tuple[str, ...] | list[str] | None
# Without an edition filter, the current edition wins ties (pass prefer_edition=None for no preference).


def readings_keys(readings: list[str]) -> set[str]:
    return {name_key(r) for r in readings}


def _kinds(kind: Kinds) -> tuple[str, ...] | None:
    if kind is None or kind == "":
        return None
    kinds = (kind,) if isinstance(kind, str) else tuple(kind)
    bad = [k for k in kinds if k not in KINDS]
    if bad:
        raise ValueError(f"unknown kind {bad[0]!r}; kinds are {', '.join(KINDS)}")
    return kinds


class Catalog:
    """Search and fetch entries. Thread-safe; the index is swapped atomically after an import."""

    def __init__(self, store: CatalogStore, data_root: Path = DATA_ROOT, imports_root: Path | None = None) -> None:
        self.store = store
        self.data_root = data_root
        self.imports_root = imports_root  # where imports are kept; None: not kept (a throwaway catalog)
        self.aliases = load_aliases(data_root / "aliases.toml", data_root / "vocabulary.tsv")
        self.shorthand = shorthand.load(data_root / "shorthand.toml")
        self._lock = threading.Lock()
        self.index = SearchIndex(store.index_rows(), self.aliases, self.shorthand)
        self.known = self._known_names()
        self.answerer = Answerer(self)
        # Discord sends a request per keystroke and the first letters repeat a lot: remember recent answers.
        self._recent: OrderedDict[tuple, list[Hit]] = OrderedDict()

    # -- contract ----------------------------------------------------------------------------
    def search(self, query: str, *, kind: Kinds = None, edition: str | None = None, limit: int = 10,
               prefer_edition: str | None = CURRENT_EDITION) -> list[Hit]:
        """Best matches first: names (exact, prefix, token, fuzzy), then a full-text fallback."""
        hits, _scores, _matches = self._search(query, kind=kind, edition=edition, limit=limit, prefer_edition=prefer_edition)
        return hits

    def named(self, query: str, *, edition: str | None = None, limit: int = 10) -> list[Hit]:
        """The entries a question names: the hits whose name matched at least as well as a mention
        (search.MENTION_SCORE), judged on how well the name matched. Not the entries whose text merely shares
        the question's words: full-text hits score 85 down, and the tie-breaks of a hit's final score could
        lift one over ("does cover stack" named a Daemon Prince whose text holds those words)."""
        hits, _scores, matches = self._search(query, kind=None, edition=edition, limit=limit, prefer_edition=None)
        return [hit for hit, match in zip(hits, matches, strict=True) if match >= MENTION_SCORE]

    def answer(self, query: str, *, edition: str | None = None,
               prefer_edition: str | None = CURRENT_EDITION) -> Answer:
        """A question answered from the rules passages (bot/catalog/answers.py; contract 9)."""
        return self.answerer.answer(query, edition=edition, prefer_edition=prefer_edition)

    def asks_the_rules(self, query: str, resolution: Resolution) -> bool:
        """Whether a query that is not shaped as a question ("shooting after fall back", "fnp vs mortals") is
        still one, decided by the name search's evidence: it named nothing outright (no confident answer, no
        known-but-unloaded name, no rule number), it has at least two words, and it does not read as one of
        its candidates' names (answers.reads_as_name). Then it is answered from the rules passages."""
        query = clean_text(query or "")[:200]
        if resolution.confident or resolution.missing is not None or looks_hostile(query):
            return False
        if len(normalize(query).split()) < 2:
            return False
        found = self.shorthand.read(query)
        if found is not None and any(meaning.startswith("rule ") for _typed, meaning in found.said):
            return False  # "rule 13.08": the numbered rule is the answer, shown by the name search ("4++" is
            # shorthand for a rule's words, not a number typed)
        return not reads_as_name(self.index.readings(query), resolution.candidates)  # read as the search reads it

    def autocomplete(self, text: str, *, kind: Kinds = None, edition: str | None = None,
                     faction: str | None = None, limit: int = 25,
                     prefer_edition: str | None = CURRENT_EDITION) -> list[Hit]:
        """Names only (no full text), at most `limit` (Discord allows 25)."""
        limit = max(1, min(int(limit), 25))
        kinds = _kinds(kind)
        text = clean_text(text or "")
        faction = clean_text(faction) if faction else None
        if not text.strip():
            return self._browse(kinds, edition, faction, limit, prefer_edition)
        if looks_hostile(text):
            return []
        key = (text[:200], kinds, edition, faction, limit, prefer_edition)
        with self._lock:
            cached = self._recent.get(key)
            if cached is not None:
                self._recent.move_to_end(key)
                return list(cached)
        hits, _, _ = self.index.lookup(text, kinds=kinds, edition=edition, prefer_edition=prefer_edition,
                                       faction=faction, limit=limit, eager_fuzzy=False)
        with self._lock:
            self._recent[key] = hits
            while len(self._recent) > RECENT_AUTOCOMPLETE:
                self._recent.popitem(last=False)
        return list(hits)

    def factions(self) -> list[str]:
        """Every faction name in the catalog, spellings of one army folded to the first seen, sorted."""
        seen: dict[str, str] = {}
        for rec in self.index.records:
            if rec.faction:
                seen.setdefault(things.faction_key(rec.faction), rec.faction)
        return sorted(seen.values())

    def resolve(self, query: str, *, kind: Kinds = None, edition: str | None = None,
                prefer_edition: str | None = CURRENT_EDITION, faction: str | None = None) -> Resolution:
        """The entry to show, whether it is a confident answer, and the candidates to offer otherwise.

        Honest misses: when the query names a rule known to exist (known.py) that no entry of the asked
        kinds/edition is named after, `missing` says so, and a look-alike is not answered with confidence.
        """
        hits, scores, matches = self._search(query, kind=kind, edition=edition, limit=10, prefer_edition=prefer_edition,
                                    faction=faction)
        sure = bool(hits) and confident(query, scores, hits, matches)
        if hits and hits[0].kind == "faq" and not looks_like_question(query):
            hits, sure = faq_subject(self.index, self.get(hits[0].id), self.index.readings(query[:200]), hits, sure,
                                     query_edition(query) or edition, set(_kinds(kind) or KINDS))
        if sure and looks_like_question(query):
            # a question is not answered by an entry's name: even one it names ("can i reroll a reroll" names
            # Re-rolls, answered by a sub-section) or one whose text shares its words ("can i shoot after
            # falling back" -> a stratagem that mentions falling back) is offered, never claimed as the answer
            sure = False
        if isinstance(query, str) and query.strip() and not looks_hostile(query):
            readings = self.index.readings(query[:200])
            if sure and len(readings) > 1:
                # an abbreviation or nickname says what it means: a top hit that is none of its readings
                # ("burnas" = Burna Boyz, not the Burna-bommer) is offered, not answered
                top = name_key(normalize(hits[0].name))
                q = readings[0]
                meant = readings[1:] if q in self.aliases.whole or q in self.aliases.words else readings
                sure = any(name_key(r) in top or top in name_key(r) for r in meant if name_key(r))
                sure = sure and not self.aliases.names_ambiguous(q)  # "abby": Abaddon or the Abominant
            sure = (sure and self.index.fits_context(hits[0], query[:200]) and not only_begins(readings, hits)
                    and not ends_a_unit(readings, hits))
            unloaded = self._unloaded_rules(query[:200])
            if unloaded is not None and not (sure and name_key(normalize(hits[0].name)) in readings_keys(readings)):
                # "19.02" or "T12" on the embedded data: the full data has it; say so, do not guess
                return Resolution(None, False, hits, missing=unloaded)
            known = self.known.find(readings, _kinds(kind), typos=not sure)
            shorthand_read = self.shorthand.read(query[:200])
            if shorthand_read is not None and any(h.id for h in hits if self._numbered(h, shorthand_read.numbers)):
                known = None  # "ap-2": the core rules the shorthand names are loaded, whatever its words are
            if known is not None and not self._loaded(known, _kinds(kind), edition):
                top_key = name_key(normalize(hits[0].name)) if hits else ""
                meant = {name_key(r) for r in readings}
                abbreviation = len(readings) > 1  # "oc": the alias table says what it stands for
                if not sure or (top_key not in meant and (known.strong or abbreviation)):
                    defined = defining_rule(self.store, self.index, known.name, known.kinds, edition, prefer_edition)
                    if defined is not None:
                        # "armour penetration": no entry is named so, but 02.04 Weapons defines it
                        return Resolution(self.get(defined.id), not looks_like_question(query),
                                          [defined] + [h for h in hits if h.id != defined.id])
                    return Resolution(None, False, hits, missing=known)
        if not hits:
            return Resolution(None, False, [])
        best = self.get(hits[0].id)
        return Resolution(best, sure and best is not None, hits)

    def _unloaded_rules(self, query: str) -> KnownName | None:
        """On the embedded data, a query naming core rules by number ("19.02", "rule 13.08") or through shorthand
        ("T12") none of which is loaded: what to tell the asker (the full data would answer it)."""
        reading = self.shorthand.read(query)
        numbers = reading.numbers if reading is not None else ()
        if not numbers or any(self.index.by_number.get(n) for n in numbers) or self.full_sources_loaded():
            return None
        typed, meaning = reading.said[0]
        if meaning.startswith("rule "):
            return KnownName(f"Rule {numbers[0]}", "core rules number of the 11th edition", ("rule",))
        return KnownName(meaning, f"term of the 11th-edition core rules ({', '.join(numbers)})", ("rule",))

    def _numbered(self, hit: Hit, numbers: tuple[str, ...]) -> bool:
        idx = self.index.by_id.get(hit.id)
        return idx is not None and self.index.records[idx].number in numbers

    def _loaded(self, known: KnownName, kinds: tuple[str, ...] | None, edition: str | None) -> bool:
        """Whether any entry of a fitting kind (and edition, when one is asked) is named after `known`."""
        wanted = set(known.kinds) & set(kinds) if kinds else set(known.kinds)
        for idx in self.index.by_key.get(name_key(normalize(known.name)), ()):
            rec = self.index.records[idx]
            if rec.kind in wanted and (edition is None or rec.edition == edition):
                return True
        return False

    def full_sources_loaded(self) -> bool:
        """True once an import brought complete rules text (game-datacards or Wahapedia)."""
        return any(d["name"].startswith(("gdc", "wahapedia")) for d in self.datasets())

    def _known_names(self) -> KnownNames:
        """wh40kdc's lists (kept in the catalog's meta when it was built), the shipped names of the complete
        sources (known_list.py), plus the alias table's meanings,
        except meanings that only name part of a unit or weapon ("gatler" of Supa-gatler)."""
        meanings = {v for table in (self.aliases.words, self.aliases.whole) for values in table.values()
                    for v in values} - self.aliases.names  # the vocabulary's targets are entry names already
        names = [name_key(n) for n in self.index.names]
        keys = {m: name_key(m) for m in meanings}
        rules = sorted(m for m in meanings if not any(keys[m] in n and keys[m] != n for n in names))
        return KnownNames(known_mod.loads(self.store.meta("known_names")), rules, known_list.load())

    def get(self, entry_id: str) -> Entry | None:
        """The entry, with what the other sources of the same thing say (`data["sources"]`,
        `data["disagreements"]`; see bot/catalog/things.py)."""
        if not isinstance(entry_id, str) or len(entry_id) > 300 or clean_text(entry_id) != entry_id:
            return None
        entry = self.store.get(entry_id)
        if entry is None:
            return None
        return things.merged(entry, self.store.members(entry_id))

    def primary(self, entry_id: str) -> Entry | None:
        """The primary entry of `entry_id`'s thing (the most recent complete source), merged like `get`."""
        rec = self.index.by_id.get(entry_id) if isinstance(entry_id, str) else None
        target = self.index.records[rec].group if rec is not None else entry_id
        return self.get(target) or self.get(entry_id)

    def close(self) -> None:
        self.store.close()

    # -- extras ------------------------------------------------------------------------------
    def complete_text_for(self, entry_id: str) -> Entry | None:
        """For an entry whose source page left a table empty: the complete rule from another source."""
        for target, relation in self.store.links(entry_id):
            if relation == "complete-text":
                return self.get(target)
        return None

    def errata_for(self, entry_id: str) -> list[Entry]:
        """The FAQ answers and errata that name this entry, errata first, in publication order."""
        found = [e for target, relation in self.store.links(entry_id) if relation == "errata"
                 if (e := self.get(target)) is not None]
        return sorted(found, key=lambda e: (e.data.get("faq_kind") != "errata", e.data.get("publication") or "",
                                            e.data.get("order") or 0))

    def detachment_parts(self, entry: Entry) -> tuple[list[Hit], list[Hit]]:
        """A detachment's stratagems and enhancements from every loaded source, one per thing, the most
        complete source first (same edition and faction; matched on the detachment name they carry)."""
        want = normalize(str(entry.data.get("detachment") or entry.name))
        faction = normalize(entry.faction or "")
        parts: dict[str, dict[tuple, object]] = {"stratagem": {}, "enhancement": {}}
        for idx in self.index.detachment_parts.get((entry.edition, want), ()):
            rec = self.index.records[idx]
            if faction and normalize(rec.faction or "") not in (faction, ""):
                continue
            best = parts[rec.kind].get(rec.group)
            if best is None or (rec.incomplete, -rec.priority) < (best.incomplete, -best.priority):
                parts[rec.kind][rec.group] = rec
        out = []
        for kind in ("stratagem", "enhancement"):
            recs = sorted(parts[kind].values(), key=lambda r: r.name)
            out.append([Hit(r.id, r.kind, r.name, r.edition, r.source, 0.0, r.faction) for r in recs])
        return out[0], out[1]

    def loaded_sources(self) -> list[tuple[str, str]]:
        """(source, what is loaded) for /about: each source family with its version or data date(s),
        its dataset and entry counts (e.g. "game-datacards": "32 files, data of 2026-07-23 · 4,120 entries")."""
        import re

        families: dict[str, list[dict]] = {}
        for ds in self.datasets():
            families.setdefault(ds["name"].split(":", 1)[0], []).append(ds)
        names = {"seeds": "Seed pages", "wh40kdc": "wh40kdc", "wahapedia": "Wahapedia", "gdc": "game-datacards"}
        out = []
        for family, sets in families.items():
            entries = sum(int(d["entries"]) for d in sets)
            dates = sorted({m.group(0) for d in sets if (m := re.search(r"\d{4}-\d{2}-\d{2}", d["source"] or ""))})
            version = next((m.group(1) for d in sets if (m := re.search(r"\b(\d+\.\d+\.\d+)\b", d["source"] or ""))),
                           None)
            parts = [f"{len(sets)} files" if len(sets) > 1 else None,
                     f"version {version}" if version else None,
                     ("data of " + (dates[-1] if len(dates) == 1 else f"{dates[0]} to {dates[-1]}")) if dates else None,
                     f"imported {max(str(d['imported_at'])[:10] for d in sets)}", f"{entries:,} entries"]
            out.append((names.get(family, family), " · ".join(p for p in parts if p)))
        return out

    def count(self) -> int:
        return self.store.count()

    def datasets(self) -> list[dict]:
        return self.store.datasets()

    def import_dataset(self, fmt: str, path: Path, skipped: list[str] | None = None, *,
                       separate_connection: bool = False) -> dict[str, int]:
        """Import a Wahapedia folder or a game-datacards file/folder; all-or-nothing. Returns counts;
        files of a folder that were skipped as unknown are appended to `skipped`.

        The source is kept under `imports/` first, so a rebuilt catalog gets it back; if writing the
        catalog then fails, the kept copy is dropped again.
        """
        path = Path(path)
        batches = load_import(fmt, path, skipped)

        def write() -> None:
            if separate_connection:
                # a background refresh: write on a connection of its own, so readers on self.store (WAL) are
                # never held behind the import's lock; the index swaps in one step afterwards
                writer = CatalogStore(self.store.path)
                try:
                    writer.replace_datasets(batches)
                finally:
                    writer.close()
            else:
                self.store.replace_datasets(batches)

        if self.imports_root is None:
            write()
        else:
            with build_lock(self.store.path):
                try:
                    entry = kept.keep_import(self.imports_root, fmt, path, batches)
                except kept.KeptImportError as exc:
                    raise CatalogImportError(str(path), None, str(exc)) from exc
                try:
                    write()
                except BaseException:
                    kept.forget_import(self.imports_root, entry["id"])
                    raise
                kept.prune_superseded(self.imports_root, entry)
                self.store.set_meta("imports", kept_ids(kept.kept_imports(self.imports_root)))
        self.reload()
        return {name: len(entries) for name, (_s, _p, entries) in batches.items()}

    def kept_imports(self) -> list[dict]:
        """The manifest of kept imports, oldest first (see bot/catalog/imports.py)."""
        return kept.kept_imports(self.imports_root) if self.imports_root is not None else []

    def reload(self) -> None:
        index = SearchIndex(self.store.index_rows(), self.aliases, self.shorthand)
        with self._lock:
            self.index = index
            self._recent.clear()
        self.known = self._known_names()

    # -- internals ---------------------------------------------------------------------------
    def _browse(self, kinds: tuple[str, ...] | None, edition: str | None, faction: str | None, limit: int,
                prefer_edition: str | None) -> list[Hit]:
        """Before anything is typed: a first page of names (preferred edition, core and seed entries first)."""
        index = self.index
        faction_norm = normalize(faction) if faction else None
        picked = []
        for rec in index.records:
            if (kinds and rec.kind not in kinds) or (edition and rec.edition != edition):
                continue
            if faction_norm and normalize(rec.faction or "") != faction_norm:
                continue
            picked.append(rec)
        picked.sort(key=lambda r: (r.edition != prefer_edition, r.faction is not None, -r.priority, r.name))
        hits: list[Hit] = []
        groups: set[tuple] = set()
        for rec in picked:
            if rec.group in groups:
                continue
            groups.add(rec.group)
            hits.append(index.thing_hit(rec, 0.0))
            if len(hits) >= limit:
                break
        return hits

    def _search(self, query: str, *, kind: Kinds, edition: str | None, limit: int,
                prefer_edition: str | None, faction: str | None = None) -> tuple[list[Hit], list[float], list[float]]:
        limit = max(1, min(int(limit), 100))
        kinds = _kinds(kind)
        query = clean_text(query)  # lone surrogates would fail to encode for SQLite
        if not query.strip() or looks_hostile(query):
            return [], [], []
        index = self.index
        rec_scores, prefer, question = index.score(query, limit=limit, prefer_edition=prefer_edition, kinds=kinds,
                                                   edition=edition)
        typed = query_edition(query) is not None
        hits, scores, matches = index.rank(rec_scores, kinds, edition, prefer, faction, limit, typed)
        if question or not hits or scores[0] < 70:
            read = index.reading(query)
            words = fts_words(read)
            rows = self.store.full_text(words, limit=max(2 * limit, 20)) if words else []
            readings = [text for text, _ in index.variants(normalize(read))]
            if not rows and len(readings) > 1:
                # An abbreviation no text spells ("fnp"): search for what it stands for ("feel no pain").
                rows = self.store.full_text(fts_words(readings[1]), limit=max(2 * limit, 20))
            for idx, score in index.fulltext_scores(rows, question=question, kind_hint=kind_hint(query)).items():
                if score > rec_scores.get(idx, -1.0):
                    rec_scores[idx] = score
            if rows:
                hits, scores, matches = index.rank(rec_scores, kinds, edition, prefer, faction, limit, typed)
        return hits, scores, matches


# ---------------------------------------------------------------------------------------------
# Building


def open_catalog(settings: Settings, *, data_root: Path = DATA_ROOT, rebuild: bool = False) -> Catalog:
    """Open the catalog under `settings.data_dir`, (re)building it first when needed (see module doc)."""
    path = Path(settings.data_dir) / CATALOG_FILE
    root = kept.imports_dir(settings.data_dir)
    with build_lock(path):
        fresh = not path.exists() or path.stat().st_size == 0
        reason = ("missing" if not path.exists() else "empty") if fresh else None
        store, problem = open_checked(path)
        if store is None:
            reason = f"corrupt ({problem}); the damaged file was moved to {path.name}.corrupt"
            store = CatalogStore(path)
        try:
            entries = kept.kept_imports(root)
            fp = fingerprint(data_root)
            if reason is None:
                if rebuild:
                    reason = "rebuild requested"
                elif store.meta("fingerprint") != fp:
                    reason = "outdated (seed pages, aliases, wh40kdc or the builder changed)"
                elif store.meta("imports") != kept_ids(entries):
                    reason = "out of step with the kept imports"
            if reason is None:
                return Catalog(store, data_root, root)
            notes = [] if fresh or problem else adopt_legacy(store, root, entries)
            entries = kept.kept_imports(root)
            started = time.perf_counter()
            replayed, failed = rebuild_from_sources(store, data_root, root, entries)
            store.set_meta("fingerprint", fp)
            store.set_meta("imports", kept_ids(entries))
            message = (f"catalog {path} was {reason}: rebuilt in {time.perf_counter() - started:.1f}s from the "
                       f"seed pages and wh40kdc; replayed {len(replayed)} kept import(s)"
                       + (f": {', '.join(replayed)}" if replayed else ""))
            if failed:
                message += f"; could not replay {len(failed)}: {'; '.join(failed)}"
            if notes:
                message += f"; {'; '.join(notes)}"
            if fresh and not entries and not rebuild:
                log.info(message)  # a first start: nothing was lost, nothing to warn about
            else:
                log.warning(message)
            return Catalog(store, data_root, root)
        except BaseException:
            store.close()
            raise


__all__ = ["Catalog", "CatalogDamaged", "CatalogImportError", "open_catalog", "build_base", "fingerprint",
           "load_import", "IMPORT_FORMATS"]
