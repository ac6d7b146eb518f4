"""How many heavy jobs (army lists read, simulations) one user and one server may have running at once.

Why (issue 19): the work itself is bounded and runs in capped worker processes, but one user starting
several at once would still hold every worker and make everyone else wait. So each service admits at most
`per_user` jobs per user and `per_guild` per server at a time, and at most `total` in all; the next one
is refused straight away with words that say to wait (a UserError), never queued without bound.
"""

from __future__ import annotations

import contextlib
import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

from bot.errors import UserError


@dataclass(frozen=True)
class Words:
    """The refusals, in the words of the job ("army list is being read", "simulation is running")."""

    user: str
    guild: str
    total: str


class CallerLimits:
    """Counts jobs in flight per user, per server and in all; `admit` is the one way in. A job without a
    user or server (the CLI, tests) counts only towards `total`."""

    def __init__(self, *, per_user: int, per_guild: int, total: int, words: Words) -> None:
        self.per_user, self.per_guild, self.total = per_user, per_guild, total
        self.words = words
        self._lock = threading.Lock()
        self._users: Counter[int] = Counter()
        self._guilds: Counter[int] = Counter()
        self.in_flight = 0

    @contextlib.contextmanager
    def admit(self, user: int | None, guild: int | None) -> Iterator[None]:
        with self._lock:
            if user is not None and self._users[user] >= self.per_user:
                raise UserError(self.words.user)
            if guild is not None and self._guilds[guild] >= self.per_guild:
                raise UserError(self.words.guild)
            if self.in_flight >= self.total:
                raise UserError(self.words.total)
            self.in_flight += 1
            if user is not None:
                self._users[user] += 1
            if guild is not None:
                self._guilds[guild] += 1
        try:
            yield
        finally:
            with self._lock:
                self.in_flight -= 1
                for counter, key in ((self._users, user), (self._guilds, guild)):
                    if key is not None:
                        counter[key] -= 1
                        if counter[key] <= 0:
                            del counter[key]  # only jobs in flight are kept
