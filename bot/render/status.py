"""The owner's `/status` embed: the ops figures (bot.ops.live.Ops.status) in words."""

from __future__ import annotations

from typing import Any

import discord

from bot.render.common import COLOUR_ERROR, COLOUR_META, truncate

SOURCE_NAMES = {"seeds": "Seed pages", "wh40kdc": "wh40kdc", "wahapedia": "Wahapedia", "gdc": "game-datacards",
                "other": "Other imports"}


def duration(seconds: float) -> str:
    """3 d 4 h, 5 h 12 min, 4 min 10 s, 12 s."""
    seconds = max(0, int(seconds))
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days} d {hours} h"
    if hours:
        return f"{hours} h {minutes} min"
    if minutes:
        return f"{minutes} min {secs} s"
    return f"{secs} s"


def milliseconds(seconds: float | None) -> str:
    return "—" if seconds is None else f"{seconds * 1000:,.0f} ms" if seconds >= 0.01 else f"{seconds * 1000:.1f} ms"


def status_embed(figures: dict[str, Any]) -> discord.Embed:
    checks = figures["checks"]
    ready = all(checks.values())
    failed = [name for name, ok in checks.items() if not ok]
    embed = discord.Embed(title="Cogitator status", colour=COLOUR_META if ready else COLOUR_ERROR,
                          description="Ready." if ready else f"**Not ready**: {', '.join(failed)}.")
    connected, shards = figures["shards"]
    embed.add_field(name="Uptime", value=duration(figures["uptime_s"]), inline=True)
    gateway = milliseconds(figures["gateway_latency_s"])
    embed.add_field(name="Gateway", value=f"{gateway} · {connected}/{shards} shards" if shards else
                    "offline console", inline=True)
    embed.add_field(name="Event loop lag", value=milliseconds(figures["loop_lag_s"]), inline=True)
    count = figures["commands_last_hour"]
    embed.add_field(name="Commands, last hour", value=f"{count:,}{'+' if figures['commands_capped'] else ''}",
                    inline=True)
    embed.add_field(name="p99 latency, last hour", value=milliseconds(figures["p99_s"]), inline=True)
    pools = "\n".join(f"{name}: {alive}/{wanted} workers" if wanted else f"{name}: in threads"
                      for name, (alive, wanted) in figures["pools"].items())
    embed.add_field(name="Worker pools", value=f"{pools}\n{figures['sim_pending']} simulations admitted",
                    inline=True)
    backend, answering = figures["store"]
    embed.add_field(name="State store", value=f"{backend}: {'answering' if answering else '**not answering**'}",
                    inline=True)
    ages = figures["data_age_s"]
    data = "\n".join(f"{SOURCE_NAMES.get(name, name)}: {duration(age)}" for name, age in sorted(ages.items()))
    embed.add_field(name=f"Rules data ({figures['entries']:,} entries), age",
                    value=truncate(data, 1024) if data else "not loaded", inline=False)
    embed.set_footer(text="The same figures as /metrics on the ops port (docs/operations.md, 4a)")
    return embed
