"""`python -m bot data update`: fetch the current public data and import what changed.

Sources (base URLs are settings, see docs/operations.md):
- gdc: the game-datacards 11th-edition datasources (`<base>/<faction>.json`, `core/core_rules.json`,
  `faqs.json`, `keywords.json`), imported as game-datacards datasets;
- wahapedia: the Wahapedia 10th-edition CSV export (`<base>/Factions.csv`, ...);
- mfm: BSData/wh40k-11e-mfm's Munitorum Field Manual (`<base>/meta.yaml`, `<base>/<faction>.yaml`), kept
  as a points version in `COGITATOR_DATA/points/` (bot/points/book.py) rather than in the catalog.

Files land in `COGITATOR_DATA/downloads/<source>/` with a `.meta.json` of validators (ETag, Last-Modified),
sizes and dates. A source is all-or-nothing: every changed file is downloaded to `<name>.part` and checked;
only when all passed are they swapped in (`os.replace`, atomic per file) and the source re-imported. On any
failure the `.part` files are deleted and the previous files and catalog stay as they were.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sqlite3
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import aiohttp

try:
    import fcntl
except ImportError:  # not on Windows: there, two concurrent updates of one source are not prevented
    fcntl = None  # type: ignore[assignment]

from bot.catalog.download import USER_AGENT, DownloadError, Fetched, check_csv, check_json, fetch
from bot.catalog.importers.common import MAX_CSV_BYTES, MAX_JSON_BYTES

log = logging.getLogger("cogitator.data")

# game-datacards publishes no index of its 11th-edition faction files: these are the files of
# 11th/gdc/ in the datasources repository (main, July 2026). A faction added upstream needs a new line here.
GDC_FACTIONS = (
    "adeptasororitas", "adeptuscustodes", "adeptusmechanicus", "aeldari", "agents", "astramilitarum",
    "blacktemplar", "bloodangels", "chaos_spacemarines", "chaosdaemons", "chaosknights", "darkangels",
    "deathguard", "deathwatch", "drukhari", "emperors_children", "greyknights", "gsc", "imperialknights",
    "necrons", "orks", "space_marines", "spacewolves", "tau", "thousandsons", "titan", "tyranids", "votann",
    "worldeaters",
)
CHAPTER_APPROVED = "missions/chapter_approved_2026_2027.json"  # battle sizes for /army check (bot/points/sizes.py)
GDC_FILES = tuple(f"{f}.json" for f in GDC_FACTIONS) + ("core/core_rules.json", "faqs.json", "keywords.json",
                                                       CHAPTER_APPROVED)
# BSData/wh40k-11e-mfm's data/ as of MFM v1.1 (meta.yaml lists the same 29). The update fetches whatever
# meta.yaml lists (`_mfm_names`), so a faction added upstream is imported like the others, with one log line
# naming it; this list is what `--check` asks about before anything was downloaded.
MFM_FACTIONS = (
    "adepta-sororitas", "adeptus-custodes", "adeptus-mechanicus", "aeldari", "astra-militarum", "black-templars",
    "blood-angels", "chaos-daemons", "chaos-knights", "chaos-space-marines", "chaos-titan-legions", "dark-angels",
    "death-guard", "deathwatch", "drukhari", "emperors-children", "genestealer-cults", "grey-knights",
    "imperial-agents", "imperial-knights", "leagues-of-votann", "necrons", "orks", "space-marines", "space-wolves",
    "tau-empire", "thousand-sons", "titan-legions", "tyranids", "world-eaters",
)
MFM_FILES = ("meta.yaml",) + tuple(f"{f}.yaml" for f in MFM_FACTIONS)
WAHAPEDIA_FILES = (
    "Factions.csv", "Source.csv", "Datasheets.csv", "Datasheets_abilities.csv", "Datasheets_keywords.csv",
    "Datasheets_models.csv", "Datasheets_options.csv", "Datasheets_wargear.csv", "Datasheets_unit_composition.csv",
    "Datasheets_models_cost.csv", "Datasheets_stratagems.csv", "Datasheets_enhancements.csv",
    "Datasheets_detachment_abilities.csv", "Datasheets_leader.csv", "Stratagems.csv", "Abilities.csv",
    "Enhancements.csv", "Detachment_abilities.csv", "Detachments.csv", "Last_update.csv",
)
SOURCES = ("gdc", "wahapedia", "mfm")
FILE_TIMEOUT = 120.0  # seconds for one whole file (connect, headers and body)
PARALLEL = 4  # files fetched at once per source
META = ".meta.json"


@dataclass
class SourceReport:
    """What one source did: files new/unchanged, the failure that stopped it, what was imported."""

    source: str
    new: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    error: str | None = None
    imported: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    bytes: int = 0

    def to_json(self) -> dict:
        return {"source": self.source, "new": self.new, "unchanged": len(self.unchanged), "error": self.error,
                "imported": self.imported, "seconds": round(self.seconds, 2), "bytes": self.bytes}


def files_for(source: str) -> tuple[str, ...]:
    return {"gdc": GDC_FILES, "mfm": MFM_FILES}.get(source, WAHAPEDIA_FILES)


def url_for(settings, source: str) -> str:  # noqa: ANN001 - bot.config.Settings
    return {"gdc": settings.gdc_url, "wahapedia": settings.wahapedia_url, "mfm": settings.mfm_url}[source]


def _check_mfm(name: str) -> Callable[[bytes], None]:
    """Each MFM file is checked in full (safe, bounded YAML; every key known; costs in range) before it may
    replace the one in force."""
    from bot.points.mfm import PointsDataError, parse_faction, parse_meta

    def check(body: bytes) -> None:
        try:
            text = body.decode("utf-8-sig")
            parse_meta(text, name) if name == "meta.yaml" else parse_faction(text, name)
        except UnicodeDecodeError:
            raise DownloadError(name, "not UTF-8 text") from None
        except PointsDataError as exc:
            raise DownloadError(name, f"{exc.where}: {exc.reason}" if exc.where else exc.reason) from None

    return check


def _check_sizes(body: bytes) -> None:
    """The Chapter Approved file must give battle sizes we can read."""
    from bot.points.sizes import parse

    try:
        parse(json.loads(body.decode("utf-8-sig")))
    except (UnicodeDecodeError, ValueError) as exc:
        raise DownloadError(CHAPTER_APPROVED, str(exc)[:160]) from None


def _check_for(source: str, name: str) -> tuple[int, Callable[[bytes], None]]:
    if source == "mfm":
        from bot.points.yamlsafe import MAX_YAML_BYTES

        return MAX_YAML_BYTES, _check_mfm(name)
    if source == "gdc" and name == CHAPTER_APPROVED:
        return MAX_JSON_BYTES, _check_sizes
    if source == "gdc":
        return MAX_JSON_BYTES, check_json(name)

    def check(body: bytes) -> None:
        # the importer (and its HTML and seed parsers) is loaded only when a file came new: an unchanged
        # refresh (all 304) checks nothing, and start-up is most of its time
        from bot.catalog.importers.wahapedia_csv import OPTIONAL, REQUIRED

        check_csv(name, REQUIRED.get(name) or OPTIONAL.get(name) or ())(body)

    return MAX_CSV_BYTES, check


def folder_for(data_dir: Path, source: str) -> Path:
    return Path(data_dir) / "downloads" / source


def _local_name(name: str) -> str:
    """`core/core_rules.json` is kept flat (`core_rules.json`), as the gdc importer reads one folder; the
    missions file keeps its folder, out of the importer's way."""
    return name if name.startswith("missions/") else name.rsplit("/", 1)[-1]


def read_meta(folder: Path) -> dict:
    try:
        meta = json.loads((folder / META).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return meta if isinstance(meta, dict) else {}


def _write_meta(folder: Path, meta: dict) -> None:
    tmp = folder / (META + ".part")
    tmp.write_text(json.dumps(meta, indent=1, sort_keys=True), encoding="utf-8")
    os.replace(tmp, folder / META)


class _Progress:
    """A tqdm bar on a terminal (bytes), nothing otherwise (the bot, tests, pipes)."""

    def __init__(self, source: str, total_files: int, enabled: bool) -> None:
        self.bar = None
        if enabled:
            from tqdm import tqdm

            self.bar = tqdm(desc=f"{source}", unit="B", unit_scale=True, unit_divisor=1024, leave=True,
                            file=sys.stderr, postfix={"files": f"0/{total_files}"})
        self.total = total_files
        self.done = 0

    def add(self, n: int) -> None:
        if self.bar is not None:
            self.bar.update(n)

    def file_done(self) -> None:
        self.done += 1
        if self.bar is not None:
            self.bar.set_postfix(files=f"{self.done}/{self.total}")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


async def download_source(source: str, base_url: str, data_dir: Path, *, files: tuple[str, ...] | None = None,
                          timeout: float = FILE_TIMEOUT, progress: bool = False) -> SourceReport:
    """Fetch every file of `source`; swap the changed ones in only when all succeeded."""
    started = time.perf_counter()
    report = SourceReport(source)
    folder = folder_for(data_dir, source)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".lock", "a") as lock:
        if fcntl is not None:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                report.error = "another data update of this source is running (the bot's schedule or a CLI run)"
                return report
        return await _download_locked(source, base_url, folder, report, files, timeout, progress, started)


async def _download_locked(source: str, base_url: str, folder: Path, report: SourceReport,
                           files: tuple[str, ...] | None, timeout: float, progress: bool,
                           started: float) -> SourceReport:
    meta = read_meta(folder)
    names = files or files_for(source)
    base = base_url if base_url.endswith("/") else base_url + "/"
    bar = _Progress(source, len(names), progress)
    limit = asyncio.Semaphore(PARALLEL)
    results: list[Fetched] = []

    async def one(session: aiohttp.ClientSession, name: str) -> Fetched:
        max_bytes, check = _check_for(source, name if name == CHAPTER_APPROVED else _local_name(name))
        (folder / _local_name(name)).parent.mkdir(parents=True, exist_ok=True)
        async with limit:
            got = await fetch(session, base + name, name, folder / _local_name(name),
                              meta.get("files", {}).get(name, {}), max_bytes=max_bytes, timeout=timeout,
                              check=check, progress=bar.add)
        bar.file_done()
        return got

    try:
        async with aiohttp.ClientSession(headers={"User-Agent": USER_AGENT}) as session:
            if source == "mfm" and files is None:  # meta.yaml first: it says which faction files there are
                results.append(await one(session, "meta.yaml"))
                names = _mfm_names(results[0], folder)
                bar.total = len(names)
            tasks = [asyncio.ensure_future(one(session, n)) for n in names if not (results and n == "meta.yaml")]
            try:
                results += list(await asyncio.gather(*tasks))
            except BaseException:
                for t in tasks:
                    t.cancel()
                done = await asyncio.gather(*tasks, return_exceptions=True)
                for got in done:
                    if isinstance(got, Fetched) and got.part is not None:
                        got.part.unlink(missing_ok=True)
                raise
    except DownloadError as exc:
        report.error = str(exc)
    finally:
        bar.close()
        for leftover in folder.glob("**/*.part"):
            if report.error is not None:
                leftover.unlink(missing_ok=True)
    if report.error is None:
        now = datetime.now(UTC).isoformat(timespec="seconds")
        files_meta = meta.setdefault("files", {})
        for got in results:
            if got.status == "new" and got.part is not None:
                os.replace(got.part, folder / _local_name(got.name))
                report.new.append(got.name)
                report.bytes += got.size
                files_meta[got.name] = {"etag": got.etag, "last_modified": got.last_modified, "size": got.size,
                                        "fetched_at": now}
            else:
                report.unchanged.append(got.name)
                files_meta.setdefault(got.name, {}).update(
                    {k: v for k, v in (("etag", got.etag), ("last_modified", got.last_modified)) if v})
        if report.new or not (folder / META).exists():
            meta["updated_at"] = now
            meta["base_url"] = base
            _write_meta(folder, meta)
    report.seconds = time.perf_counter() - started
    return report


def _mfm_names(meta_file: Fetched, folder: Path) -> tuple[str, ...]:
    """The files of the MFM that `meta_file` (already checked) lists; factions this code has not seen before
    are fetched and imported like the others, and named in one log line."""
    from bot.points.mfm import PointsDataError, parse_meta

    path = meta_file.part if meta_file.part is not None else folder / "meta.yaml"
    try:
        factions = parse_meta(path.read_text(encoding="utf-8-sig")).factions
    except (OSError, UnicodeDecodeError, PointsDataError) as exc:  # a kept meta.yaml damaged on disk
        raise DownloadError("meta.yaml", str(exc)[:160]) from None
    new = [f for f in factions if f not in MFM_FACTIONS]
    if new:
        log.warning("mfm: faction files not in MFM_FACTIONS, imported like the others: %s",
                    ", ".join(f"{f}.yaml" for f in new), extra={"source": "mfm", "factions": new})
    return ("meta.yaml",) + tuple(f"{f}.yaml" for f in factions)


async def check_source(source: str, base_url: str, data_dir: Path, *, files: tuple[str, ...] | None = None,
                       timeout: float = FILE_TIMEOUT) -> SourceReport:
    """`--check`: which files are newer upstream (HEAD with the stored validators); nothing is written."""
    report = SourceReport(source)
    folder = folder_for(data_dir, source)
    meta = read_meta(folder).get("files", {})
    base = base_url if base_url.endswith("/") else base_url + "/"
    started = time.perf_counter()
    async with aiohttp.ClientSession(headers={"User-Agent": USER_AGENT}) as session:
        for name in files or files_for(source):
            local = folder / _local_name(name)
            headers = {}
            known = meta.get(name, {})
            if local.exists():
                headers = {k: v for k, v in (("If-None-Match", known.get("etag")),
                                             ("If-Modified-Since", known.get("last_modified"))) if v}
            try:
                async with asyncio.timeout(timeout):
                    async with session.head(base + name, headers=headers, allow_redirects=True) as response:
                        status = response.status
                        etag, modified = response.headers.get("ETag"), response.headers.get("Last-Modified")
            except (TimeoutError, aiohttp.ClientError, OSError) as exc:
                report.error = f"{name}: {type(exc).__name__} {str(exc)[:120]}".strip()
                break
            same = (etag == known.get("etag")) if etag else bool(modified and modified == known.get("last_modified"))
            if status == 304 or (local.exists() and same):
                report.unchanged.append(name)
            elif status == 200:
                report.new.append(name)
            else:
                report.error = f"{name}: HTTP {status}"
                break
    report.seconds = time.perf_counter() - started
    return report


def import_source(catalog, source: str, data_dir: Path, *,  # noqa: ANN001 - Catalog, imported lazily
                  separate_connection: bool = False) -> dict[str, int]:
    """Import the downloaded folder of `source` into the catalog (all-or-nothing, see Catalog.import_dataset),
    or for mfm keep it as a points version; record it, so an unchanged refresh need not open either.
    Raises CatalogImportError (mfm: PointsDataError) with nothing changed."""
    folder = folder_for(data_dir, source)
    if source == "mfm":
        from bot.points.book import import_folder

        points_meta, changed = import_folder(folder, data_dir)
        counts = {f"mfm v{points_meta.version} {points_meta.last_updated}": len(points_meta.factions)} \
            if changed else {}
    else:
        counts = catalog.import_dataset("gdc" if source == "gdc" else "wahapedia", folder,
                                        separate_connection=separate_connection)
    meta = read_meta(folder)
    meta["imported_at"] = datetime.now(UTC).isoformat(timespec="seconds")
    meta["imported_updated_at"] = meta.get("updated_at")
    _write_meta(folder, meta)
    return counts


def is_imported(data_dir: Path, source: str) -> bool:
    """Whether the files now in the download folder were imported and the catalog still holds them (a
    deleted catalog.sqlite is rebuilt from data/ without imports). Reads the catalog file directly: cheap."""
    meta = read_meta(folder_for(data_dir, source))
    if not meta.get("imported_at") or meta.get("imported_updated_at") != meta.get("updated_at"):
        return False
    if source == "mfm":
        from bot.points.book import versions

        return bool(versions(data_dir))
    path = Path(data_dir) / "catalog.sqlite"
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
        try:
            row = conn.execute("SELECT 1 FROM datasets WHERE name LIKE ? LIMIT 1", (f"{source}:%",)).fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        return False
    return row is not None


def source_dates(data_dir: Path) -> dict[str, str]:
    """For /about: when each downloaded source was last updated (ISO date), by source name."""
    out = {}
    for source in SOURCES:
        meta = read_meta(folder_for(data_dir, source))
        if meta.get("updated_at"):
            out[source] = str(meta["updated_at"])[:10]
    return out


START_DELAY = 60.0  # seconds after start-up before the bot's first scheduled refresh


async def refresh_once(catalog, settings, sources: tuple[str, ...] = SOURCES) -> list[SourceReport]:  # noqa: ANN001
    """One scheduled refresh in the running bot: downloads on the event loop (async, never blocking it),
    imports in a worker thread on their own database connection, then the search index is swapped in one
    step (Catalog.reload), so interactions keep being answered from the old data until the new is ready."""
    from bot.catalog.model import CatalogImportError
    from bot.points.mfm import PointsDataError

    reports = []
    for source in sources:
        url = url_for(settings, source)
        report = await download_source(source, url, settings.data_dir)
        if report.error is None and (report.new or not is_imported(settings.data_dir, source)):
            try:
                report.imported = await asyncio.to_thread(import_source, catalog, source, settings.data_dir,
                                                          separate_connection=True)
            except (CatalogImportError, PointsDataError) as exc:
                report.error = f"import failed, previous data kept: {exc}"
        if report.error:
            log.warning("data refresh failed; previous data kept", extra={"source": source, "error": report.error})
        else:
            log.info("data refresh", extra={"source": source, "new": len(report.new), "imported": report.imported})
        reports.append(report)
    return reports


async def refresh_forever(catalog, settings) -> None:  # noqa: ANN001
    """`COGITATOR_DATA_REFRESH`: refresh every `settings.data_refresh` seconds until cancelled."""
    await asyncio.sleep(START_DELAY)
    while True:
        try:
            await refresh_once(catalog, settings)
        except Exception:  # a refresh must never take the bot down; the next one tries again
            log.exception("data refresh crashed; previous data kept")
        await asyncio.sleep(settings.data_refresh)
