"""/status: the owner sees the ops figures in one ephemeral embed within Discord's limits; anyone else is
refused, and an owner lookup that fails refuses too."""

from __future__ import annotations

import asyncio
import dataclasses

import discord

from bot.config import Settings
from bot.ops import metrics
from bot.render.status import duration
from cogs.status import NOT_OWNER
from tests.fakediscord.validate import message_problems
from tests.ops.conftest import ops_settings, ready_console


def fields(reply) -> dict[str, str]:  # noqa: ANN001 - a console Reply
    return {f["name"]: f["value"] for f in reply.embeds[0]["fields"]}


async def test_owner_sees_every_figure(settings: Settings) -> None:
    session = await ready_console(ops_settings(settings, sim_workers=1))
    try:
        await asyncio.to_thread(session.bot.services.simulation.start)
        before = len(metrics.recent.last_hour())  # the process's other commands (earlier tests) count too
        for query in ("lethal hits", "sustained hits", "devastating wounds"):
            await session.send(f"/rule query:{query}")
        replies = await session.send("/status")
        assert len(replies) == 1 and replies[0].ephemeral
        assert message_problems(replies[0].payload) == []
        embed = replies[0].embeds[0]
        assert embed["description"] == "Ready."
        shown = fields(replies[0])
        assert shown["Commands, last hour"] == f"{before + 3:,}", "the lookups; /status counts once answered"
        assert shown["p99 latency, last hour"].endswith("ms")
        assert "simulation: 1/1 workers" in shown["Worker pools"]
        assert shown["State store"] == "sqlite: answering"
        assert shown["Gateway"] == "offline console"
        data = next(value for name, value in shown.items() if name.startswith("Rules data"))
        assert "Seed pages:" in data and "wh40kdc:" in data
        assert {"Uptime", "Event loop lag"} <= set(shown)
    finally:
        await session.close()


async def test_not_ready_is_said_first(settings: Settings) -> None:
    session = await ready_console(ops_settings(settings, sim_workers=1))  # the pool is not started yet
    try:
        replies = await session.send("/status")
        assert replies[0].embeds[0]["description"] == "**Not ready**: sim_pool."
    finally:
        await session.close()


async def test_anyone_else_is_refused(settings: Settings) -> None:
    session = await ready_console(dataclasses.replace(settings, sim_workers=0))
    try:
        await session.send(":as 222")
        replies = await session.send("/status")
        assert replies[0].ephemeral and NOT_OWNER in replies[0].text() and "Uptime" not in replies[0].text()

        async def unreachable(_user: object) -> bool:
            raise discord.HTTPException(type("R", (), {"status": 503, "reason": "down"})(), "down")
        await session.send(":as 111")
        session.bot.is_owner = unreachable  # type: ignore[method-assign]
        replies = await session.send("/status")
        assert NOT_OWNER in replies[0].text()
    finally:
        await session.close()


def test_durations_read_naturally() -> None:
    assert [duration(s) for s in (5, 250, 3 * 3600 + 120, 2 * 86400 + 5 * 3600)] == [
        "5 s", "4 min 10 s", "3 h 2 min", "2 d 5 h"]
