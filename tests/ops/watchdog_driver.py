"""A real process for tests/ops/test_watchdog.py: bot.ops.sdnotify's watchdog on an asyncio loop, as
`python -m bot run` starts it, plus a thread that keeps running (as the bot's worker threads do).

SIGUSR1 blocks the event loop itself (a time.sleep inside a callback on the loop) for BLOCK_S seconds. Before
and after the block it sends STATUS= lines through the same socket, so the test knows, without timing, which
notifications came while the loop was blocked. `python -m tests.ops.watchdog_driver BLOCK_S`.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
import time

from bot.ops.sdnotify import Notifier


def main(block_s: float) -> None:
    notifier = Notifier.from_environment(os.environ)
    assert "NOTIFY_SOCKET" not in os.environ, "removed, so child processes never notify in our name"
    busy = threading.Event()
    threading.Thread(target=lambda: busy.wait(3600), daemon=True).start()  # a thread that is not the loop

    async def run() -> None:
        loop = asyncio.get_running_loop()

        def block() -> None:
            notifier.send("STATUS=blocking")
            time.sleep(block_s)  # the loop hangs: no task of it runs meanwhile
            notifier.send("STATUS=unblocked")
        loop.add_signal_handler(signal.SIGUSR1, block)
        stop = asyncio.Event()
        loop.add_signal_handler(signal.SIGTERM, stop.set)
        watchdog = asyncio.create_task(notifier.watchdog_forever())
        notifier.ready()
        await stop.wait()
        notifier.stopping()
        watchdog.cancel()
    asyncio.run(run())


if __name__ == "__main__":
    main(float(sys.argv[1]))
