"""The server's own aliases (`/alias`, bot/catalog/guild_aliases.py) applied to a typed name before any
catalog search: /rule and its siblings, /strat use, /sim and their autocompletes call `aliased`."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import discord

if TYPE_CHECKING:
    from bot.catalog.guild_aliases import GuildAlias

log = logging.getLogger("cogitator.rules")


def server_alias(interaction: discord.Interaction, text: str | None) -> GuildAlias | None:
    """The server's alias whose term is the whole of `text`, if any. A database that can't be read loses
    the aliases for this lookup, never the lookup itself (logged)."""
    if interaction.guild_id is None or not text:
        return None
    try:
        return interaction.client.services.guild_aliases.find(interaction.guild_id, text)  # type: ignore[attr-defined]
    except Exception:
        log.warning("server aliases could not be read; searching without them", exc_info=True)
        return None


def aliased(interaction: discord.Interaction, text: str) -> str:
    """`text`, or the entry name the server's alias of that term stands for."""
    alias = server_alias(interaction, text)
    return alias.target if alias is not None else text
