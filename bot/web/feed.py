"""The change stream behind the live pages: committed game changes, seen by polling the state database.

One poller per process checks every watched game's `(last_seq, status)` in a single query each tick.
Polling the database, not in-memory state, is what makes a change made by another shard, another
process or a restarted bot reach the page. When a game changed, its export is built once and the same
encoded bytes go to every page watching it; each page keeps only the newest update (a one-slot box),
so a slow reader costs one message of memory, never a backlog. The same tick reads which links of the
watched games still exist: a page whose link was revoked (by any process), or whose game is gone, is
told so and its stream ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable
from concurrent.futures import Executor
from typing import Any

from bot.web.guard import Throttled
from bot.web.view import overlay_view

log = logging.getLogger("cogitator.web")

POLL_INTERVAL_S = 0.1


class Mailbox:
    """The newest update for one page: putting replaces what was not read yet. `ended` once the page's
    link was revoked or its game is gone."""

    __slots__ = ("_event", "_value", "link", "ended")

    def __init__(self, link: str = "") -> None:
        self._value: bytes | None = None
        self._event = asyncio.Event()
        self.link = link  # the hash of the token the page was opened with
        self.ended = False

    def end(self) -> None:
        self.ended = True
        self._event.set()

    def put(self, value: bytes) -> None:
        self._value = value
        self._event.set()

    def wake(self) -> None:
        self._event.set()

    async def get(self, timeout: float) -> bytes | None:
        """The next update, or None after `timeout` seconds without one."""
        # asyncio.timeout waits in the page's own task; wait_for (3.11) would start a task per wait, per page.
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await self._event.wait()
        self._event.clear()
        value, self._value = self._value, None
        return value


class _Watched:
    __slots__ = ("channel_id", "mailboxes", "version", "payload")

    def __init__(self, channel_id: int) -> None:
        self.channel_id = channel_id
        self.mailboxes: set[Mailbox] = set()
        self.version: tuple[int, str] | None = None
        self.payload: bytes | None = None


class GameFeed:
    """Subscriptions of pages to games, fed by one polling task while anyone watches."""

    def __init__(self, store_of: Callable[[], Any], *, tokens_of: Callable[[], Any] | None = None,
                 interval: float = POLL_INTERVAL_S, executor: Executor | None = None) -> None:
        self._store_of = store_of  # the current GameStore (a console :restart replaces it)
        self._tokens_of = tokens_of  # the current OverlayTokens: revoked links end their pages' streams
        self._executor = executor  # the web server's own threads, so pages never starve Discord's commands
        self._interval = interval
        self._games: dict[int, _Watched] = {}
        self._task: asyncio.Task[None] | None = None
        self._failures = Throttled(log)

    @property
    def pages(self) -> int:
        return sum(len(w.mailboxes) for w in self._games.values())

    async def subscribe(self, game_id: int, channel_id: int, link: str = "") -> tuple[Mailbox, bytes | None]:
        """A mailbox for the game's updates (for a page opened with the link of hash `link`) and the game's
        current state (None when the game is gone)."""
        watched = self._games.get(game_id)
        if watched is None:
            watched = self._games[game_id] = _Watched(channel_id)
        if watched.payload is None:
            await self._refresh({game_id: watched})  # before joining: the current state is returned, not mailed
        box = Mailbox(link)
        watched.mailboxes.add(box)
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._poll(), name="overlay-feed")
        return box, watched.payload

    def unsubscribe(self, game_id: int, box: Mailbox) -> None:
        watched = self._games.get(game_id)
        if watched is None:
            return
        watched.mailboxes.discard(box)
        if not watched.mailboxes:
            del self._games[game_id]

    def wake_all(self) -> None:
        """Wake every waiting page (the server is closing: streams end cleanly instead of being cut)."""
        for watched in self._games.values():
            for box in watched.mailboxes:
                box.wake()

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self._games.clear()

    async def _poll(self) -> None:
        while self._games:
            await asyncio.sleep(self._interval)
            try:
                await self._refresh(dict(self._games))
            except Exception as error:  # a locked or briefly unavailable database: try again next tick
                # Ten polls a second: an outage is one line a minute (with a count), not ten tracebacks a second.
                self._failures.warning("poll", "overlay feed poll failed (%s: %s); retrying every %.1f s",
                                       type(error).__name__, str(error)[:200], self._interval)

    async def _refresh(self, games: dict[int, _Watched]) -> None:
        store, tokens = self._store_of(), self._tokens_of() if self._tokens_of else None
        loop = asyncio.get_running_loop()
        versions, live = await loop.run_in_executor(self._executor, _marks, store, tokens, list(games))
        for gid, watched in games.items():
            for box in watched.mailboxes:
                if not box.ended and (gid not in versions or (live is not None and box.link not in live)):
                    box.end()
        changed = {gid: w for gid, w in games.items() if versions.get(gid) != w.version}
        if not changed:
            return
        payloads = await loop.run_in_executor(self._executor, _payloads, store, changed, versions)
        for gid, watched in changed.items():
            watched.version = versions.get(gid)
            watched.payload = payloads.get(gid)
            if watched.payload is not None:
                for box in watched.mailboxes:
                    box.put(watched.payload)


def _marks(store: Any, tokens: Any, game_ids: list[int]) -> tuple[dict[int, tuple[int, str]], set[str] | None]:
    """What one tick reads: each game's (last seq, status), and the hashes of its links that still work."""
    return store.versions(game_ids), tokens.live(game_ids) if tokens is not None else None


def _payloads(store: Any, games: dict[int, _Watched], versions: dict[int, tuple[int, str]]) -> dict[int, bytes]:
    out: dict[int, bytes] = {}
    for gid, watched in games.items():
        if gid not in versions:
            continue
        export = store.export(watched.channel_id, game_id=gid)
        if export is not None:
            view = overlay_view(export)
            view["seq"] = versions[gid][0]
            out[gid] = _html_safe(json.dumps(view, ensure_ascii=True, separators=(",", ":"))).encode()
    return out


def _html_safe(text: str) -> str:
    """JSON whose strings can't close a tag or open markup anywhere it ends up (defence in depth)."""
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
