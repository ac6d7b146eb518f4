"""Storage health: the state database is checked before the bot serves anyone (bot.storage.check)."""
