"""Bounded, conditional HTTP downloads of data files (aiohttp), for `python -m bot data update`.

Why a module of its own: every download must be conditional (ETag / Last-Modified), bounded in size and
time, checked before it is used, and must never leave a half-written file where the catalog reads. A file
is streamed into `<name>.part` beside its final place; the caller swaps it in with `os.replace` only once
every file of the source has passed its check.
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import aiohttp

CHUNK = 64 * 1024
USER_AGENT = "Cogitator data update (+https://github.com/; a Warhammer 40,000 rules bot)"


class DownloadError(Exception):
    """One file could not be fetched or failed its check; `file` names it, the message says why."""

    def __init__(self, file: str, reason: str) -> None:
        self.file = file
        self.reason = reason
        super().__init__(f"{file}: {reason}")


@dataclass
class Fetched:
    """The outcome for one file: `status` is "unchanged" (304 or same validators) or "new" (a .part file)."""

    name: str
    status: str
    part: Path | None = None
    size: int = 0
    etag: str | None = None
    last_modified: str | None = None


def validators(meta: dict) -> dict[str, str]:
    """Conditional request headers from what the last download recorded."""
    headers = {}
    if meta.get("etag"):
        headers["If-None-Match"] = meta["etag"]
    if meta.get("last_modified"):
        headers["If-Modified-Since"] = meta["last_modified"]
    return headers


async def fetch(session: aiohttp.ClientSession, url: str, name: str, target: Path, meta: dict, *,
                max_bytes: int, timeout: float, check: Callable[[bytes], None],
                progress: Callable[[int], None] | None = None) -> Fetched:
    """GET `url` into `target.part` when it changed; raise DownloadError on any failure (nothing kept).

    Bounded: the whole request (connect, headers, body) must finish within `timeout` seconds and the body
    may not exceed `max_bytes` (refused from Content-Length before reading when the server sends one).
    """
    part = target.with_name(target.name + ".part")
    headers = validators(meta) if target.exists() else {}
    try:
        async with asyncio.timeout(timeout):
            async with session.get(url, headers=headers, allow_redirects=True) as response:
                if response.status == 304:
                    return Fetched(name, "unchanged", None, target.stat().st_size, meta.get("etag"),
                                   meta.get("last_modified"))
                if response.status != 200:
                    raise DownloadError(name, f"HTTP {response.status} from {url}")
                length = response.content_length
                if length is not None and length > max_bytes:
                    raise DownloadError(name, f"{length:,} bytes announced; the limit is {max_bytes:,}")
                received = 0
                with open(part, "wb") as out:
                    async for chunk in response.content.iter_chunked(CHUNK):
                        received += len(chunk)
                        if received > max_bytes:
                            raise DownloadError(name, f"more than {max_bytes:,} bytes; the limit is {max_bytes:,}")
                        out.write(chunk)
                        if progress is not None:
                            progress(len(chunk))
                    out.flush()
                    os.fsync(out.fileno())
                if length is not None and received != length:
                    raise DownloadError(name, f"truncated: {received:,} of {length:,} bytes")
                etag = response.headers.get("ETag")
                modified = response.headers.get("Last-Modified")
    except DownloadError:
        part.unlink(missing_ok=True)
        raise
    except TimeoutError:
        part.unlink(missing_ok=True)
        raise DownloadError(name, f"no complete answer within {timeout:g}s from {url}") from None
    except (aiohttp.ClientError, OSError) as exc:
        part.unlink(missing_ok=True)
        reason = "truncated body" if isinstance(exc, aiohttp.ClientPayloadError) else \
            f"{type(exc).__name__}: {str(exc)[:200] or 'connection failed'}"
        raise DownloadError(name, reason) from None
    body = part.read_bytes()
    try:
        check(body)
    except DownloadError:
        part.unlink(missing_ok=True)
        raise
    if target.exists() and target.read_bytes() == body:
        part.unlink()  # the server did not answer 304, but nothing changed: keep the old file untouched
        return Fetched(name, "unchanged", None, len(body), etag, modified)
    return Fetched(name, "new", part, len(body), etag, modified)


def check_json(name: str, min_bytes: int = 2) -> Callable[[bytes], None]:
    """A check that the body is UTF-8 JSON with an object at the top level."""

    def check(body: bytes) -> None:
        if len(body) < min_bytes:
            raise DownloadError(name, f"only {len(body)} bytes")
        try:
            doc = json.loads(body.decode("utf-8-sig"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise DownloadError(name, f"not valid JSON ({str(exc)[:120]})") from None
        if not isinstance(doc, dict):
            raise DownloadError(name, "JSON, but not an object at the top level")

    return check


def check_csv(name: str, required: tuple[str, ...]) -> Callable[[bytes], None]:
    """A check that the body is a '|'-separated UTF-8 CSV whose header has the `required` columns."""

    def check(body: bytes) -> None:
        try:
            text = body.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise DownloadError(name, "not UTF-8 text") from None
        try:
            header = next(csv.reader(io.StringIO(text.split("\n", 1)[0]), delimiter="|"), [])
        except csv.Error as exc:
            raise DownloadError(name, f"not a CSV header ({exc})") from None
        missing = [c for c in required if c not in {h.strip() for h in header}]
        if missing:
            raise DownloadError(name, f"CSV header lacks {', '.join(missing[:5])}")

    return check
