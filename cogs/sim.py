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

import asyncio
import io
import logging
from dataclasses import replace
from typing import Any

import discord
from discord import app_commands
from discord.app_commands import Choice
from discord.ext import commands

from bot.catalog.service import Catalog
from bot.discord_glue import compare as compare_glue
from bot.discord_glue import matchup as matchup_glue
from bot.discord_glue.aliases import aliased
from bot.discord_glue.choices import faction_choices
from bot.discord_glue.crits import crit_choices, parse_crits
from bot.errors import UserError
from bot.render.common import NO_MENTIONS, escape, truncate
from bot.render.sim import PLOT_FILENAME, SimDescription, sim_embed, target_line, weapon_line
from bot.sim import tracked as tracked_sim
from bot.sim.planner import UnitRequest
from bot.sim.profiles import parse_attacker, parse_target
from bot.sim.requests import SimOptions, build_request, weapon_kind
from bot.sim.variants import choices as variant_choices

log = logging.getLogger("cogitator.sim")

CUSTOM_SOURCE = "Ad-hoc profiles"
# Slash option name -> SimOptions field, for the options /sim unit and /sim custom share.
SITUATION_OPTIONS = {
    "method": "method", "half_range": "half_range", "stationary": "stationary", "charged": "charged",
    "cover": "cover", "hit_mod": "hit_modifier", "wound_mod": "wound_modifier", "save_mod": "save_modifier",
    "reroll_hits": "reroll_hits", "reroll_wounds": "reroll_wounds",
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
MATCHUP_VALUES = [
    Choice(name="share destroyed", value="share"),
    Choice(name="points destroyed", value="points"),
]
REROLL_CHOICES = [
    Choice(name="no re-roll", value="none"),
    Choice(name="re-roll 1s", value="ones"),
    Choice(name="re-roll failed rolls", value="failed"),
    Choice(name="re-roll non-critical rolls (fish for crits)", value="non_critical"),
]

# The fixed choices of the options /sim unit and /sim custom share.
SITUATION_CHOICES = {
    "reroll_hits": REROLL_CHOICES, "reroll_wounds": REROLL_CHOICES, "edition": EDITION_CHOICES,
    "method": METHOD_CHOICES,
}

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
    "crits": "Unmodified hit / wound rolls that are critical (default 6+ / 6+)",
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
        return SimOptions(edition=self._edition_for_lookup(interaction), **given, **parse_crits(getattr(typed, "crits", None)))

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
            result, png = await self.services.simulation.run(request, user=interaction.user.id,
                                                             guild=interaction.guild_id)
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
    @sim.command(name="unit", description="Simulate a unit, as fielded or as tracked in this channel's game, against another.")
    @app_commands.describe(
        attacker="Attacking unit: one of yours in this channel's game (list, losses, state), or a datasheet",
        target="Target unit: one of your opponent's in this channel's game, or a datasheet",
        faction="Prefer this faction's datasheets for typed names (a name several factions share)",
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
    @app_commands.choices(phase=PHASE_CHOICES, **SITUATION_CHOICES)
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
        crits: app_commands.Range[str, 1, 20] | None = None,
        fnp: app_commands.Range[int, 2, 6] | None = None,
        edition: str | None = None,
        method: str = "exact",
        faction: app_commands.Range[str, 1, 100] | None = None,
    ) -> None:
        options = self._options(interaction)
        game = self._game(interaction)
        if tracked_sim.names_tracked_unit(game, attacker):
            # Units of this channel's game: their list, models left, leaders and tracked state decide.
            given = {"models": models, "target_models": target_models, "leader": leader,
                     "target_leader": target_leader, "wounds_lost": wounds_lost or None, "faction": faction,
                     "edition": edition if edition not in (None, game.edition) else None}
            plan, entries, title = tracked_sim.plan_between(
                self.services.sim_planner, game, attacker, target, options, user_id=interaction.user.id,
                weapon=weapon, phase=phase, fnp=fnp, abilities=abilities, force=force,
                unused=tuple(name for name, value in given.items() if value is not None))
            options = replace(options, edition=game.edition)
        else:
            named = {"attacker": attacker, "target": target, "leader": leader, "target_leader": target_leader}
            named = {k: aliased(interaction, v) if v else v for k, v in named.items()}  # the server's /alias words
            asked = UnitRequest(
                attacker=named["attacker"], target=named["target"], weapon=weapon, models=models,
                target_models=target_models, phase=phase, leader=named["leader"], target_leader=named["target_leader"], wounds_lost=wounds_lost, fnp=fnp,
                abilities=abilities, force=force, faction=faction,
            )
            plan, entries = self.services.sim_planner.plan(asked, options)
            title = f"{entries[0].name} → {plan.target_name}"
        sources = list(dict.fromkeys(entry.source for entry in entries))
        description = SimDescription(
            title=escape(title),
            attacker_lines=[weapon_line(n, w) for n, w in plan.attacker_lines],
            target_line=" + ".join(target_line(g["name"], g) for g in plan.target_groups),
            edition=options.edition,
            source=" + ".join(sources),
            options=options.describe(),
            notes=plan.assumptions,
            abilities=plan.abilities,
            tracked=plan.tracked,
            groups=[(g["name"], g["models"], bool(g["character"])) for g in plan.target_groups],
        )
        await self._run_and_reply(interaction, plan.request, description)

    def _game(self, interaction: discord.Interaction) -> Any:
        """The channel's active game when it has an army list (else None: /sim uses the catalog)."""
        if interaction.channel_id is None:
            return None
        try:
            state = self.services.games.state(interaction.channel_id)
        except Exception:  # the tracker's storage failing must not take datasheet simulations down with it
            log.exception("no game state for /sim")
            return None
        return state if state is not None and state.armies else None

    @unit.autocomplete("attacker")
    async def _attacker_autocomplete(self, interaction: discord.Interaction, current: str) -> list[Choice[str]]:
        return self._unit_choices(interaction, current, attacker=True)

    @unit.autocomplete("target")
    async def _target_autocomplete(self, interaction: discord.Interaction, current: str) -> list[Choice[str]]:
        return self._unit_choices(interaction, current, attacker=False)

    def _unit_choices(self, interaction: discord.Interaction, current: str, *, attacker: bool) -> list[Choice[str]]:
        """The game's listed units first (yours as attacker, your opponent's as target), then datasheets."""
        choices: list[Choice[str]] = []
        try:
            game = self._game(interaction)
            if game is not None:
                me = game.player_index(interaction.user.id)
                everyone = range(len(game.players))
                owners = [i for i in everyone if (i == me) == attacker] if me is not None else list(everyone)
                typed = (current or "").casefold()
                for unit in game.units:
                    if (unit.owner in owners and not unit.unlisted and not unit.destroyed
                            and typed in unit.name.casefold()):
                        label = f"{unit.label()} ({game.players[unit.owner].name})"
                        choices.append(Choice(name=_choice_name(label), value=unit.name[:100]))
        except Exception:  # autocomplete must answer something; the command itself reports real errors
            log.exception("tracked unit autocomplete failed")
        return (choices + self._datasheet_choices(interaction, current))[:AUTOCOMPLETE_MAX]

    @unit.autocomplete("leader")
    @unit.autocomplete("target_leader")
    async def _leader_autocomplete(self, interaction: discord.Interaction, current: str) -> list[Choice[str]]:
        return self._datasheet_choices(interaction, current)

    @unit.autocomplete("crits")
    async def _unit_crits_autocomplete(self, interaction: discord.Interaction, current: str) -> list[Choice[str]]:
        return crit_choices(current)

    @unit.autocomplete("faction")
    async def _faction_autocomplete(self, interaction: discord.Interaction, current: str) -> list[Choice[str]]:
        return faction_choices(self.services.catalog, current)

    def _datasheet_choices(self, interaction: discord.Interaction, current: str) -> list[Choice[str]]:
        """Datasheets matching what was typed: the `faction:` option's first, then the rest."""
        catalog: Catalog = self.services.catalog
        faction = getattr(interaction.namespace, "faction", None) or None
        prefer = self._edition_for_lookup(interaction)
        current = aliased(interaction, current or "")
        try:
            hits = catalog.autocomplete(current or "", kind="datasheet", prefer_edition=prefer, faction=faction,
                                        limit=AUTOCOMPLETE_MAX) if faction else []
            seen = {hit.id for hit in hits}
            hits += [hit for hit in catalog.autocomplete(current or "", kind="datasheet", prefer_edition=prefer,
                                                         limit=AUTOCOMPLETE_MAX) if hit.id not in seen]
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
        game = self._game(interaction)
        try:
            if tracked_sim.names_tracked_unit(game, str(attacker)):
                unit = tracked_sim.listed_attacker(planner, game, str(attacker), user_id=interaction.user.id)
            else:
                unit = planner.unit(planner.datasheet(aliased(interaction, str(attacker)), self._edition_for_lookup(interaction), "attacker",
                                                      faction=getattr(interaction.namespace, "faction", None)))
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

    # ------------------------------------------------------------------ /sim matchup
    @sim.command(name="matchup", description="Your units against your opponent's: who should attack what")
    @app_commands.describe(
        phase="Shooting (default) or fight",
        value="Share of each target destroyed (default) or points destroyed",
        attackers="No game: attacker datasheets, comma-separated",
        targets="No game: target datasheets, comma-separated",
        edition="Edition for datasheet names",
        faction="Prefer this faction's datasheets",
    )
    @app_commands.choices(phase=PHASE_CHOICES, value=MATCHUP_VALUES, edition=EDITION_CHOICES)
    async def matchup(
        self,
        interaction: discord.Interaction,
        phase: str = "shooting",
        value: str = "share",
        attackers: app_commands.Range[str, 1, 2000] | None = None,
        targets: app_commands.Range[str, 1, 2000] | None = None,
        edition: str | None = None,
        faction: app_commands.Range[str, 1, 100] | None = None,
    ) -> None:
        game = self._game(interaction)
        options = SimOptions(edition=self._edition_for_lookup(interaction))
        pending = await asyncio.to_thread(matchup_glue.plan, self.services, game, options,
                                          user_id=interaction.user.id, phase=phase, attackers=attackers,
                                          targets=targets, faction=faction)
        source = "army lists in this game" if game is not None and not (attackers or targets) else "catalog datasheets"
        await matchup_glue.answer(interaction, self.services, pending, value, source)

    @matchup.autocomplete("faction")
    async def _matchup_faction_autocomplete(self, interaction: discord.Interaction,
                                            current: str) -> list[Choice[str]]:
        return faction_choices(self.services.catalog, current)

    # ------------------------------------------------------------------ /sim compare
    @sim.command(name="compare", description="One attacker and target under up to 4 variants")
    @app_commands.describe(attacker="Attacking unit",
                           target="Target unit", variant1="A variant (as listed, a weapon, +1 to hit, …)",
                           variant2="Another variant", variant3="Another variant", variant4="Another variant",
                           phase="Shooting or fight", edition="Edition for datasheet names",
                           faction="Prefer this faction's datasheets")
    @app_commands.choices(phase=PHASE_CHOICES, edition=EDITION_CHOICES)
    async def compare(self, interaction: discord.Interaction, attacker: app_commands.Range[str, 1, 100],
                      target: app_commands.Range[str, 1, 100], variant1: app_commands.Range[str, 1, 200],
                      variant2: app_commands.Range[str, 1, 200], variant3: app_commands.Range[str, 1, 200] | None = None,
                      variant4: app_commands.Range[str, 1, 200] | None = None, phase: str | None = None,
                      edition: str | None = None, faction: app_commands.Range[str, 1, 100] | None = None) -> None:
        typed = [(f"variant{i}", v) for i, v in enumerate((variant1, variant2, variant3, variant4), 1) if v]
        comparison = await asyncio.to_thread(
            compare_glue.plan, self.services, self._game(interaction), SimOptions(edition=self._edition_for_lookup(
                interaction)), user_id=interaction.user.id, attacker=aliased(interaction, attacker),
            target=aliased(interaction, target), typed=typed, phase=phase, faction=faction)
        await compare_glue.answer(interaction, self.services, comparison)

    @compare.autocomplete("variant1")
    @compare.autocomplete("variant2")
    @compare.autocomplete("variant3")
    @compare.autocomplete("variant4")
    async def _variant_autocomplete(self, interaction: discord.Interaction, current: str) -> list[Choice[str]]:
        """What this attacker can take: the modifiers, then its weapons (a typed ` + ` combines them)."""
        attacker = getattr(interaction.namespace, "attacker", None)
        try:
            weapons = compare_glue.attacker_weapons(
                self.services, self._game(interaction), aliased(interaction, str(attacker)),
                SimOptions(edition=self._edition_for_lookup(interaction)), user_id=interaction.user.id,
                faction=getattr(interaction.namespace, "faction", None)) if attacker else []
        except UserError:
            weapons = []
        head, _, last = (current or "").rpartition(" + ")
        prefix = f"{head} + " if head else ""
        return [Choice(name=_choice_name(prefix + c), value=(prefix + c)[:100]) for c in variant_choices(weapons)
                if last.strip().casefold() in c.casefold()][:AUTOCOMPLETE_MAX]

    @compare.autocomplete("attacker")
    async def _compare_attacker_autocomplete(self, interaction: discord.Interaction, current: str) -> list[Choice[str]]:
        return self._unit_choices(interaction, current, attacker=True)

    @compare.autocomplete("target")
    async def _compare_target_autocomplete(self, interaction: discord.Interaction, current: str) -> list[Choice[str]]:
        return self._unit_choices(interaction, current, attacker=False)

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
    @app_commands.choices(**SITUATION_CHOICES)
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
        crits: app_commands.Range[str, 1, 20] | None = None,
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

    @custom.autocomplete("crits")
    async def _custom_crits_autocomplete(self, interaction: discord.Interaction, current: str) -> list[Choice[str]]:
        return crit_choices(current)


async def setup(bot: commands.Bot) -> None:
    await bot.add_cog(Sim(bot))
