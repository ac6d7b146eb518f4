"""The game-state model: players, units, statuses and the battle clock, as plain JSON-able data.

State is never edited by hand: it is the fold of the event log (see `bot.games.events`). These classes
only hold it and convert it to and from the JSON snapshot stored next to the log.
"""

from __future__ import annotations

from dataclasses import dataclass, field
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

    @property
    def key(self) -> str:
        return unit_key(self.name)


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

    def riled(self, unit: Unit) -> bool:
        """Riled up by its own rule or by its army's Waaagh!."""
        until = unit.riled_until
        army = self.players[unit.owner].waaagh_until
        return (until is not None and until > self.turn) or (army is not None and army > self.turn)

    def riled_expiry(self, unit: Unit) -> int | None:
        ends = [t for t in (unit.riled_until, self.players[unit.owner].waaagh_until) if t is not None and t > self.turn]
        return max(ends) if ends else None

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able data; hand-written because `dataclasses.asdict` deep-copies (10x slower)."""
        data = dict(self.__dict__)
        data["players"] = [{**p.__dict__, "extra_cp": dict(p.extra_cp), "once_used": list(p.once_used)}
                           for p in self.players]
        data["units"] = [dict(u.__dict__) for u in self.units]
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


def _copy(value: Any) -> Any:
    """A deep copy of small JSON-like data (dicts and lists of scalars), without `copy.deepcopy`'s cost."""
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def unit_key(name: str) -> str:
    """Names compare without case or repeated spaces."""
    return " ".join(name.casefold().split())


def normalise_name(name: str) -> str:
    return " ".join(name.casefold().replace("’", "'").split())
