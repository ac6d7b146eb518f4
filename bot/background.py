"""The name prefix of the bot's background tasks.

Tasks a feature runs beyond one interaction (the live board's clock redraw, the data refresh) are named
with this prefix: the bot cancels them when it closes, and the offline console does not wait for them.
A base module, so the cogs that start such tasks and the client that ends them both import it downwards.
"""

BACKGROUND_TASK_PREFIX = "cogitator-background-"
