"""The console's line parser: a typed line -> the command and options the Discord client would send.

What the Discord client validates before the bot sees anything is checked here, as it would be there:
unknown commands and subcommands, missing required options, option types, ranges, string lengths and
choices, and `default_permissions`. A refusal is a `ConsoleInputError`, which the session answers as a
reply of kind `client`. Directives' arguments (`:as 222`, `:submit FIELD=VALUE`) are parsed here too.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from typing import Any

import discord
from discord import app_commands

ATTACHMENT_MAX = 25 * 1024 * 1024  # Discord's upload limit without boosts

DEFAULT_MEMBER_PERMISSIONS = discord.Permissions(
    view_channel=True,
    send_messages=True,
    embed_links=True,
    attach_files=True,
    read_message_history=True,
    add_reactions=True,
    use_application_commands=True,
)

# `attach(option name, "@path")` uploads a file for an attachment option and returns its attachment id.
Attach = Callable[[str, str], str]


class ConsoleInputError(Exception):
    """A line the Discord client itself would reject before anything reached the bot."""


def parse_id(text: str, what: str) -> int:
    """A user, channel or guild id as typed (digits, or a mention such as <@111>)."""
    digits = text.strip().strip("<@!#&>")
    if not digits.isdigit() or not 0 < int(digits) < 2**63:
        raise ConsoleInputError(f"Expected a {what} id (digits), got {text!r}.")
    return int(digits)


def last_option(line: str) -> tuple[str, str]:
    """`:complete /command option:partial`: the line and the option being typed (the last one)."""
    matches = list(re.finditer(r"(?:^|\s)([\w-]+):", line))
    if not matches:
        raise ConsoleInputError("usage: :complete /command option:partial text")
    return line, matches[-1].group(1)


def form_fields(text: str) -> dict[str, str]:
    """`:submit FIELD=VALUE ...`: shell-quoted; `\\n` is a new line; `FIELD=@path` takes a file's text."""
    fields: dict[str, str] = {}
    for word in shlex.split(text):
        name, sep, value = word.partition("=")
        if not sep or not name:
            raise ConsoleInputError("usage: :submit FIELD=VALUE [FIELD=VALUE ...] (FIELD=@path reads a file)")
        if value.startswith("@") and len(value) > 1:
            try:
                with open(value[1:], encoding="utf-8") as handle:
                    value = handle.read(ATTACHMENT_MAX)
            except (OSError, UnicodeDecodeError) as error:
                raise ConsoleInputError(f"{name}: cannot read {value[1:]}: {error}") from None
        else:
            value = value.replace("\\n", "\n")
        fields[name] = value
    return fields


def read_upload(name: str, value: str) -> tuple[str, bytes]:
    """`@path/to/file` for option `name`: read it now (as the Discord client uploads it); (filename, bytes)."""
    if not value.startswith("@") or len(value) < 2:
        raise ConsoleInputError(f"{name}: attach a file as @path/to/file.")
    path = value[1:]
    try:
        with open(path, "rb") as handle:
            data = handle.read(ATTACHMENT_MAX + 1)
    except OSError as error:
        raise ConsoleInputError(f"{name}: cannot read {path}: {error.strerror}.") from None
    if len(data) > ATTACHMENT_MAX:
        raise ConsoleInputError(f"{name}: the file is over Discord's {ATTACHMENT_MAX // 1024 // 1024} MB upload limit.")
    return path.replace("\\", "/").rsplit("/", 1)[-1] or "file", data


def resolve_command(tree: app_commands.CommandTree, words: list[str]) -> tuple[app_commands.Command, int]:
    """The command the first words name (through its groups), and how many words that took."""
    if not words or not words[0].startswith("/"):
        raise ConsoleInputError("Commands start with '/'. Type /help to see them all.")
    root_name = words[0][1:].lower()
    node = tree.get_command(root_name)
    if node is None:
        raise ConsoleInputError(f"Unknown command /{root_name}. Type /help to see them all.")
    used = 1
    while isinstance(node, app_commands.Group):
        if used >= len(words):
            subs = ", ".join(c.name for c in node.commands)
            raise ConsoleInputError(f"/{node.qualified_name} needs a subcommand: {subs}.")
        child = node.get_command(words[used].lower())
        if child is None:
            subs = ", ".join(c.name for c in node.commands)
            raise ConsoleInputError(f"/{node.qualified_name} has no subcommand {words[used]!r}: choose {subs}.")
        node, used = child, used + 1
    return node, used


def parse_command_line(
    tree: app_commands.CommandTree, line: str, *, user_id: int, guild_id: int | None,
    permissions: dict[int, discord.Permissions], attach: Attach, partial: bool = False, focused: str | None = None,
) -> tuple[app_commands.Command, dict[str, Any]]:
    """`/command sub option:value ...` -> (command, {option: {"value", "type"[, "focused"]}}). `partial`
    (autocomplete) skips the checks a half-typed line would fail and marks the `focused` option."""
    words = line.split()
    command, used = resolve_command(tree, words)
    check_default_permissions(command, user_id, guild_id, permissions)
    params = {p.display_name: p for p in command.parameters}
    rest = line.strip().split(None, used)[used] if len(words) > used else ""
    raw: dict[str, str] = {}
    if rest:
        names = "|".join(re.escape(n) for n in sorted(params, key=len, reverse=True))
        pattern = re.compile(rf"(?:^|\s)({names}):" if names else r"(?!x)x")
        matches = list(pattern.finditer(rest))
        if not matches or rest[: matches[0].start()].strip():
            leading = rest[: matches[0].start()].strip() if matches else rest
            known = ", ".join(params) or "no options"
            raise ConsoleInputError(f"Unexpected text {leading[:80]!r}: write options as name:value ({known}).")
        for i, m in enumerate(matches):
            end = matches[i + 1].start() if i + 1 < len(matches) else len(rest)
            name = m.group(1)
            if name in raw:
                raise ConsoleInputError(f"Option {name} is given twice.")
            raw[name] = rest[m.end() : end].strip()
    options: dict[str, Any] = {}
    for name, param in params.items():
        if name not in raw:
            if param.required and not partial:
                raise ConsoleInputError(f"Option {name} is required.")
            continue
        if partial and name == focused:
            options[name] = {"value": raw[name], "focused": True, "type": param.type.value}
            continue
        options[name] = {"value": convert(param, raw[name], partial, attach), "type": param.type.value}
    if partial and focused and focused not in options:
        if focused not in params:
            raise ConsoleInputError(f"/{command.qualified_name} has no option {focused!r}.")
        options[focused] = {"value": "", "focused": True, "type": params[focused].type.value}
    return command, options


def check_default_permissions(command: app_commands.Command, user_id: int, guild_id: int | None,
                              permissions: dict[int, discord.Permissions]) -> None:
    """As the Discord client: the acting user (the `user` of `send`, else the session's) needs them."""
    node: Any = command
    while node is not None:
        required = getattr(node, "default_permissions", None)
        if required is not None and guild_id is not None:
            have = permissions.get(user_id, DEFAULT_MEMBER_PERMISSIONS)
            if not have.administrator and not required.is_subset(have):
                raise ConsoleInputError("You don't have permission to use this command.")
        node = node.parent


def convert(param: app_commands.Parameter, value: str, partial: bool, attach: Attach) -> Any:
    """One typed option value, checked and converted as the Discord client would send it."""
    kind = param.type
    name = param.display_name
    if kind is discord.AppCommandOptionType.string:
        # For strings discord.py keeps the length limits in min_value/max_value.
        if param.min_value is not None and len(value) < param.min_value and not partial:
            raise ConsoleInputError(f"{name}: must be at least {param.min_value} characters long.")
        if param.max_value is not None and len(value) > param.max_value:
            raise ConsoleInputError(f"{name}: must be {param.max_value} characters or fewer.")
        converted: Any = value
    elif kind is discord.AppCommandOptionType.integer:
        if not re.fullmatch(r"[+-]?\d{1,19}", value):
            raise ConsoleInputError(f"{name}: input a valid integer.")
        converted = int(value)
        if not -(2**53) < converted < 2**53:
            raise ConsoleInputError(f"{name}: the number is too large.")
    elif kind is discord.AppCommandOptionType.number:
        try:
            converted = float(value)
        except ValueError:
            raise ConsoleInputError(f"{name}: input a valid number.") from None
    elif kind is discord.AppCommandOptionType.boolean:
        if value.lower() not in ("true", "false"):
            raise ConsoleInputError(f"{name}: choose true or false.")
        converted = value.lower() == "true"
    elif kind is discord.AppCommandOptionType.user or kind is discord.AppCommandOptionType.mentionable:
        converted = str(parse_id(value, "user"))
    elif kind is discord.AppCommandOptionType.channel:
        converted = str(parse_id(value, "channel"))
    elif kind is discord.AppCommandOptionType.attachment:
        converted = value if partial else attach(name, value)
    else:
        raise ConsoleInputError(f"{name}: options of type {kind.name} can't be typed in the console.")
    if kind in (discord.AppCommandOptionType.integer, discord.AppCommandOptionType.number):
        if param.min_value is not None and converted < param.min_value:
            raise ConsoleInputError(f"{name}: must be at least {param.min_value:g}.")
        if param.max_value is not None and converted > param.max_value:
            raise ConsoleInputError(f"{name}: must be at most {param.max_value:g}.")
    if param.choices and not partial:
        for choice in param.choices:
            if value == str(choice.value) or value.lower() == choice.name.lower():
                return choice.value
        allowed = ", ".join(c.name for c in param.choices)
        raise ConsoleInputError(f"{name}: choose one of {allowed}.")
    return converted
