"""The application's services, built once per process from the settings and shared by all cogs.

Cogs reach them as `bot.services`. Each service is created on first use so that start-up stays fast
and a console `:restart` can throw the whole object away and build a fresh one, as after a crash.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from functools import cached_property
from typing import TYPE_CHECKING

from bot.config import Settings

if TYPE_CHECKING:
    from bot.armies.reader import ArmyReader
    from bot.catalog.guild_aliases import GuildAliases
    from bot.catalog.misses import LookupMisses
    from bot.catalog.service import Catalog
    from bot.games.store import GameStore
    from bot.guild_settings import GuildSettings
    from bot.leagues.store import LeagueStore
    from bot.sim.planner import UnitPlanner
    from bot.sim.service import SimulationService
    from bot.storage import Storage
    from bot.web.tokens import OverlayTokens


class Services:
    # The wall clock that stamps every game event (and so drives the chess clock); tests replace it.
    now: Callable[[], float] = staticmethod(time.time)

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    @cached_property
    def catalog(self) -> Catalog:
        from bot.catalog.service import open_catalog

        return open_catalog(self.settings)

    @cached_property
    def storage(self) -> Storage:
        """The state backend every store shares: SQLite (COGITATOR_DB) or PostgreSQL (COGITATOR_DATABASE_URL)."""
        from bot.storage import settings_storage

        return settings_storage(self.settings)

    @cached_property
    def games(self) -> GameStore:
        from bot.games.store import GameStore

        return GameStore(self.storage, now=lambda: self.now())  # read at each use: tests replace the clock

    @cached_property
    def guild_settings(self) -> GuildSettings:
        from bot.guild_settings import GuildSettings

        return GuildSettings(self.storage)

    @cached_property
    def guild_aliases(self) -> GuildAliases:
        from bot.catalog.guild_aliases import GuildAliases

        return GuildAliases(self.storage)

    @cached_property
    def leagues(self) -> LeagueStore:
        from bot.leagues.store import LeagueStore

        return LeagueStore(self.storage, now=lambda: self.now())

    @cached_property
    def lookup_misses(self) -> LookupMisses:
        from bot.catalog.misses import LookupMisses

        return LookupMisses(self.storage, now=lambda: self.now())

    @cached_property
    def simulation(self) -> SimulationService:
        from bot.sim.service import SimulationService

        return SimulationService(workers=self.settings.sim_workers, worker_mb=self.settings.sim_worker_mb)

    @cached_property
    def army_reader(self) -> ArmyReader:
        """Reads army lists in a worker process of its own (bot.armies.reader); in threads when
        COGITATOR_SIM_WORKERS=0 (no worker processes at all)."""
        from bot.armies.reader import WORKER_MB, WORKERS, ArmyReader, warm_worker
        from bot.sim.pool import SimPool

        if not self.settings.sim_workers:
            return ArmyReader(None)
        return ArmyReader(lambda: SimPool(WORKERS, WORKER_MB * 2**20, name="army-list", warm=warm_worker))

    @cached_property
    def overlay_tokens(self) -> OverlayTokens:
        from bot.web.tokens import OverlayTokens

        return OverlayTokens(self.storage)

    @cached_property
    def sim_planner(self) -> UnitPlanner:
        from bot.sim.planner import UnitPlanner

        return UnitPlanner(self.catalog)

    def open_state(self) -> None:
        """Open the state stores now, at start-up, rather than on the first command: their connections (and
        SQLite's -wal and -shm files) then exist before the disk can fill, so reads keep answering on a full
        disk (a first connection there fails: SQLite cannot create its shared-memory file)."""
        _ = (self.games, self.guild_settings, self.guild_aliases, self.lookup_misses, self.overlay_tokens,
             self.leagues)

    def close(self) -> None:
        """Close whatever was opened; safe to call twice."""
        self.__dict__.pop("sim_planner", None)
        for name in ("catalog", "games", "leagues", "guild_settings", "guild_aliases", "lookup_misses", "simulation",
                     "army_reader", "overlay_tokens", "storage"):
            service = self.__dict__.pop(name, None)
            if service is not None and hasattr(service, "close"):
                with contextlib.suppress(Exception):
                    service.close()
