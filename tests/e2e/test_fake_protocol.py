"""The fake Discord against the real discord.py, in-process: the protocol corners the bot's cogs may not hit.

A minimal discord.py client (its own CommandTree) connects to the fake, so callback types 6, 8 and 9,
edits with attachments, the 3-second window, double acknowledgement and Discord's validation of
command definitions are all checked against the library that the bot uses.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
from collections.abc import AsyncIterator
from typing import Any

import discord
import discord.gateway
import discord.http
import pytest
from discord import app_commands

from bot.endpoints import apply_endpoints
from tests.fakediscord import FakeDiscord, FakeDiscordError
from tests.fakediscord.payloads import EPHEMERAL, LOADING, is_png

PNG = (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"
       b"\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")


class Panel(discord.ui.View):
    def __init__(self) -> None:
        super().__init__(timeout=None)
        self.errors: list[BaseException] = []

    @discord.ui.button(label="Ack", custom_id="panel:ack")
    async def ack(self, interaction: discord.Interaction, _: discord.ui.Button) -> None:
        await interaction.response.defer()  # type 6: acknowledge, change nothing yet
        await interaction.edit_original_response(content="acknowledged later")

    @discord.ui.button(label="Form", custom_id="panel:form")
    async def form(self, interaction: discord.Interaction, _: discord.ui.Button) -> None:
        modal = discord.ui.Modal(title="Notes", custom_id="panel:modal")
        modal.add_item(discord.ui.TextInput(label="Note", custom_id="note"))
        await interaction.response.send_modal(modal)  # type 9


class Client(discord.Client):
    def __init__(self) -> None:
        intents = discord.Intents.none()
        intents.guilds = True
        super().__init__(intents=intents)
        self.tree = app_commands.CommandTree(self)
        self.errors: list[BaseException] = []
        self.bad_sync = False

        @self.tree.command(name="slow", description="defer, then edit in a PNG")
        async def slow(interaction: discord.Interaction) -> None:
            await interaction.response.defer(thinking=True, ephemeral=True)
            await interaction.edit_original_response(content="plotted", attachments=[discord.File(io.BytesIO(PNG), "p.png")])

        @self.tree.command(name="panel", description="a message with buttons")
        async def panel(interaction: discord.Interaction) -> None:
            await interaction.response.send_message("panel", view=Panel())

        @self.tree.command(name="late", description="answers after a delay")
        async def late(interaction: discord.Interaction, seconds: float) -> None:
            await asyncio.sleep(seconds)
            try:
                await interaction.response.send_message("too late?")
            except discord.HTTPException as error:
                self.errors.append(error)

        @self.tree.command(name="twice", description="answers twice")
        async def twice(interaction: discord.Interaction) -> None:
            await interaction.response.send_message("one")
            try:
                adapter = discord.webhook.async_.async_context.get()
                params = discord.webhook.async_.interaction_response_params(4, {"content": "two"})
                await adapter.create_interaction_response(interaction.id, interaction.token,
                                                          session=interaction._session, params=params)
            except discord.HTTPException as error:
                self.errors.append(error)

        @self.tree.command(name="pick", description="autocomplete")
        async def pick(interaction: discord.Interaction, thing: str) -> None:
            await interaction.response.send_message(f"picked {thing}")

        @pick.autocomplete("thing")
        async def pick_ac(interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
            return [app_commands.Choice(name=f"{current}-{i}", value=f"v{i}") for i in range(30)][:25]

    async def setup_hook(self) -> None:
        self.add_view(Panel())
        await self.tree.sync()


@pytest.fixture
async def running(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[tuple[FakeDiscord, Client]]:
    monkeypatch.setattr(discord.http.Route, "BASE", discord.http.Route.BASE)
    monkeypatch.setattr(discord.gateway.DiscordWebSocket, "DEFAULT_GATEWAY", discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY)
    fake = FakeDiscord(heartbeat_interval_ms=250).start()
    apply_endpoints(fake.env())
    client = Client()
    task = asyncio.create_task(client.start(fake.token))
    fake.watchdog = lambda: f"client stopped: {task.exception()!r}" if task.done() else None  # type: ignore[method-assign]
    try:
        await asyncio.to_thread(fake.wait_for_sessions, [(0, 1)], 20)
        yield fake, client
    finally:
        await client.close()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        fake.stop()


async def call(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """The fake's API blocks; the client lives on this loop, so block in a thread."""
    return await asyncio.to_thread(fn, *args, **kwargs)


async def test_defer_then_edit_with_attachment(running: tuple[FakeDiscord, Client]) -> None:
    fake, _ = running
    record = await call(fake.slash, "slow", guild_id=0)  # 0: a direct message
    assert record.callback.type == 5 and record.callback.data["flags"] & EPHEMERAL
    [edit] = record.edits
    assert edit["content"] == "plotted" and edit["_files"] == ["p.png"] and is_png(record.files["p.png"])
    message = fake.message(record.original_message_id)
    assert not message["flags"] & LOADING and message["attachments"][0]["filename"] == "p.png"
    assert record.answer_latency is not None and record.answer_latency >= record.latency


async def test_buttons_defer_update_and_modal(running: tuple[FakeDiscord, Client]) -> None:
    fake, _ = running
    panel = await call(fake.slash, "panel")
    message = fake.message(panel.original_message_id)
    ack = await call(fake.click, message, "panel:ack")
    assert ack.callback.type == 6
    await call(fake.wait_until, lambda: bool(ack.edits), 10, "the edit after a deferred update")
    assert ack.edits and fake.message(message["id"])["content"] == "acknowledged later"
    form = await call(fake.click, fake.message(message["id"]), "panel:form")
    assert form.callback.type == 9 and form.callback.data["custom_id"] == "panel:modal"


async def test_autocomplete_choices_are_checked(running: tuple[FakeDiscord, Client]) -> None:
    fake, _ = running
    choices, record = await call(fake.autocomplete, "pick", {"thing": "ab"}, "thing")
    assert record.callback.type == 8 and len(choices) == 25 and choices[0] == {"name": "ab-0", "value": "v0"}
    picked = await call(fake.slash, "pick", {"thing": "v3"})
    assert picked.callback.data["content"] == "picked v3"


async def test_three_second_window_and_double_ack(running: tuple[FakeDiscord, Client]) -> None:
    fake, client = running
    fake.callback_deadline = 0.2
    record = await call(fake.send_interaction, fake.interaction_payload(
        2, fake.build_command_data("late", {"seconds": 0.5}, guild_id=fake.default_guild_id),
        user_id=111, guild_id=fake.default_guild_id))
    await asyncio.sleep(1.0)
    assert record.callback is None and [a.status for a in record.attempts] == [404]
    assert any(getattr(e, "code", None) == 10062 for e in client.errors), client.errors
    fake.callback_deadline = 3.0
    twice = await call(fake.slash, "twice")
    await asyncio.sleep(0.2)
    assert len(twice.callbacks) == 1 and [a.status for a in twice.attempts] == [200, 400]
    assert any(getattr(e, "code", None) == 40060 for e in client.errors)


async def test_the_client_cannot_send_what_discord_would_not(running: tuple[FakeDiscord, Client]) -> None:
    fake, _ = running
    with pytest.raises(FakeDiscordError, match="required"):
        fake.build_command_data("pick", {}, guild_id=None)
    with pytest.raises(FakeDiscordError, match="unknown options"):
        fake.build_command_data("pick", {"thing": "x", "other": 1}, guild_id=None)
    with pytest.raises(FakeDiscordError, match="must be a number"):
        fake.build_command_data("late", {"seconds": "soon"}, guild_id=None)
    with pytest.raises(FakeDiscordError, match="not a registered command"):
        fake.build_command_data("nope", {}, guild_id=None)


async def test_invalid_command_definitions_are_rejected_like_discord(running: tuple[FakeDiscord, Client]) -> None:
    fake, client = running
    accepted = len(fake.command_puts)
    bad = app_commands.Command(name="bad", description="x" * 101, callback=_noop)
    client.tree.add_command(bad)
    with pytest.raises(app_commands.CommandSyncFailure):
        await client.tree.sync()
    rejected = [r for r in fake.requests if r.method == "PUT"][-1]
    assert rejected.status == 400 and len(fake.command_puts) == accepted
    assert "bad" not in {c["name"] for c in fake.global_commands}, "a rejected overwrite changes nothing"


async def _noop(interaction: discord.Interaction) -> None:  # pragma: no cover - never invoked
    await interaction.response.send_message("-")


async def test_heartbeats_are_acknowledged_and_keep_the_session(running: tuple[FakeDiscord, Client]) -> None:
    fake, client = running
    before = fake.heartbeats
    await asyncio.sleep(1.2)
    assert fake.heartbeats - before >= 3, "discord.py heartbeats at HELLO's interval"
    assert client.latency < 1.0, "the fake's ACKs reach discord.py (it measures latency from them)"
    ops = [f["op"] for f in fake.gateway_received]
    assert ops[0] == 1 and 2 in ops, "a first heartbeat right after HELLO, then IDENTIFY"
    assert len(fake.sessions) == 1 and all(f.get("d", {}).get("token") != fake.token
                                           for f in fake.gateway_received if isinstance(f.get("d"), dict))
