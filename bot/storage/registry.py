"""What each feature keeps in the state database, registered by the feature itself.

The storage floor knows connections, dialects, migrations and moving rows, not the features. A feature
that stores something registers it here when its module is imported (bot/games/store.py,
bot/guild_settings.py, bot/web/tokens.py), and `migrate-store` (bot/storage/move.py) takes its list from
here: whose tables to create on both sides, the small tables it copies whole, and the check that a game's
snapshot is its re-folded log. The command that moves (bot/storage/cli.py) imports the features first.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from bot.storage.base import Storage


@dataclass(frozen=True)
class SmallTable:
    """A table copied whole and compared as a set of rows; its key is `key`, else its first column."""

    name: str
    columns: tuple[str, ...]
    counted_as: str  # the field of the move's report that counts its rows
    key: tuple[str, ...] = ()  # the columns of its primary key, when not the first column alone
    serial: bool = False  # its `id` comes from a PostgreSQL sequence, moved past the copied ids


@dataclass(frozen=True)
class StoredFeature:
    """One feature's part of the state database."""

    module: str  # the registering module: the move's worker processes import it to register it there too
    order: int  # tables are created in this order (a feature whose rows refer to another's comes after it)
    open: Callable[[Storage], Any]  # creates or migrates the feature's tables on a storage
    small_tables: tuple[SmallTable, ...] = ()
    # (snapshot text, the game's events as (seq, ts, actor_user, body) rows) -> is the snapshot the log re-folded
    log_check: Callable[[str, Sequence[Sequence[Any]]], bool] | None = None


_features: dict[str, StoredFeature] = {}


def register(feature: StoredFeature) -> None:
    """Called once by a feature module at import (again on a re-import: the same entry)."""
    _features[feature.module] = feature


def registered() -> list[StoredFeature]:
    """Every registered feature, in `order`."""
    return sorted(_features.values(), key=lambda f: f.order)
