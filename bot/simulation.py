"""Runs the combat engine and draws its plot off the event loop, with a bounded worker pool.

Why threads, not processes: one exact simulation takes milliseconds and the plot about 0.1 s; most
of that time is spent inside numpy and Agg (C code that releases the GIL for the heavy parts). A
process pool would add pickling, a second copy of numpy/matplotlib per worker (~100 MB each) and
seconds of start-up on a 2-core host, for no gain: the engine refuses oversized requests *before*
doing any work (contract 1: "nothing hangs"), so no job needs to be killable.

The limits, all per process:
- `WORKERS` threads (2: the host has 2 cores) compute at once;
- at most `MAX_PENDING` requests are admitted (running plus queued); the next one gets a "busy, try
  again" UserError straight away instead of waiting in an unbounded queue;
- a request still unfinished after `TIMEOUT_S` is answered with a UserError; its thread finishes in
  the background (threads cannot be killed) and still counts against `MAX_PENDING` until it does.
"""

from __future__ import annotations

import asyncio
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from bot.errors import UserError

WORKERS = 2
MAX_PENDING = 8
TIMEOUT_S = 30.0

# Engine field paths (contract 1) in the words of the profile strings and command options.
_WEAPON_FIELDS = {
    "attacks": "A",
    "skill": "BS/WS",
    "strength": "S",
    "ap": "AP",
    "damage": "D",
    "keywords": "kw",
    "range": "range",
    "name": "name",
}
_TARGET_FIELDS = {
    "models": "target models",
    "toughness": "target T",
    "save": "target Sv",
    "invulnerable": "target inv",
    "wounds": "target W",
    "feel_no_pain": "target fnp",
    "feel_no_pain_mortal": "target fnp_mortal",
    "damage_reduction": "target dr",
    "keywords": "target kw",
    "wounds_lost": "target wounds_lost",
}
_LIMIT_WORDS = re.compile(r"\b(limit|too (?:many|large|big)|exceed|at most|beyond|maximum)\b", re.IGNORECASE)


def describe_field(path: str | None) -> str | None:
    """`volley[1].weapon.attacks` -> `weapon 2 A`; `target.save` -> `target Sv`; unknown paths unchanged."""
    if not path:
        return None
    match = re.fullmatch(r"volley\[(\d+)\](?:\.weapon)?\.?(\w+)?", path)
    if match:
        index = int(match.group(1)) + 1
        leaf = match.group(2)
        if leaf is None:
            return f"weapon {index}"
        if leaf == "models":
            return f"weapon {index} models"
        return f"weapon {index} {_WEAPON_FIELDS.get(leaf, leaf)}"
    match = re.fullmatch(r"target\.(\w+)", path)
    if match:
        return _TARGET_FIELDS.get(match.group(1), f"target {match.group(1)}")
    if path.startswith("context."):
        return path.removeprefix("context.")
    return path


def _user_error(message: str, field: str | None, request: dict[str, Any]) -> UserError:
    """Turn an engine RequestError into words for Discord; size-limit refusals suggest Monte Carlo."""
    label = describe_field(field)
    text = message.rstrip(".")
    if label and label.lower() not in text.lower():
        text = f"{label}: {text}"
    text += "."
    is_exact = request.get("method", "exact") == "exact"
    if is_exact and _LIMIT_WORDS.search(message) and "montecarlo" not in message.lower():
        text += " That is beyond what the exact engine computes; try `method: montecarlo`."
    return UserError(text, field=field)


def _compute(
    request: dict[str, Any], plot_title: str | None, with_plot: bool
) -> tuple[dict[str, Any], bytes]:
    """Worker-thread body: simulate, then draw. Imports are local so a missing engine is a clear error."""
    from engine import RequestError, simulate
    from engine.plot import plot_models_killed

    try:
        result = simulate(request)
    except RequestError as error:
        message = getattr(error, "message", None) or (str(error.args[0]) if error.args else str(error))
        raise _user_error(message, getattr(error, "field", None), request) from None
    png = plot_models_killed(result, title=plot_title) if with_plot else b""
    return result, png


class SimulationService:
    """The one way cogs run the engine: `await service.run(request)` -> (result dict, PNG bytes)."""

    def __init__(self) -> None:
        self._executor = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="cogitator-sim")
        self._lock = threading.Lock()
        self._admitted = 0
        self._closed = False

    @property
    def admitted(self) -> int:
        """Requests running or queued right now (for tests and the benchmark)."""
        return self._admitted

    def _admit(self) -> None:
        with self._lock:
            if self._closed:
                raise UserError("The simulator is shutting down; try again in a moment.")
            if self._admitted >= MAX_PENDING:
                raise UserError(
                    f"The simulator is busy ({MAX_PENDING} simulations in progress); try again in a few seconds."
                )
            self._admitted += 1

    def _release(self, _future: object = None) -> None:
        with self._lock:
            self._admitted -= 1

    async def run(
        self, request: dict[str, Any], *, plot_title: str | None = None, with_plot: bool = True
    ) -> tuple[dict[str, Any], bytes]:
        """Simulate `request` (contract 1) and draw its models-killed chart, without blocking the loop."""
        self._admit()
        try:
            future = self._executor.submit(_compute, request, plot_title, with_plot)
        except RuntimeError:  # executor shut down between _admit and submit
            self._release()
            raise UserError("The simulator is shutting down; try again in a moment.") from None
        future.add_done_callback(self._release)
        try:
            return await asyncio.wait_for(asyncio.wrap_future(future), timeout=TIMEOUT_S)
        except TimeoutError:
            raise UserError(
                f"The simulation took longer than {TIMEOUT_S:.0f} s and was abandoned; "
                "try fewer attacks or `method: montecarlo`."
            ) from None

    async def simulate(self, request: dict[str, Any]) -> dict[str, Any]:
        """The result only, no plot (for callers that render their own)."""
        result, _ = await self.run(request, with_plot=False)
        return result

    def close(self) -> None:
        """Refuse new work and let running jobs finish in the background; safe to call twice."""
        with self._lock:
            self._closed = True
        self._executor.shutdown(wait=False, cancel_futures=True)
