"""Edition rules for the tracker: CP, stratagem restrictions, token limits and status durations.

Hard invariants raise `UserError` (CP never below 0, 0-2 Judgement tokens, once per battle). Soft rules
return a one-line warning; the command refuses unless `force` is set, and the override is logged.
Sources: the seed pages (10e Votann, 11e Orks) and the 11e core rules; see docs/rules-notes.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from bot.errors import UserError
from bot.games.model import MAX_JUDGEMENT, PERMANENT, PHASES, GameState, Unit, normalise_name

EDITIONS = ("10e", "11e")
MAX_CP = 99
MAX_CP_STEP = 20
MAX_VP = 999
MAX_VP_STEP = 100
MAX_NAME = 80
MAX_FACTION = 60
MAX_PLAYER_NAME = 64
MAX_STARTING_CP = 20
MAX_OATHBAND_MARKS = 6  # Onslaught; Incursion 2, Strike Force 4
MAX_JUDGEMENT_STEP = 2
MAX_RUTHLESS_CP = 3
MAX_DAMAGE_STEP = 100  # wounds applied by one /unit damage

RILED_DURATIONS = {
    "start-of-your-next-turn": "until the start of your next turn",
    "end-of-next-turn": "until the end of the next turn",
    "end-of-this-turn": "until the end of this turn",
    "battle": "for the rest of the battle",
}

_EXTRA_CP = re.compile(r"\+\s*(\d+)\s*CP", re.IGNORECASE)
_ONCE_PER_BATTLE = re.compile(r"once per battle", re.IGNORECASE)
_IGNORES_SHOCK = re.compile(r"even though your battle-shocked units cannot", re.IGNORECASE)
_CLEARS_SHOCK = re.compile(
    r"not battle-shocked as a result|automatically passes? that battle-shock|battle-shock roll is automatically successful",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class StratagemSpec:
    """What the tracker needs to know about one catalog stratagem."""

    name: str
    entry_id: str | None
    cp: int
    cp_extra: tuple[int, ...] = ()
    once_per_battle: bool = False
    ignores_battleshock: bool = False
    clears_battleshock: bool = False
    turn: str | None = None  # "your" | "opponent" | "either" (catalog `data["turn"]`)
    phases: tuple[str, ...] = ()  # allowed phases; empty = any (catalog `data["phase"]`, e.g. "shooting/fight")

    @property
    def key(self) -> str:
        return normalise_name(self.name)

    @classmethod
    def from_entry(cls, entry: Any) -> StratagemSpec:
        """Build from a catalog `Entry` (kind "stratagem")."""
        data = entry.data or {}
        text = " ".join(str(data.get(k) or "") for k in ("target", "effect", "restrictions")) + " " + (entry.text or "")
        extras = []
        for section in data.get("cp_extra") or []:
            m = _EXTRA_CP.search(str(section))
            extras.append(int(m.group(1)) if m else 1)
        is_insane = normalise_name(entry.name) == "insane bravery"
        return cls(
            name=entry.name,
            entry_id=entry.id,
            cp=int(data.get("cp", 0)),
            cp_extra=tuple(extras),
            once_per_battle=bool(_ONCE_PER_BATTLE.search(str(data.get("restrictions") or "")))
            or bool(_ONCE_PER_BATTLE.search(entry.text or "")),
            ignores_battleshock=bool(_IGNORES_SHOCK.search(text)) or is_insane,
            clears_battleshock=bool(_CLEARS_SHOCK.search(text)) or is_insane,
            turn=_turn(data.get("turn")),
            phases=_phases(data.get("phase")),
        )

    def cost(self, edition: str, *, extra: bool) -> int:
        """Base cost plus the `+xCP` sections used; 11e 15.01: never raised by more than 1."""
        if not extra or not self.cp_extra:
            return self.cp
        added = sum(self.cp_extra)
        if edition == "11e":
            added = min(added, 1)
        return self.cp + added


def _turn(raw: Any) -> str | None:
    value = str(raw or "").strip().casefold()
    return value if value in ("your", "opponent", "either") else None


def _phases(raw: Any) -> tuple[str, ...]:
    """"shooting/fight" -> ("shooting", "fight"); "any", unknown words or all five -> () (no check)."""
    words = [w.strip() for w in str(raw or "").casefold().split("/") if w.strip()]
    if not words or any(w not in PHASES for w in words) or set(words) == set(PHASES):
        return ()
    return tuple(w for w in PHASES if w in words)


# ---- input checks -------------------------------------------------------------------------------

def check_amount(amount: int, *, field: str, low: int, high: int, what: str) -> int:
    if not isinstance(amount, int) or isinstance(amount, bool):
        raise UserError(f"{what} must be a whole number.", field=field)
    if amount < low or amount > high:
        raise UserError(f"{what} must be between {low} and {high} (got {amount}).", field=field)
    return amount


def printable_name(raw: str) -> str:
    """A name as the tracker keeps it: control and format characters (bidi overrides, zero-width marks) and
    U+FFFD (what a lone surrogate became) turn into spaces, spaces collapse, the ends are trimmed."""
    return " ".join("".join(ch if ch.isprintable() and ch != "\ufffd" else " " for ch in str(raw)).split())


def clean_name(raw: str, *, field: str = "unit", what: str = "Unit name", limit: int = MAX_NAME) -> str:
    """`printable_name`; refuse empty or overlong names."""
    text = printable_name(raw)
    if not text:
        raise UserError(f"{what} is empty.", field=field)
    if len(text) > limit:
        raise UserError(f"{what} is too long: at most {limit} characters (got {len(text)}).", field=field)
    return text


def check_edition(edition: str) -> str:
    if edition not in EDITIONS:
        raise UserError(f"Unknown edition {edition!r}: choose one of {', '.join(EDITIONS)}.", field="edition")
    return edition


# ---- CP ------------------------------------------------------------------------------------------

def spend_check(state: GameState, player: int, amount: int, what: str) -> None:
    """Hard: CP never goes below zero."""
    have = state.players[player].cp
    if amount > have:
        raise UserError(f"Not enough CP: {what} needs {amount}CP and you have {have}CP.", field="amount")


def extra_cp_warning(state: GameState, player: int, amount: int) -> str | None:
    """Soft (10e only): at most 1CP per battle round from sources other than the Command phase."""
    if state.edition != "10e":
        return None
    already = state.players[player].extra_cp.get(str(state.round), 0)
    if already + amount > 1:
        return (f"10e allows at most 1CP per battle round beyond the Command phase; "
                f"you already gained {already}CP this round.")
    return None


# ---- stratagems ----------------------------------------------------------------------------------

def stratagem_checks(state: GameState, player: int, spec: StratagemSpec, unit: Unit | None, cost: int) -> list[str]:
    """Hard checks raise; soft ones come back as warnings."""
    me = state.players[player]
    if spec.once_per_battle and spec.key in me.once_used:
        raise UserError(f"{spec.name} can be used only once per battle, and you have already used it.",
                        field="name")
    spend_check(state, player, cost, spec.name)
    warnings: list[str] = []
    timing = timing_warning(state, player, spec)
    if timing:
        warnings.append(timing)
    same_phase = [s for s in state.strat_uses
                  if s.player == player and s.turn == state.turn and s.phase == state.phase]
    if any(normalise_name(s.name) == spec.key for s in same_phase):
        warnings.append(f"You already used {spec.name} this phase (one use of a stratagem per phase).")
    if unit is not None:
        if unit.owner == player and unit.shocked and not spec.ignores_battleshock:
            warnings.append(f"{unit.name} is battle-shocked: you cannot target it with your stratagems.")
        if state.edition == "11e" and any(
            s.unit_owner == unit.owner and s.unit is not None and s.unit.casefold() == unit.name.casefold()
            for s in same_phase
        ):
            warnings.append(f"{unit.name} was already targeted by one of your stratagems this phase (11e 15.01).")
    return warnings


def timing_warning(state: GameState, player: int, spec: StratagemSpec) -> str | None:
    """Soft: the stratagem's WHEN (whose turn, which phase) from the catalog entry."""
    mine = state.active == player
    wrong_turn = (spec.turn == "your" and not mine) or (spec.turn == "opponent" and mine)
    wrong_phase = bool(spec.phases) and state.phase not in spec.phases
    if not (wrong_turn or wrong_phase):
        return None
    whose = {"your": "your ", "opponent": "your opponent's "}.get(spec.turn or "", "")
    phases = " or ".join(p.capitalize() for p in spec.phases) if spec.phases else "any"
    now = "your" if mine else "your opponent's"
    return (f"{spec.name} is used in {whose}{phases} phase; it is now {now} "
            f"{state.phase.capitalize()} phase.")


# ---- Judgement tokens ----------------------------------------------------------------------------

def judgement_gain(unit: Unit | None, amount: int) -> tuple[int, int]:
    """(tokens actually gained, tokens ignored): a unit never has more than 2."""
    have = unit.judgement if unit else 0
    gained = max(0, min(MAX_JUDGEMENT - have, amount))
    return gained, amount - gained


def judgement_loss_check(unit: Unit, amount: int) -> None:
    if amount > unit.judgement:
        raise UserError(f"{unit.name} has {unit.judgement} Judgement token(s); cannot remove {amount}.",
                        field="amount")


# ---- durations -----------------------------------------------------------------------------------

def next_turn_of(state: GameState, owner: int) -> int:
    """The index of `owner`'s next turn after the current one."""
    t = state.turn + 1
    while state.whose_turn(t)[1] != owner:
        t += 1
    return t


def riled_until(state: GameState, owner: int, duration: str) -> int:
    """The turn index at whose start a riled-up status ends."""
    if duration == "start-of-your-next-turn":
        return next_turn_of(state, owner)
    if duration == "end-of-next-turn":
        return state.turn + 2  # the turn after this one ends = the one after that starts
    if duration == "end-of-this-turn":
        return state.turn + 1
    if duration == "battle":
        return PERMANENT
    raise UserError(f"Unknown duration {duration!r}: choose one of {', '.join(RILED_DURATIONS)}.", field="until")

