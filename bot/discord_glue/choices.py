"""Autocompletes several cogs offer: units of the channel's game, missions and deployments, secondary
cards, factions. Each answers at most Discord's 25 choices of at most 100 characters.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

import discord
from discord import app_commands
from discord.app_commands import Choice

from bot.discord_glue.games import catalog_or_none, store_of
from bot.games import missions
from bot.games.events import ACTIVE_CARD

if TYPE_CHECKING:
    from bot.catalog.service import Catalog

log = logging.getLogger("cogitator.game")


async def unit_choices(interaction: discord.Interaction, current: str, *, side: str) -> list[app_commands.Choice[str]]:
    """Units in the game (own, opponent's or both) told apart by their state ("Boyz #2 · 7/10 models"), then,
    for a player without an army list, catalog datasheets; at most 25."""
    state = store_of(interaction).state(interaction.channel_id or 0)
    if state is None:
        return []
    me = state.player_index(interaction.user.id)
    owners = {"own": [me], "enemy": [None if me is None else 1 - me], "any": [0, 1]}[side]
    text = current.casefold().strip()
    choices: dict[str, str] = {}
    for unit in state.units:
        if (unit.owner in owners or me is None) and (not text or text in unit.name.casefold()):
            label = unit.label()
            if side == "any":
                label += f" ({state.players[unit.owner].name})"
            choices.setdefault(unit.name, label)
    catalog = catalog_or_none(interaction)
    unlisted = [o for o in owners if o is not None and state.army(o) is None]
    if catalog is not None and len(choices) < 25 and text and unlisted:
        factions = [state.players[o].faction for o in unlisted]
        try:
            for faction in factions:
                for hit in catalog.autocomplete(current, kind="datasheet", edition=state.edition, faction=faction, limit=25):
                    choices.setdefault(hit.name, hit.name)
        except Exception:
            log.debug("catalog autocomplete failed", exc_info=True)
    return [app_commands.Choice(name=label[:100], value=name[:100]) for name, label in list(choices.items())[:25]]


def edition_for(interaction: discord.Interaction) -> str:
    """The edition typed in the same command, else the channel's game, else the server's default."""
    typed = getattr(interaction.namespace, "edition", None)
    if typed in ("10e", "11e"):
        return typed
    state = store_of(interaction).state(interaction.channel_id or 0)
    if state is not None:
        return state.edition
    return interaction.client.services.guild_settings.edition(interaction.guild_id)  # type: ignore[attr-defined]


async def mission_ac(interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
    """The edition's missions from the catalog, with their matchup; none for 10e (free text)."""
    edition = edition_for(interaction)
    cat = await asyncio.to_thread(missions.catalog)
    found = cat.search(cat.missions.get(edition, []), current)
    return [app_commands.Choice(name=f"{m.name} · {m.matchup}"[:100] if m.matchup else m.name[:100], value=m.name[:100])
            for m in found]


async def battle_size_ac(interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
    """The battle sizes of the Chapter Approved file in force (none before `data update --source gdc`)."""
    from bot.points import sizes

    try:
        known = sizes.load(interaction.client.services.settings.data_dir)  # type: ignore[attr-defined]
    except sizes.SizesError:
        return []
    typed = current.casefold()
    return [app_commands.Choice(name=f"{s.name} · {s.points:,} pts"[:100], value=s.name[:100])
            for s in known.sizes if typed in s.name.casefold()][:25]


async def deployment_ac(interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
    edition = edition_for(interaction)
    cat = await asyncio.to_thread(missions.catalog)
    return [app_commands.Choice(name=d.name[:100], value=d.name[:100])
            for d in cat.search(cat.deployments.get(edition, []), current)]


async def card_choices(interaction: discord.Interaction, current: str, *, held_only: bool) -> list[app_commands.Choice[str]]:
    """The invoker's cards in play first, then (unless `held_only`) the edition's deck minus achieved cards."""
    state = store_of(interaction).state(interaction.channel_id or 0)
    if state is None:
        return []
    me = state.player_index(interaction.user.id)
    needle = current.casefold().strip()
    names: list[str] = []
    mine = state.players[me].secondaries if me is not None else []
    names += [c["name"] for c in mine if c["status"] in ACTIVE_CARD]
    if not held_only:
        done = {c["name"] for c in mine if c["status"] == "achieved"}
        cat = await asyncio.to_thread(missions.catalog)
        names += [c.name for c in cat.secondaries.get(state.edition, []) if c.name not in done and c.name not in names]
    return [app_commands.Choice(name=n[:100], value=n[:100]) for n in names if needle in n.casefold()][:25]


async def any_card_ac(interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
    return await card_choices(interaction, current, held_only=False)


async def held_card_ac(interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
    return await card_choices(interaction, current, held_only=True)


def faction_choices(catalog: Catalog, current: str) -> list[Choice[str]]:
    """Factions whose name contains what was typed (all of them, up to 25, when nothing is typed)."""
    typed = (current or "").casefold().strip()
    names = [f for f in catalog.factions() if typed in f.casefold()]
    return [Choice(name=f[:100], value=f[:100]) for f in names[:25]]
