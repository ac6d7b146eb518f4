"""Another OS process on the same state database, for the live-board tests: it commits a change or revokes
a game's links with its own store, as another shard or bot process would.

    python -m tests.web.other_process vp_set <db> <channel_id> <user_id> <vp>
    python -m tests.web.other_process revoke <db> <channel_id>
    python -m tests.web.other_process rounds <db> <channel_id> <user_id> <round>   (/game next until then)
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def main(argv: list[str]) -> int:
    what, db, *numbers = argv
    ids = [int(n) for n in numbers]
    if what == "vp_set":
        from bot.games import commands
        from bot.games.store import GameStore

        store = GameStore(db)
        try:
            store.act(ids[0], commands.vp_set, ids[1], ids[2])
        finally:
            store.close()
    elif what == "rounds":
        from bot.games import commands
        from bot.games.store import GameStore

        store = GameStore(db)
        try:
            while store.act(ids[0], commands.next_phase, ids[1]).state.round < ids[2]:
                pass
        finally:
            store.close()
    elif what == "revoke":
        from bot.web.tokens import OverlayTokens

        tokens = OverlayTokens(db)
        try:
            tokens.revoke(ids[0])
        finally:
            tokens.close()
    else:
        return 2
    print(os.getpid())
    return 0


async def run(*args: object) -> int:
    """Runs one command in a new Python process; returns that process's id (never this one's)."""
    child = await asyncio.create_subprocess_exec(sys.executable, "-m", "tests.web.other_process",
                                                 *map(str, args), cwd=ROOT, stdout=asyncio.subprocess.PIPE,
                                                 stderr=asyncio.subprocess.PIPE)
    out, err = await child.communicate()
    assert child.returncode == 0, err.decode()
    pid = int(out.decode().strip())
    assert pid != os.getpid()
    return pid


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
