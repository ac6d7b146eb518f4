"""Points news: after an MFM update that changed points, each server that named a points channel
(`/settings points_channel`) is sent the summary once.

Why "once" holds across processes and restarts: each post is claimed first with one INSERT into
`points_posts` (bot/guild_settings.py) keyed by server and version; only the caller whose INSERT went in
posts, and a failed send is logged, never retried (the claim stays). Shard processes each serve their own
servers; an update made by the CLI while the bot runs is noticed by `versions.json` changing.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any

import discord

from bot.points import answers
from bot.points.book import folder, steps, versions
from bot.points.mfm import PointsDataError
from bot.render.points import changes_embed

log = logging.getLogger("cogitator.points")

Send = Callable[[int, discord.Embed], Awaitable[Any]]


def current_key(data_dir: Path) -> str | None:
    """The version in force as points news names it ("1.1 2026-07-22"), None before any import."""
    known = versions(data_dir)
    return f"{known[-1].get('version')} {known[-1].get('date')}" if known else None


def _news(data_dir: Path) -> tuple[str, discord.Embed] | None:
    """The newest step's key and summary when it changed points (reads two versions: run in a thread)."""
    pairs = steps(data_dir)
    if not pairs:
        return None
    old, new = pairs[-1]
    if not answers.changes(old, new):
        return None
    return f"{new.meta.version} {new.meta.last_updated}", changes_embed(old, new)


async def announce(guild_settings: Any, data_dir: Path, guild_ids: Iterable[int] | None, send: Send) -> list[int]:
    """Post the newest points news to every points channel of `guild_ids` not yet sent it; the servers posted."""
    try:
        news = await asyncio.to_thread(_news, data_dir)
    except PointsDataError as error:
        log.warning("points news skipped: the kept versions cannot be read", extra={"error": str(error)})
        return []
    if news is None:
        return []
    key, embed = news
    wanted = set(guild_ids) if guild_ids is not None else None
    channels = await asyncio.to_thread(guild_settings.points_channels)
    posted = []
    for guild_id, channel_id in channels.items():
        if wanted is not None and guild_id not in wanted:
            continue
        if not await asyncio.to_thread(guild_settings.claim_points_post, guild_id, key):
            continue
        try:
            await send(channel_id, embed)
        except (discord.HTTPException, LookupError) as error:
            log.warning("points news not delivered (not retried)", extra={"guild_id": guild_id, "error": str(error)})
            continue
        posted.append(guild_id)
    return posted


async def announce_forever(bot: Any) -> None:
    """Check for a new points version every `COGITATOR_POINTS_POLL` seconds (and once at start-up) and announce
    it; each look that found a new versions.json is logged ("points news checked"), posted or not."""
    data_dir = Path(bot.settings.data_dir)
    seen: int | None = None

    async def send(channel_id: int, embed: discord.Embed) -> None:
        channel = bot.get_channel(channel_id) or await bot.fetch_channel(channel_id)
        await channel.send(embed=embed, allowed_mentions=discord.AllowedMentions.none())

    while True:
        try:
            stamp = (folder(data_dir) / "versions.json").stat().st_mtime_ns
        except OSError:
            stamp = None
        if stamp is not None and stamp != seen:
            seen = stamp
            try:
                posted = await announce(bot.services.guild_settings, data_dir, [g.id for g in bot.guilds], send)
            except Exception:  # news must never take the bot down; the next version is announced
                log.exception("points news failed")
            else:
                log.info("points news checked", extra={"version": current_key(data_dir), "posted": posted})
        await asyncio.sleep(bot.settings.points_poll)
