"""/help and /about: what the bot can do and where its data comes from."""

from __future__ import annotations

import asyncio
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
    ("game-datacards", "11th-edition faction JSON, core rules, FAQ/errata and keyword glossary, when imported "
     "(`python -m bot data update`)",
     "https://game-datacards.eu"),
)
EDITIONS = "10th edition and 11th edition (current)"


def version() -> str:
    try:
        return metadata.version("cogitator")
    except metadata.PackageNotFoundError:
        return "development"


# /help headings by the cog module a command lives in; a module not listed gets "Other".
SECTIONS = {
    "cogs.rules": "Rules lookups",
    "cogs.settings": "Rules lookups",
    "cogs.aliases": "Rules lookups",
    "cogs.sim": "Combat simulation",
    "cogs.game": "Game tracking",
    "cogs.game_resources": "Game tracking",
    "cogs.game_mission": "Game tracking",
    "cogs.army": "Game tracking",
    "cogs.league": "Leagues",
    "cogs.points": "Game tracking",
    "cogs.meta": "About",
    "cogs.status": "About",
}
SECTION_ORDER = ("Rules lookups", "Combat simulation", "Game tracking", "Leagues", "About", "Other")


def command_sections(tree: app_commands.CommandTree) -> dict[str, list[str]]:
    """One line per invocable command, grouped by feature, read from the tree so /help never goes stale."""
    sections: dict[str, list[str]] = {name: [] for name in SECTION_ORDER}
    for command in sorted(tree.walk_commands(), key=lambda c: c.qualified_name):
        if isinstance(command, app_commands.Group):
            continue
        section = SECTIONS.get(command.module or "", "Other")
        sections[section].append(f"`/{command.qualified_name}` — {command.description}")
    return {name: lines for name, lines in sections.items() if lines}


class Meta(commands.Cog):
    def __init__(self, bot: commands.Bot) -> None:
        self.bot = bot

    @app_commands.command(name="help", description="List every command with one line on what it does.")
    async def help(self, interaction: discord.Interaction) -> None:
        embed = discord.Embed(title="Cogitator commands", colour=COLOUR_META)
        for section, lines in command_sections(self.bot.tree).items():
            # A field holds 1,024 characters: long sections continue in untitled fields.
            name, chunk = section, ""
            for line in lines:
                if chunk and len(chunk) + len(line) + 1 > 1024:
                    embed.add_field(name=name, value=chunk, inline=False)
                    name, chunk = "\u200b", ""
                chunk = f"{chunk}\n{line}" if chunk else line
            embed.add_field(name=name, value=chunk, inline=False)
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
        loaded = await asyncio.to_thread(self.bot.services.catalog.loaded_sources)  # type: ignore[attr-defined]
        if loaded:
            embed.add_field(name="Loaded now", value=truncate("\n".join(f"**{n}**: {d}" for n, d in loaded), 1024),
                            inline=False)
        embed.set_footer(text="Unofficial fan tool; Warhammer 40,000 is a trademark of Games Workshop.")
        await interaction.response.send_message(embed=embed, allowed_mentions=NO_MENTIONS)


async def setup(bot: commands.Bot) -> None:
    await bot.add_cog(Meta(bot))
