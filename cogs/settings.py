"""/settings edition: the server's default rules edition (needs the Manage Server permission)."""

from __future__ import annotations

import discord
from discord import app_commands
from discord.app_commands import Choice
from discord.ext import commands

from bot.render.common import COLOUR_META, NO_MENTIONS, edition_label


@app_commands.guild_only()
@app_commands.default_permissions(manage_guild=True)
class Settings(commands.GroupCog, group_name="settings", group_description="Server settings for Cogitator."):
    def __init__(self, bot: commands.Bot) -> None:
        self.bot = bot

    @app_commands.command(name="edition", description="Set this server's default rules edition.")
    @app_commands.describe(edition="Used by /rule, /datasheet, /stratagem, /sim and /game unless a command says otherwise")
    @app_commands.choices(edition=[Choice(name="11th edition (current)", value="11e"),
                                   Choice(name="10th edition", value="10e")])
    @app_commands.checks.has_permissions(manage_guild=True)
    async def edition(self, interaction: discord.Interaction, edition: str) -> None:
        settings = self.bot.services.guild_settings  # type: ignore[attr-defined]
        settings.set_edition(interaction.guild_id, edition)
        embed = discord.Embed(title="Default edition updated", colour=COLOUR_META,
                              description=f"This server now uses the **{edition_label(edition)}** by default. "
                                          "Commands with an `edition` option can still ask for the other one.")
        await interaction.response.send_message(embed=embed, allowed_mentions=NO_MENTIONS)


async def setup(bot: commands.Bot) -> None:
    await bot.add_cog(Settings(bot))
