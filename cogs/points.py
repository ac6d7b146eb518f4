"""/points unit (one unit's cost in one line) and /points changes (what the last MFM update changed).

Thin: the answers are `bot.points.answers`; every one names the MFM version it comes from.
"""

from __future__ import annotations

import asyncio

import discord
from discord import app_commands
from discord.ext import commands
from rapidfuzz import fuzz, process

from bot.errors import UserError
from bot.points import answers
from bot.points.book import Book, current, steps
from bot.points.mfm import PointsDataError
from bot.render.common import NO_MENTIONS, escape
from bot.render.points import changes_embed

NAME_MAX = 100
NO_POINTS = "No Munitorum Field Manual is imported yet: an operator runs `python -m bot data update --source mfm`."


def _book(interaction: discord.Interaction) -> Book:
    try:
        book = current(interaction.client.services.settings.data_dir)  # type: ignore[attr-defined]
    except PointsDataError as error:
        raise UserError(f"The points in force cannot be read ({error}).") from None
    if book is None:
        raise UserError(NO_POINTS)
    return book


async def unit_ac(interaction: discord.Interaction, current_text: str) -> list[app_commands.Choice[str]]:
    try:
        book = _book(interaction)
    except UserError:
        return []
    names = sorted({pairs[0][1].name for pairs in book.units.values()})
    typed = current_text.strip()[:NAME_MAX]
    if not typed:
        picked = names[:25]
    else:
        picked = [n for n, _s, _i in process.extract(typed, names, scorer=fuzz.WRatio, limit=25, score_cutoff=50)]
    return [app_commands.Choice(name=n[:100], value=n[:100]) for n in picked]


async def faction_ac(interaction: discord.Interaction, current_text: str) -> list[app_commands.Choice[str]]:
    try:
        book = _book(interaction)
    except UserError:
        return []
    typed = current_text.casefold()
    return [app_commands.Choice(name=f.name[:100], value=f.name[:100])
            for f in sorted(book.factions.values(), key=lambda f: f.name) if typed in f.name.casefold()][:25]


class Points(commands.GroupCog, group_name="points", group_description="Points from the Munitorum Field Manual."):
    def __init__(self, bot: commands.Bot) -> None:
        self.bot = bot

    @app_commands.command(name="unit", description="A unit's points in one line, by the current Munitorum Field Manual.")
    @app_commands.describe(unit="The unit's name", models="How many models (default: every size)",
                           edition="11e: the Munitorum Field Manual (default); 10e: the Wahapedia export's points")
    @app_commands.choices(edition=[app_commands.Choice(name="11th edition (MFM)", value="11e"),
                                   app_commands.Choice(name="10th edition (Wahapedia)", value="10e")])
    @app_commands.autocomplete(unit=unit_ac)
    async def unit(self, interaction: discord.Interaction, unit: app_commands.Range[str, 1, NAME_MAX],
                   models: app_commands.Range[int, 1, 500] | None = None, edition: str = "11e") -> None:
        if edition == "10e":
            await interaction.response.send_message(escape(await self._tenth(unit, models)),
                                                    allowed_mentions=NO_MENTIONS)
            return
        book = _book(interaction)
        try:
            line = answers.unit_line(book, unit, models)
        except answers.NotFound as error:
            raise UserError(str(error), field="unit") from None
        await interaction.response.send_message(escape(line), allowed_mentions=NO_MENTIONS)

    async def _tenth(self, name: str, models: int | None) -> str:
        """A 10e datasheet's points as the Wahapedia export in the catalog gives them, naming it and its date."""
        catalog = self.bot.services.catalog  # type: ignore[attr-defined]
        resolution = await asyncio.to_thread(catalog.resolve, name, kind="datasheet", edition="10e")
        best = getattr(resolution, "best", None)
        entry = catalog.get(best.id) if best is not None and getattr(resolution, "confident", False) else None
        points = (entry.data.get("points") if entry is not None else None) or []
        if entry is None or not points:
            raise UserError(f"No 10e datasheet called {name!r} with points in the loaded data: the Wahapedia export "
                            "carries them (`python -m bot data update --source wahapedia`).", field="unit")
        sizes = sorted((p for p in points if isinstance(p.get("models"), int)), key=lambda p: p["models"])
        if models is not None:
            fitting = [p for p in sizes if p["models"] >= models] or sizes[-1:]
            text = f"{fitting[0]['points']} pts" + (f" (priced as {fitting[0]['models']})"
                                                    if fitting[0]["models"] != models else "")
        else:
            text = ", ".join(f"{p['models']} model{'s' if p['models'] != 1 else ''} {p['points']}" for p in sizes)
        head = f"{entry.name}" + (f" ({entry.faction})" if entry.faction else "") + \
            (f" × {models} models" if models is not None else "")
        return f"{head}: {text} — {entry.source} (10th edition)"

    @app_commands.command(name="changes", description="What the last points update changed, unit by unit.")
    @app_commands.describe(faction="Only this faction (default: all)")
    @app_commands.autocomplete(faction=faction_ac)
    async def changes(self, interaction: discord.Interaction,
                      faction: app_commands.Range[str, 1, NAME_MAX] | None = None) -> None:
        book = _book(interaction)
        data_dir = self.bot.services.settings.data_dir  # type: ignore[attr-defined]
        if faction and book.faction(faction) is None:
            raise UserError(f"No faction called {faction!r} in {book.label}.", field="faction")
        pairs = steps(data_dir)
        if not pairs:
            raise UserError(f"Only one points version is imported ({book.label}): nothing to compare yet.")
        old, new = pairs[-1]
        await interaction.response.send_message(embed=changes_embed(old, new, faction), allowed_mentions=NO_MENTIONS)


async def setup(bot: commands.Bot) -> None:
    await bot.add_cog(Points(bot))
