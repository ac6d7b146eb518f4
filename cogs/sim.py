"""/sim: exact (or Monte Carlo) combat simulations, from catalog datasheets or ad-hoc profiles.

Discord does not allow a command to be both invocable and a parent of subcommands, so this is a
`/sim` group with two subcommands: `/sim unit` (datasheets from the catalog, with autocomplete) and
`/sim custom` (profile strings such as `A=D6+2 BS=3 S=14 AP=-3 D=D6+2 kw="BLAST 2"`).

Everything the user can get wrong (profile strings, unit and weapon names, and the engine's own
validation and size limits via `SimulationService.prepare`) is checked before the interaction is
deferred, so those errors arrive as ephemeral messages. Should anything still fail after the deferral,
the public "thinking…" message is deleted first so the error is ephemeral too.
"""

from __future__ import annotations

import io
import logging
from dataclasses import replace
from typing import Any

import discord
from discord import app_commands
from discord.app_commands import Choice
from discord.ext import commands

from bot.errors import UserError
from bot.render.common import NO_MENTIONS, escape, truncate
from bot.render.sim import PLOT_FILENAME, SimDescription, sim_embed, target_line, weapon_line
from bot.sim.planner import UnitRequest
from bot.sim.profiles import parse_attacker, parse_target
from bot.sim.requests import SimOptions, build_request, weapon_kind

log = logging.getLogger("cogitator.sim")

CUSTOM_SOURCE = "Ad-hoc profiles"
# Slash option name -> SimOptions field, for the options /sim unit and /sim custom share.
SITUATION_OPTIONS = {
    "method": "method", "half_range": "half_range", "stationary": "stationary", "charged": "charged",
    "cover": "cover", "hit_mod": "hit_modifier", "wound_mod": "wound_modifier", "save_mod": "save_modifier",
    "reroll_hits": "reroll_hits", "reroll_wounds": "reroll_wounds", "crit_hit": "critical_hit",
    "crit_wound": "critical_wound",
}
AUTOCOMPLETE_MAX = 25
PROFILE_MAX_CHARS = 1000

EDITION_CHOICES = [
    Choice(name="11th edition (current)", value="11e"),
    Choice(name="10th edition", value="10e"),
]
METHOD_CHOICES = [
    Choice(name="exact distribution", value="exact"),
    Choice(name="Monte Carlo (100,000 trials)", value="montecarlo"),
]
PHASE_CHOICES = [
    Choice(name="shooting", value="shooting"),
    Choice(name="fight", value="fight"),
]
REROLL_CHOICES = [
    Choice(name="no re-roll", value="none"),
    Choice(name="re-roll 1s", value="ones"),
    Choice(name="re-roll failed rolls", value="failed"),
    Choice(name="re-roll non-critical rolls (fish for crits)", value="non_critical"),
]

OPTION_DESCRIPTIONS = {
    "half_range": "Target within half range (MELTA, RAPID FIRE)",
    "stationary": "Attacker remained stationary (HEAVY)",
    "charged": "Attacker charged this turn (LANCE)",
    "cover": "Target has the benefit of cover",
    "hit_mod": "Hit roll modifier (capped at ±1 by the rules)",
    "wound_mod": "Wound roll modifier (capped at ±1 by the rules)",
    "save_mod": "Save roll modifier",
    "reroll_hits": "Re-roll hit rolls",
    "reroll_wounds": "Re-roll wound rolls",
    "crit_hit": "Unmodified hit roll that is a critical hit (default 6+)",
    "crit_wound": "Unmodified wound roll that is a critical wound (default 6+)",
    "edition": "Rules edition (default: this server's edition)",
    "method": "Exact distribution (default) or Monte Carlo",
}


def _choice_name(text: str) -> str:
    return truncate(text, 100)


class Sim(commands.Cog):
    sim = app_commands.Group(
        name="sim", description="Simulate an attack: kills, damage and the odds of a wipe."
    )

    def __init__(self, bot: commands.Bot) -> None:
        self.bot = bot

    @property
    def services(self) -> Any:
        return self.bot.services  # type: ignore[attr-defined]

    # ------------------------------------------------------------------ shared helpers
    def _options(self, interaction: discord.Interaction) -> SimOptions:
        """The situational options both subcommands declare, as typed; absent ones keep SimOptions' defaults
        (which are the commands' defaults). Read from the namespace so the two commands don't repeat the mapping."""
        typed = interaction.namespace
        given = {field: getattr(typed, option) for option, field in SITUATION_OPTIONS.items()
                 if getattr(typed, option, None) is not None}
        return SimOptions(edition=self._edition_for_lookup(interaction), **given)

    def _edition_for_lookup(self, interaction: discord.Interaction) -> str:
        chosen = getattr(interaction.namespace, "edition", None)
        if chosen in ("10e", "11e"):
            return chosen
        return self.services.guild_settings.edition(interaction.guild_id)

    async def _run_and_reply(
        self,
        interaction: discord.Interaction,
        request: dict[str, Any],
        description: SimDescription,
    ) -> None:
        # The engine's refusals come before deferring, so they are ephemeral replies.
        request, notes = self.services.simulation.prepare(request)
        if notes:
            description = replace(description, notes=[*description.notes, *notes])
        await interaction.response.defer(thinking=True)
        try:
            result, png = await self.services.simulation.run(request)
        except Exception:
            # After a public deferral the first follow-up would replace "thinking…" publicly; delete it
            # so the central handler's follow-up is ephemeral like every other error.
            try:
                await interaction.delete_original_response()
            except discord.HTTPException:
                log.warning("could not delete the deferred /sim response")
            raise
        embed = sim_embed(result, request, description)
        await interaction.followup.send(
            embed=embed,
            file=discord.File(io.BytesIO(png), filename=PLOT_FILENAME),
            allowed_mentions=NO_MENTIONS,
        )

    # ------------------------------------------------------------------ /sim unit
    @sim.command(name="unit", description="Simulate a catalog unit, as fielded, against a catalog unit.")
    @app_commands.describe(
        attacker="Attacking unit (datasheet)",
        target="Target unit (datasheet)",
        weapon="Fire only this weapon or profile; '3x Plasma pistol' sets how many (default: the loadout)",
        models="Models in the attacking unit (default: the datasheet's minimum)",
        target_models="Models in the target unit (default: the datasheet's minimum)",
        phase="Shooting (every ranged weapon) or fight (one melee weapon per model)",
        leader="A leader attached to the attacking unit",
        target_leader="A leader attached to the target unit",
        wounds_lost="Wounds one target model has already lost (it is finished first)",
        abilities="Apply the units' own abilities where the data states their effect (default: on)",
        force="Run even when the size, loadout or leader is not allowed by the datasheet",
        fnp="Target's Feel No Pain (default: from its abilities)",
        **OPTION_DESCRIPTIONS,
    )
    @app_commands.choices(
        phase=PHASE_CHOICES,
        reroll_hits=REROLL_CHOICES,
        reroll_wounds=REROLL_CHOICES,
        edition=EDITION_CHOICES,
        method=METHOD_CHOICES,
    )
    async def unit(
        self,
        interaction: discord.Interaction,
        attacker: app_commands.Range[str, 1, 100],
        target: app_commands.Range[str, 1, 100],
        weapon: app_commands.Range[str, 1, 100] | None = None,
        models: app_commands.Range[int, 1, 100] | None = None,
        target_models: app_commands.Range[int, 1, 100] | None = None,
        phase: str | None = None,
        leader: app_commands.Range[str, 1, 100] | None = None,
        target_leader: app_commands.Range[str, 1, 100] | None = None,
        wounds_lost: app_commands.Range[int, 0, 200] = 0,
        abilities: bool = True,
        force: bool = False,
        half_range: bool = False,
        stationary: bool = False,
        charged: bool = False,
        cover: bool = False,
        hit_mod: app_commands.Range[int, -3, 3] = 0,
        wound_mod: app_commands.Range[int, -3, 3] = 0,
        save_mod: app_commands.Range[int, -3, 3] = 0,
        reroll_hits: str = "none",
        reroll_wounds: str = "none",
        crit_hit: app_commands.Range[int, 2, 6] = 6,
        crit_wound: app_commands.Range[int, 2, 6] = 6,
        fnp: app_commands.Range[int, 2, 6] | None = None,
        edition: str | None = None,
        method: str = "exact",
    ) -> None:
        options = self._options(interaction)
        asked = UnitRequest(
            attacker=attacker, target=target, weapon=weapon, models=models, target_models=target_models,
            phase=phase, leader=leader, target_leader=target_leader, wounds_lost=wounds_lost, fnp=fnp,
            abilities=abilities, force=force,
        )
        plan, entries = self.services.sim_planner.plan(asked, options)
        sources = list(dict.fromkeys(entry.source for entry in entries))
        description = SimDescription(
            title=f"{escape(entries[0].name)} → {escape(plan.target_name)}",
            attacker_lines=[weapon_line(n, w) for n, w in plan.attacker_lines],
            target_line=" + ".join(target_line(g["name"], g) for g in plan.target_groups),
            edition=options.edition,
            source=" + ".join(sources),
            options=options.describe(),
            notes=plan.assumptions,
            abilities=plan.abilities,
            groups=[(g["name"], g["models"], bool(g["character"])) for g in plan.target_groups],
        )
        await self._run_and_reply(interaction, plan.request, description)

    @unit.autocomplete("attacker")
    @unit.autocomplete("target")
    async def _datasheet_autocomplete(
        self, interaction: discord.Interaction, current: str
    ) -> list[Choice[str]]:
        try:
            hits = self.services.catalog.autocomplete(
                current or "",
                kind="datasheet",
                prefer_edition=self._edition_for_lookup(interaction),
                limit=AUTOCOMPLETE_MAX,
            )
        except Exception:  # autocomplete must answer something; the command itself reports real errors
            log.exception("datasheet autocomplete failed")
            return []
        choices = []
        for hit in hits[:AUTOCOMPLETE_MAX]:
            label = (
                f"{hit.name} ({hit.faction}, {hit.edition})" if hit.faction else f"{hit.name} ({hit.edition})"
            )
            value = hit.id if len(hit.id) <= 100 else hit.name[:100]
            choices.append(Choice(name=_choice_name(label), value=value))
        return choices

    @unit.autocomplete("weapon")
    async def _weapon_autocomplete(self, interaction: discord.Interaction, current: str) -> list[Choice[str]]:
        """The attacker's weapons: what its models carry first, then its wargear options."""
        attacker = getattr(interaction.namespace, "attacker", None)
        if not attacker:
            return []
        planner = self.services.sim_planner
        try:
            unit = planner.unit(planner.datasheet(str(attacker), self._edition_for_lookup(interaction), "attacker"))
        except UserError:
            return []
        except Exception:
            log.exception("weapon autocomplete failed")
            return []
        typed = (current or "").strip().lower()
        carried = {c.weapon.lower() for m in unit.models for c in m.loadout}
        weapons = sorted(unit.weapons, key=lambda w: str(w.get("weapon") or w.get("name")).lower() not in carried)
        choices: list[Choice[str]] = []
        for weapon in weapons:
            name = str(weapon.get("name", ""))
            if typed and typed not in name.lower():
                continue
            base = str(weapon.get("weapon") or name).lower()
            where = weapon_kind(weapon) + ("" if base in carried else ", option")
            label = f"{name} ({where}, A{weapon.get('A')} S{weapon.get('S')} AP{weapon.get('AP')} D{weapon.get('D')})"
            choices.append(Choice(name=_choice_name(label), value=name[:100]))
            if len(choices) >= AUTOCOMPLETE_MAX:
                break
        return choices

    # ------------------------------------------------------------------ /sim custom
    @sim.command(
        name="custom",
        description="Simulate ad-hoc profiles: attacker A=.. BS=.. S=.. AP=.. D=.., target T=..",
    )
    @app_commands.describe(
        attacker='e.g. A=D6+2 BS=3 S=14 AP=-3 D=D6+2 kw="BLAST 2" models=1 (several weapons: separate with ;)',
        target="e.g. T=5 Sv=4 W=4 inv=4 models=3 fnp=5",
        **OPTION_DESCRIPTIONS,
    )
    @app_commands.choices(
        reroll_hits=REROLL_CHOICES,
        reroll_wounds=REROLL_CHOICES,
        edition=EDITION_CHOICES,
        method=METHOD_CHOICES,
    )
    async def custom(
        self,
        interaction: discord.Interaction,
        attacker: app_commands.Range[str, 1, PROFILE_MAX_CHARS],
        target: app_commands.Range[str, 1, PROFILE_MAX_CHARS],
        half_range: bool = False,
        stationary: bool = False,
        charged: bool = False,
        cover: bool = False,
        hit_mod: app_commands.Range[int, -3, 3] = 0,
        wound_mod: app_commands.Range[int, -3, 3] = 0,
        save_mod: app_commands.Range[int, -3, 3] = 0,
        reroll_hits: str = "none",
        reroll_wounds: str = "none",
        crit_hit: app_commands.Range[int, 2, 6] = 6,
        crit_wound: app_commands.Range[int, 2, 6] = 6,
        edition: str | None = None,
        method: str = "exact",
    ) -> None:
        options = self._options(interaction)
        attack = parse_attacker(attacker)
        defence = parse_target(target)
        request = build_request(attack.volley, defence.target, options, attacker_keywords=attack.keywords)
        title_target = defence.name or "target"
        description = SimDescription(
            title=f"Custom attack → {escape(title_target)}",
            attacker_lines=[weapon_line(g["models"], g["weapon"]) for g in attack.volley],
            target_line=target_line(defence.name, defence.target),
            edition=options.edition,
            source=CUSTOM_SOURCE,
            options=[
                *options.describe(),
                *(["attacker: " + ", ".join(attack.keywords)] if attack.keywords else []),
            ],
        )
        await self._run_and_reply(interaction, request, description)


async def setup(bot: commands.Bot) -> None:
    await bot.add_cog(Sim(bot))
