"""The game-state model: players, units, statuses and the battle clock, as plain JSON-able data.

State is never edited by hand: it is the fold of the event log (see `bot.games.events`). These classes
only hold it and convert it to and from the JSON snapshot stored next to the log.
"""

from __future__ import annotations

import functools
import re
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, field, is_dataclass
from typing import Any

PHASES = ("command", "movement", "shooting", "charge", "fight")
PHASE_LABELS = {p: p.capitalize() for p in PHASES}
LAST_ROUND = 5
MAX_JUDGEMENT = 2
# A riled-up expiry that never comes (e.g. Waaagh! Effigy: "This unit is riled up").
PERMANENT = 10_000


def turn_index(round_: int, active: int) -> int:
    """Turns are numbered 0, 1, 2, ... through the battle; player 0 (the starter) takes the even ones."""
    return (round_ - 1) * 2 + active


def turn_of(index: int) -> tuple[int, int]:
    """(battle round, active player index) of a turn number."""
    return index // 2 + 1, index % 2


@dataclass
class Player:
    user_id: int
    name: str
    faction: str
    cp: int = 0
    vp: int = 0
    # CP gained outside the Command phase, per battle round (10e caps it at 1); keys are str(round).
    extra_cp: dict[str, int] = field(default_factory=dict)
    # Once-per-battle things this player has used, by normalised name ("insane bravery", "waaagh").
    once_used: list[str] = field(default_factory=list)
    # Turn index at whose start the army-wide Waaagh! ends, or None.
    waaagh_until: int | None = None
    # VP by battle round (index 0 = round 1): mission primary, secondary cards, and everything else
    # (/vp add, /vp set, battle-ready). `vp` is always their sum.
    vp_primary: list[int] = field(default_factory=lambda: [0] * LAST_ROUND)
    vp_secondary: list[int] = field(default_factory=lambda: [0] * LAST_ROUND)
    vp_other: list[int] = field(default_factory=lambda: [0] * LAST_ROUND)
    # Secondary mission cards this player drew, in draw order (see `Secondary`).
    secondaries: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Unit:
    owner: int  # player index
    name: str
    judgement: int = 0
    riled_until: int | None = None  # turn index at whose start it ends
    shocked: bool = False
    oathband: bool = False  # marked by the opponent's Ruthless Efficiency
    destroyed: bool = False
    # An army unit (from the owner's imported list) knows its datasheet and size; free-text units are unlisted.
    unlisted: bool = True
    datasheet_id: str | None = None
    army_index: int | None = None  # position in the owner's army list
    models: int | None = None
    models_left: int | None = None
    wounds: int | None = None  # W of its main model type
    wounds_lost: int = 0  # on its damaged model
    leading: str | None = None  # the unit this leader leads (by name)
    tags: list[str] = field(default_factory=list)  # rule facts from the list, e.g. "waaagh"
    destroyed_round: int | None = None

    @property
    def key(self) -> str:
        return unit_key(self.name)

    @property
    def base_key(self) -> str:
        """The name without its "#2" suffix (a list's third "Boyz" is "Boyz #3")."""
        return unit_key(_NUMBERED.sub("", self.name))

    def label(self) -> str:
        """Compact state: "Boyz #2 · 7/10 models, 1 wound lost", "Kâhl · leads Hearthkyn Warriors"."""
        bits = []
        if self.unlisted:
            bits.append("unlisted")
        elif self.models is not None:
            left = self.models if self.models_left is None else self.models_left
            bits.append(f"{left}/{self.models} models" if left != self.models else
                        f"{self.models} model{'s' if self.models != 1 else ''}")
        if self.wounds_lost:
            bits.append(f"{self.wounds_lost} wound{'s' if self.wounds_lost != 1 else ''} lost")
        if self.leading:
            bits.append(f"leads {self.leading}")
        if self.destroyed:
            bits.append("destroyed")
        return f"{self.name} · {', '.join(bits)}" if bits else self.name


@dataclass
class StratagemUse:
    player: int
    name: str
    entry_id: str | None
    cp: int
    round: int
    turn: int
    phase: str
    unit: str | None
    unit_owner: int | None
    forced: bool = False


@dataclass
class Clock:
    """The chess clock, derived from event timestamps only (no ticking task).

    `used_s` is what each player has consumed up to `since`; while the clock runs, `holder` also
    consumes `now - since`. Remaining time is `budget_s - used_s - (now - since)`, computed on read.
    """

    budget_s: list[float]
    used_s: list[float] = field(default_factory=lambda: [0.0, 0.0])
    holder: int = 0  # player index whose time runs (or would run, while paused)
    since: float | None = None  # timestamp from which `holder` consumes time; None while paused or stopped
    follow: bool = True  # /game next hands the clock to the active player
    stopped: bool = False  # the game ended

    @property
    def running(self) -> bool:
        return self.since is not None

    def used(self, player: int, now: float) -> float:
        extra = now - self.since if self.since is not None and player == self.holder else 0.0
        return self.used_s[player] + max(0.0, extra)

    def remaining(self, player: int, now: float) -> float:
        return self.budget_s[player] - self.used(player, now)

    def settle(self, ts: float) -> None:
        """Charge the holder for the time since `since` (an event at `ts` is about to change the clock)."""
        if self.since is not None:
            self.used_s[self.holder] += max(0.0, ts - self.since)
            self.since = ts


@dataclass
class GameState:
    edition: str
    players: list[Player]
    round: int = 1
    active: int = 0
    phase: str = "command"
    over: bool = False  # the fifth battle round has ended
    ended: str | None = None  # "finished" or "abandoned" once /game end was used
    units: list[Unit] = field(default_factory=list)
    # Each player's imported army (contract 6 data, by str(player index)); its units are in `units`.
    armies: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Stratagems used in the current phase (for the once-per-phase checks); the whole battle's uses are
    # the `strat` events of the log, so the snapshot stays small however long the game runs.
    strat_uses: list[StratagemUse] = field(default_factory=list)
    seq: int = 0  # last event applied
    first: int = 0  # player index who takes the first turn of each battle round
    first_chosen: bool = False  # decided by the roll-off winner (or recorded), not just the default
    # The mission ({"id", "name", "edition", "deployment", "primary", "caps", "catalog"}), or None.
    mission: dict[str, Any] | None = None
    # The last roll-off: {"rolls": [[p0, p1], ...], "winner": index, "physical": bool}, or None.
    rolloff: dict[str, Any] | None = None
    clock: Clock | None = None
    # The battle size named at /game start (Chapter Approved's names); None: the edition's default
    # (Strike Force in 11e). `/army check` uses it in the game's channel.
    battle_size: str | None = None

    @property
    def turn(self) -> int:
        """The battle's turn number (0, 1, 2, ...): the first player takes the even ones."""
        return (self.round - 1) * 2 + (0 if self.active == self.first else 1)

    def whose_turn(self, index: int) -> tuple[int, int]:
        """(battle round, active player index) of a turn number."""
        round_, position = turn_of(index)
        return round_, position ^ self.first

    def player_index(self, user_id: int) -> int | None:
        for i, p in enumerate(self.players):
            if p.user_id == user_id:
                return i
        return None

    def units_of(self, owner: int) -> list[Unit]:
        return [u for u in self.units if u.owner == owner]

    def find_unit(self, owner: int, name: str) -> Unit | None:
        key = unit_key(name)
        return next((u for u in self.units if u.owner == owner and u.key == key), None)

    def army(self, owner: int) -> dict[str, Any] | None:
        return self.armies.get(str(owner))

    def waaagh_applies(self, unit: Unit) -> bool:
        """The army-wide Waaagh! reaches units with the Waaagh! ability; without a list, every unit."""
        return unit.unlisted or "waaagh" in unit.tags

    def riled(self, unit: Unit) -> bool:
        """Riled up by its own rule or by its army's Waaagh!."""
        until = unit.riled_until
        army = self.players[unit.owner].waaagh_until if self.waaagh_applies(unit) else None
        return (until is not None and until > self.turn) or (army is not None and army > self.turn)

    def riled_expiry(self, unit: Unit) -> int | None:
        army = self.players[unit.owner].waaagh_until if self.waaagh_applies(unit) else None
        ends = [t for t in (unit.riled_until, army) if t is not None and t > self.turn]
        return max(ends) if ends else None

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able data; hand-written because `dataclasses.asdict` deep-copies (10x slower)."""
        data = dict(self.__dict__)
        data["players"] = [{**p.__dict__, "extra_cp": dict(p.extra_cp), "once_used": list(p.once_used)}
                           for p in self.players]
        data["units"] = [{**u.__dict__, "tags": list(u.tags)} for u in self.units]
        data["armies"] = dict(self.armies)  # each army is replaced whole, never edited in place
        data["strat_uses"] = [dict(s.__dict__) for s in self.strat_uses]
        for p in data["players"]:
            for key in ("vp_primary", "vp_secondary", "vp_other"):
                p[key] = list(p[key])
            p["secondaries"] = [dict(c) for c in p["secondaries"]]
        data["mission"] = _copy(self.mission)
        data["rolloff"] = _copy(self.rolloff)
        if self.clock is not None:
            c = self.clock
            data["clock"] = {**c.__dict__, "budget_s": list(c.budget_s), "used_s": list(c.used_s)}
        return data

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> GameState:
        data = dict(raw)
        data["players"] = [Player(**p) for p in raw["players"]]
        data["units"] = [Unit(**u) for u in raw.get("units", [])]
        data["strat_uses"] = [StratagemUse(**s) for s in raw.get("strat_uses", [])]
        if raw.get("clock") is not None:
            data["clock"] = Clock(**raw["clock"])
        return cls(**data)

    def check(self) -> None:
        """Raise ValueError unless every field holds the type it declares and the indices are in range.

        A snapshot that parses but was damaged on disk must not reach a command (which would fail with
        an internal error): the store rebuilds such a snapshot from the event log instead.
        """
        _check_fields(self)
        if len(self.players) != 2 or self.phase not in PHASES or self.active not in (0, 1) or self.first not in (0, 1):
            raise ValueError("players, phase or turn order out of range")
        for p in self.players:
            _check_fields(p)
            if not len(p.vp_primary) == len(p.vp_secondary) == len(p.vp_other) == LAST_ROUND:
                raise ValueError("VP by round does not have one entry per battle round")
        for item in (*self.units, *self.strat_uses, *([self.clock] if self.clock else [])):
            _check_fields(item)
        if any(u.owner not in (0, 1) for u in self.units):
            raise ValueError("a unit's owner is not a player")


def _check_fields(obj: Any) -> None:
    for name, fits in _checks(type(obj)):
        if not fits(getattr(obj, name)):
            raise ValueError(f"{type(obj).__name__}.{name} does not have its declared type")


@functools.cache
def _checks(cls: type) -> list[tuple[str, Callable[[Any], bool]]]:
    """Each field of a dataclass with a predicate for its declared type, built once per class (a parse of
    a stored snapshot checks every unit and player with them)."""
    return [(name, _predicate(hint)) for name, hint in typing.get_type_hints(cls).items()]


def _predicate(hint: Any) -> Callable[[Any], bool]:
    """Whether a value has type `hint`: unions of classes, one level of list/dict items, dataclasses by class."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (types.UnionType, typing.Union) and all(isinstance(a, type) and a is not float for a in args):
        return lambda value: isinstance(value, args)
    if origin in (types.UnionType, typing.Union):
        parts = [_predicate(a) for a in args]
        return lambda value: any(part(value) for part in parts)
    if hint is Any:
        return lambda value: True
    if hint is float:
        return lambda value: isinstance(value, int | float) and not isinstance(value, bool)
    if origin in (list, dict):
        item = args[-1]
        if item is Any or is_dataclass(item):  # dataclass items are checked one by one by `check`
            return lambda value: isinstance(value, origin)
        fits = _predicate(item)
        items = (lambda value: value) if origin is list else (lambda value: value.values())
        return lambda value: isinstance(value, origin) and all(map(fits, items(value)))
    return lambda value: isinstance(value, hint)


def _copy(value: Any) -> Any:
    """A deep copy of small JSON-like data (dicts and lists of scalars), without `copy.deepcopy`'s cost."""
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


_NUMBERED = re.compile(r"\s+#\d+$")


def army_unit_names(names: list[str]) -> list[str]:
    """Tracker names for a list's units: a name the list uses more than once is numbered ("Boyz #1", "#2")."""
    counts: dict[str, int] = {}
    for name in names:
        counts[unit_key(name)] = counts.get(unit_key(name), 0) + 1
    seen: dict[str, int] = {}
    out = []
    for name in names:
        key = unit_key(name)
        if counts[key] > 1:
            seen[key] = seen.get(key, 0) + 1
            out.append(f"{name} #{seen[key]}")
        else:
            out.append(name)
    return out


@functools.lru_cache(maxsize=4096)
def unit_key(name: str) -> str:
    """Names compare without case or repeated spaces (cached: every event that names a unit looks up each
    unit's key, and a game has a few dozen names)."""
    return " ".join(name.casefold().split())


def normalise_name(name: str) -> str:
    return " ".join(name.casefold().replace("’", "'").split())
