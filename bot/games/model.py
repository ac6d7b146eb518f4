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

    @property
    def turn(self) -> int:
        return turn_index(self.round, self.active)

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
        return data

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> GameState:
        data = dict(raw)
        data["players"] = [Player(**p) for p in raw["players"]]
        data["units"] = [Unit(**u) for u in raw.get("units", [])]
        data["strat_uses"] = [StratagemUse(**s) for s in raw.get("strat_uses", [])]
        return cls(**data)


def unit_key(name: str) -> str:
    """Names compare without case or repeated spaces."""
    return " ".join(name.casefold().split())


def normalise_name(name: str) -> str:
    return " ".join(name.casefold().replace("’", "'").split())
