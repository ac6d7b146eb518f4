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
from bot.sim.profiles import parse_attacker, parse_target
from bot.sim.requests import (
    ALL_RANGED,
    SimOptions,
    build_request,
    datasheet_target,
    distinct_weapons,
    engine_weapon,
    select_weapons,
    weapon_kind,
    with_profiles,
)

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

    def _complete(self, entry: Any, option: str) -> Any:
        """A target needs a profile table; an attacker needs only its weapons."""
        if option != "target":
            return entry
        return with_profiles(entry, self.services.catalog.complete_text_for(entry.id))

    def _datasheet(self, value: str, edition: str, option: str) -> Any:
        """An autocomplete id, or a typed name resolved confidently; otherwise a UserError with candidates."""
        text = (value or "").strip()
        if not text:
            raise UserError(f"Name a unit for `{option}`.", field=option)
        catalog = self.services.catalog
        entry = catalog.get(text) if ":datasheet:" in text else None
        if entry is not None and entry.kind == "datasheet":
            return self._complete(entry, option)
        resolution = catalog.resolve(text, kind="datasheet", edition=edition)
        if resolution.best is not None and resolution.confident:
            return self._complete(resolution.best, option)
        # Not in this edition's data: a datasheet of the other edition is still worth simulating (noted).
        anywhere = catalog.resolve(text, kind="datasheet", prefer_edition=edition)
        if anywhere.best is not None and anywhere.confident:
            return self._complete(anywhere.best, option)
        resolution = resolution if resolution.candidates else anywhere
        names = ", ".join(escape(hit.name) for hit in resolution.candidates[:5])
        hint = f" Did you mean: {names}?" if names else " Pick one from the list as you type."
        shown = text[:60].replace("`", "'")
        raise UserError(f"No datasheet matches `{shown}` for `{option}`.{hint}", field=option)

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
    @sim.command(name="unit", description="Simulate a catalog unit's weapons against a catalog unit.")
    @app_commands.describe(
        attacker="Attacking unit (datasheet)",
        weapon="One weapon, or all ranged weapons of a single model (default: its only or all ranged weapons)",
        models="Attacking models firing each weapon (default: the unit's minimum size)",
        target="Target unit (datasheet)",
        target_models="Models in the target unit (default: its minimum size)",
        wounds_lost="Wounds one target model has already lost (it is finished first)",
        fnp="Target's Feel No Pain (default: read from its abilities when unconditional)",
        **OPTION_DESCRIPTIONS,
    )
    @app_commands.choices(
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
        wounds_lost: app_commands.Range[int, 0, 200] = 0,
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
        attacker_entry = self._datasheet(attacker, options.edition, "attacker")
        target_entry = self._datasheet(target, options.edition, "target")
        attacker_data = attacker_entry.data or {}
        single_model = int(attacker_data.get("models_max") or attacker_data.get("models_min") or 1) == 1
        weapons, notes = select_weapons(
            list(attacker_data.get("weapons") or []), weapon, single_model=single_model
        )
        count = models if models is not None else int(attacker_data.get("models_min") or 1)
        if models is None and count > 1 and len(attacker_data.get("profiles") or []) > 1:
            notes.append(f"fired from {count} models (the unit's minimum size), but its model types may carry "
                         "different weapons: set models: to the number that carry it")
        volley = [{"models": count, "weapon": engine_weapon(w)} for w in weapons]
        target_profile, _profile_name, target_notes = datasheet_target(
            target_entry.data or {}, models=target_models, fnp=fnp
        )
        notes += target_notes
        if wounds_lost:
            wounds = int(target_profile.get("wounds") or 0)
            if wounds_lost >= wounds:
                raise UserError(
                    f"`wounds_lost` must be less than the target's W ({wounds}); a model with none left is dead.",
                    field="wounds_lost",
                )
            target_profile["wounds_lost"] = wounds_lost
        for entry in (attacker_entry, target_entry):
            if entry.edition != options.edition:
                notes.append(f"{entry.name}: {entry.edition} datasheet used with {options.edition} rules")
        request = build_request(
            volley, target_profile, options, attacker_keywords=list(attacker_data.get("keywords") or [])
        )
        sources = list(dict.fromkeys([attacker_entry.source, target_entry.source]))
        description = SimDescription(
            title=f"{escape(attacker_entry.name)} → {escape(target_entry.name)}",
            attacker_lines=[weapon_line(g["models"], g["weapon"]) for g in volley],
            target_line=target_line(target_entry.name, target_profile),
            edition=options.edition,
            source=" + ".join(sources),
            options=options.describe(),
            notes=notes,
        )
        await self._run_and_reply(interaction, request, description)

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
        attacker = getattr(interaction.namespace, "attacker", None)
        if not attacker:
            return []
        try:
            entry = self._datasheet(str(attacker), self._edition_for_lookup(interaction), "attacker")
        except UserError:
            return []
        except Exception:
            log.exception("weapon autocomplete failed")
            return []
        data = entry.data or {}
        weapons = list(data.get("weapons") or [])
        typed = (current or "").strip().lower()
        choices: list[Choice[str]] = []
        # "All ranged" only where it means something: one model carrying several ranged weapons. There is
        # no "all melee": a model fights with one melee weapon (11e 04.01), so it is listed by name.
        single_model = int(data.get("models_max") or data.get("models_min") or 1) == 1
        if (
            single_model
            and len(distinct_weapons(weapons, "ranged")[0]) > 1
            and (not typed or typed in "all ranged")
        ):
            choices.append(Choice(name="All ranged weapons (one profile each)", value=ALL_RANGED))
        for index, weapon in enumerate(weapons, start=1):
            name = str(weapon.get("name", ""))
            if typed and typed not in name.lower():
                continue
            kind = weapon_kind(weapon)
            label = f"{name} ({kind}, A{weapon.get('A')} S{weapon.get('S')} AP{weapon.get('AP')} D{weapon.get('D')})"
            value = name if len(name) <= 100 else f"#{index}"
            choices.append(Choice(name=_choice_name(label), value=value))
            if len(choices) >= AUTOCOMPLETE_MAX:
                break
        return choices[:AUTOCOMPLETE_MAX]

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
