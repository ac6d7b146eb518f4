"""Mission play: /mission (show, set), /secondary (draw, keep, discard) and /clock (start, pause, resume, pass).

Scoring lives with the other VP commands (`/vp primary`, `/vp secondary` in `cogs/game_resources.py`);
the roll-off, the score and the final summary are `/game` subcommands (`cogs/game.py`). The rules are in
`bot.games.mission_play`; card and mission names resolve against `bot.games.missions` off the event loop.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Literal

import discord
from discord import app_commands
from discord.ext import commands

from bot.discord_glue.choices import any_card_ac, deployment_ac, held_card_ac, mission_ac
from bot.discord_glue.games import act, call, channel_of, reply, resolve_card, store_of
from bot.games import mission_play as mp
from bot.games import missions
from bot.render import mission as mission_render
from bot.render.common import NO_MENTIONS

log = logging.getLogger("cogitator.game")

Mode = Literal["tactical", "fixed"]
DEFAULT_CLOCK_MINUTES = 90


class GameMission(commands.Cog):
    mission = app_commands.Group(name="mission", description="The mission of this channel's game.", guild_only=True)
    secondary = app_commands.Group(name="secondary", description="Secondary mission cards in this channel's game.",
                                   guild_only=True)
    clock = app_commands.Group(name="clock", description="The chess clock of this channel's game.", guild_only=True)

    def __init__(self, bot: commands.Bot) -> None:
        self.bot = bot

    # ---- /mission ----------------------------------------------------------------------------------

    @mission.command(name="show", description="The mission card (primary, VP awards, caps) and its secondary cards.")
    @app_commands.describe(name="Another mission of the game's edition (default: this game's)")
    @app_commands.autocomplete(name=mission_ac)
    async def mission_show(self, interaction: discord.Interaction, name: str | None = None) -> None:
        state = store_of(interaction).state(channel_of(interaction))
        edition = state.edition if state else self.bot.services.guild_settings.edition(  # type: ignore[attr-defined]
            interaction.guild_id)
        cat = await asyncio.to_thread(missions.catalog)
        record = state.mission if state else None
        if name:
            record = await call(interaction, missions.mission_record, edition, name, None)
        found = cat.mission(edition, record["id"]) if record and record.get("id") else None
        embed = await asyncio.to_thread(mission_render.mission_show_embed, state, edition, found, record)
        await interaction.response.send_message(embed=embed, ephemeral=True, allowed_mentions=NO_MENTIONS)

    @mission.command(name="set", description="Choose or change this game's mission (either player).")
    @app_commands.describe(name="The mission (11e: from the catalog; 10e: free text)", deployment="The deployment map",
                           force="Change it after the battle has begun (logged)")
    @app_commands.autocomplete(name=mission_ac, deployment=deployment_ac)
    async def mission_set(self, interaction: discord.Interaction, name: str, deployment: str | None = None,
                          force: bool = False) -> None:
        state = await call(interaction, store_of(interaction).require, channel_of(interaction))
        record = await call(interaction, missions.mission_record, state.edition, name, deployment)
        await reply(interaction, await act(interaction, mp.set_mission, interaction.user.id, record, force=force))

    # ---- /secondary ---------------------------------------------------------------------------------

    @secondary.command(name="draw", description="Draw a secondary card into your hand (tactical or fixed).")
    @app_commands.describe(card="The card (11e: from the deck)", mode="Tactical (default) or fixed")
    @app_commands.autocomplete(card=any_card_ac)
    async def secondary_draw(self, interaction: discord.Interaction, card: str, mode: Mode = "tactical") -> None:
        ref = await resolve_card(interaction, card, mode)
        await reply(interaction, await act(interaction, mp.secondary, interaction.user.id, "draw", ref))

    @secondary.command(name="keep", description="Keep a card you hold for a later turn.")
    @app_commands.describe(card="A card you hold")
    @app_commands.autocomplete(card=held_card_ac)
    async def secondary_keep(self, interaction: discord.Interaction, card: str) -> None:
        ref = await resolve_card(interaction, card)
        await reply(interaction, await act(interaction, mp.secondary, interaction.user.id, "keep", ref))

    @secondary.command(name="discard", description="Discard a tactical card you hold.")
    @app_commands.describe(card="A card you hold")
    @app_commands.autocomplete(card=held_card_ac)
    async def secondary_discard(self, interaction: discord.Interaction, card: str) -> None:
        ref = await resolve_card(interaction, card)
        await reply(interaction, await act(interaction, mp.secondary, interaction.user.id, "discard", ref))

    # ---- /clock -------------------------------------------------------------------------------------

    @clock.command(name="start", description="Start the chess clock: the active player's time runs.")
    @app_commands.describe(minutes=f"Minutes for each player (default {DEFAULT_CLOCK_MINUTES})",
                           follow="Hand the clock to the active player on /game next (default true)",
                           force="Restart a paused clock from full time (logged)")
    async def clock_start(self, interaction: discord.Interaction,
                          minutes: app_commands.Range[int, 1, mp.MAX_CLOCK_MINUTES] = DEFAULT_CLOCK_MINUTES,
                          follow: bool = True, force: bool = False) -> None:
        await reply(interaction, await act(interaction, mp.clock_start, interaction.user.id, minutes, follow=follow,
                                           force=force))

    @clock.command(name="pause", description="Pause the chess clock (either player).")
    async def clock_pause(self, interaction: discord.Interaction) -> None:
        await reply(interaction, await act(interaction, mp.clock_pause, interaction.user.id))

    @clock.command(name="resume", description="Resume the chess clock (either player).")
    async def clock_resume(self, interaction: discord.Interaction) -> None:
        await reply(interaction, await act(interaction, mp.clock_resume, interaction.user.id))

    @clock.command(name="pass", description="Hand the clock to your opponent (only while your time runs).")
    async def clock_pass(self, interaction: discord.Interaction) -> None:
        await reply(interaction, await act(interaction, mp.clock_pass, interaction.user.id))


async def setup(bot: commands.Bot) -> None:
    await bot.add_cog(GameMission(bot))
