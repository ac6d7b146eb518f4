"""/army (import a list from a file or a paste, show it, attach leaders, clear it) and /unit (damage, destroyed).

An army belongs to a player of the channel's game; importing stores it at once as an `army` event in the
game log, so `/game undo` reverts it. Reading the list runs after the interaction is deferred, in a worker
process under a memory cap and a time limit, a few lists at a time (`bot.armies.reader`).
"""

from __future__ import annotations

import asyncio
import logging

import discord
from discord import app_commands
from discord.ext import commands

from bot.armies.check import check_in, fill_missing_points
from bot.armies.decode import MAX_BYTES, ListError
from bot.catalog.normalize import clean_text
from bot.discord_glue.choices import battle_size_ac, unit_choices
from bot.discord_glue.forms import StandingForm, register, submitted
from bot.discord_glue.games import (
    act,
    call,
    catalog_or_none,
    channel_of,
    current_state,
    live_boards,
    reply,
)
from bot.errors import UserError
from bot.games import commands as gc
from bot.games.model import GameState
from bot.render import army as render
from bot.render.common import NO_MENTIONS

log = logging.getLogger("cogitator.army")

PASTE_MAX = 4000  # Discord's limit for a modal text input
PASTE_FORM, PASTE_FIELD = "army:paste", "army:paste:text"  # custom_ids: forms opened by older processes use them


async def own_unit_ac(interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
    return await unit_choices(interaction, current, side="own")


async def _import(interaction: discord.Interaction, data: bytes, filename: str | None) -> None:
    """Read the list, store it as the invoker's army, answer with the army and its diagnostics."""
    state = await current_state(interaction)
    with_errors = gc.require_player
    await call(interaction, with_errors, state, interaction.user.id)
    await interaction.response.defer(thinking=True)
    catalog = catalog_or_none(interaction) if state.edition == "10e" else None
    try:
        reader = interaction.client.services.army_reader  # type: ignore[attr-defined]
        army = await reader.read(data, filename=filename, edition=state.edition, catalog=catalog,
                                 user=interaction.user.id, guild=interaction.guild_id)
        document = army.to_dict()
        # units the list gives no points are costed once, by the points in force (11e MFM, 10e Wahapedia)
        fill_missing_points(document, await _check(interaction, document, state.battle_size))
        result = await act(interaction, gc.import_army, interaction.user.id, document)
    except UserError as error:
        await interaction.followup.send(embed=render.refusal(str(error)), ephemeral=True, allowed_mentions=NO_MENTIONS)
        return
    me = result.state.player_index(interaction.user.id)
    embed = render.army_embed(result.state, me, note=result.outcome.message, diagnostics=army.to_dict()["diagnostics"])
    embeds = [embed]
    stored = result.state.army(me)
    if stored is not None:
        embeds.append(render.check_embed(await _check(interaction, stored, result.state.battle_size), stored))
    await interaction.followup.send(embeds=embeds, allowed_mentions=NO_MENTIONS)
    await live_boards(interaction).refresh(channel_of(interaction), result)


async def _check(interaction: discord.Interaction, army: dict, battle_size: str | None) -> dict:
    """contract 6b's check; a 10e list reads the catalog's points, off the event loop (the first read of a
    faction loads its entries)."""
    data_dir = interaction.client.services.settings.data_dir  # type: ignore[attr-defined]
    if army.get("edition") == "10e":
        return await asyncio.to_thread(check_in, army, data_dir, battle_size, catalog_or_none(interaction))
    return check_in(army, data_dir, battle_size)


class PasteModal(StandingForm, title="Paste your army list"):
    """One instance answers every /army paste form, also one opened before a restart (registered in setup)."""

    text: discord.ui.TextInput = discord.ui.TextInput(
        label="Army list (GW app, NewRecruit or ListForge)", style=discord.TextStyle.paragraph,
        custom_id=PASTE_FIELD, max_length=PASTE_MAX,
        placeholder="Paste the whole export; a longer list: /army import with the file.")

    def __init__(self) -> None:
        super().__init__(custom_id=PASTE_FORM)

    async def on_submit(self, interaction: discord.Interaction) -> None:
        # clean_text: a lone surrogate in the pasted text cannot be encoded (found by the console fuzz)
        await _import(interaction, clean_text(submitted(interaction, PASTE_FIELD)).encode("utf-8"), None)

    async def on_error(self, interaction: discord.Interaction, error: Exception) -> None:
        await interaction.client.tree.on_error(interaction, error)  # type: ignore[arg-type]


class Army(commands.Cog):
    army = app_commands.Group(name="army", description="Your army list in this channel's game.", guild_only=True)
    unit = app_commands.Group(name="unit", description="Your army's units: damage and losses.", guild_only=True)

    def __init__(self, bot: commands.Bot) -> None:
        self.bot = bot

    @army.command(name="import", description="Import your army list from a file (GW app, NewRecruit, ListForge, .ros/.rosz).")
    @app_commands.describe(file="The exported list: text, JSON, .ros or .rosz (up to 5 MB)")
    async def army_import(self, interaction: discord.Interaction, file: discord.Attachment) -> None:
        if file.size > MAX_BYTES:
            raise ListError(f"{file.filename} is {file.size / 1024 / 1024:.1f} MB; the limit is "
                            f"{MAX_BYTES // 1024 // 1024} MB.")
        await current_state(interaction)  # no game: refuse before downloading anything
        data = await file.read()
        await _import(interaction, data[: MAX_BYTES + 1], file.filename)

    @army.command(name="paste", description="Paste your army list as text (opens a form).")
    async def army_paste(self, interaction: discord.Interaction) -> None:
        state = await current_state(interaction)
        await call(interaction, gc.require_player, state, interaction.user.id)
        await interaction.response.send_modal(PasteModal())

    @army.command(name="show", description="A player's army list with each unit's state.")
    @app_commands.describe(player="Whose army (default: yours, else both)")
    async def army_show(self, interaction: discord.Interaction, player: discord.User | None = None) -> None:
        state = await current_state(interaction)
        indices = _players(state, interaction.user.id, player)
        embeds = [render.army_embed(state, i) for i in indices]
        await interaction.response.send_message(embeds=embeds, ephemeral=True, allowed_mentions=NO_MENTIONS)

    @army.command(name="check", description="Cost your list by the current points (11e MFM, 10e Wahapedia) and "
                                            "check it against the battle size.")
    @app_commands.describe(battle_size="Incursion, Strike Force or Onslaught (default: the game's, else Strike Force)",
                           player="Whose list (default: yours)")
    @app_commands.autocomplete(battle_size=battle_size_ac)
    async def army_check(self, interaction: discord.Interaction, battle_size: str | None = None,
                         player: discord.User | None = None) -> None:
        state = await current_state(interaction)
        indices = _players(state, interaction.user.id, player)
        index = indices[0] if len(indices) == 1 else state.player_index(interaction.user.id)
        army = state.army(index) if index is not None else None
        if army is None:
            raise UserError("No army list to check: import one with `/army import file:` or `/army paste`.")
        report = await _check(interaction, army, battle_size or state.battle_size)
        await interaction.response.send_message(embed=render.check_embed(report, army), ephemeral=True,
                                                allowed_mentions=NO_MENTIONS)

    @army.command(name="clear", description="Remove your army list from this game (/game undo brings it back).")
    async def army_clear(self, interaction: discord.Interaction) -> None:
        await reply(interaction, await act(interaction, gc.clear_army, interaction.user.id))

    @army.command(name="attach", description="Which of your units a leader leads (leave unit empty: none).")
    @app_commands.describe(leader="Your leader", unit="The unit it leads (empty: it leads none)")
    @app_commands.autocomplete(leader=own_unit_ac, unit=own_unit_ac)
    async def army_attach(self, interaction: discord.Interaction, leader: str, unit: str | None = None) -> None:
        await reply(interaction, await act(interaction, gc.attach, interaction.user.id, leader, unit))

    @unit.command(name="damage", description="Your unit loses wounds, or set its models left / wounds lost.")
    @app_commands.describe(unit="Your unit", wounds="Damage to apply (rolls over whole models)",
                           models_left="Set the models left", wounds_lost="Set the wounds lost on its damaged model")
    @app_commands.autocomplete(unit=own_unit_ac)
    async def unit_damage(self, interaction: discord.Interaction, unit: str,
                          wounds: app_commands.Range[int, 1, 100] | None = None,
                          models_left: app_commands.Range[int, 0, 100] | None = None,
                          wounds_lost: app_commands.Range[int, 0, 100] | None = None) -> None:
        await reply(interaction, await act(interaction, gc.damage, interaction.user.id, unit, wounds=wounds,
                                           models_left=models_left, wounds_lost=wounds_lost))

    @unit.command(name="destroyed", description="Your unit is destroyed (the destroyed-unit log, Ruthless Efficiency).")
    @app_commands.describe(unit="Your unit")
    @app_commands.autocomplete(unit=own_unit_ac)
    async def unit_destroyed(self, interaction: discord.Interaction, unit: str) -> None:
        await reply(interaction, await act(interaction, gc.unit_destroyed, interaction.user.id, unit))


def _players(state: GameState, user_id: int, player: discord.User | None) -> list[int]:
    if player is not None:
        index = state.player_index(player.id)
        if index is None:
            raise UserError(f"{player.display_name} is not a player of this channel's game.", field="player")
        return [index]
    me = state.player_index(user_id)
    return [me] if me is not None and state.army(me) is not None else [0, 1]


async def setup(bot: commands.Bot) -> None:
    register(bot, PasteModal())
    await bot.add_cog(Army(bot))
