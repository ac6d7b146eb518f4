"""/sim matchup: every unit of one side against every unit of the other, as a matrix of engine requests.

Two sources, one shape (`Matchup`):
- a channel's game with both army lists: each unit as its list fields it, with models left, leaders inside
  the unit they lead and tracked state, through the same planner as `/sim unit` (bot/sim/tracked.py);
- comma-separated datasheet names: each at its datasheet's minimum size and default loadout (bot/sim/planner.py).

Everything that bounds the work is decided here, before any simulation runs:
- at most `MAX_SIDE` units a side: longer lists are cut to their first `MAX_SIDE` units, and the answer says so;
- each cell's request passes the engine's own checks and size limits (a cell the engine refuses is marked
  with the reason and the rest still runs);
- the engine's cost estimates of all cells together stay under `MAX_ESTIMATED_SECONDS`, or the matchup is
  refused in words naming that limit (a list whose every weapon rolls `10D6+10` stops here).

The numbers (contract 8): per cell the probability the target is destroyed, the expected models destroyed,
and the expected points destroyed: the target's points times the expected share of its models destroyed
(each model worth the same share; docs/operations.md, "/sim matchup").
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from bot.errors import UserError
from bot.sim.compute import check_request
from bot.sim.planner import UnitPlanner
from bot.sim.requests import SimOptions
from engine import limits as engine_limits

MAX_SIDE = 30  # units a side; a 30 x 30 matrix is 900 simulations
MAX_NAMES_CHARS = 2000  # the `attackers:` / `targets:` text
MAX_ESTIMATED_SECONDS = 60.0  # the whole matrix by the engine's (generous) estimate
# One attacker's row is one engine batch (bot.sim.compute.evaluate_row), held to the engine's batch limit.
MAX_ROW_ESTIMATED_SECONDS = engine_limits.MAX_BATCH_ESTIMATED_SECONDS
PHASES = ("shooting", "fight")


@dataclass
class Cell:
    """One attacker against one target: the request to run, or why there is none."""

    request: dict[str, Any] | None
    reason: str | None = None
    estimate: float = 0.0


@dataclass
class Matchup:
    attackers: list[str]
    targets: list[str]
    target_points: list[int | None]
    phase: str
    edition: str
    rows: list[list[Cell]]
    assumptions: list[str] = field(default_factory=list)

    @property
    def cells(self) -> int:
        return sum(1 for row in self.rows for cell in row if cell.request is not None)

    @property
    def estimated_seconds(self) -> float:
        return sum(cell.estimate for row in self.rows for cell in row)


def _phase(phase: str | None) -> str:
    if phase is None:
        return "shooting"
    if phase not in PHASES:
        raise UserError("`phase` is shooting or fight.", field="phase")
    return phase


def _capped(items: list[Any], side: str, notes: list[str]) -> list[Any]:
    if len(items) > MAX_SIDE:
        notes.append(f"{side}: the first {MAX_SIDE} of {len(items)} units (a matchup is at most "
                     f"{MAX_SIDE} × {MAX_SIDE})")
        return items[:MAX_SIDE]
    return items


def _cell(build: Any) -> Cell:
    """A cell from `build()` (-> Plan): refusals of the planner or the engine become the cell's reason."""
    try:
        plan = build()
        request, seconds = check_request(plan.request)
    except UserError as error:
        return Cell(None, reason=error.message)
    return Cell(request, estimate=seconds)


def _row_reason(row: list[Cell], attacker: str) -> str | None:
    """One note for an attacker none of whose cells can run (e.g. no melee weapon), instead of one per cell."""
    if row and all(c.request is None for c in row) and len({c.reason for c in row}) == 1:
        return f"{attacker}: {row[0].reason}"
    return None


# ---------------------------------------------------------------- row jobs (run in a /sim worker, or inline)
# A row is planned where it is simulated: the units are fielded once in the bot (the catalog lives there),
# then each row's pairs are planned and checked by a worker, so 900 plans do not hold the bot's interpreter.

def plan_game_row(state: Any, mine: Any, theirs: list[Any], options: SimOptions, phase: str,
                  fielded: dict) -> list[Cell]:
    """One attacker (a tracked side) against every target side; `fielded` holds every unit already fielded."""
    from bot.sim.tracked import plan_sides

    return [_cell(lambda t=t: plan_sides(None, state, mine, t, options, phase=phase,  # type: ignore[arg-type]
                                         fielded_cache=fielded)[0]) for t in theirs]


def plan_names_row(attacker: Any, targets: list[Any], options: SimOptions, phase: str) -> list[Cell]:
    """One datasheet unit (at its minimum size, default loadout) against every target unit."""
    from bot.sim.fielded import plan

    return [_cell(lambda t=t: plan(attacker, t, options, phase=phase)) for t in targets]


@dataclass
class Pending:
    """A matchup before its rows are planned: the names, the targets' sizes and points, and one row job
    (function, arguments) per attacker."""

    attackers: list[str]
    targets: list[str]
    target_points: list[int | None]
    phase: str
    edition: str
    jobs: list[tuple[Any, tuple]]
    assumptions: list[str] = field(default_factory=list)

    def planned(self, rows: list[list[Cell]]) -> Matchup:
        notes = [*self.assumptions, *[r for a, row in zip(self.attackers, rows, strict=True)
                                      if (r := _row_reason(row, a))]]
        return Matchup(self.attackers, self.targets, self.target_points, self.phase, self.edition, rows, notes)

    def plan_here(self) -> Matchup:
        """Every row planned in this process (the command line)."""
        return self.planned(plan_rows(self.jobs))

    def chunks(self, count: int) -> list[list[tuple[Any, tuple]]]:
        """The row jobs in `count` contiguous pieces (one pool job each: the game state is sent once a piece)."""
        size = -(-len(self.jobs) // max(1, count))
        return [self.jobs[i:i + size] for i in range(0, len(self.jobs), size)]


def plan_rows(jobs: list[tuple[Any, tuple]]) -> list[list[Cell]]:
    """Several row jobs, in order (one pool job)."""
    return [function(*args) for function, args in jobs]


def from_game(planner: UnitPlanner, state: Any, options: SimOptions, *, user_id: int | None,
              phase: str | None) -> Pending:
    """The invoker's units against their opponent's (the CLI, with no invoker: the first player's against
    the second's), as their lists field them."""
    from bot.sim.tracked import fielded_units, fighting_sides

    phase = _phase(phase)
    me = state.player_index(user_id) if user_id is not None else None
    if user_id is not None and me is None:
        raise UserError("You are not playing in this channel's game: a matchup is between your units and your "
                        "opponent's.", field="attackers")
    me = 0 if me is None else me
    if len(state.players) < 2 or state.army(me) is None or state.army(1 - me) is None:
        raise UserError("A matchup needs both players' army lists in this game: import them with /army import, "
                        "or name datasheets with `attackers:` and `targets:`.", field="attackers")
    notes: list[str] = []
    mine = _capped(fighting_sides(state, me), "your units" if user_id is not None else state.players[me].name, notes)
    theirs = _capped(fighting_sides(state, 1 - me), state.players[1 - me].name, notes)
    if not mine or not theirs:
        raise UserError("Every unit of one side is destroyed or unlisted: nothing to match up.", field="attackers")
    fielded = fielded_units(planner, state, [*mine, *theirs])
    options = replace(options, edition=state.edition)
    listed = (state.army(1 - me) or {}).get("units") or []
    points: list[int | None] = []
    for side in theirs:
        worth: int | None = 0
        for unit in (side.unit, side.leader):
            if unit is None:
                continue
            row = listed[unit.army_index] if unit.army_index is not None and 0 <= unit.army_index < len(listed) else {}
            value = row.get("points")
            worth = None if worth is None or not isinstance(value, int) else worth + value
        points.append(worth)
    jobs = [(plan_game_row, (state, a, theirs, options, phase, fielded)) for a in mine]
    return Pending([_name(side) for side in mine], [_name(side) for side in theirs], points, phase, state.edition,
                   jobs, notes)


def _name(side: Any) -> str:
    return side.unit.name if side.leader is None else f"{side.unit.name} + {side.leader.name}"


def split_names(text: str | None, option: str) -> list[str]:
    if not text or not text.strip():
        raise UserError(f"Name at least one datasheet in `{option}` (comma-separated).", field=option)
    if len(text) > MAX_NAMES_CHARS:
        raise UserError(f"`{option}` is at most {MAX_NAMES_CHARS} characters.", field=option)
    return [name.strip() for name in text.split(",") if name.strip()]


def from_names(planner: UnitPlanner, attackers: str, targets: str, options: SimOptions, *,
               phase: str | None, faction: str | None = None) -> Pending:
    """Datasheets by name, each at its minimum size and default loadout."""
    phase = _phase(phase)
    notes: list[str] = []
    mine = _capped(split_names(attackers, "attackers"), "attackers", notes)
    theirs = _capped(split_names(targets, "targets"), "targets", notes)
    # Unknown names are refused as a whole (with candidates), before any cell is planned.
    a_entries = [planner.datasheet(name, options.edition, "attackers", faction) for name in mine]
    t_entries = [planner.datasheet(name, options.edition, "targets", faction) for name in theirs]
    t_units = [planner.unit(t) for t in t_entries]
    notes.append("each unit at its datasheet's minimum size and default loadout")
    other = {e.id: e for e in [*a_entries, *t_entries] if e.edition != options.edition}
    notes += [f"{e.name}: {e.edition} datasheet used with {options.edition} rules" for e in other.values()]
    jobs = [(plan_names_row, (planner.unit(a), t_units, options, phase)) for a in a_entries]
    return Pending([e.name for e in a_entries], [e.name for e in t_entries], [None] * len(t_entries), phase,
                   options.edition, jobs, notes)


def check_cost(matchup: Matchup) -> None:
    """Refuse, before any simulation, a matrix whose estimated work is past the limit."""
    seconds = matchup.estimated_seconds
    if seconds > MAX_ESTIMATED_SECONDS:
        raise UserError(f"This matchup is too large: the engine estimates {seconds:.0f} s of work for its "
                        f"{matchup.cells} simulations, and a matchup may take at most {MAX_ESTIMATED_SECONDS:.0f} s. "
                        "Pick fewer units (`attackers:` / `targets:`) or a phase with fewer weapons.",
                        field="attackers")
    for attacker, row in zip(matchup.attackers, matchup.rows, strict=True):
        seconds = sum(cell.estimate for cell in row)
        if seconds > MAX_ROW_ESTIMATED_SECONDS:
            raise UserError(f"This matchup is too large: {attacker}'s row alone is estimated at {seconds:.0f} s of "
                            f"work, and one unit's row may take at most {MAX_ROW_ESTIMATED_SECONDS:.0f} s. Leave "
                            "that unit out or pick the other phase.", field="attackers")
    if matchup.cells == 0:
        reasons = [r for r in matchup.assumptions if ":" in r][-1:]
        raise UserError("No unit here can attack in the " + matchup.phase + " phase"
                        + (f" ({reasons[0]})" if reasons else "") + ".", field="phase")


def scored(matchup: Matchup, outcomes: list[list[dict[str, float] | None]]) -> list[list[dict[str, Any] | None]]:
    """Each cell's summary (bot.sim.compute.evaluate_row) plus its expected points destroyed: the target's
    points times the expected share of its models destroyed (None when its list gives no points)."""
    out: list[list[dict[str, Any] | None]] = []
    for row in outcomes:
        cells: list[dict[str, Any] | None] = []
        for j, cell in enumerate(row):
            points = matchup.target_points[j]
            cells.append(None if cell is None else {**cell, "expected_points": None if points is None
                                                    else points * cell["share"]})
        out.append(cells)
    return out


def contract(matchup: Matchup, outcomes: list[list[dict[str, float] | None]]) -> dict[str, Any]:
    """Contract 8's object."""
    matrix = [[None if c is None else {"p_destroy": c["p_destroy"], "expected_models": c["expected_models"],
                                       "expected_points": c["expected_points"]} for c in row]
              for row in scored(matchup, outcomes)]
    return {"attackers": matchup.attackers, "targets": matchup.targets, "phase": matchup.phase,
            "matrix": matrix, "best": best(matchup, outcomes), "assumptions": matchup.assumptions}


def placed(matchup: Matchup, results: list[list[dict[str, float]]]) -> list[list[dict[str, float] | None]]:
    """The service's per-row results (checked cells only, in order) put back in the full matrix."""
    out = []
    for row, got in zip(matchup.rows, results, strict=True):
        found = iter(got)
        out.append([next(found) if cell.request is not None else None for cell in row])
    return out


def best_columns(outcomes: list[list[dict[str, Any] | None]]) -> list[int | None]:
    """Each row's best target: the likeliest to be destroyed (to 0.1%, as shown), then the largest share
    destroyed, then the first in list order."""
    out: list[int | None] = []
    for row in outcomes:
        ranked = [(round(c["p_destroy"], 3), c["share"], -j) for j, c in enumerate(row) if c is not None]
        out.append(-max(ranked)[2] if ranked else None)
    return out


def best(matchup: Matchup, outcomes: list[list[dict[str, Any] | None]]) -> list[dict[str, Any]]:
    """Contract 8's `best`: per attacker with any target, that target and the chance to destroy it."""
    return [{"attacker": attacker, "target": matchup.targets[j], "p_destroy": row[j]["p_destroy"]}  # type: ignore[index]
            for attacker, row, j in zip(matchup.attackers, outcomes, best_columns(outcomes), strict=True)
            if j is not None]
