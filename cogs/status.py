"""/status: the bot's health in one embed, for the application's owner only."""

from __future__ import annotations

import discord
from discord import app_commands
from discord.ext import commands

from bot.errors import UserError
from bot.render.common import NO_MENTIONS
from bot.render.status import status_embed

NOT_OWNER = "Only the bot's owner can see its status."


class Status(commands.Cog):
    def __init__(self, bot: commands.Bot) -> None:
        self.bot = bot

    @app_commands.command(name="status", description="Uptime, latency, load, workers, store and data age "
                                                      "(the bot's owner only).")
    async def status(self, interaction: discord.Interaction) -> None:
        try:
            owner = await self.bot.is_owner(interaction.user)
        except discord.HTTPException:  # the application's owner could not be fetched: nobody is shown anything
            owner = False
        if not owner:
            raise UserError(NOT_OWNER)
        figures = await self.bot.ops.status()  # type: ignore[attr-defined]
        await interaction.response.send_message(embed=status_embed(figures), ephemeral=True,
                                                allowed_mentions=NO_MENTIONS)


async def setup(bot: commands.Bot) -> None:
    await bot.add_cog(Status(bot))
