"""How /sim matchup answers in Discord: plan off the event loop, defer, show progress, then the heatmap.

- Planning (every pair through the unit planner, and the engine's checks and cost estimate per cell) is
  Python work of up to a few hundred ms for 30 x 30, so it runs in a thread: the event loop keeps answering
  other commands. Every refusal (no lists, unknown names, a matrix past the cost limit) comes from it,
  before the deferral, so it is an ephemeral reply.
- The simulations run row by row in the /sim worker pool (SimulationService.run_rows); the deferred
  answer is edited with the rows done, at most once every `PROGRESS_EVERY_S` (Discord rate-limits edits).
- The heatmap is drawn in a thread too, then the message is edited into the answer.
"""

from __future__ import annotations

import asyncio
import io
import logging
import time
from typing import Any

import discord

from bot.errors import UserError
from bot.render import matchup as render
from bot.render.common import NO_MENTIONS
from bot.sim import matchup as matchups
from bot.sim.requests import SimOptions

log = logging.getLogger("cogitator.sim.matchup")

PROGRESS_EVERY_S = 1.0


def plan(services: Any, game: Any, options: SimOptions, *, user_id: int, phase: str | None,
         attackers: str | None, targets: str | None, faction: str | None) -> matchups.Matchup:
    """The checked matchup: the channel's game when it has both lists and no names are given, else names."""
    planner = services.sim_planner
    if attackers or targets or game is None:
        if not attackers or not targets:
            raise UserError("Name both sides: `attackers:` and `targets:`, datasheet names separated by commas "
                            "(in a channel whose game has both army lists, leave both out to match up the lists).",
                            field="attackers" if not attackers else "targets")
        found = matchups.from_names(planner, attackers, targets, options, phase=phase, faction=faction)
    else:
        found = matchups.from_game(planner, game, options, user_id=user_id, phase=phase)
    matchups.check_cost(found)
    return found


async def answer(interaction: discord.Interaction, services: Any, found: matchups.Matchup, value: str,
                 source: str) -> None:
    """Defer, run the rows with progress, and edit the answer in."""
    await interaction.response.defer(thinking=True)
    last = [time.monotonic()]
    done = [0]

    async def progress(_row: int, _results: list[dict[str, float]]) -> None:
        done[0] += 1
        now = time.monotonic()
        if now - last[0] >= PROGRESS_EVERY_S and done[0] < len(found.rows):
            last[0] = now
            try:
                await interaction.edit_original_response(embed=render.embed(found, [], source=source, done=done[0]))
            except discord.HTTPException:
                log.warning("could not show /sim matchup progress")

    try:
        await interaction.edit_original_response(embed=render.embed(found, [], source=source, done=0))
        rows = [[cell.request for cell in row if cell.request is not None] for row in found.rows]
        results = await services.simulation.run_rows(rows, user=interaction.user.id, guild=interaction.guild_id,
                                                     on_row=progress)
        outcomes = matchups.scored(found, matchups.placed(found, results))
        columns = matchups.best_columns(outcomes)
        png = await asyncio.to_thread(render.picture, found, outcomes, value, columns)
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
