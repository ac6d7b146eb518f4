"""A least-recently-used cache by value, bounded by entry count and by bytes: compiled plans (engine.plan),
the stage cache (`STAGES`, below) and validated request parts (engine.request) use it. Values are immutable;
their size is `sizeof(value)` (by default `value.nbytes`, which numpy arrays and plans report), and a value
larger than the whole cap is not kept."""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any


def _nbytes(value: Any) -> int:
    return value.nbytes


def _nothing(_value: Any) -> int:
    return 0


class Cache:
    """Values by key: least recently used first out, bounded by count and bytes; thread-safe."""

    def __init__(self, max_entries: int, max_bytes: int | None = None, sizeof: Callable[[Any], int] = _nbytes) -> None:
        """Without `max_bytes`, bounded by count only: for small records whose size is not worth measuring."""
        self._values: OrderedDict[Hashable, Any] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.max_entries = max_entries
        self.max_bytes: float = math.inf if max_bytes is None else max_bytes
        self.sizeof = _nothing if max_bytes is None else sizeof

    def get(self, key: Hashable) -> Any | None:
        with self._lock:
            value = self._values.get(key)
            if value is not None:
                self._values.move_to_end(key)
            return value

    def put(self, key: Hashable, value: Any) -> None:
        size = self.sizeof(value)
        if size > self.max_bytes:
            return
        with self._lock:
            if key in self._values:
                return
            self._values[key] = value
            self._bytes += size
            while len(self._values) > self.max_entries or self._bytes > self.max_bytes:
                _, old = self._values.popitem(last=False)
                self._bytes -= self.sizeof(old)

    def clear(self) -> None:
        with self._lock:
            self._values.clear()
            self._bytes = 0

    def __len__(self) -> int:
        return len(self._values)


# The stages of requests, by value (docs/engine.md, "The cold path"): the chain's powers and one-attack
# matrices (engine.powers), single-profile groups' operator rows (engine.plan) and mixed-target groups'
# compiled steps (engine.mixed). Shared by every plan of the process.
STAGES = Cache(1024, 12 * 2**20)
