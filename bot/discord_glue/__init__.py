"""The cogs' shared Discord glue, one floor below cogs/ (as python-discord keeps bot/utils/): replying,
acting on the game store, channel lookups and the autocompletes several cogs offer. No cog imports
another cog; what two cogs share lives here.
"""
