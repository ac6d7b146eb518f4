"""The console's fake interaction: what Discord would send the bot, and Discord's side of the answers.

`FakeDiscord` builds the JSON payload of an `INTERACTION_CREATE` (a command, an autocomplete, a button or
select, a modal submit) for a user in a channel and guild, and answers the REST calls discord.py makes
for interactions through its webhook adapter (`CaptureAdapter`): callbacks, follow-ups, edits, fetches and
deletes of messages. It keeps the messages it was sent, so a later click finds its button, and records
each answer as a `Reply`. This is the only part of the bot's path that is not production code.
"""

from __future__ import annotations

import datetime as dt
import itertools
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import discord
from discord import app_commands
from discord.webhook import async_ as webhook_async

from bot.console.lines import DEFAULT_MEMBER_PERMISSIONS

APPLICATION_ID = 424_242_424_242_424_242
EPHEMERAL = 1 << 6

_CALLBACK_KINDS = {4: "response", 5: "defer", 6: "defer_update", 7: "update", 8: "autocomplete", 9: "modal"}


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


@dataclass
class _Message:
    id: int
    channel_id: int
    payload: dict[str, Any]


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


class _FakeResponse:
    def __init__(self, status: int) -> None:
        self.status = status
        self.reason = "Not Found"


class CaptureAdapter(webhook_async.AsyncWebhookAdapter):
    """The network edge: answers the REST calls discord.py makes for interactions, and records them."""

    def __init__(self, discord_side: FakeDiscord) -> None:
        super().__init__()
        self._discord = discord_side

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
        return self._discord.handle_http(route.method, route.path, route.webhook_id, route.webhook_token,
                                          body or {}, attachments)


@dataclass
class Actor:
    """Who acts, where: the user, channel and guild (None: direct messages) of one interaction, with the
    users' display names and server permissions."""

    user_id: int
    channel_id: int
    guild_id: int | None
    names: dict[int, str]
    permissions: dict[int, discord.Permissions]


class FakeDiscord:
    """Discord's side of the console: interaction payloads in, REST answers out, messages kept, replies recorded."""

    def __init__(self) -> None:
        self.ids = itertools.count(10**15)
        self.replies: list[Reply] = []
        self.current_command = ""
        self.tokens: dict[str, int] = {}  # interaction token -> original response message id
        self.token_channels: dict[str, int] = {}
        self.messages: dict[int, _Message] = {}
        self.clicked_message_id: int | None = None
        self.uploads: dict[str, bytes] = {}  # CDN url -> bytes of a file attached with `option:@path`
        self.pending_attachments: dict[str, dict[str, Any]] = {}
        self.modal: dict[str, Any] | None = None  # the form the bot opened last, until it is submitted
        self.default_channel = 0  # where a token's messages go when its channel is not known

    def upload(self, filename: str, data: bytes) -> str:
        """An ephemeral attachment, as the Discord client uploads it before sending the command; its id."""
        attachment_id = str(next(self.ids))
        url = f"https://cdn.invalid/ephemeral-attachments/{attachment_id}/{filename}"
        self.uploads[url] = data
        self.pending_attachments[attachment_id] = {
            "id": attachment_id, "filename": filename, "size": len(data), "url": url, "proxy_url": url,
            "content_type": "text/plain; charset=utf-8" if filename.endswith(".txt") else "application/octet-stream",
            "ephemeral": True}
        return attachment_id

    async def cdn_get(self, url: str) -> bytes:
        """What `bot.http.get_from_cdn` returns for an attachment's url."""
        if url not in self.uploads:
            raise discord.NotFound(_FakeResponse(404), {"message": "Unknown attachment", "code": 0})
        return self.uploads[url]

    # ----------------------------------------------------------------- payloads
    def bot_user_payload(self) -> dict[str, Any]:
        return {"id": str(APPLICATION_ID), "username": "Cogitator", "discriminator": "0", "global_name": "Cogitator",
                "avatar": None, "bot": True}

    @staticmethod
    def user_payload(user_id: int, names: dict[int, str]) -> dict[str, Any]:
        name = names.get(user_id, f"user{user_id}")
        return {"id": str(user_id), "username": name.lower()[:32] or str(user_id), "discriminator": "0",
                "global_name": name, "avatar": None}

    def member_payload(self, user_id: int, who: Actor, *, with_user: bool = True) -> dict[str, Any]:
        perms = who.permissions.get(user_id, DEFAULT_MEMBER_PERMISSIONS)
        member: dict[str, Any] = {"roles": [], "joined_at": "2026-01-01T00:00:00+00:00", "deaf": False, "mute": False,
                                  "flags": 0, "nick": None, "permissions": str(perms.value)}
        if with_user:
            member["user"] = self.user_payload(user_id, who.names)
        return member

    def command_data(self, command: app_commands.Command, options: dict[str, Any], who: Actor) -> dict[str, Any]:
        opts: list[dict[str, Any]] = []
        resolved: dict[str, dict[str, Any]] = {}
        for name, spec in options.items():
            opt = {"name": name, "type": spec["type"], "value": spec["value"]}
            if spec.get("focused"):
                opt["focused"] = True
            opts.append(opt)
            if spec["type"] == discord.AppCommandOptionType.attachment.value and not spec.get("focused"):
                attachment = self.pending_attachments.pop(str(spec["value"]), None)
                if attachment is not None:
                    resolved.setdefault("attachments", {})[attachment["id"]] = attachment
            if spec["type"] in (discord.AppCommandOptionType.user.value, discord.AppCommandOptionType.mentionable.value) \
                    and not spec.get("focused"):
                uid = int(spec["value"])
                resolved.setdefault("users", {})[str(uid)] = self.user_payload(uid, who.names)
                if who.guild_id:
                    resolved.setdefault("members", {})[str(uid)] = self.member_payload(uid, who, with_user=False)
            if spec["type"] == discord.AppCommandOptionType.channel.value and not spec.get("focused"):
                cid = str(spec["value"])  # a text channel of the console's guild, as Discord resolves it
                resolved.setdefault("channels", {})[cid] = {"id": cid, "type": 0, "name": f"channel-{cid}",
                                                            "permissions": str(discord.Permissions.all().value),
                                                            "guild_id": str(who.guild_id or 0)}
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

    def interaction(self, kind: int, who: Actor, *, data: dict[str, Any], message: dict | None = None,
                    channel_id: int | None = None) -> dict[str, Any]:
        """The INTERACTION_CREATE payload of type `kind` (2 command, 3 component, 4 autocomplete, 5 modal)."""
        user_id = who.user_id
        channel_id = channel_id or who.channel_id
        interaction_id = next(self.ids)
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
            "authorizing_integration_owners": {"0": str(who.guild_id or 0)},
            "attachment_size_limit": 25 * 1024 * 1024,
        }
        if who.guild_id:
            payload["guild_id"] = str(who.guild_id)
            payload["guild_locale"] = "en-US"
            payload["guild"] = {"id": str(who.guild_id), "locale": "en-US", "features": []}
            payload["channel"] = {"id": str(channel_id), "type": 0, "name": f"channel-{channel_id}",
                                  "guild_id": str(who.guild_id), "position": 0, "permission_overwrites": [], "nsfw": False}
            payload["member"] = self.member_payload(user_id, who)
            payload["context"] = 0
        else:
            payload["user"] = self.user_payload(user_id, who.names)
            payload["channel"] = {"id": str(channel_id), "type": 1, "recipients": [self.user_payload(user_id, who.names)]}
            payload["context"] = 1
        if message is not None:
            payload["message"] = message
        self.token_channels[payload["token"]] = channel_id
        return payload

    def message_payload(self, message_id: int, channel_id: int, body: dict[str, Any], files: dict[str, bytes]) -> dict:
        attachments = [
            {"id": str(next(self.ids)), "filename": name, "size": len(data),
             "url": f"https://cdn.invalid/attachments/{name}", "proxy_url": f"https://cdn.invalid/attachments/{name}"}
            for name, data in files.items()
        ]
        return {
            "id": str(message_id), "channel_id": str(channel_id), "type": 20, "content": body.get("content") or "",
            "author": self.bot_user_payload(), "embeds": body.get("embeds") or [], "attachments": attachments,
            "components": body.get("components") or [], "timestamp": dt.datetime.now(dt.UTC).isoformat(),
            "edited_timestamp": None, "tts": False, "mention_everyone": False, "mentions": [], "mention_roles": [],
            "pinned": False, "flags": body.get("flags") or 0,
        }

    # ----------------------------------------------------------------- the fake REST edge
    def record(self, kind: str, body: dict[str, Any], files: dict[str, bytes], message_id: int | None) -> None:
        self.replies.append(Reply(
            command=self.current_command,
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

    def store_message(self, token: str, body: dict[str, Any], files: dict[str, bytes], message_id: int | None = None) -> dict:
        message_id = message_id or next(self.ids)
        channel_id = self.token_channels.get(token, self.default_channel)
        payload = self.message_payload(message_id, channel_id, body, files)
        self.messages[message_id] = _Message(message_id, channel_id, payload)
        return payload

    def handle_http(self, method: str, path: str, webhook_id: Any, token: str | None, body: dict[str, Any],
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
                self.modal = data
                data = {**data, "content": f"Form: {data.get('title', '')} (fill it in with :submit FIELD=VALUE)"}
            if kind_code in (4, 5):
                message = self.store_message(token, data, files)
                self.tokens[token] = int(message["id"])
                interaction["response_message_id"] = message["id"]
                if kind_code == 4:
                    resource["message"] = message
            elif kind_code in (6, 7) and self.clicked_message_id is not None:
                message_id = self.clicked_message_id
                self.tokens[token] = message_id
                if kind_code == 7:
                    merged = {**self.messages[message_id].payload, **data}
                    resource["message"] = self.store_message(token, merged, files or {}, message_id)
            self.record(kind, data, files, self.tokens.get(token))
            return {"interaction": interaction, "resource": resource}
        original = "/messages/@original" in path
        target_id: int | None = None
        if "/messages/" in path:
            last = path.rsplit("/", 1)[1]
            target_id = self.tokens.get(token) if original else (int(last) if last.isdigit() else None)
        if method == "POST":  # follow-up
            message = self.store_message(token, body, files)
            self.record("followup", body, files, int(message["id"]))
            return message
        if method == "PATCH" and target_id is not None and target_id in self.messages:
            old = self.messages[target_id].payload
            merged = {**old, **{k: v for k, v in body.items() if v is not None}}
            message = self.store_message(token, merged, files, target_id)
            self.record("edit", {**body, "flags": old.get("flags")}, files, target_id)
            return message
        if method == "GET" and target_id is not None and target_id in self.messages:
            return self.messages[target_id].payload
        if method == "DELETE" and target_id is not None:
            self.messages.pop(target_id, None)
            self.record("delete", {}, {}, target_id)
            return None
        raise discord.NotFound(_FakeResponse(404), {"message": "Unknown Message", "code": 10008})

    def message_with_component(self, custom_id: str) -> _Message | None:
        for message in sorted(self.messages.values(), key=lambda m: m.id, reverse=True):
            if any(c["custom_id"] == custom_id for c in _flatten_components(message.payload.get("components", []))):
                return message
        return None
