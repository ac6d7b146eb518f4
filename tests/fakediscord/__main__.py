"""Run the fake Discord on its own, for poking at a bot by hand.

    .venv/bin/python -m tests.fakediscord
    # then, in another terminal, paste the printed environment and run: python -m bot run
"""

from __future__ import annotations

import time

from tests.fakediscord.server import FakeDiscord


def main() -> None:
    fake = FakeDiscord().start()
    for key, value in fake.env().items():
        print(f"export {key}={value}")
    print("# fake Discord listening; Ctrl-C to stop", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        fake.stop()


if __name__ == "__main__":
    main()
