"""JSON shapes of Discord API v10 objects, as the fake sends them to the bot.

Only what discord.py reads is filled in, but every field it indexes without `.get` is present, so a
payload the real library cannot parse fails here the same way it would against Discord.
"""

from __future__ import annotations

import base64
import datetime as dt
import itertools
from dataclasses import dataclass, field
from typing import Any

DISCORD_EPOCH_MS = 1_420_070_400_000
EPHEMERAL = 1 << 6
LOADING = 1 << 7

_counter = itertools.count(1)


def snowflake(worker: int = 1) -> int:
    """A fresh, increasing snowflake (timestamp part from the wall clock, so ids sort by time)."""
    ms = int(dt.datetime.now(dt.UTC).timestamp() * 1000) - DISCORD_EPOCH_MS
    return (ms << 22) | ((worker & 0x1F) << 17) | (next(_counter) & 0x1FFFF)


def shard_of(guild_id: int, shard_count: int) -> int:
    """Discord's routing rule: a guild's events go to shard (guild_id >> 22) % shard_count."""
    return (guild_id >> 22) % shard_count


def fake_token(application_id: int) -> str:
    """A well-formed bot token (base64 user id . timestamp . hmac) that only the fake accepts."""
    first = base64.b64encode(str(application_id).encode()).decode().rstrip("=")
    return f"{first}.GfAkE1.{'x' * 20}fake-discord-token-{'y' * 12}"


def user(user_id: int, name: str, *, bot: bool = False) -> dict[str, Any]:
    return {"id": str(user_id), "username": name.lower()[:32], "discriminator": "0", "global_name": name,
            "avatar": None, "bot": bot, "public_flags": 0, "flags": 0}


@dataclass
class Guild:
    id: int
    name: str
    channel_id: int
    owner_id: int

    def create_payload(self) -> dict[str, Any]:
        """The GUILD_CREATE body for a guild the bot is in, with one text channel."""
        everyone = {"id": str(self.id), "name": "@everyone", "permissions": "1071698660929", "position": 0,
                    "color": 0, "hoist": False, "managed": False, "mentionable": False, "flags": 0}
        channel = {"id": str(self.channel_id), "type": 0, "name": "battle-report", "position": 0,
                   "guild_id": str(self.id), "permission_overwrites": [], "nsfw": False, "parent_id": None,
                   "topic": None, "last_message_id": None, "rate_limit_per_user": 0}
        return {
            "id": str(self.id), "name": self.name, "icon": None, "splash": None, "discovery_splash": None,
            "owner_id": str(self.owner_id), "afk_channel_id": None, "afk_timeout": 300, "verification_level": 0,
            "default_message_notifications": 0, "explicit_content_filter": 0, "roles": [everyone], "emojis": [],
            "stickers": [], "features": [], "mfa_level": 0, "system_channel_id": None, "system_channel_flags": 0,
            "rules_channel_id": None, "vanity_url_code": None, "description": None, "banner": None,
            "premium_tier": 0, "premium_subscription_count": 0, "preferred_locale": "en-US",
            "public_updates_channel_id": None, "nsfw_level": 0, "premium_progress_bar_enabled": False,
            "joined_at": "2026-01-01T00:00:00+00:00", "large": False, "unavailable": False, "member_count": 3,
            "voice_states": [], "members": [], "channels": [channel], "threads": [], "presences": [],
            "stage_instances": [], "guild_scheduled_events": [], "soundboard_sounds": [],
        }


# Permissions of an ordinary member: read/send/embed/attach, use slash commands.
MEMBER_PERMISSIONS = (1 << 10) | (1 << 11) | (1 << 14) | (1 << 15) | (1 << 16) | (1 << 6) | (1 << 31)
MANAGE_GUILD = 1 << 5
MANAGE_CHANNELS = 1 << 4


@dataclass
class Member:
    id: int
    name: str
    permissions: int = MEMBER_PERMISSIONS
    roles: list[int] = field(default_factory=list)

    def payload(self, *, with_user: bool = True) -> dict[str, Any]:
        data: dict[str, Any] = {"roles": [str(r) for r in self.roles], "joined_at": "2026-01-01T00:00:00+00:00",
                                "deaf": False, "mute": False, "flags": 0, "nick": None, "avatar": None,
                                "pending": False, "permissions": str(self.permissions)}
        if with_user:
            data["user"] = user(self.id, self.name)
        return data


def message(message_id: int, channel_id: int, author: dict[str, Any], body: dict[str, Any],
            attachments: dict[str, bytes], *, interaction_id: int | None = None, base_url: str = "") -> dict[str, Any]:
    """A message object for a response or follow-up the bot created (type 20: chat input command reply)."""
    atts = [
        {"id": str(snowflake()), "filename": name, "size": len(data), "content_type": _content_type(name),
         "url": f"{base_url}/attachments/{message_id}/{name}", "proxy_url": f"{base_url}/attachments/{message_id}/{name}"}
        for name, data in attachments.items()
    ]
    flags = int(body.get("flags") or 0)
    data = {
        "id": str(message_id), "channel_id": str(channel_id), "type": 20, "content": body.get("content") or "",
        "author": author, "embeds": body.get("embeds") or [], "attachments": atts,
        "components": body.get("components") or [], "timestamp": dt.datetime.now(dt.UTC).isoformat(),
        "edited_timestamp": None, "tts": False, "mention_everyone": False, "mentions": [], "mention_roles": [],
        "pinned": False, "flags": flags, "webhook_id": author["id"], "application_id": author["id"],
    }
    if interaction_id is not None:
        data["interaction_metadata"] = {"id": str(interaction_id), "type": 2, "user": author,
                                        "authorizing_integration_owners": {}}
    return data


def _content_type(name: str) -> str:
    lower = name.lower()
    if lower.endswith(".png"):
        return "image/png"
    if lower.endswith(".json"):
        return "application/json"
    if lower.endswith(".txt"):
        return "text/plain; charset=utf-8"
    return "application/octet-stream"


def is_png(data: bytes) -> bool:
    return data.startswith(b"\x89PNG\r\n\x1a\n") and b"IEND" in data[-16:]
