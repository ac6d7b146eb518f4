"""/league: server leagues of tracked games. Thin adapter: check who may, call `bot.leagues` in a worker
thread, render with `bot.render.league`. Results are put forward by /game end (bot/discord_glue/leagues.py)."""

from __future__ import annotations

import asyncio
import io
import math
from typing import Any, Literal

import discord
from discord import app_commands
from discord.ext import commands

from bot.discord_glue.games import call
from bot.discord_glue.leagues import ConfirmButton, league_ac, leagues_of
from bot.errors import UserError
from bot.leagues import stats as league_stats
from bot.leagues.export import player_rows
from bot.render import league as render
from bot.render.common import NO_MENTIONS, escape

LEAGUE = "The league (default: this channel's league, or the server's only open one)"
MANAGE = "Only members with Manage Server can {what}."
BattleSize = Literal["Incursion", "Strike Force", "Onslaught"]
Edition = Literal["10e", "11e"]


def _guild(interaction: discord.Interaction) -> int:
    if interaction.guild_id is None:
        raise UserError("Leagues belong to a server: use /league there, not in direct messages.")
    return interaction.guild_id


def _require_manager(interaction: discord.Interaction, what: str) -> None:
    perms = interaction.permissions
    if not (perms and (perms.manage_guild or perms.administrator)):
        raise UserError(MANAGE.format(what=what))


async def _say(interaction: discord.Interaction, text: str, *, ephemeral: bool = False) -> None:
    await interaction.response.send_message(text, ephemeral=ephemeral, allowed_mentions=NO_MENTIONS)


@app_commands.guild_only()
class League(commands.GroupCog, group_name="league", group_description="Server leagues: results, standings, ratings."):
    def __init__(self, bot: commands.Bot) -> None:
        self.bot = bot
        # Drawn tables and computed statistics, keyed by the league's last event: any change (in any process)
        # gives a new key, so an entry is never stale; the oldest go first.
        self._drawn: dict[tuple, bytes] = {}
        self._figures: dict[tuple, league_stats.Stats] = {}

    # ---- running a league (Manage Server) --------------------------------------------------------

    @app_commands.command(name="create", description="Start a league on this server (Manage Server).")
    @app_commands.describe(name="The league's name (up to 40 characters)", season_end="Last day of the season, YYYY-MM-DD",
                           battle_size="The battle size its games are played at", edition="The rules edition")
    async def create(self, interaction: discord.Interaction, name: str, season_end: str | None = None,
                     battle_size: BattleSize | None = None, edition: Edition | None = None) -> None:
        _require_manager(interaction, "create a league")
        league = await call(interaction, leagues_of(interaction).create, _guild(interaction), interaction.user.id,
                            name, season_end=season_end, battle_size=battle_size, edition=edition)
        await _say(interaction, f"League **{escape(league.name)}** created. Players join with `/league join`; "
                                "`/league channel` binds a channel so that games ended there are put forward to it.")

    @app_commands.command(name="close", description="Close a league: its table becomes final (Manage Server).")
    @app_commands.autocomplete(league=league_ac)
    @app_commands.describe(league=LEAGUE)
    async def close(self, interaction: discord.Interaction, league: str | None = None) -> None:
        _require_manager(interaction, "close a league")
        found = await call(interaction, leagues_of(interaction).close_league, _guild(interaction), interaction.user.id,
                           league, interaction.channel_id)
        await _say(interaction, f"League **{escape(found.name)}** is closed: its table is final.")

    @app_commands.command(name="channel", description="Bind this channel to a league, or unbind it (Manage Server).")
    @app_commands.autocomplete(league=league_ac)
    @app_commands.describe(league=LEAGUE, unbind="Stop putting this channel's games forward to a league")
    async def channel(self, interaction: discord.Interaction, league: str | None = None, unbind: bool = False) -> None:
        _require_manager(interaction, "bind a channel to a league")
        if interaction.channel_id is None:
            raise UserError("Bind a server channel.")
        text = await call(interaction, leagues_of(interaction).bind, _guild(interaction), interaction.user.id,
                          interaction.channel_id, league, unbind=unbind)
        await _say(interaction, escape(text))

    @app_commands.command(name="add", description="Add a player to a league (Manage Server).")
    @app_commands.autocomplete(league=league_ac)
    @app_commands.describe(user="The player to add", faction="The faction they mainly play (optional)", league=LEAGUE)
    async def add(self, interaction: discord.Interaction, user: discord.User, faction: str | None = None,
                  league: str | None = None) -> None:
        _require_manager(interaction, "add players")
        if user.bot:
            raise UserError("Bots don't play in leagues.", field="user")
        found = await call(interaction, leagues_of(interaction).join, _guild(interaction), user.id, user.display_name,
                           faction, league, interaction.channel_id, by=interaction.user.id)
        await _say(interaction, f"{escape(user.display_name)} is now in **{escape(found.name)}**.")

    @app_commands.command(name="remove", description="Remove a player from a league (Manage Server).")
    @app_commands.autocomplete(league=league_ac)
    @app_commands.describe(user="The player to remove", league=LEAGUE)
    async def remove(self, interaction: discord.Interaction, user: discord.User, league: str | None = None) -> None:
        _require_manager(interaction, "remove players")
        found = await call(interaction, leagues_of(interaction).leave, _guild(interaction), user.id, league,
                           interaction.channel_id, by=interaction.user.id)
        await _say(interaction, f"{escape(user.display_name)} has left **{escape(found.name)}**; their confirmed "
                                "games still count for their opponents.")

    @app_commands.command(name="void", description="Void a result, with a reason kept in the log (Manage Server).")
    @app_commands.autocomplete(league=league_ac)
    @app_commands.describe(result="The result number (#N)", reason="Why it is void (kept in the league log)", league=LEAGUE)
    async def void(self, interaction: discord.Interaction, result: app_commands.Range[int, 1, 2**53], reason: str,
                   league: str | None = None) -> None:
        _require_manager(interaction, "void a result")
        found = await call(interaction, leagues_of(interaction).void, _guild(interaction), interaction.user.id,
                           result, reason, league)
        await _say(interaction, f"Result #{result} of **{escape(found.name)}** is void: it no longer counts. "
                                f"Reason (logged): {escape(reason[:200])}")

    @app_commands.command(name="overlay", description="A read-only live link of a league's table for streams (Manage Server).")
    @app_commands.autocomplete(league=league_ac)
    @app_commands.describe(league=LEAGUE, revoke="Stop every live link of this league's table instead")
    async def overlay(self, interaction: discord.Interaction, league: str | None = None, revoke: bool = False) -> None:
        from bot.web import links

        _require_manager(interaction, "make or revoke a league's live table link")
        web = getattr(self.bot, "web", None)
        if web is None:
            raise UserError(links.WEB_OFF)
        services = self.bot.services  # type: ignore[attr-defined]
        text = await call(interaction, links.league_link, services.leagues, services.overlay_tokens, web.link,
                          guild_id=_guild(interaction), channel_id=interaction.channel_id, user_id=interaction.user.id,
                          name=league, revoke=revoke)
        await interaction.response.send_message(text, ephemeral=True, allowed_mentions=NO_MENTIONS,
                                                suppress_embeds=True)

    # ---- players ---------------------------------------------------------------------------------

    @app_commands.command(name="join", description="Join a league of this server.")
    @app_commands.autocomplete(league=league_ac)
    @app_commands.describe(league=LEAGUE, faction="The faction you mainly play (optional)")
    async def join(self, interaction: discord.Interaction, faction: str | None = None, league: str | None = None) -> None:
        found = await call(interaction, leagues_of(interaction).join, _guild(interaction), interaction.user.id,
                           interaction.user.display_name, faction, league, interaction.channel_id)
        await _say(interaction, f"{escape(interaction.user.display_name)} plays in **{escape(found.name)}**.")

    @app_commands.command(name="leave", description="Leave a league (your confirmed games still count for your opponents).")
    @app_commands.autocomplete(league=league_ac)
    @app_commands.describe(league=LEAGUE)
    async def leave(self, interaction: discord.Interaction, league: str | None = None) -> None:
        found = await call(interaction, leagues_of(interaction).leave, _guild(interaction), interaction.user.id,
                           league, interaction.channel_id)
        await _say(interaction, f"You have left **{escape(found.name)}**.", ephemeral=True)

    @app_commands.command(name="confirm", description="Confirm a result your opponent put forward.")
    @app_commands.autocomplete(league=league_ac)
    @app_commands.describe(result="The result number (#N) your opponent put forward", league=LEAGUE)
    async def confirm(self, interaction: discord.Interaction, result: app_commands.Range[int, 1, 2**53],
                      league: str | None = None) -> None:
        found, body = await call(interaction, leagues_of(interaction).confirm, _guild(interaction), interaction.user.id,
                                 result, league)
        await _say(interaction, f"{render.result_text(found, result, body)}\n✅ Confirmed: it counts in the table.")

    # ---- reading ---------------------------------------------------------------------------------

    @app_commands.command(name="table", description="The standings: rank, factions, W-D-L, VP, rating.")
    @app_commands.autocomplete(league=league_ac)
    @app_commands.describe(league=LEAGUE, page="Page of 25 players (default 1)")
    async def table(self, interaction: discord.Interaction, league: str | None = None,
                    page: app_commands.Range[int, 1, 1000] = 1) -> None:
        standing = await call(interaction, leagues_of(interaction).standing, _guild(interaction), league,
                              interaction.channel_id)
        rows = player_rows(standing.rows, standing.members)
        pages = max(1, math.ceil(len(rows) / render.PAGE_ROWS))
        if page > pages:
            raise UserError(f"The table has {pages} page{'s' if pages != 1 else ''}.", field="page")
        shown = rows[(page - 1) * render.PAGE_ROWS: page * render.PAGE_ROWS]
        key = (standing.league.id, standing.league.last_seq, page)
        png = self._drawn.get(key) or _remember(self._drawn, key, await asyncio.to_thread(
            render.table_png, standing.league, shown, page=page, pages=pages))
        embed = render.table_embed(standing.league, shown, page=page, pages=pages, total=len(rows))
        await interaction.response.send_message(embed=embed, file=discord.File(_bytes(png), render.TABLE_FILE),
                                                allowed_mentions=NO_MENTIONS)

    @app_commands.command(name="stats", description="Win rate by faction (Wilson interval), VP by category, missions.")
    @app_commands.autocomplete(league=league_ac)
    @app_commands.describe(faction="Only this faction's games", player="Only this player's games", league=LEAGUE)
    async def stats(self, interaction: discord.Interaction, faction: str | None = None,
                    player: discord.User | None = None, league: str | None = None) -> None:
        store = leagues_of(interaction)
        found = await call(interaction, store.find, _guild(interaction), league, interaction.channel_id)
        key = (found.id, found.last_seq, " ".join((faction or "").casefold().split()), player.id if player else None)
        figures = self._figures.get(key)
        if figures is None:
            results = await call(interaction, store.results, found)
            figures = _remember(self._figures, key, await asyncio.to_thread(
                league_stats.faction_stats, results, faction=faction, player=player.id if player else None))
        heading = "statistics" + (f" of {faction[:60]}" if faction else "") + (
            f" for {player.display_name}" if player else "")
        await interaction.response.send_message(embed=render.stats_embed(found, figures, heading=heading),
                                                allowed_mentions=NO_MENTIONS)

    @app_commands.command(name="player", description="A player's games, rating history and factions.")
    @app_commands.autocomplete(league=league_ac)
    @app_commands.describe(user="The player", league=LEAGUE)
    async def player(self, interaction: discord.Interaction, user: discord.User, league: str | None = None) -> None:
        store = leagues_of(interaction)
        standing = await call(interaction, store.standing, _guild(interaction), league, interaction.channel_id)
        results = await call(interaction, store.results, standing.league)
        games = [r for r in results if user.id in r["players"] and r["status"] != "void"]
        if not games and user.id not in standing.members:
            raise UserError(f"{user.display_name} has no games in {standing.league.name} and is not in it.")
        row = next((r for r in player_rows(standing.rows, standing.members) if r["user_id"] == user.id), None)
        history = league_stats.rating_history(results, user.id)
        png = await asyncio.to_thread(render.rating_chart_png, history, title=f"{user.display_name}: rating")
        embed = render.player_embed(standing.league, user.display_name, row, games, user.id, history)
        await interaction.response.send_message(embed=embed, file=discord.File(_bytes(png), render.CHART_FILE),
                                                allowed_mentions=NO_MENTIONS)


CACHED = 64


def _remember(cache: dict, key: tuple, value: Any) -> Any:
    if len(cache) >= CACHED:
        cache.pop(next(iter(cache)))
    cache[key] = value
    return value


def _bytes(data: bytes) -> io.BytesIO:
    return io.BytesIO(data)


async def setup(bot: commands.Bot) -> None:
    bot.add_dynamic_items(ConfirmButton)
    await bot.add_cog(League(bot))


async def teardown(bot: commands.Bot) -> None:
    bot.remove_dynamic_items(ConfirmButton)
