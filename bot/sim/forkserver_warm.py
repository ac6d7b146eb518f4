"""Imported only by the simulation pool's forkserver (bot.sim.pool), never by the bot itself.

Importing it warms numpy, the engine and the chart's fonts once, in the forkserver, so every
worker forked from it starts warm and shares those pages copy-on-write with its siblings. What it loaded
is then frozen out of the garbage collector (bot.sim.worker.freeze_warm), so no worker ever walks it.
"""

from __future__ import annotations

import contextlib

import bot.sim.compute  # noqa: F401 - what worker.compute imports on a worker's first request
from bot.sim.worker import freeze_warm, warm_up

with contextlib.suppress(Exception):  # the forkserver must start regardless; a cold worker still answers
    warm_up()
freeze_warm()
