"""The checks Discord applies to what a bot sends, so a payload Discord would reject fails the test too.

Limits are Discord's documented ones (API v10): application command structure, message and embed
sizes, component layout. Each check returns a list of problems; an empty list means "accepted".
"""

from __future__ import annotations

import re
from typing import Any

NAME_RE = re.compile(r"^[-_'\w\u0900-\u097F\u0E00-\u0E7F]{1,32}$")
SUB_COMMAND, SUB_COMMAND_GROUP = 1, 2
OPTION_TYPES = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}
MAX_COMMANDS = 100
MAX_COMMAND_CHARS = 4000


def _text_len(value: Any) -> int:
    return len(value) if isinstance(value, str) else 0


def _check_name(where: str, name: Any, problems: list[str]) -> None:
    if not isinstance(name, str) or not NAME_RE.match(name) or name != name.lower():
        problems.append(f"{where}.name {name!r}: 1-32 lowercase letters, digits, - or _")


def _check_description(where: str, text: Any, problems: list[str]) -> None:
    if not isinstance(text, str) or not 1 <= len(text) <= 100:
        problems.append(f"{where}.description must be 1-100 characters, got {len(text) if isinstance(text, str) else text!r}")


def _check_options(where: str, options: list[dict[str, Any]], depth: int, problems: list[str]) -> int:
    """Validate one level of options; returns the characters it contributes to the 4000 limit."""
    chars = 0
    if len(options) > 25:
        problems.append(f"{where}: more than 25 options ({len(options)})")
    names = [o.get("name") for o in options]
    if len(set(names)) != len(names):
        problems.append(f"{where}: duplicate option names {names}")
    kinds = {o.get("type") for o in options}
    if kinds & {SUB_COMMAND, SUB_COMMAND_GROUP} and kinds - {SUB_COMMAND, SUB_COMMAND_GROUP}:
        problems.append(f"{where}: subcommands cannot be mixed with plain options")
    seen_optional = False
    for i, option in enumerate(options):
        at = f"{where}.options[{i}]"
        kind = option.get("type")
        if kind not in OPTION_TYPES:
            problems.append(f"{at}.type {kind!r} is not an option type")
            continue
        _check_name(at, option.get("name"), problems)
        _check_description(at, option.get("description"), problems)
        chars += _text_len(option.get("name")) + _text_len(option.get("description"))
        if kind in (SUB_COMMAND, SUB_COMMAND_GROUP):
            if kind == SUB_COMMAND_GROUP and depth > 0:
                problems.append(f"{at}: a subcommand group can only be at the top level")
            if kind == SUB_COMMAND and depth > 1:
                problems.append(f"{at}: subcommands nest at most two levels deep")
            children = option.get("options") or []
            if kind == SUB_COMMAND_GROUP and any(c.get("type") != SUB_COMMAND for c in children):
                problems.append(f"{at}: a subcommand group may only contain subcommands")
            chars += _check_options(at, children, depth + 1, problems)
            continue
        required = bool(option.get("required", False))
        if required and seen_optional:
            problems.append(f"{at}: required options must come before optional ones")
        seen_optional = seen_optional or not required
        choices = option.get("choices") or []
        if choices and option.get("autocomplete"):
            problems.append(f"{at}: autocomplete cannot be combined with choices")
        if len(choices) > 25:
            problems.append(f"{at}: more than 25 choices")
        for j, choice in enumerate(choices):
            if not isinstance(choice.get("name"), str) or not 1 <= len(choice["name"]) <= 100:
                problems.append(f"{at}.choices[{j}].name must be 1-100 characters")
            value = choice.get("value")
            if isinstance(value, str) and len(value) > 100:
                problems.append(f"{at}.choices[{j}].value longer than 100 characters")
            chars += _text_len(choice.get("name")) + _text_len(value)
        if kind == 3:
            lo, hi = option.get("min_length"), option.get("max_length")
            if lo is not None and not 0 <= lo <= 6000 or hi is not None and not 1 <= hi <= 6000:
                problems.append(f"{at}: min_length/max_length out of range")
    return chars


def command_problems(commands: Any) -> list[str]:
    """Why Discord would reject this bulk-overwrite body (PUT .../commands)."""
    if not isinstance(commands, list):
        return ["body must be a JSON array of commands"]
    problems: list[str] = []
    if len(commands) > MAX_COMMANDS:
        problems.append(f"more than {MAX_COMMANDS} commands")
    seen: set[tuple[int, str]] = set()
    for i, command in enumerate(commands):
        where = f"[{i}]"
        kind = command.get("type", 1)
        key = (kind, command.get("name"))
        if key in seen:
            problems.append(f"{where}: duplicate command name {command.get('name')!r}")
        seen.add(key)
        if kind == 1:
            _check_name(where, command.get("name"), problems)
            _check_description(where, command.get("description"), problems)
            chars = _text_len(command.get("name")) + _text_len(command.get("description"))
            chars += _check_options(where, command.get("options") or [], 0, problems)
            if chars > MAX_COMMAND_CHARS:
                problems.append(f"{where}: {chars} characters of names, descriptions and choices (max {MAX_COMMAND_CHARS})")
        elif not isinstance(command.get("name"), str) or not 1 <= len(command["name"]) <= 32:
            problems.append(f"{where}.name must be 1-32 characters")
    return problems


def message_problems(body: dict[str, Any]) -> list[str]:
    """Why Discord would reject this message body (content, embeds, components, allowed mentions)."""
    problems: list[str] = []
    content = body.get("content")
    if content is not None and len(content) > 2000:
        problems.append(f"content is {len(content)} characters (max 2000)")
    embeds = body.get("embeds") or []
    if len(embeds) > 10:
        problems.append("more than 10 embeds")
    total = 0
    for i, embed in enumerate(embeds):
        at = f"embeds[{i}]"
        for key, limit in (("title", 256), ("description", 4096)):
            value = embed.get(key) or ""
            total += len(value)
            if len(value) > limit:
                problems.append(f"{at}.{key} is {len(value)} characters (max {limit})")
        fields = embed.get("fields") or []
        if len(fields) > 25:
            problems.append(f"{at} has {len(fields)} fields (max 25)")
        for j, f in enumerate(fields):
            name, value = f.get("name") or "", f.get("value") or ""
            total += len(name) + len(value)
            if not name.strip() or len(name) > 256:
                problems.append(f"{at}.fields[{j}].name must be 1-256 characters")
            if not value.strip() or len(value) > 1024:
                problems.append(f"{at}.fields[{j}].value must be 1-1024 characters")
        footer = (embed.get("footer") or {}).get("text") or ""
        author = (embed.get("author") or {}).get("name") or ""
        total += len(footer) + len(author)
        if len(footer) > 2048:
            problems.append(f"{at}.footer.text longer than 2048")
        if len(author) > 256:
            problems.append(f"{at}.author.name longer than 256")
    if total > 6000:
        problems.append(f"embeds total {total} characters (max 6000)")
    rows = body.get("components") or []
    if len(rows) > 5 and not (int(body.get("flags") or 0) & (1 << 15)):
        problems.append("more than 5 action rows")
    for i, row in enumerate(rows):
        if row.get("type") != 1:
            continue
        children = row.get("components") or []
        if not 1 <= len(children) <= 5:
            problems.append(f"components[{i}] must hold 1-5 components")
        for c in children:
            if c.get("type") == 3 and not 1 <= len(c.get("options") or []) <= 25:
                problems.append(f"components[{i}]: a select menu needs 1-25 options")
            for option in c.get("options") or []:
                for key in ("label", "value"):
                    if not isinstance(option.get(key), str) or not 1 <= len(option[key]) <= 100:
                        problems.append(f"components[{i}]: a select option's {key} must be 1-100 characters")
                if len(option.get("description") or "") > 100:
                    problems.append(f"components[{i}]: a select option's description is longer than 100")
            if len(c.get("placeholder") or "") > 150:
                problems.append(f"components[{i}]: placeholder longer than 150")
            if c.get("custom_id") is not None and len(c["custom_id"]) > 100:
                problems.append(f"components[{i}]: custom_id longer than 100")
            label = c.get("label")
            if label is not None and len(label) > 80:
                problems.append(f"components[{i}]: label longer than 80")
    return problems


def choices_problems(choices: Any) -> list[str]:
    if not isinstance(choices, list):
        return ["choices must be a list"]
    problems = []
    if len(choices) > 25:
        problems.append(f"{len(choices)} autocomplete choices (max 25)")
    for i, choice in enumerate(choices):
        name = choice.get("name")
        if not isinstance(name, str) or not 1 <= len(name) <= 100:
            problems.append(f"choices[{i}].name must be 1-100 characters")
        value = choice.get("value")
        if isinstance(value, str) and len(value) > 100:
            problems.append(f"choices[{i}].value longer than 100 characters")
    return problems


def modal_problems(data: dict[str, Any]) -> list[str]:
    """Why Discord would reject this modal (interaction callback type 9)."""
    problems = []
    title = data.get("title")
    if not isinstance(title, str) or not 1 <= len(title) <= 45:
        problems.append("modal title must be 1-45 characters")
    if not isinstance(data.get("custom_id"), str) or not 1 <= len(data["custom_id"]) <= 100:
        problems.append("modal custom_id must be 1-100 characters")
    rows = data.get("components") or []
    if not 1 <= len(rows) <= 5:
        problems.append("a modal needs 1-5 components")
    for i, row in enumerate(rows):
        inputs = row.get("components") or ([row["component"]] if row.get("component") else [])
        for c in inputs:
            if c.get("type") != 4:
                continue
            label = c.get("label") if row.get("type") == 1 else row.get("label")
            if not isinstance(label, str) or not 1 <= len(label) <= 45:
                problems.append(f"components[{i}]: a text input label must be 1-45 characters")
            if len(c.get("placeholder") or "") > 100:
                problems.append(f"components[{i}]: placeholder longer than 100")
            if len(c.get("value") or "") > 4000 or not 0 <= int(c.get("min_length") or 0) <= 4000 \
                    or not 1 <= int(c.get("max_length") or 4000) <= 4000:
                problems.append(f"components[{i}]: value/min_length/max_length out of 0-4000")
    return problems
