"""/alias add, remove and list: a server's own words for catalog entries (adding and removing need the
Manage Server permission; listing is for everyone). Checks and storage: bot/catalog/guild_aliases.py."""

from __future__ import annotations

import asyncio

import discord
from discord import app_commands
from discord.ext import commands

from bot.catalog.guild_aliases import MAX_ALIASES, TARGET_MAX, TERM_MAX
from bot.render.common import COLOUR_META, NO_MENTIONS, escape, truncate


@app_commands.guild_only()
class Aliases(commands.GroupCog, group_name="alias", group_description="This server's own words for rules and units."):
    def __init__(self, bot: commands.Bot) -> None:
        self.bot = bot

    @property
    def _store(self):  # type: ignore[no-untyped-def]
        return self.bot.services.guild_aliases  # type: ignore[attr-defined]

    @app_commands.command(name="add", description="Teach the bot this server's word for an entry.")
    @app_commands.describe(term=f"The word players here type (at most {TERM_MAX} characters)",
                           target=f"The entry it stands for, e.g. Stormraven Gunship (at most {TARGET_MAX})")
    @app_commands.checks.has_permissions(manage_guild=True)
    async def add(self, interaction: discord.Interaction, term: str, target: str) -> None:
        services = self.bot.services  # type: ignore[attr-defined]
        edition = services.guild_settings.edition(interaction.guild_id)
        alias, replaced = await asyncio.to_thread(self._store.add, interaction.guild_id, term, target,
                                                  services.catalog, prefer_edition=edition)
        verb = "now stands for" if replaced else "stands for"
        embed = discord.Embed(title="Alias saved", colour=COLOUR_META,
                              description=f"**{escape(alias.term)}** {verb} **{escape(alias.target)}** in every "
                                          "lookup on this server (`/rule`, `/strat use`, `/sim` and their lists).")
        await interaction.response.send_message(embed=embed, allowed_mentions=NO_MENTIONS)

    @app_commands.command(name="remove", description="Forget one of this server's aliases.")
    @app_commands.describe(term="The alias to forget")
    @app_commands.checks.has_permissions(manage_guild=True)
    async def remove(self, interaction: discord.Interaction, term: str) -> None:
        alias = await asyncio.to_thread(self._store.remove, interaction.guild_id, term)
        embed = discord.Embed(title="Alias removed", colour=COLOUR_META,
                              description=f"**{escape(alias.term)}** no longer stands for **{escape(alias.target)}**.")
        await interaction.response.send_message(embed=embed, allowed_mentions=NO_MENTIONS)

    @app_commands.command(name="list", description="This server's aliases.")
    async def list_(self, interaction: discord.Interaction) -> None:
        aliases = await asyncio.to_thread(self._store.listed, interaction.guild_id)
        lines = [f"**{escape(a.term)}** → {escape(a.target)}" for a in aliases]
        text = "\n".join(lines) if lines else "No aliases yet. Someone with Manage Server can add one with `/alias add`."
        embed = discord.Embed(title=f"Server aliases ({len(aliases)}/{MAX_ALIASES})", colour=COLOUR_META,
                              description=truncate(text, 4000))
        await interaction.response.send_message(embed=embed, ephemeral=True, allowed_mentions=NO_MENTIONS)

    @remove.autocomplete("term")
    async def _terms(self, interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
        try:
            aliases = self._store.listed(interaction.guild_id)
        except Exception:  # autocomplete must always answer
            return []
        typed = (current or "").casefold()
        return [app_commands.Choice(name=truncate(f"{a.term} → {a.target}", 100), value=a.term)
                for a in aliases if typed in a.term.casefold()][:25]


async def setup(bot: commands.Bot) -> None:
    await bot.add_cog(Aliases(bot))
