"""The console drives the real tree: option parsing, client-side validation, checks and the error handler."""

from __future__ import annotations

import json
import subprocess
import sys

import discord
from discord import app_commands
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.errors import UserError


def add_probe_commands(tree: app_commands.CommandTree) -> dict:
    """Commands used only by these tests, added to the bot's own tree."""
    seen: dict = {}

    @app_commands.command(name="probe", description="Echo typed options.")
    @app_commands.describe(count="a number", flag="a flag", who="a user", colour="a colour", text="free text")
    @app_commands.choices(colour=[app_commands.Choice(name="Red", value="red"), app_commands.Choice(name="Blue", value="blue")])
    async def probe(interaction: discord.Interaction, count: app_commands.Range[int, 0, 10], flag: bool = False,
                    who: discord.User | None = None, colour: str = "red", text: str = "") -> None:
        seen.update(count=count, flag=flag, who=who.id if who else None, colour=colour, text=text)
        await interaction.response.send_message(f"ok {count}")

    @app_commands.command(name="boom", description="Fail.")
    async def boom(interaction: discord.Interaction, user_error: bool = False) -> None:
        if user_error:
            raise UserError("That unit is not in this game.")
        raise RuntimeError("secret internals")

    @app_commands.command(name="slow", description="Defer, then follow up.")
    async def slow(interaction: discord.Interaction) -> None:
        await interaction.response.defer(thinking=True)
        await interaction.followup.send("done", file=discord.File(__file__, filename="probe.txt"))
        await interaction.edit_original_response(content="edited")

    @app_commands.command(name="admin", description="Needs Manage Server.")
    @app_commands.default_permissions(manage_guild=True)
    @app_commands.checks.has_permissions(manage_guild=True)
    async def admin(interaction: discord.Interaction) -> None:
        await interaction.response.send_message("admin ok", ephemeral=True)

    for command in (probe, boom, slow, admin):
        tree.add_command(command)
    return seen


async def test_options_are_typed_like_discord_sends_them(console):
    seen = add_probe_commands(console.tree)
    replies = await console.send("/probe count:3 flag:true who:<@222> colour:Blue text:a b: c")
    assert [r.content for r in replies] == ["ok 3"]
    assert seen == {"count": 3, "flag": True, "who": 222, "colour": "blue", "text": "a b: c"}


async def test_client_side_validation_messages(console):
    add_probe_commands(console.tree)
    cases = {
        "/probe": "Option count is required.",
        "/probe count:eleven": "count: input a valid integer.",
        "/probe count:11": "count: must be at most 10.",
        "/probe count:1 flag:maybe": "flag: choose true or false.",
        "/probe count:1 colour:green": "colour: choose one of Red, Blue.",
        "/probe count:1 count:2": "Option count is given twice.",
        "/nothing": "Unknown command /nothing. Type /help to see them all.",
        "help": "Commands start with '/'. Type /help to see them all.",
    }
    for line, message in cases.items():
        (reply,) = await console.send(line)
        assert reply.kind == "client" and reply.ephemeral and reply.content == message, line


async def test_error_handler_user_error_and_unexpected(console, caplog):
    add_probe_commands(console.tree)
    (reply,) = await console.send("/boom user_error:true")
    assert reply.ephemeral and reply.text() == "That unit is not in this game."
    (reply,) = await console.send("/boom")
    assert reply.ephemeral and "Something went wrong" in reply.text()
    assert "secret internals" not in reply.text()
    error_id = reply.text().split("`")[1]
    assert any(getattr(r, "error_id", None) == error_id for r in caplog.records)


async def test_defer_followup_file_and_edit_are_captured(console):
    add_probe_commands(console.tree)
    replies = await console.send("/slow")
    assert [r.kind for r in replies] == ["defer", "followup", "edit"]
    assert replies[1].files == ["probe.txt"] and replies[1].file_data["probe.txt"].startswith(b'"""')
    assert replies[2].content == "edited"


async def test_permissions_are_checked(console):
    add_probe_commands(console.tree)
    (reply,) = await console.send("/admin")
    assert reply.kind == "client" and "permission" in reply.content
    console.set_permissions(console.user_id, "manage_guild")
    (reply,) = await console.send("/admin")
    assert reply.content == "admin ok"


async def test_directives(console):
    (reply,) = await console.send(":as <@222>")
    assert console.user_id == 222 and "Bob" in reply.content
    await console.send(":channel 77")
    assert console.channel_id == 77
    await console.send(":guild none")
    assert console.guild_id is None
    (reply,) = await console.send(":bogus")
    assert reply.kind == "client" and "Unknown directive" in reply.content
    (reply,) = await console.send(":as everyone")
    assert reply.kind == "client"
    await console.send(":restart")
    (reply,) = await console.send("/help")
    assert reply.embeds


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(line=st.text(max_size=200))
async def test_any_typed_line_gets_an_answer_not_a_crash(console, line):
    for reply in await console.send("/" + line):
        assert reply.kind in ("client", "response", "console", "followup") and isinstance(reply.content, str)


def test_console_json_mode_prints_one_line_per_reply(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "COGITATOR_DB": str(tmp_path / "s.db"), "COGITATOR_DATA": str(tmp_path / "d"),
           "HOME": str(tmp_path)}
    run = subprocess.run([sys.executable, "-m", "bot", "console", "--json"], input="/help\n/about\n",
                         capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode == 0, run.stderr
    lines = [json.loads(line) for line in run.stdout.splitlines()]
    assert [line["command"] for line in lines] == ["help", "about"]
    for line in lines:
        assert set(line) >= {"command", "ephemeral", "content", "embeds", "files", "components"}
        assert set(line["embeds"][0]) >= {"title", "description", "fields", "footer"}


async def test_the_command_tree_is_one_discord_accepts(console) -> None:
    """The payload `tree.sync()` uploads passes Discord's checks (25 options, 4,000 characters per command,
    …) here, without the e2e processes: a new option that overflows a command fails this fast test."""
    from tests.fakediscord.validate import command_problems

    payload = [command.to_dict(console.tree) for command in console.tree.get_commands()]
    assert command_problems(payload) == []
