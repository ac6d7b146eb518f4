"""The offline console: drives the bot's real CommandTree with locally built interactions.

Nothing here re-implements command dispatch. A typed line becomes the JSON payload Discord would send
(`INTERACTION_CREATE`), which is fed to discord.py's own `ConnectionState.parse_interaction_create`;
the tree, transformers, checks, autocomplete, views and the error handler all run as in production.
The only thing replaced is the network edge: the webhook adapter that would POST interaction
callbacks and follow-ups to Discord records them here instead, as `Reply` objects.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import itertools
import json
import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import discord
from discord import app_commands
from discord.webhook import async_ as webhook_async

from bot.background import BACKGROUND_TASK_PREFIX
from bot.client import CogitatorBot
from bot.config import Settings

APPLICATION_ID = 424_242_424_242_424_242
DEFAULT_USERS = {111: "Alice", 222: "Bob"}
DEFAULT_CHANNEL = 1001
DEFAULT_GUILD = 501
EPHEMERAL = 1 << 6
QUIESCE_TIMEOUT_S = 120.0
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

_CALLBACK_KINDS = {4: "response", 5: "defer", 6: "defer_update", 7: "update", 8: "autocomplete", 9: "modal"}


class ConsoleInputError(Exception):
    """A line the Discord client itself would reject before anything reached the bot."""


@dataclass
class Reply:
    """One thing the bot sent: an interaction response, a deferral, a follow-up or an edit."""

    command: str
    kind: str
    ephemeral: bool = False
    content: str = ""
    embeds: list[dict[str, Any]] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    file_data: dict[str, bytes] = field(default_factory=dict, repr=False)
    components: list[dict[str, Any]] = field(default_factory=list)
    choices: list[dict[str, Any]] = field(default_factory=list)
    message_id: int | None = None
    payload: dict[str, Any] = field(default_factory=dict, repr=False)  # the body as sent to Discord (limit checks)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "command": self.command,
            "kind": self.kind,
            "ephemeral": self.ephemeral,
            "content": self.content,
            "embeds": self.embeds,
            "files": self.files,
            "components": self.components,
        }
        if self.kind == "autocomplete":
            data["choices"] = self.choices
        return data

    def text(self) -> str:
        """Everything a person would read in this reply, flattened (handy in tests)."""
        parts = [self.content]
        for embed in self.embeds:
            parts += [embed.get("title") or "", embed.get("description") or ""]
            for f in embed.get("fields", []):
                parts += [f["name"], f["value"]]
            parts.append(embed.get("footer") or "")
        return "\n".join(p for p in parts if p)


def _embed_summary(raw: dict[str, Any]) -> dict[str, Any]:
    return {
        "title": raw.get("title"),
        "description": raw.get("description"),
        "fields": [{"name": f.get("name", ""), "value": f.get("value", "")} for f in raw.get("fields", [])],
        "footer": (raw.get("footer") or {}).get("text"),
        **({"image": raw["image"].get("url")} if raw.get("image") else {}),
    }


def _flatten_components(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    flat = []
    for row in rows:
        for c in row.get("components", [row]) if row.get("type") == 1 else [row]:
            item = {"type": {2: "button", 3: "select", 4: "text_input"}.get(c.get("type"), c.get("type")),
                    "custom_id": c.get("custom_id")}
            if c.get("label") is not None:
                item["label"] = c["label"]
            if c.get("options"):
                item["options"] = [{"label": o.get("label"), "value": o.get("value"),
                                    **({"description": o["description"]} if o.get("description") else {})}
                                   for o in c["options"]]
            if c.get("url"):
                item["url"] = c["url"]
            item["disabled"] = bool(c.get("disabled", False))
            flat.append(item)
    return flat


class _CaptureAdapter(webhook_async.AsyncWebhookAdapter):
    """The network edge: answers the REST calls discord.py makes for interactions, and records them."""

    def __init__(self, session: ConsoleSession) -> None:
        super().__init__()
        self._session = session

    async def request(self, route, session, *, payload=None, multipart=None, files=None, params=None, **_: Any):
        body = payload
        if multipart:
            for part in multipart:
                if part.get("name") == "payload_json":
                    body = json.loads(part["value"])
        attachments: dict[str, bytes] = {}
        for file in files or []:
            file.reset()
            attachments[file.filename or "file"] = file.fp.read()
        return self._session._handle_http(route.method, route.path, route.webhook_id, route.webhook_token,
                                          body or {}, attachments)


@dataclass
class _Message:
    id: int
    channel_id: int
    payload: dict[str, Any]


class ConsoleSession:
    """A bot plus a fake user, channel and guild; `send` a line, get back what the bot replied."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.user_id = 111
        self.channel_id: int = DEFAULT_CHANNEL
        self.guild_id: int | None = DEFAULT_GUILD
        self.names: dict[int, str] = dict(DEFAULT_USERS)
        self.permissions: dict[int, discord.Permissions] = {}
        self.bot: CogitatorBot | None = None
        self._ids = itertools.count(10**15)
        self._replies: list[Reply] = []
        self._current_command = ""
        self._tokens: dict[str, int] = {}  # interaction token -> original response message id
        self._token_channels: dict[str, int] = {}
        self._messages: dict[int, _Message] = {}
        self._clicked_message_id: int | None = None
        self._attachments: dict[str, bytes] = {}  # CDN url -> bytes of a file attached with `option:@path`
        self._pending_attachments: dict[str, dict[str, Any]] = {}
        self._modal: dict[str, Any] | None = None  # the form the bot opened last, until it is submitted

    # ----------------------------------------------------------------- lifecycle
    @classmethod
    async def open(cls, settings: Settings) -> ConsoleSession:
        session = cls(settings)
        await session._start_bot()
        return session

    async def _start_bot(self) -> None:
        webhook_async.async_context.set(_CaptureAdapter(self))
        bot = CogitatorBot(self.settings)
        await bot._async_setup_hook()
        bot._connection.application_id = APPLICATION_ID
        bot._connection.user = discord.ClientUser(state=bot._connection, data=self._bot_user_payload())
        bot.http.get_from_cdn = self._cdn_get  # type: ignore[method-assign]  # attachments are served locally
        await bot.setup_hook()
        self.bot = bot

    async def close(self) -> None:
        if self.bot is not None:
            await self.bot.close()
            self.bot = None

    async def restart(self) -> None:
        """Drop every in-memory object and reopen the stores, as a crashed and restarted bot would."""
        await self.close()
        self._tokens.clear()
        await self._start_bot()

    @property
    def tree(self) -> app_commands.CommandTree:
        assert self.bot is not None
        return self.bot.tree

    def set_permissions(self, user_id: int, *names: str) -> None:
        perms = discord.Permissions(DEFAULT_MEMBER_PERMISSIONS.value)
        for name in names:
            if not hasattr(perms, name):
                raise ValueError(f"unknown permission {name!r}")
            setattr(perms, name, True)
        self.permissions[user_id] = perms

    # ----------------------------------------------------------------- public API
    async def send(self, line: str, *, user: int | None = None) -> list[Reply]:
        """Run one console line (a slash command or a directive) and return every reply it caused."""
        line = line.strip()
        if not line or line.startswith("#"):
            return []
        if line.startswith(":"):
            return await self._directive(line, user=user)
        try:
            command, options = self._parse_command_line(line, user=user)
        except ConsoleInputError as error:
            return [Reply(command=line.split(" ", 1)[0].lstrip("/"), kind="client", ephemeral=True, content=str(error))]
        payload = self._interaction(2, user, data=self._command_data(command, options))
        return await self._dispatch(payload, command.qualified_name)

    async def autocomplete(self, line: str, focused: str, *, user: int | None = None) -> list[dict[str, Any]]:
        command, options = self._parse_command_line(line, partial=True, focused=focused, user=user)
        payload = self._interaction(4, user, data=self._command_data(command, options))
        replies = await self._dispatch(payload, command.qualified_name)
        return next((r.choices for r in replies if r.kind == "autocomplete"), [])

    async def click(self, custom_id: str, *, values: list[str] | None = None, user: int | None = None) -> list[Reply]:
        """Press the newest button (or choose in the newest select menu) with this custom_id."""
        message = self._message_with_component(custom_id)
        if message is None:
            return [Reply(command=custom_id, kind="client", ephemeral=True, content=f"No component {custom_id!r} on screen.")]
        component = next(c for c in _flatten_components(message.payload.get("components", [])) if c["custom_id"] == custom_id)
        if component.get("disabled"):
            return [Reply(command=custom_id, kind="client", ephemeral=True, content="That control is disabled.")]
        data: dict[str, Any] = {"custom_id": custom_id, "component_type": 3 if component["type"] == "select" else 2}
        if component["type"] == "select":
            data["values"] = list(values or [])
        payload = self._interaction(3, user, data=data, message=message.payload, channel_id=message.channel_id)
        return await self._dispatch(payload, custom_id)

    async def submit(self, fields: dict[str, str], *, user: int | None = None) -> list[Reply]:
        """Fill in and submit the form (modal) the bot opened last."""
        modal = self._modal
        if modal is None:
            return [Reply(command="submit", kind="client", ephemeral=True, content="No form is open.")]
        known = {c["custom_id"]: c for c in _modal_inputs(modal.get("components") or [])}
        unknown = [k for k in fields if k not in known]
        if unknown:
            return [Reply(command="submit", kind="client", ephemeral=True,
                          content=f"The form has no field {unknown[0]!r}; its fields: {', '.join(known)}.")]
        rows = []
        for custom_id, spec in known.items():
            value = fields.get(custom_id, "")
            if spec.get("required", True) and not value:
                return [Reply(command="submit", kind="client", ephemeral=True, content=f"{custom_id} is required.")]
            if spec.get("max_length") and len(value) > spec["max_length"]:
                return [Reply(command="submit", kind="client", ephemeral=True,
                              content=f"{custom_id}: must be {spec['max_length']} characters or fewer.")]
            rows.append({"type": 1, "components": [{"type": 4, "custom_id": custom_id, "value": value}]})
        self._modal = None
        payload = self._interaction(5, user, data={"custom_id": modal["custom_id"], "components": rows})
        return await self._dispatch(payload, modal["custom_id"])

    async def _cdn_get(self, url: str) -> bytes:
        if url not in self._attachments:
            raise discord.NotFound(_FakeResponse(404), {"message": "Unknown attachment", "code": 0})
        return self._attachments[url]

    def _attach(self, name: str, value: str) -> str:
        """`@path/to/file`: read it now (as the Discord client uploads it) and return the attachment id."""
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
        attachment_id = str(next(self._ids))
        filename = path.replace("\\", "/").rsplit("/", 1)[-1] or "file"
        url = f"https://cdn.invalid/ephemeral-attachments/{attachment_id}/{filename}"
        self._attachments[url] = data
        self._pending_attachments[attachment_id] = {
            "id": attachment_id, "filename": filename, "size": len(data), "url": url, "proxy_url": url,
            "content_type": "text/plain; charset=utf-8" if filename.endswith(".txt") else "application/octet-stream",
            "ephemeral": True}
        return attachment_id

    # ----------------------------------------------------------------- directives
    async def _directive(self, line: str, *, user: int | None = None) -> list[Reply]:
        name, _, rest = line.partition(" ")
        rest = rest.strip()
        note = Reply(command=name, kind="console")
        try:
            if name == ":as":
                self.user_id = self._parse_id(rest, "user")
                note.content = f"Now acting as {self.names.get(self.user_id, self.user_id)} ({self.user_id})."
            elif name == ":channel":
                self.channel_id = self._parse_id(rest, "channel")
                note.content = f"Now in channel {self.channel_id}."
            elif name == ":guild":
                self.guild_id = None if rest.lower() in ("none", "dm", "0") else self._parse_id(rest, "guild")
                note.content = f"Now in guild {self.guild_id}." if self.guild_id else "Now in direct messages."
            elif name == ":restart":
                await self.restart()
                note.content = "Restarted: in-memory state dropped, stores reopened."
            elif name == ":perms":
                words = rest.split()
                self.set_permissions(self.user_id, *words)
                note.content = f"Permissions of {self.user_id}: {', '.join(words) or 'defaults'}."
            elif name == ":name":
                self.names[self.user_id] = rest or str(self.user_id)
                note.content = f"User {self.user_id} is now called {self.names[self.user_id]!r}."
            elif name == ":click":
                parts = shlex.split(rest)
                if not parts:
                    raise ConsoleInputError("usage: :click CUSTOM_ID [VALUE ...]")
                return await self.click(parts[0], values=parts[1:] or None, user=user)
            elif name == ":submit":
                return await self.submit(_form_fields(rest), user=user)
            elif name == ":complete":
                command_line, focused = self._last_option(rest)
                choices = await self.autocomplete(command_line, focused)
                return [Reply(command=command_line, kind="autocomplete", ephemeral=True, choices=choices)]
            else:
                raise ConsoleInputError(
                    f"Unknown directive {name}. Directives: :as, :channel, :guild, :restart, :perms, :name, :click, "
                    ":submit, :complete."
                )
        except (ConsoleInputError, ValueError) as error:
            note.kind, note.ephemeral, note.content = "client", True, str(error)
        return [note]

    @staticmethod
    def _parse_id(text: str, what: str) -> int:
        digits = text.strip().strip("<@!#&>")
        if not digits.isdigit() or not 0 < int(digits) < 2**63:
            raise ConsoleInputError(f"Expected a {what} id (digits), got {text!r}.")
        return int(digits)

    def _last_option(self, line: str) -> tuple[str, str]:
        matches = list(re.finditer(r"(?:^|\s)([\w-]+):", line))
        if not matches:
            raise ConsoleInputError("usage: :complete /command option:partial text")
        return line, matches[-1].group(1)

    # ----------------------------------------------------------------- parsing a typed line
    def _resolve_command(self, words: list[str]) -> tuple[app_commands.Command, int]:
        if not words or not words[0].startswith("/"):
            raise ConsoleInputError("Commands start with '/'. Type /help to see them all.")
        root_name = words[0][1:].lower()
        node = self.tree.get_command(root_name)
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

    def _parse_command_line(
        self, line: str, *, partial: bool = False, focused: str | None = None, user: int | None = None
    ) -> tuple[app_commands.Command, dict[str, Any]]:
        words = line.split()
        command, used = self._resolve_command(words)
        self._check_default_permissions(command, self.user_id if user is None else user)
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
            options[name] = {"value": self._convert(param, raw[name], partial), "type": param.type.value}
        if partial and focused and focused not in options:
            if focused not in params:
                raise ConsoleInputError(f"/{command.qualified_name} has no option {focused!r}.")
            options[focused] = {"value": "", "focused": True, "type": params[focused].type.value}
        return command, options

    def _check_default_permissions(self, command: app_commands.Command, user_id: int) -> None:
        """As the Discord client: the acting user (the `user` of `send`, else the session's) needs them."""
        node: Any = command
        while node is not None:
            required = getattr(node, "default_permissions", None)
            if required is not None and self.guild_id is not None:
                have = self.permissions.get(user_id, DEFAULT_MEMBER_PERMISSIONS)
                if not have.administrator and not required.is_subset(have):
                    raise ConsoleInputError("You don't have permission to use this command.")
            node = node.parent

    def _convert(self, param: app_commands.Parameter, value: str, partial: bool) -> Any:
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
            converted = str(self._parse_id(value, "user"))
        elif kind is discord.AppCommandOptionType.channel:
            converted = str(self._parse_id(value, "channel"))
        elif kind is discord.AppCommandOptionType.attachment:
            converted = value if partial else self._attach(name, value)
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

    # ----------------------------------------------------------------- payloads
    def _bot_user_payload(self) -> dict[str, Any]:
        return {"id": str(APPLICATION_ID), "username": "Cogitator", "discriminator": "0", "global_name": "Cogitator",
                "avatar": None, "bot": True}

    def _user_payload(self, user_id: int) -> dict[str, Any]:
        name = self.names.get(user_id, f"user{user_id}")
        return {"id": str(user_id), "username": name.lower()[:32] or str(user_id), "discriminator": "0",
                "global_name": name, "avatar": None}

    def _member_payload(self, user_id: int, *, with_user: bool = True) -> dict[str, Any]:
        perms = self.permissions.get(user_id, DEFAULT_MEMBER_PERMISSIONS)
        member: dict[str, Any] = {"roles": [], "joined_at": "2026-01-01T00:00:00+00:00", "deaf": False, "mute": False,
                                  "flags": 0, "nick": None, "permissions": str(perms.value)}
        if with_user:
            member["user"] = self._user_payload(user_id)
        return member

    def _command_data(self, command: app_commands.Command, options: dict[str, Any]) -> dict[str, Any]:
        opts: list[dict[str, Any]] = []
        resolved: dict[str, dict[str, Any]] = {}
        for name, spec in options.items():
            opt = {"name": name, "type": spec["type"], "value": spec["value"]}
            if spec.get("focused"):
                opt["focused"] = True
            opts.append(opt)
            if spec["type"] == discord.AppCommandOptionType.attachment.value and not spec.get("focused"):
                attachment = self._pending_attachments.pop(str(spec["value"]), None)
                if attachment is not None:
                    resolved.setdefault("attachments", {})[attachment["id"]] = attachment
            if spec["type"] in (discord.AppCommandOptionType.user.value, discord.AppCommandOptionType.mentionable.value) \
                    and not spec.get("focused"):
                uid = int(spec["value"])
                resolved.setdefault("users", {})[str(uid)] = self._user_payload(uid)
                if self.guild_id:
                    resolved.setdefault("members", {})[str(uid)] = self._member_payload(uid, with_user=False)
        node: Any = command
        data_opts = opts
        while node.parent is not None:
            kind = 1 if isinstance(node, app_commands.Command) else 2
            data_opts = [{"name": node.name, "type": kind, "options": data_opts}]
            node = node.parent
        data = {"id": str(abs(hash(node.name)) % 10**18), "name": node.name, "type": 1, "options": data_opts}
        if resolved:
            data["resolved"] = resolved
        return data

    def _interaction(self, kind: int, user: int | None, *, data: dict[str, Any], message: dict | None = None,
                     channel_id: int | None = None) -> dict[str, Any]:
        user_id = user if user is not None else self.user_id
        channel_id = channel_id or self.channel_id
        interaction_id = next(self._ids)
        payload: dict[str, Any] = {
            "id": str(interaction_id),
            "application_id": str(APPLICATION_ID),
            "type": kind,
            "token": f"console-{interaction_id}",
            "version": 1,
            "data": data,
            "channel_id": str(channel_id),
            "locale": "en-US",
            "app_permissions": str(discord.Permissions.all_channel().value),
            "entitlements": [],
            "authorizing_integration_owners": {"0": str(self.guild_id or 0)},
            "attachment_size_limit": 25 * 1024 * 1024,
        }
        if self.guild_id:
            payload["guild_id"] = str(self.guild_id)
            payload["guild_locale"] = "en-US"
            payload["guild"] = {"id": str(self.guild_id), "locale": "en-US", "features": []}
            payload["channel"] = {"id": str(channel_id), "type": 0, "name": f"channel-{channel_id}",
                                  "guild_id": str(self.guild_id), "position": 0, "permission_overwrites": [], "nsfw": False}
            payload["member"] = self._member_payload(user_id)
            payload["context"] = 0
        else:
            payload["user"] = self._user_payload(user_id)
            payload["channel"] = {"id": str(channel_id), "type": 1, "recipients": [self._user_payload(user_id)]}
            payload["context"] = 1
        if message is not None:
            payload["message"] = message
        self._token_channels[payload["token"]] = channel_id
        return payload

    def _message_payload(self, message_id: int, channel_id: int, body: dict[str, Any], files: dict[str, bytes]) -> dict:
        attachments = [
            {"id": str(next(self._ids)), "filename": name, "size": len(data),
             "url": f"https://cdn.invalid/attachments/{name}", "proxy_url": f"https://cdn.invalid/attachments/{name}"}
            for name, data in files.items()
        ]
        return {
            "id": str(message_id), "channel_id": str(channel_id), "type": 20, "content": body.get("content") or "",
            "author": self._bot_user_payload(), "embeds": body.get("embeds") or [], "attachments": attachments,
            "components": body.get("components") or [], "timestamp": dt.datetime.now(dt.UTC).isoformat(),
            "edited_timestamp": None, "tts": False, "mention_everyone": False, "mentions": [], "mention_roles": [],
            "pinned": False, "flags": body.get("flags") or 0,
        }

    # ----------------------------------------------------------------- the fake REST edge
    def _record(self, kind: str, body: dict[str, Any], files: dict[str, bytes], message_id: int | None) -> None:
        self._replies.append(Reply(
            command=self._current_command,
            kind=kind,
            ephemeral=bool((body.get("flags") or 0) & EPHEMERAL),
            content=body.get("content") or "",
            embeds=[_embed_summary(e) for e in body.get("embeds") or []],
            files=list(files),
            file_data=dict(files),
            components=_flatten_components(body.get("components") or []),
            choices=list(body.get("choices") or []),
            message_id=message_id,
            payload=body,
        ))

    def _store_message(self, token: str, body: dict[str, Any], files: dict[str, bytes], message_id: int | None = None) -> dict:
        message_id = message_id or next(self._ids)
        channel_id = self._token_channels.get(token, self.channel_id)
        payload = self._message_payload(message_id, channel_id, body, files)
        self._messages[message_id] = _Message(message_id, channel_id, payload)
        return payload

    def _handle_http(self, method: str, path: str, webhook_id: Any, token: str | None, body: dict[str, Any],
                     files: dict[str, bytes]) -> Any:
        token = token or ""
        if path.endswith("/callback"):
            kind_code = body.get("type")
            data = body.get("data") or {}
            kind = _CALLBACK_KINDS.get(kind_code, f"callback-{kind_code}")
            interaction = {"id": str(webhook_id), "type": 2, "response_message_loading": kind_code == 5,
                           "response_message_ephemeral": bool((data.get("flags") or 0) & EPHEMERAL)}
            resource: dict[str, Any] = {"type": kind_code}
            if kind_code == 9:
                self._modal = data
                data = {**data, "content": f"Form: {data.get('title', '')} (fill it in with :submit FIELD=VALUE)"}
            if kind_code in (4, 5):
                message = self._store_message(token, data, files)
                self._tokens[token] = int(message["id"])
                interaction["response_message_id"] = message["id"]
                if kind_code == 4:
                    resource["message"] = message
            elif kind_code in (6, 7) and self._clicked_message_id is not None:
                message_id = self._clicked_message_id
                self._tokens[token] = message_id
                if kind_code == 7:
                    merged = {**self._messages[message_id].payload, **data}
                    resource["message"] = self._store_message(token, merged, files or {}, message_id)
            self._record(kind, data, files, self._tokens.get(token))
            return {"interaction": interaction, "resource": resource}
        original = "/messages/@original" in path
        target_id: int | None = None
        if "/messages/" in path:
            last = path.rsplit("/", 1)[1]
            target_id = self._tokens.get(token) if original else (int(last) if last.isdigit() else None)
        if method == "POST":  # follow-up
            message = self._store_message(token, body, files)
            self._record("followup", body, files, int(message["id"]))
            return message
        if method == "PATCH" and target_id is not None and target_id in self._messages:
            old = self._messages[target_id].payload
            merged = {**old, **{k: v for k, v in body.items() if v is not None}}
            message = self._store_message(token, merged, files, target_id)
            self._record("edit", {**body, "flags": old.get("flags")}, files, target_id)
            return message
        if method == "GET" and target_id is not None and target_id in self._messages:
            return self._messages[target_id].payload
        if method == "DELETE" and target_id is not None:
            self._messages.pop(target_id, None)
            self._record("delete", {}, {}, target_id)
            return None
        raise discord.NotFound(_FakeResponse(404), {"message": "Unknown Message", "code": 10008})

    def _message_with_component(self, custom_id: str) -> _Message | None:
        for message in sorted(self._messages.values(), key=lambda m: m.id, reverse=True):
            if any(c["custom_id"] == custom_id for c in _flatten_components(message.payload.get("components", []))):
                return message
        return None

    # ----------------------------------------------------------------- dispatch
    async def _dispatch(self, payload: dict[str, Any], label: str) -> list[Reply]:
        assert self.bot is not None
        self._replies = []
        self._current_command = label
        self._clicked_message_id = int(payload["message"]["id"]) if "message" in payload else None
        before = asyncio.all_tasks()
        self.bot._connection.parse_interaction_create(payload)
        await self._quiesce(before)
        return self._replies

    async def _quiesce(self, before: set[asyncio.Task]) -> None:
        """Wait until every task this interaction started has finished (view timers excepted)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + QUIESCE_TIMEOUT_S
        while True:
            await asyncio.sleep(0)
            pending = {t for t in asyncio.all_tasks() - before if not t.done() and _is_interaction_work(t)}
            pending.discard(asyncio.current_task())
            if not pending:
                return
            remaining = deadline - loop.time()
            if remaining <= 0:
                still = ", ".join(sorted(f"{t.get_name()} ({getattr(t.get_coro(), '__qualname__', '?')})"
                                         for t in pending))
                raise TimeoutError(f"the bot did not finish answering in time; still running: {still}")
            await asyncio.wait(pending, timeout=remaining)


def _is_interaction_work(task: asyncio.Task) -> bool:
    """Tasks an interaction may leave running: view timers, the live board's connections and feed (a page's
    event stream never ends by itself, and a page may connect while a command runs), and background tasks
    (`BACKGROUND_TASK_PREFIX`, e.g. the Discord board's clock redraw)."""
    coro = task.get_coro()
    name = getattr(coro, "__qualname__", "") or ""
    return ("timeout" not in name.lower() and "inner_call" not in name and not name.startswith("RequestHandler")
            and not task.get_name().startswith(("discord-ui-view-timeout", "overlay-feed", BACKGROUND_TASK_PREFIX)))


def _modal_inputs(components: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The text inputs of a modal, in order (inside action rows, or labels)."""
    found = []
    for c in components:
        if c.get("type") == 1:
            found += _modal_inputs(c.get("components") or [])
        elif c.get("type") == 18 and c.get("component"):
            found += _modal_inputs([c["component"]])
        elif c.get("type") == 4:
            found.append(c)
    return found


def _form_fields(text: str) -> dict[str, str]:
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


class _FakeResponse:
    def __init__(self, status: int) -> None:
        self.status = status
        self.reason = "Not Found"


# --------------------------------------------------------------------- the terminal front end
def render_human(reply: Reply) -> str:
    """A terminal rendering of one reply: readable, with the structure of the Discord embed."""
    lines: list[str] = []
    tag = {"defer": "… thinking", "autocomplete": "autocomplete", "console": "console", "client": "discord"}.get(reply.kind)
    head = f"[{reply.command}]" + (f" ({tag})" if tag else "") + (" [only you]" if reply.ephemeral else "")
    lines.append(head)
    if reply.content:
        lines += ["  " + line for line in reply.content.splitlines()]
    for embed in reply.embeds:
        if embed.get("title"):
            lines.append(f"  ┌─ {embed['title']}")
        for line in (embed.get("description") or "").splitlines():
            lines.append(f"  │ {line}")
        for f in embed.get("fields", []):
            lines.append(f"  │ ▸ {f['name']}")
            lines += [f"  │   {line}" for line in f["value"].splitlines()]
        if embed.get("image"):
            lines.append(f"  │ [image: {embed['image']}]")
        if embed.get("footer"):
            lines.append(f"  └─ {embed['footer']}")
    for name in reply.files:
        lines.append(f"  📎 {name} ({len(reply.file_data.get(name, b''))} bytes)")
    for c in reply.components:
        if c["type"] == "select":
            lines.append(f"  [select {c['custom_id']}]")
            for o in c.get("options", []):
                detail = f" — {o['description']}" if o.get("description") else ""
                lines.append(f"    ◦ {o['label']}{detail}  →  {o['value']}")
        elif c["type"] == "text_input":
            lines.append(f"  [field {c['custom_id']}] {c.get('label') or ''}")
        else:
            state = " (disabled)" if c.get("disabled") else ""
            lines.append(f"  [button {c['custom_id']}] {c.get('label') or ''}{state}")
    for choice in reply.choices:
        lines.append(f"  • {choice.get('name')}  →  {choice.get('value')}")
    return "\n".join(lines)


async def run_console(settings: Settings, *, as_json: bool, user: int | None, channel: int | None,
                      guild: int | None, stdin, stdout, banner: str | None = None) -> int:
    session = await ConsoleSession.open(settings)
    if user:
        session.user_id = user
    if channel:
        session.channel_id = channel
    if guild is not None:
        session.guild_id = guild or None
    interactive = not as_json and stdin.isatty()
    if banner and not as_json:
        print(banner, file=stdout, flush=True)
    loop = asyncio.get_running_loop()
    try:
        while True:
            if interactive:
                print("> ", end="", file=stdout, flush=True)
            line = await loop.run_in_executor(None, stdin.readline)
            if not line:
                break
            for reply in await session.send(line):
                if as_json:
                    print(json.dumps(reply.to_json(), ensure_ascii=False), file=stdout, flush=True)
                else:
                    print(render_human(reply), file=stdout, flush=True)
    finally:
        await session.close()
    return 0
