"""How /sim matchup answers in Discord: plan off the event loop, defer, show progress, then the heatmap.

- Finding the units (fielding each one from the catalog) runs in a thread before the deferral, so unknown
  names and missing lists are ephemeral replies. Planning every pair (the unit planner, the engine's checks
  and cost estimate per cell) is Python work of about a second for 30 x 30, so it runs in the /sim
  workers, one piece per worker; then the whole matrix's estimate is checked before any simulation (a
  refusal replaces the deferral with an ephemeral message, as for every error after a deferral).
- The simulations run row by row in the /sim worker pool (SimulationService.run_jobs); the deferred
  answer is edited with the rows done, at most once every `PROGRESS_EVERY_S` (Discord rate-limits edits).
- The heatmap is drawn in a worker too, then the message is edited into the answer.
- Planning, rows and heatmap are background jobs (bot.sim.worker.run_background: below the bot's priority),
  so a 30 x 30 matrix leaves the CPU to the event loop and to other players' commands first.
"""

from __future__ import annotations

import io
import logging
import time
from typing import Any

import discord

from bot.errors import UserError
from bot.render import matchup as render
from bot.render.common import NO_MENTIONS
from bot.sim import matchup as matchups
from bot.sim.compute import draw_matchup, evaluate_row
from bot.sim.requests import SimOptions

log = logging.getLogger("cogitator.sim.matchup")

PROGRESS_EVERY_S = 1.0


def plan(services: Any, game: Any, options: SimOptions, *, user_id: int, phase: str | None,
         attackers: str | None, targets: str | None, faction: str | None) -> matchups.Pending:
    """The matchup to plan: the channel's game when it has both lists and no names are given, else names.
    Refusals here (no lists, unknown names) come before the deferral."""
    planner = services.sim_planner
    if attackers or targets or game is None:
        if not attackers or not targets:
            raise UserError("Name both sides: `attackers:` and `targets:`, datasheet names separated by commas "
                            "(in a channel whose game has both army lists, leave both out to match up the lists).",
                            field="attackers" if not attackers else "targets")
        return matchups.from_names(planner, attackers, targets, options, phase=phase, faction=faction)
    return matchups.from_game(planner, game, options, user_id=user_id, phase=phase)


async def answer(interaction: discord.Interaction, services: Any, pending: matchups.Pending, value: str,
                 source: str) -> None:
    """Defer; plan the rows in the workers and check the whole matrix's cost (a refusal replaces the
    deferral with an ephemeral message); simulate row by row with progress; edit the answer in."""
    service = services.simulation
    await interaction.response.defer(thinking=True)
    last = [time.monotonic()]
    done = [0]

    async def progress(_row: int, _results: Any) -> None:
        done[0] += 1
        now = time.monotonic()
        if now - last[0] >= PROGRESS_EVERY_S and done[0] < len(pending.attackers):
            last[0] = now
            try:
                await interaction.edit_original_response(embed=render.embed(found, [], source=source, done=done[0]))
            except discord.HTTPException:
                log.warning("could not show /sim matchup progress")

    try:
        with service.callers.admit(interaction.user.id, interaction.guild_id):
            pieces = await service.run_jobs([(matchups.plan_rows, (chunk,)) for chunk in
                                             pending.chunks(max(1, service.workers))], background=True)
            found = pending.planned([row for piece in pieces for row in piece])
            matchups.check_cost(found)
            await interaction.edit_original_response(embed=render.embed(found, [], source=source, done=0))
            rows = [[cell.request for cell in row if cell.request is not None] for row in found.rows]
            results = await service.run_jobs([(evaluate_row, (row,)) for row in rows], on_done=progress,
                                             background=True)
            outcomes = matchups.scored(found, matchups.placed(found, results))
            columns = matchups.best_columns(outcomes)
            [png] = await service.run_jobs([(draw_matchup, render.picture_inputs(found, outcomes, value, columns))],
                                           background=True)
    except Exception:
        # After a public deferral the error would replace "thinking…" publicly; delete it so the central
        # handler's follow-up is ephemeral like every other error.
        try:
            await interaction.delete_original_response()
        except discord.HTTPException:
            log.warning("could not delete the deferred /sim matchup response")
        raise
    await interaction.edit_original_response(
        embed=render.embed(found, matchups.best(found, outcomes), source=source),
        attachments=[discord.File(io.BytesIO(png), filename=render.MATCHUP_FILENAME)],
        allowed_mentions=NO_MENTIONS,
    )
