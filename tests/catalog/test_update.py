"""`data update` against a local aiohttp server serving fixture files (never the internet): conditional
requests, 304s, a 404, a truncated body, a slow answer, bad JSON, size limits, --check, atomic swap."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sqlite3
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web
from hypothesis import given
from hypothesis import strategies as st

from bot import config
from bot.catalog import download, update
from bot.catalog.service import Catalog, open_catalog
from bot.errors import ConfigError
from tests.localserver import etag, serving

from .conftest import REPO, copy_catalog, settings_for

FIXTURE = REPO / "tests" / "fixtures" / "gdc-11e"
FILES = ("orks.json", "core/core_rules.json", "faqs.json", "keywords.json")


class FakeUpstream:
    """Serves `files` with ETag / Last-Modified and 304s, plus routes that misbehave on purpose."""

    def __init__(self) -> None:
        self.files = {name: (FIXTURE / name.rsplit("/", 1)[-1]).read_bytes() for name in FILES}
        self.requests: list[tuple[str, str, str | None]] = []  # (method, path, If-None-Match)
        self.slow = 5.0

    def etag(self, name: str) -> str:
        return etag(self.files[name])

    async def handle(self, request: web.Request) -> web.StreamResponse:
        name = request.match_info["name"]
        self.requests.append((request.method, name, request.headers.get("If-None-Match")))
        if name == "truncated.json":
            response = web.StreamResponse(headers={"Content-Length": "1000", "Content-Type": "application/json"})
            await response.prepare(request)
            await response.write(b'{"source": "40k-11e", "faqs": [')
            request.transport.close()  # the connection drops before the announced length
            return response
        if name == "slow.json":
            await asyncio.sleep(self.slow)
        if name == "bad.json":
            return web.Response(body=b'{"not": json', content_type="application/json")
        if name not in self.files:
            raise web.HTTPNotFound()
        tag = self.etag(name)
        if request.headers.get("If-None-Match") == tag:
            return web.Response(status=304, headers={"ETag": tag})
        body = b"" if request.method == "HEAD" else self.files[name]
        return web.Response(body=body, headers={"ETag": tag, "Last-Modified": "Thu, 23 Jul 2026 15:58:39 GMT",
                                                "Content-Type": "application/json"})


@pytest.fixture
async def upstream() -> AsyncIterator[tuple[FakeUpstream, str]]:
    fake = FakeUpstream()
    app = web.Application()
    app.router.add_route("*", "/gdc/{name:.+}", fake.handle)
    async with serving(app) as base:
        yield fake, f"{base}/gdc/"


def _state(folder: Path) -> dict[str, tuple[int, bytes]]:
    return {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in folder.iterdir() if p.is_file()}


async def test_full_then_unchanged_refresh_rewrites_nothing(upstream, writable_catalog: Catalog) -> None:
    fake, url = upstream
    tmp_path = writable_catalog.store.path.parent  # downloads beside the catalog, as in COGITATOR_DATA
    first = await update.download_source("gdc", url, tmp_path, files=FILES)
    assert first.error is None and sorted(first.new) == sorted(FILES)
    folder = update.folder_for(tmp_path, "gdc")
    assert sorted(p.name for p in folder.iterdir()) == [".lock", ".meta.json", "core_rules.json", "faqs.json",
                                                        "keywords.json", "orks.json"]
    counts = update.import_source(writable_catalog, "gdc", tmp_path)
    assert counts["gdc:faqs"] == 10 and counts["gdc:orks"] > 0 and "gdc:core-rules" in counts
    assert update.is_imported(tmp_path, "gdc")
    before = _state(folder)
    fake.requests.clear()
    second = await update.download_source("gdc", url, tmp_path, files=FILES)
    assert second.error is None and second.new == [] and len(second.unchanged) == 4
    assert all(tag is not None for _m, _p, tag in fake.requests)  # every request was conditional
    assert _state(folder) == before  # zero files rewritten, not even the metadata
    assert update.is_imported(tmp_path, "gdc")
    # a catalog that lost its imports (deleted and rebuilt from data/) is noticed: import again
    with sqlite3.connect(writable_catalog.store.path) as conn:
        conn.execute("DELETE FROM datasets WHERE name LIKE 'gdc:%'")
    assert not update.is_imported(tmp_path, "gdc")
    update.import_source(writable_catalog, "gdc", tmp_path)
    assert update.is_imported(tmp_path, "gdc")
    # upstream changes one file: only that one is fetched and swapped in
    fake.files["keywords.json"] = fake.files["keywords.json"].replace(b"Feel No Pain X+", b"Feel No Pain X+ (new)")
    third = await update.download_source("gdc", url, tmp_path, files=FILES)
    assert third.new == ["keywords.json"] and b"(new)" in (folder / "keywords.json").read_bytes()
    assert not update.is_imported(tmp_path, "gdc")
    assert update.source_dates(tmp_path)["gdc"] == json.loads((folder / ".meta.json").read_text())["updated_at"][:10]


@pytest.mark.parametrize("damage", ["deleted", "corrupt"])
async def test_a_rebuilt_catalog_gets_the_downloaded_data_back(upstream, base_dir: Path, tmp_path: Path,
                                                              damage: str) -> None:
    """`data update` imports through the kept-imports store (bot/catalog/imports.py): when catalog.sqlite is
    deleted or corrupt, the rebuild replays the downloaded files, and the next refresh finds them imported."""
    fake, url = upstream
    data_dir = copy_catalog(base_dir, tmp_path / "data")
    catalog = open_catalog(settings_for(data_dir))
    try:
        assert (await update.download_source("gdc", url, data_dir, files=FILES)).error is None
        counts = update.import_source(catalog, "gdc", data_dir)
        kept = [e for e in catalog.kept_imports() if e["format"] == "gdc"]
        assert [e["source"] for e in kept] == [str(update.folder_for(data_dir, "gdc").resolve())]
        assert sorted(kept[0]["datasets"]) == sorted(counts)
        # importing the same download again keeps one copy, not one per refresh
        update.import_source(catalog, "gdc", data_dir)
        assert len([e for e in catalog.kept_imports() if e["format"] == "gdc"]) == 1
        total = catalog.count()
    finally:
        catalog.close()
    path = data_dir / "catalog.sqlite"
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    if damage == "deleted":
        path.unlink()
    else:
        path.write_bytes(b"this is not a database " * 200)
    assert not update.is_imported(data_dir, "gdc")
    rebuilt = open_catalog(settings_for(data_dir))
    try:
        loaded = {d["name"]: d["entries"] for d in rebuilt.datasets()}
        assert {name: loaded.get(name) for name in counts} == counts
        assert rebuilt.count() == total
    finally:
        rebuilt.close()
    assert update.is_imported(data_dir, "gdc")  # so an unchanged refresh does not import again
    fake.requests.clear()
    again = await update.download_source("gdc", url, data_dir, files=FILES)
    assert again.new == [] and update.is_imported(data_dir, "gdc")


@pytest.mark.parametrize("bad, reason", [
    ("missing.json", "HTTP 404"),
    ("truncated.json", "truncated"),
    ("slow.json", "no complete answer within 0.5s"),
    ("bad.json", "not valid JSON"),
])
async def test_a_failing_file_keeps_every_previous_file(upstream, tmp_path: Path, bad: str, reason: str) -> None:
    fake, url = upstream
    assert (await update.download_source("gdc", url, tmp_path, files=FILES)).error is None
    folder = update.folder_for(tmp_path, "gdc")
    before = _state(folder)
    fake.files["orks.json"] = fake.files["orks.json"].replace(b"Waaagh!", b"Waaagh!!")  # a change upstream
    report = await update.download_source("gdc", url, tmp_path, files=(*FILES, bad), timeout=0.5)
    assert report.error is not None and report.error.startswith(bad) and reason in report.error
    assert report.new == [] and _state(folder) == before  # the changed orks.json was not swapped in
    assert not list(folder.glob("*.part"))


async def test_two_updates_of_one_source_do_not_run_at_once(upstream, tmp_path: Path) -> None:
    import fcntl

    _fake, url = upstream
    folder = update.folder_for(tmp_path, "gdc")
    folder.mkdir(parents=True)
    with open(folder / ".lock", "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # as the bot's scheduled refresh would hold it
        report = await update.download_source("gdc", url, tmp_path, files=FILES)
    assert report.error is not None and report.error.startswith("another data update of this source is running")
    assert not (folder / "orks.json").exists()
    assert (await update.download_source("gdc", url, tmp_path, files=FILES)).error is None


async def test_size_limit_refuses_before_writing(upstream, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake, url = upstream
    monkeypatch.setattr(update, "MAX_JSON_BYTES", 1000)
    report = await update.download_source("gdc", url, tmp_path, files=("orks.json",))
    assert report.error is not None and "the limit is 1,000" in report.error
    assert not (update.folder_for(tmp_path, "gdc") / "orks.json").exists()


async def test_check_reports_newer_files_and_writes_nothing(upstream, tmp_path: Path) -> None:
    fake, url = upstream
    nothing = await update.check_source("gdc", url, tmp_path, files=FILES)
    assert sorted(nothing.new) == sorted(FILES)  # nothing downloaded yet: all newer
    await update.download_source("gdc", url, tmp_path, files=FILES)
    folder = update.folder_for(tmp_path, "gdc")
    before = _state(folder)
    fake.files["faqs.json"] = fake.files["faqs.json"].replace(b"Codex: Orks", b"Codex: Orks ")
    report = await update.check_source("gdc", url, tmp_path, files=FILES)
    assert report.new == ["faqs.json"] and len(report.unchanged) == 3 and report.error is None
    assert _state(folder) == before
    assert all(method == "HEAD" for method, _p, _t in fake.requests[-4:])


async def test_cli_update_imports_then_exits_2_with_one_line_when_a_source_fails(
        upstream, base_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake, url = upstream
    data = copy_catalog(base_dir, tmp_path / "data")
    env = {**os.environ, "COGITATOR_DATA": str(data), "COGITATOR_GDC_URL": url,
           "COGITATOR_WAHAPEDIA_URL": url.replace("/gdc/", "/nothing/")}
    # the real default file list would ask for 29 factions; the fixture server has one, so the list is cut
    code = ("import sys; from bot.catalog import update; update.GDC_FILES = " + repr(FILES)
            + "; from bot.__main__ import main; sys.exit(main(sys.argv[1:]))")

    async def run(*args: str) -> tuple[int, str, str]:
        proc = await asyncio.create_subprocess_exec(sys.executable, "-c", code, *args, cwd=REPO, env=env,
                                                    stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await asyncio.wait_for(proc.communicate(), 300)
        return proc.returncode, out.decode(), err.decode()

    code_, out, err = await run("data", "update", "--source", "gdc", "--json")
    assert code_ == 0, err
    line = json.loads(out)
    assert line["source"] == "gdc" and len(line["new"]) == 4 and line["imported"]["gdc:faqs"] == 10
    code_, out, err = await run("data", "update", "--source", "gdc")
    assert code_ == 0 and out.startswith("gdc: 0 files updated") and "imported" not in out
    code_, out, err = await run("data", "update", "--source", "wahapedia")
    assert code_ == 2 and "Traceback" not in err
    last = err.strip().splitlines()[-1]  # files are fetched four at a time: any of the first may fail first
    assert re.fullmatch(r"cogitator: wahapedia: \w+\.csv: HTTP 404 from http://\S+; previous files and data kept",
                        last), last


def test_csv_check_wants_the_columns_the_importer_reads() -> None:
    check = download.check_csv("Factions.csv", ("id", "name"))
    check("\ufeffid|name|link|\r\nAC|Adeptus Custodes|x|\r\n".encode())
    with pytest.raises(download.DownloadError, match="lacks name"):
        check(b"id|title|\r\n")
    with pytest.raises(download.DownloadError, match="not UTF-8"):
        check(b"\xff\xfe\x00")


async def test_scheduled_refresh_imports_off_the_event_loop(upstream, base_dir: Path, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    import dataclasses
    import threading

    from bot.catalog.service import open_catalog

    from .conftest import settings_for

    _fake, url = upstream
    settings = dataclasses.replace(settings_for(copy_catalog(base_dir, tmp_path / "data")), gdc_url=url)
    monkeypatch.setattr(update, "GDC_FILES", FILES)
    threads: list[int] = []
    real_import = update.import_source

    def recording(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202 - passes through to the real import
        threads.append(threading.get_ident())
        return real_import(*args, **kwargs)

    monkeypatch.setattr(update, "import_source", recording)
    catalog = open_catalog(settings)
    try:
        assert not catalog.search("stompa transport section", kind="faq")
        (report,) = await update.refresh_once(catalog, settings, sources=("gdc",))
        assert report.error is None and report.imported["gdc:faqs"] == 10
        assert threads and threads[0] != threading.get_ident()  # the import ran in a worker thread
        assert catalog.search("stompa transport section", kind="faq")[0].name == "Stompa, Transport Section"
        again = await update.refresh_once(catalog, settings, sources=("gdc",))
        assert again[0].new == [] and again[0].imported == {} and len(threads) == 1
    finally:
        catalog.close()


@given(st.text(max_size=30))
def test_refresh_period_setting_is_off_a_bounded_period_or_a_clear_error(raw: str) -> None:
    try:
        value = config._interval({"COGITATOR_DATA_REFRESH": raw}, "COGITATOR_DATA_REFRESH")
    except ConfigError as exc:
        assert str(exc).startswith("COGITATOR_DATA_REFRESH must be")
    else:
        assert value is None or value >= config.MIN_REFRESH


@given(st.text(max_size=80))
def test_base_url_setting_is_an_http_folder_or_a_clear_error(raw: str) -> None:
    try:
        value = config._url({"COGITATOR_GDC_URL": raw}, "COGITATOR_GDC_URL", "https://example.org/x/")
    except ConfigError as exc:
        assert str(exc).startswith("COGITATOR_GDC_URL must be an http(s) URL")
    else:
        assert value.startswith(("http://", "https://")) and value.endswith("/")


async def test_the_bot_schedules_the_refresh_only_when_asked(settings) -> None:  # noqa: ANN001 - fixture
    import dataclasses

    from bot.console.session import ConsoleSession

    off = await ConsoleSession.open(settings)
    try:
        assert off.bot.data_refresh_task is None
    finally:
        await off.close()
    on = await ConsoleSession.open(dataclasses.replace(settings, data_refresh=600.0))
    try:
        task = on.bot.data_refresh_task
        assert task is not None and not task.done() and task.get_name().endswith("data-refresh")
        assert (await on.send("/rule query:lethal hits"))[0].embeds  # answering goes on meanwhile
    finally:
        await on.close()
    await asyncio.sleep(0)
    assert task.cancelled() or task.done()
