"""/help, /about and the command-surface meta tests, all through the real CommandTree."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from discord import app_commands

README = Path(__file__).resolve().parents[2] / "README.md"


def leaf_commands(tree: app_commands.CommandTree) -> list[app_commands.Command]:
    return [c for c in tree.walk_commands() if isinstance(c, app_commands.Command)]


async def test_help_lists_every_command_once(console):
    replies = await console.send("/help")
    assert len(replies) == 1 and replies[0].ephemeral
    text = replies[0].text()
    for command in leaf_commands(console.tree):
        assert text.count(f"`/{command.qualified_name}`") == 1, command.qualified_name


async def test_about_names_version_editions_and_credits(console):
    (reply,) = await console.send("/about")
    text = reply.text()
    assert "0.1.0" in text or "development" in text
    assert "10th edition" in text and "11th edition" in text
    assert "Powered by [40kdc-data](https://40kdc.alpacasoft.dev)" in text
    assert "Wahapedia" in text and "game-datacards" in text


async def test_no_duplicate_command_names(console):
    names = Counter(c.qualified_name for c in console.tree.walk_commands())
    assert [n for n, k in names.items() if k > 1] == []


async def test_every_command_and_option_is_described(console):
    for command in console.tree.walk_commands():
        assert command.description and command.description != "…", command.qualified_name
        if isinstance(command, app_commands.Command):
            for param in command.parameters:
                assert param.description and param.description != "…", f"{command.qualified_name} {param.name}"


def readme_commands() -> set[str]:
    """The README's command table: rows that start with the command in backticks, options after it."""
    return set(re.findall(r"^\| `/([a-z0-9_-]+(?: [a-z0-9_-]+)?)[` ]", README.read_text(encoding="utf-8"), re.M))


async def test_every_command_is_in_the_readme(console):
    documented = readme_commands()
    missing = [c.qualified_name for c in leaf_commands(console.tree) if c.qualified_name not in documented]
    assert missing == [], f"commands missing from the README command list: {missing}"


async def test_the_readme_lists_no_command_that_does_not_exist(console):
    existing = {c.qualified_name for c in leaf_commands(console.tree)}
    assert readme_commands() - existing == set()


async def test_help_groups_every_command_under_a_feature(console):
    from cogs.meta import command_sections

    sections = command_sections(console.tree)
    assert "Other" not in sections, f"add these cogs to cogs.meta.SECTIONS: {sections.get('Other')}"
    (reply,) = await console.send("/help")
    assert [f["name"] for f in reply.embeds[0]["fields"] if f["name"] != "\u200b"] == list(sections)
