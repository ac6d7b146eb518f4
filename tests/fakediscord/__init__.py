"""A local fake of Discord's API v10 (REST + gateway + interaction webhooks) for end-to-end tests.

Test code only: never shipped or imported by the bot. See server.py for what it implements.
"""

from tests.fakediscord.server import FakeDiscord, FakeDiscordError, InteractionRecord, default_guilds

__all__ = ["FakeDiscord", "FakeDiscordError", "InteractionRecord", "default_guilds"]
