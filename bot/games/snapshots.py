"""The parsed snapshot of recently used games (`SnapshotCache`) and the snapshot's JSON text."""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from bot.games.model import GameState

# Games whose last snapshot this process keeps parsed (see `SnapshotCache`): the games in play; a parsed
# two-army state is about 110 KB of Python objects (plus its ~32 KB text), and a miss only costs one parse.
SNAPSHOT_CACHE_GAMES = 64


@dataclass
class _Cached:
    text: str  # the snapshot exactly as stored
    state: GameState  # its parse; never handed out or edited (callers get a copy)
    armies: dict[str, tuple[dict[str, Any], str]]  # each army object and its JSON text


class SnapshotCache:
    """The parsed snapshot of recently used games, so a command does not re-parse (and re-serialise) the
    whole state, two imported armies included, every time.

    An entry is used only when the stored snapshot text is exactly the text it was made from (a string
    comparison, far cheaper than a parse), so a change by another process, a restart or a hand-edited row
    can never be served stale: it is simply a miss. Callers always receive a copy of the cached state.
    Armies are replaced whole by events and never edited in place, so copies share them, and their JSON
    text is reused while the same army object is in the state.
    """

    def __init__(self, size: int = SNAPSHOT_CACHE_GAMES) -> None:
        self._size = size
        self._entries: OrderedDict[int, _Cached] = OrderedDict()
        self._lock = threading.Lock()

    def load(self, game_id: int, text: str) -> GameState:
        """A fresh, independent state for the stored snapshot `text` of `game_id`."""
        with self._lock:
            entry = self._entries.get(game_id)
            if entry is not None and entry.text == text:
                self._entries.move_to_end(game_id)
                return GameState.from_dict(entry.state.to_dict())
        data = json.loads(text)
        state = GameState.from_dict(data)
        state.check()
        armies = {owner: (army, None) for owner, army in state.armies.items()}
        self._put(game_id, _Cached(text, GameState.from_dict(state.to_dict()), armies))  # type: ignore[arg-type]
        return state

    def dump(self, game_id: int, state: GameState) -> str:
        """The snapshot text of `state` (identical to `dump_json(state.to_dict())`), remembered for `game_id`."""
        data = state.to_dict()
        with self._lock:
            entry = self._entries.get(game_id)
        known = entry.armies if entry is not None else {}
        armies: dict[str, tuple[dict[str, Any], str]] = {}
        for owner, army in data["armies"].items():
            hit = known.get(owner)
            armies[owner] = (army, hit[1] if hit is not None and hit[0] is army and hit[1] is not None
                             else dump_json(army))
        text = _dump_state(data, {owner: text for owner, (_, text) in armies.items()})
        self._put(game_id, _Cached(text, GameState.from_dict(data), armies))  # `data` is already a copy
        return text

    def _put(self, game_id: int, entry: _Cached) -> None:
        with self._lock:
            self._entries[game_id] = entry
            self._entries.move_to_end(game_id)
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)


def dump_json(value: Any) -> str:
    """Compact JSON, as every stored snapshot and event body is written."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _dump_state(data: dict[str, Any], armies: dict[str, str]) -> str:
    """`dump_json(data)` for a state's `to_dict()`, with each army's JSON text given (`armies`, by owner) instead of
    serialised again. The encoder writes a dict as its items in order, so the pieces join to the same text."""
    keys = list(data)
    at = keys.index("armies")
    head = dump_json({k: data[k] for k in keys[:at]})[1:-1]
    tail = dump_json({k: data[k] for k in keys[at + 1:]})[1:-1]
    middle = '"armies":{' + ",".join(dump_json(str(owner)) + ":" + armies[owner] for owner in data["armies"]) + "}"
    return "{" + ",".join(part for part in (head, middle, tail) if part) + "}"
