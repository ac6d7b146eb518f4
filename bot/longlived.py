"""Keep large process-lifetime data out of the cyclic garbage collector's full collections.

wh40kdc's embedded data (the army-list dataset, the mission bundle) is loaded once and lives as long as the
process: about 110,000 tracked objects for the mission bundle alone. Every full (generation 2) collection
walks all of them (about 0.1 s idle, 0.2-0.8 s on the shared machine), and ordinary tracker commands
allocate enough to trigger one every few hundred commands, so an arbitrary command paid it: that was
bench_games' slowest command. Collecting once after the load and then freezing moves everything alive into
the permanent generation: still freed by reference counting, never scanned again.
"""

from __future__ import annotations

import gc
import threading

_lock = threading.Lock()


def freeze_loaded() -> None:
    """Call right after loading process-lifetime data (safe from any thread; cheap when nothing is new)."""
    with _lock:
        gc.collect()
        gc.freeze()
