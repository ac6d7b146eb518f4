"""`data update --source mfm` against a local aiohttp server over a real socket (never the internet):
the MFM fixture files in tests/fixtures/mfm are fetched, checked and kept as a points version; an unchanged
refresh writes nothing; every refused file is one line and the points in force stay."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web

from bot.catalog import update
from bot.points import book
from tests.shared_data import SHARED

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "fixtures" / "mfm"
FILES = ("meta.yaml", "leagues-of-votann.yaml", "orks.yaml")
SHARED_MFM = SHARED / "datasets" / "mfm-11e" / "data"


class FakeMfm:
    """Serves the fixture files with ETags and 304s; `files` can be changed by a test."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = dict(files)
        self.requests: list[str] = []

    async def handle(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        self.requests.append(name)
        if name not in self.files:
            raise web.HTTPNotFound()
        tag = '"' + hashlib.sha1(self.files[name]).hexdigest()[:16] + '"'
        if request.headers.get("If-None-Match") == tag:
            return web.Response(status=304, headers={"ETag": tag})
        return web.Response(body=self.files[name], headers={"ETag": tag, "Content-Type": "text/yaml"})


async def serve(fake: FakeMfm) -> tuple[web.AppRunner, str]:
    app = web.Application()
    app.router.add_get("/data/{name:.+}", fake.handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return runner, f"http://127.0.0.1:{port}/data/"


@pytest.fixture
async def mfm() -> AsyncIterator[tuple[FakeMfm, str]]:
    fake = FakeMfm({name: (FIXTURE / name).read_bytes() for name in FILES})
    runner, url = await serve(fake)
    try:
        yield fake, url
    finally:
        await runner.cleanup()


async def _update(url: str, data: Path, files: tuple[str, ...] = FILES) -> update.SourceReport:
    report = await update.download_source("mfm", url, data, files=files)
    if report.error is None and (report.new or not update.is_imported(data, "mfm")):
        try:
            report.imported = update.import_source(None, "mfm", data)
        except ValueError as exc:  # PointsDataError
            report.error = str(exc)
    return report


async def test_fetch_keep_version_then_unchanged_then_changed(mfm, tmp_path: Path) -> None:
    fake, url = mfm
    first = await _update(url, tmp_path)
    assert first.error is None and sorted(first.new) == sorted(FILES)
    assert first.imported == {"mfm v1.1 2026-07-22": 2}
    points = book.current(tmp_path)
    assert points is not None and points.label == "MFM v1.1, 2026-07-22"
    boyz = points.unit("Boyz")
    assert boyz is not None and boyz.cost(10).points > 0
    kept = sorted(p.name for p in book.folder(tmp_path).iterdir())
    assert kept == ["mfm-1.1-2026-07-22.json", "versions.json"]
    before = {p: p.stat().st_mtime_ns for p in book.folder(tmp_path).iterdir()}

    second = await _update(url, tmp_path)
    assert second.error is None and second.new == [] and second.imported == {}
    assert {p: p.stat().st_mtime_ns for p in book.folder(tmp_path).iterdir()} == before

    changed = fake.files["orks.yaml"].replace(b"points: 80", b"points: 85", 1)
    assert changed != fake.files["orks.yaml"]
    fake.files["orks.yaml"] = changed
    fake.files["meta.yaml"] = fake.files["meta.yaml"].replace(b"2026-07-22", b"2026-08-05")
    third = await _update(url, tmp_path)
    assert third.error is None and sorted(third.new) == ["meta.yaml", "orks.yaml"]
    assert [v["date"] for v in book.versions(tmp_path)] == ["2026-07-22", "2026-08-05"]
    assert book.current(tmp_path).label == "MFM v1.1, 2026-08-05"


BAD = {
    "unknown key": (b"units:", b"colour: red\nunits:", r"orks\.yaml: top level: unknown key 'colour'"),
    "missing faction name": (b"name: Orks\n", b"", r"orks\.yaml: top level: missing key 'name'"),
    "negative cost": (b"points: 80", b"points: -80", r"orks\.yaml: units\[\d+\]\.pricing\[0\]\.costs\[\d\]\.points: "
                                                     r"-80 is outside 0\.\.10,000"),
    "huge cost": (b"points: 80", b"points: 80000000", r"is outside 0\.\.10,000"),
    "malformed range": (b"range: '[1,)'", b"range: '[3,'",
                        r"units\[\d+\]\.pricing\[0\]\.range: '\[3,' is not an interval like \[1,\) or \[1,2\]"),
}


@pytest.mark.parametrize("case", sorted(BAD))
async def test_a_refused_file_is_one_line_and_the_points_in_force_stay(mfm, tmp_path: Path, case: str) -> None:
    fake, url = mfm
    assert (await _update(url, tmp_path)).error is None
    kept = {p.name: p.read_bytes() for p in book.folder(tmp_path).iterdir()}
    old, new, pattern = BAD[case]
    assert old in fake.files["orks.yaml"]
    fake.files["orks.yaml"] = fake.files["orks.yaml"].replace(old, new, 1)
    report = await _update(url, tmp_path)
    assert report.error is not None and "\n" not in report.error and re.search(pattern, report.error), report.error
    assert {p.name: p.read_bytes() for p in book.folder(tmp_path).iterdir()} == kept
    assert (update.folder_for(tmp_path, "mfm") / "orks.yaml").read_bytes() == (FIXTURE / "orks.yaml").read_bytes()
    assert not list(update.folder_for(tmp_path, "mfm").glob("*.part"))
    assert book.current(tmp_path).label == "MFM v1.1, 2026-07-22"


async def test_bomb_deep_nesting_ten_megabytes_and_a_missing_faction_are_refused(mfm, tmp_path: Path) -> None:
    fake, url = mfm
    assert (await _update(url, tmp_path)).error is None
    lol = "a: &a ['lol','lol','lol','lol','lol','lol','lol','lol','lol']\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},"
        f"*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)}]\n" for i in range(8))
    cases = {
        "bomb": (lol.encode(), r"orks\.yaml: more than 200,000 nodes once aliases are expanded"),
        "deep": (b"[" * 200_000 + b"]" * 200_000, r"orks\.yaml: nested more than 32 deep"),
        "10 MB": (b"# " + b"x" * (10 * 1024 * 1024) + b"\n",
                  r"orks\.yaml: 10,485,763 bytes announced; the limit is 2,097,152"),
    }
    for what, (body, pattern) in cases.items():
        fake.files["orks.yaml"] = body
        report = await _update(url, tmp_path)
        assert report.error and "\n" not in report.error and re.search(pattern, report.error), (what, report.error)
        assert book.current(tmp_path).label == "MFM v1.1, 2026-07-22"
    fake.files["orks.yaml"] = (FIXTURE / "orks.yaml").read_bytes()
    fake.files["meta.yaml"] += b"  - necrons\n"  # listed, but the set fetched has no necrons.yaml
    report = await _update(url, tmp_path)
    assert report.error == "necrons.yaml: missing, though meta.yaml lists the faction", report.error
    del fake.files["orks.yaml"]
    report = await _update(url, tmp_path)
    assert re.fullmatch(r"orks\.yaml: HTTP 404 from http://\S+", report.error or ""), report.error
    assert len(book.versions(tmp_path)) == 1


async def test_cli_update_source_mfm(mfm, tmp_path: Path) -> None:
    _fake, url = mfm
    env = {**os.environ, "COGITATOR_DATA": str(tmp_path), "COGITATOR_MFM_URL": url}
    code = ("import sys; from bot.catalog import update; update.MFM_FILES = " + repr(FILES)
            + "; from bot.__main__ import main; sys.exit(main(sys.argv[1:]))")

    async def run(*args: str) -> tuple[int, str, str]:
        proc = await asyncio.create_subprocess_exec(sys.executable, "-c", code, *args, cwd=REPO, env=env,
                                                    stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await asyncio.wait_for(proc.communicate(), 120)
        return proc.returncode, out.decode(), err.decode()

    rc, out, err = await run("data", "update", "--source", "mfm", "--json")
    assert rc == 0, err
    line = json.loads(out)
    assert line["source"] == "mfm" and len(line["new"]) == 3 and line["imported"] == {"mfm v1.1 2026-07-22": 2}
    rc, out, err = await run("data", "update", "--source", "mfm")
    assert rc == 0 and out.startswith("mfm: 0 files updated") and "imported" not in out, (out, err)
    assert not (tmp_path / "catalog.sqlite").exists()  # points never open the catalog


@pytest.mark.shared_data
@pytest.mark.skipif(not SHARED_MFM.is_dir(), reason="needs ../shared/datasets/mfm-11e")
async def test_the_whole_shared_snapshot_is_accepted(tmp_path: Path) -> None:
    files = ("meta.yaml",) + tuple(f"{slug}.yaml" for slug in update.MFM_FACTIONS)
    fake = FakeMfm({name: (SHARED_MFM / name).read_bytes() for name in files})
    runner, url = await serve(fake)
    try:
        report = await _update(url, tmp_path, files)
    finally:
        await runner.cleanup()
    assert report.error is None and len(report.new) == len(files)
    points = book.current(tmp_path)
    assert points.label == "MFM v1.1, 2026-07-22" and len(points.factions) == len(update.MFM_FACTIONS)


async def test_a_faction_file_added_upstream_is_fetched_and_imported_with_one_log_line(
        mfm, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """meta.yaml, not a list in the code, says which faction files there are (once it blocked the update)."""
    fake, url = mfm
    assert (await update.download_source("mfm", url, tmp_path)).error is None  # files from meta.yaml
    assert sorted(fake.requests) == sorted(FILES)
    update.import_source(None, "mfm", tmp_path)
    assert "exodites" not in update.MFM_FACTIONS
    fake.files["exodites.yaml"] = (REPO / "tests" / "fixtures" / "mfm-upstream" / "exodites.yaml").read_bytes()
    fake.files["meta.yaml"] = (fake.files["meta.yaml"].replace(b"2026-07-22", b"2026-09-01")
                               .replace(b"  - orks\n", b"  - orks\n  - exodites\n"))
    with caplog.at_level("WARNING", logger="cogitator.data"):
        report = await update.download_source("mfm", url, tmp_path)
    assert report.error is None and sorted(report.new) == ["exodites.yaml", "meta.yaml"], report
    assert sorted(report.unchanged) == ["leagues-of-votann.yaml", "orks.yaml"]
    lines = [r.getMessage() for r in caplog.records]
    assert lines == ["mfm: faction files not in MFM_FACTIONS, imported like the others: exodites.yaml"]
    assert update.import_source(None, "mfm", tmp_path) == {"mfm v1.1 2026-09-01": 3}
    points = book.current(tmp_path)
    assert points.label == "MFM v1.1, 2026-09-01" and points.unit("Dragon Knights").cost(6).points == 240


@pytest.mark.parametrize(("listed", "pattern"), [
    (b"  - ../../etc/passwd\n", r"meta\.yaml: factions\[2\]: '\.\./\.\./etc/passwd' is not a file name like 'orks' \(a-z, 0-9, -\)"),
    (b"".join(b"  - f%d\n" % i for i in range(120)), r"meta\.yaml: factions: 122 factions; the limit is 100"),
])
async def test_meta_yaml_cannot_name_a_path_or_unbounded_files(mfm, tmp_path: Path, listed: bytes,
                                                               pattern: str) -> None:
    fake, url = mfm
    fake.files["meta.yaml"] += listed
    report = await update.download_source("mfm", url, tmp_path)
    assert report.error and re.fullmatch(pattern, report.error), report.error
    assert fake.requests == ["meta.yaml"] and not list(update.folder_for(tmp_path, "mfm").glob("*.yaml"))
