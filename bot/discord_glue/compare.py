"""How /sim compare answers: variants parsed and planned before the deferral (a variant the attacker cannot
take is an ephemeral refusal naming what it can take), then one pool job computes every variant as one
engine batch and draws them overlaid (bot.sim.compute.compare), and the embed tabulates means and odds.
"""

from __future__ import annotations

import io
import logging
from dataclasses import dataclass
from typing import Any

import discord

from bot.errors import UserError
from bot.render.common import COLOUR_SIM, NO_MENTIONS, escape, source_footer, truncate
from bot.render.sim import percent
from bot.sim import tracked as tracked_sim
from bot.sim import variants
from bot.sim.compute import check_request, compare
from bot.sim.planner import UnitRequest
from bot.sim.requests import SimOptions

log = logging.getLogger("cogitator.sim.compare")
FILENAME = "compare.png"
LABEL_W = 35  # the table's first column, in characters (a code block: it must stay aligned)


@dataclass
class Comparison:
    title: str
    labels: list[str]
    requests: list[dict[str, Any]]
    edition: str
    source: str
    notes: list[str]


def attacker_weapons(services: Any, game: Any, attacker: str, options: SimOptions, *, user_id: int,
                     faction: str | None) -> list[str]:
    """The names of every weapon the attacker has or can take (its profiles), as variants offer them."""
    planner = services.sim_planner
    if tracked_sim.names_tracked_unit(game, attacker):
        unit = tracked_sim.listed_attacker(planner, game, attacker, user_id=user_id)
    else:
        unit = planner.unit(planner.datasheet(attacker, options.edition, "attacker", faction))
    return list(dict.fromkeys(str(w.get("name")) for w in unit.weapons if w.get("name")))


def plan(services: Any, game: Any, options: SimOptions, *, user_id: int, attacker: str, target: str,
         typed: list[tuple[str, str]], phase: str | None, faction: str | None) -> Comparison:
    """Every variant as a checked request; UserError (before any work) for anything it cannot take."""
    weapons = attacker_weapons(services, game, attacker, options, user_id=user_id, faction=faction)
    chosen = [(option, variants.parse(text, weapons, option)) for option, text in typed]
    planner = services.sim_planner
    requests, notes, title, sources = [], [], "", []
    for option, variant in chosen:
        picked = variant.options(options)
        try:
            if tracked_sim.names_tracked_unit(game, attacker):
                planned, entries, title = tracked_sim.plan_between(planner, game, attacker, target, picked,
                                                                   user_id=user_id, weapon=variant.weapon, phase=phase)
            else:
                planned, entries = planner.plan(UnitRequest(attacker=attacker, target=target, weapon=variant.weapon,
                                                            phase=phase, faction=faction), picked)
                title = f"{entries[0].name} → {planned.target_name}"
        except UserError as error:
            raise UserError(f"`{option}` ({variant.label}): {error.message}", field=option) from None
        request, _ = check_request(variants.apply(planned.request, variant, option))
        requests.append(request)
        notes += [n for n in planned.assumptions if n not in notes]
        sources += [e.source for e in entries if e.source not in sources]
    edition = game.edition if game is not None and tracked_sim.names_tracked_unit(game, attacker) else options.edition
    return Comparison(title, [v.label for _, v in chosen], requests, edition, " + ".join(sources), notes)


def _table(comparison: Comparison, results: list[dict[str, Any]]) -> str:
    rows = [f"{'variant':{LABEL_W}} mean   P(wipe)  damage"]
    for label, result in zip(comparison.labels, results, strict=True):
        rows.append(f"{label[:LABEL_W - 1]:{LABEL_W - 1}} {result['models_killed']['mean']:5.2f}   {percent(result['p_wipe']):>7}  "
                    f"{result['damage']['mean']:6.2f}")
    return "```\n" + "\n".join(rows) + "\n```"


async def answer(interaction: discord.Interaction, services: Any, comparison: Comparison) -> None:
    service = services.simulation
    await interaction.response.defer(thinking=True)
    try:
        with service.callers.admit(interaction.user.id, interaction.guild_id):
            [(results, png)] = await service.run_jobs([(compare, (comparison.requests, comparison.labels,
                                                                  comparison.title))])
    except Exception:
        try:
            await interaction.delete_original_response()
        except discord.HTTPException:
            log.warning("could not delete the deferred /sim compare response")
        raise
    embed = discord.Embed(title=truncate(f"Compare: {comparison.title}", 256), colour=COLOUR_SIM,
                          description=_table(comparison, results))
    kills = [f"**{escape(label, limit=60)}**: " + ", ".join(
        f"≥{k} {percent(sum(r['models_killed']['pmf'][k:]))}" for k in _thresholds(r))
        for label, r in zip(comparison.labels, results, strict=True)]
    embed.add_field(name="Kill chances", value=truncate("\n".join(kills), 1024), inline=False)
    if comparison.notes:
        embed.add_field(name="Assumptions", value=truncate("\n".join(f"• {escape(n, limit=200)}"
                                                                     for n in comparison.notes[:6]), 1024),
                        inline=False)
    embed.set_image(url=f"attachment://{FILENAME}")
    embed.set_footer(text=truncate(source_footer(comparison.edition, comparison.source) + " · exact", 2048))
    await interaction.edit_original_response(embed=embed, attachments=[discord.File(io.BytesIO(png), filename=FILENAME)],
                                             allowed_mentions=NO_MENTIONS)


def _thresholds(result: dict[str, Any]) -> list[int]:
    """Up to three kill counts worth quoting: around the mean, and the wipe."""
    models = len(result["models_killed"]["pmf"]) - 1
    mean = result["models_killed"]["mean"]
    return sorted({k for k in (max(1, round(mean)), max(1, round(mean)) + 1, models) if 1 <= k <= models})
