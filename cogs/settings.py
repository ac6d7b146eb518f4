"""/settings edition (the server's default rules edition) and /settings points_channel (where points news is
posted); both need the Manage Server permission."""

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


    @app_commands.command(name="points_channel", description="Where the bot posts what changed after a points "
                                                             "(MFM) update; leave empty to stop.")
    @app_commands.describe(channel="The channel for points news (empty: none)")
    @app_commands.checks.has_permissions(manage_guild=True)
    async def points_channel(self, interaction: discord.Interaction,
                             channel: app_commands.AppCommandChannel | None = None) -> None:
        from bot.discord_glue.points_news import current_key
        from bot.errors import UserError

        if channel is not None and channel.type not in (discord.ChannelType.text, discord.ChannelType.news):
            raise UserError("Pick a text channel for points news.", field="channel")

        settings = self.bot.services.guild_settings  # type: ignore[attr-defined]
        guild_id = interaction.guild_id
        assert guild_id is not None  # guild_only
        settings.set_points_channel(guild_id, channel.id if channel else None)
        if channel is None:
            text = "Points news is no longer posted in this server."
        else:
            key = current_key(self.bot.services.settings.data_dir)  # type: ignore[attr-defined]
            if key is not None:  # news of the version already in force is not posted late
                settings.claim_points_post(guild_id, key)
            text = (f"After each points update that changes points, a summary is posted once in {channel.mention}. "
                    "`/points changes` shows the last one now.")
        embed = discord.Embed(title="Points news", description=text, colour=COLOUR_META)
        await interaction.response.send_message(embed=embed, allowed_mentions=NO_MENTIONS)


async def setup(bot: commands.Bot) -> None:
    await bot.add_cog(Settings(bot))
