"""The offline console: drives the bot's real CommandTree with locally built interactions.

lines.py parses a typed line as the Discord client would; interaction.py is the fake Discord (interaction
payloads in, REST answers out, replies recorded); session.py runs the bot and one line at a time;
terminal.py is `python -m bot console`.
"""
