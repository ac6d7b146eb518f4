"""/help and /about: what the bot can do and where its data comes from."""

from __future__ import annotations

from importlib import metadata

import discord
from discord import app_commands
from discord.ext import commands

from bot.render.common import COLOUR_META, NO_MENTIONS, truncate

DATA_SOURCES = (
    ("Seed pages", "a 10th-edition Leagues of Votann *Grimnyr* page and an 11th-edition Orks *Stompa* page, "
     "embedded as the default data", None),
    ("40kdc-data", "11th-edition datasheets and weapons for about 1,100 units (wh40kdc, MIT). "
     "Powered by [40kdc-data](https://40kdc.alpacasoft.dev)", None),
    ("Wahapedia", "10th-edition CSV export, when imported by the server operator", "https://wahapedia.ru"),
    ("game-datacards", "11th-edition faction JSON and the numbered core rules, when imported",
     "https://game-datacards.eu"),
)
EDITIONS = "10th edition and 11th edition (current)"


def version() -> str:
    try:
        return metadata.version("cogitator")
    except metadata.PackageNotFoundError:
        return "development"


def command_lines(tree: app_commands.CommandTree) -> list[str]:
    """One line per invocable command, read from the tree itself so /help never goes stale."""
    lines = []
    for command in sorted(tree.walk_commands(), key=lambda c: c.qualified_name):
        if isinstance(command, app_commands.Group):
            continue
        lines.append(f"`/{command.qualified_name}` — {command.description}")
    return lines


class Meta(commands.Cog):
    def __init__(self, bot: commands.Bot) -> None:
        self.bot = bot

    @app_commands.command(name="help", description="List every command with one line on what it does.")
    async def help(self, interaction: discord.Interaction) -> None:
        embed = discord.Embed(title="Cogitator commands", colour=COLOUR_META)
        chunk: list[str] = []
        size = 0
        for line in command_lines(self.bot.tree):
            if size + len(line) + 1 > 1000:
                embed.add_field(name="\u200b" if embed.fields else "Commands", value="\n".join(chunk), inline=False)
                chunk, size = [], 0
            chunk.append(line)
            size += len(line) + 1
        if chunk:
            embed.add_field(name="\u200b" if embed.fields else "Commands", value="\n".join(chunk), inline=False)
        embed.set_footer(text=f"Cogitator {version()} · /about for data sources and credits")
        await interaction.response.send_message(embed=embed, ephemeral=True, allowed_mentions=NO_MENTIONS)

    @app_commands.command(name="about", description="Version, supported editions, data sources and credits.")
    async def about(self, interaction: discord.Interaction) -> None:
        embed = discord.Embed(
            title="About Cogitator",
            description="Rules lookups, exact combat simulations and shared game tracking for Warhammer 40,000.",
            colour=COLOUR_META,
        )
        embed.add_field(name="Version", value=version(), inline=True)
        embed.add_field(name="Editions", value=EDITIONS, inline=True)
        for name, text, link in DATA_SOURCES:
            value = f"{text}\n<{link}>" if link else text
            embed.add_field(name=name, value=truncate(value, 1024), inline=False)
        embed.set_footer(text="Unofficial fan tool; Warhammer 40,000 is a trademark of Games Workshop.")
        await interaction.response.send_message(embed=embed, allowed_mentions=NO_MENTIONS)


async def setup(bot: commands.Bot) -> None:
    await bot.add_cog(Meta(bot))
