"""Discord glue for leagues, shared by /game end (which puts a result forward) and /league (which confirms
and draws): the Confirm button, and putting a finished game's result forward.

The Confirm button's custom_id names the result (`league:confirm:<id>`), so it works after a restart and
in any shard process: pressing it runs `LeagueStore.confirm`, whose transaction makes a result count once.
"""

from __future__ import annotations

import asyncio
import logging
import re
from typing import Any

import discord

from bot.errors import UserError
from bot.leagues import results as league_results
from bot.leagues.store import LeagueStore
from bot.render import league as render
from bot.render.common import NO_MENTIONS, escape
from bot.render.game import refusal_embed

log = logging.getLogger(__name__)


def leagues_of(interaction: discord.Interaction) -> LeagueStore:
    return interaction.client.services.leagues  # type: ignore[attr-defined]


class ConfirmButton(discord.ui.DynamicItem[discord.ui.Button], template=r"league:confirm:(?P<result>[0-9]{1,18})"):
    """Confirm a league result; only the opponent of whoever put it forward can, and only once."""

    def __init__(self, result_id: int, *, disabled: bool = False) -> None:
        super().__init__(discord.ui.Button(label="Confirm" if not disabled else "Confirmed",
                                           style=discord.ButtonStyle.success, disabled=disabled,
                                           custom_id=f"league:confirm:{result_id}"))
        self.result_id = result_id

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction, item: discord.ui.Button,
                             match: re.Match[str]) -> ConfirmButton:
        return cls(int(match["result"]))

    async def callback(self, interaction: discord.Interaction) -> None:
        try:
            if interaction.guild_id is None:
                raise UserError("League results are confirmed in their server.")
            league, result = await asyncio.to_thread(leagues_of(interaction).confirm, interaction.guild_id,
                                                     interaction.user.id, self.result_id)
        except UserError as error:
            await interaction.response.send_message(embed=refusal_embed(str(error)), ephemeral=True,
                                                    allowed_mentions=NO_MENTIONS)
            return
        text = (f"{render.result_text(league, self.result_id, result)}\n✅ Confirmed by "
                f"{escape(interaction.user.display_name)}: it counts in the table.")
        await interaction.response.edit_message(content=text, view=confirm_view(self.result_id, done=True),
                                                allowed_mentions=NO_MENTIONS)


def confirm_view(result_id: int, *, done: bool = False) -> discord.ui.View:
    view = discord.ui.View(timeout=None)
    view.add_item(ConfirmButton(result_id, disabled=done))
    return view


async def put_forward(interaction: discord.Interaction, *, game_id: int, status: str, ended_at: float,
                      summary: dict[str, Any], league: str | None) -> None:
    """After /game end has answered: put the result forward to `league` (named at /game end), else to the
    channel's bound league, else to none. A refusal (players not in the league, an abandoned game, ...) is
    a follow-up only the ender sees; the game stays ended either way."""
    if interaction.guild_id is None or interaction.channel_id is None:
        return
    store = leagues_of(interaction)
    try:
        name = league or await asyncio.to_thread(store.bound_league, interaction.guild_id, interaction.channel_id)
        if name is None or (league is None and status == "abandoned"):
            return
        body = league_results.from_game(game_id=game_id, guild_id=interaction.guild_id,
                                        channel_id=interaction.channel_id, status=status, ended_at=ended_at,
                                        summary=summary, battle_size=None)
        found, result_id = await asyncio.to_thread(store.propose, interaction.guild_id, interaction.user.id,
                                                   name, body)
    except UserError as error:
        await interaction.followup.send(embed=refusal_embed(f"Not put forward to a league: {error}"), ephemeral=True,
                                        allowed_mentions=NO_MENTIONS)
        return
    others = [body["names"][str(u)] for u in body["players"] if u != interaction.user.id]
    who = escape(others[0]) if len(others) == 1 else "Either player"
    text = (f"{render.result_text(found, result_id, body)}\n{who} confirms it with the button "
            f"(or `/league confirm result:{result_id}`); it counts once confirmed.")
    await interaction.followup.send(text, view=confirm_view(result_id), allowed_mentions=NO_MENTIONS)


async def league_ac(interaction: discord.Interaction, current: str) -> list[discord.app_commands.Choice[str]]:
    """The server's leagues whose name contains what was typed (open ones first)."""
    if interaction.guild_id is None:
        return []
    names = await asyncio.to_thread(leagues_of(interaction).names, interaction.guild_id)
    typed = current.casefold().strip()
    return [discord.app_commands.Choice(name=n, value=n) for n in names if typed in n.casefold()][:25]
