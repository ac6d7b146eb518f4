"""`python -m bot sim plan` (contract 7): the request `/sim unit` would run, its assumptions and its result.

Same planner as the slash command (bot/sim/planner.py), so the unit-as-fielded defaults can be checked
without Discord. Bad input prints `{"error", "field"}` and exits 2, like the engine's CLI.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable

from bot.cli_args import whole_number
from bot.config import Settings
from bot.games.cli import channel_id

_count = whole_number(1, 100, "a number of models, got {text}", "between 1 and 100 models, got {value}")


def add_subcommands(subparsers: argparse._SubParsersAction) -> None:
    sim = subparsers.add_parser("sim", help="combat simulation tools")
    sub = sim.add_subparsers(dest="sim_command", required=True)
    plan = sub.add_parser("plan", help="print the request /sim unit would run, its assumptions and its result")
    plan.add_argument("--attacker", required=True, help="attacking unit (datasheet name or id)")
    plan.add_argument("--target", required=True, help="target unit (datasheet name or id)")
    plan.add_argument("--edition", choices=("10e", "11e"), default="11e")
    plan.add_argument("--models", type=_count, help="models in the attacking unit (default: its minimum)")
    plan.add_argument("--target-models", type=_count, help="models in the target unit (default: its minimum)")
    plan.add_argument("--leader", help="a leader attached to the attacker")
    plan.add_argument("--target-leader", help="a leader attached to the target")
    plan.add_argument("--phase", choices=("shooting", "fight"))
    plan.add_argument("--weapon", help="fire only this weapon ('3x Plasma pistol' sets how many)")
    plan.add_argument("--no-abilities", action="store_true", help="do not apply the units' own abilities")
    plan.add_argument("--force", action="store_true", help="run despite the datasheet checks")
    plan.add_argument("--faction", help="prefer this faction's datasheets for typed names")
    plan.add_argument("--channel", type=channel_id, help="names are units of this channel's game: their list's "
                      "loadout, models left, leaders and tracked state apply (the game's edition)")
    plan.add_argument("--json", action="store_true", help="accepted for symmetry: the output is always JSON")
    plan.set_defaults(func=cmd_plan)
    add_matchup(sub)


def cmd_plan(args: argparse.Namespace, settings: Settings) -> int:
    return _with_game(args, settings, lambda state: _plan(args, settings, state))


def _with_game(args: argparse.Namespace, settings: Settings, run: Callable[[object | None], int]) -> int:
    """run(None) without --channel; otherwise run(that channel's game state), or exit 2 when it has no game."""
    if args.channel is None:
        return run(None)
    from bot.games.cli import _guarded, _store

    def tracked() -> int:
        store = _store(settings)
        try:
            state = store.state(args.channel)
        finally:
            store.close()
        if state is None:
            print(json.dumps({"error": f"channel {args.channel} has no game", "field": "channel"}))
            return 2
        return run(state)

    return _guarded(tracked, settings)


def _plan(args: argparse.Namespace, settings: Settings, state: object | None) -> int:
    """The plan for datasheet names, or (with the channel's game `state`) for that game's units."""
    from bot.catalog.service import open_catalog
    from bot.errors import UserError
    from bot.sim.planner import UnitPlanner, UnitRequest
    from bot.sim.requests import SimOptions
    from bot.sim.tracked import plan_between
    from engine import RequestError, simulate

    catalog = open_catalog(settings)
    try:
        if state is not None:
            given = {"--models": args.models, "--target-models": args.target_models, "--leader": args.leader,
                     "--target-leader": args.target_leader, "--faction": args.faction}
            plan, _, _ = plan_between(UnitPlanner(catalog), state, args.attacker, args.target,  # type: ignore[arg-type]
                                      SimOptions(edition=args.edition), user_id=None, weapon=args.weapon,
                                      phase=args.phase, abilities=not args.no_abilities, force=args.force,
                                      unused=tuple(name for name, value in given.items() if value is not None))
        else:
            asked = UnitRequest(
                attacker=args.attacker, target=args.target, weapon=args.weapon, models=args.models,
                target_models=args.target_models, phase=args.phase, leader=args.leader,
                target_leader=args.target_leader, abilities=not args.no_abilities, force=args.force,
                faction=args.faction,
            )
            plan, _ = UnitPlanner(catalog).plan(asked, SimOptions(edition=args.edition))
        result = simulate(plan.request)
    except UserError as error:
        print(json.dumps({"error": str(error), "field": getattr(error, "field", None)}))
        return 2
    except RequestError as error:
        print(json.dumps({"error": str(error), "field": getattr(error, "field", None)}))
        return 2
    finally:
        catalog.close()
    out = {"request": plan.request, "assumptions": plan.assumptions, "result": result}
    if state is not None:
        out["tracked"] = plan.tracked  # contract 7 with --channel: the tracked state, applied or not
    json.dump(out, sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0


def add_matchup(sub: argparse._SubParsersAction) -> None:
    matchup = sub.add_parser("matchup", help="contract 8: every attacker against every target, as a matrix")
    source = matchup.add_mutually_exclusive_group(required=True)
    source.add_argument("--channel", type=channel_id, help="the first player's units against the second's, as "
                        "that channel's game fields and tracks them")
    source.add_argument("--attackers", help="attacking datasheets, comma-separated (needs --targets)")
    matchup.add_argument("--targets", help="target datasheets, comma-separated")
    matchup.add_argument("--phase", choices=("shooting", "fight"), default="shooting")
    matchup.add_argument("--edition", choices=("10e", "11e"), default="11e")
    matchup.add_argument("--faction", help="prefer this faction's datasheets for typed names")
    matchup.add_argument("--json", action="store_true", help="accepted for symmetry: the output is always JSON")
    matchup.set_defaults(func=cmd_matchup)


def cmd_matchup(args: argparse.Namespace, settings: Settings) -> int:
    """The same matrix /sim matchup draws, computed in this process."""
    from bot.catalog.service import open_catalog
    from bot.errors import UserError
    from bot.sim import matchup as matchups
    from bot.sim.compute import evaluate_row
    from bot.sim.planner import UnitPlanner
    from bot.sim.requests import SimOptions

    def run(state: object | None) -> int:
        catalog = open_catalog(settings)
        try:
            planner, options = UnitPlanner(catalog), SimOptions(edition=args.edition)
            if state is not None:
                pending = matchups.from_game(planner, state, options, user_id=None, phase=args.phase)
            else:
                if not args.targets:
                    raise UserError("--attackers needs --targets", field="targets")
                pending = matchups.from_names(planner, args.attackers, args.targets, options, phase=args.phase,
                                              faction=args.faction)
            found = pending.plan_here()
            matchups.check_cost(found)
        except UserError as error:
            print(json.dumps({"error": str(error), "field": getattr(error, "field", None)}))
            return 2
        finally:
            catalog.close()
        results = [evaluate_row([c.request for c in row if c.request is not None]) for row in found.rows]
        json.dump(matchups.contract(found, matchups.placed(found, results)), sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0

    return _with_game(args, settings, run)
