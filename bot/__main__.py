"""`python -m bot [run | console | lookup | import | game | sim]`.

With no subcommand the bot runs: it connects to Discord when DISCORD_TOKEN is set, and otherwise
opens the offline console on the embedded data.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import logging
import os
import signal
import sys
import time

from bot.config import Settings, load_settings
from bot.errors import ConfigError
from bot.logging_setup import configure_logging
from bot.masking import url_secrets
from bot.storage.base import StorageError

log = logging.getLogger("cogitator")

OFFLINE_BANNER = "Cogitator offline console (no DISCORD_TOKEN set) on the embedded data — type /help, Ctrl-D to quit."

# Feature packages that contribute subcommands: each module exposes add_subcommands(subparsers).
_CLI_MODULES = ("bot.catalog.cli", "bot.games.cli", "bot.leagues.cli", "bot.armies.cli", "bot.points.cli", "bot.sim.cli",
                "bot.ops_cli", "bot.storage.cli")


def _ids(text: str) -> list[int]:
    try:
        ids = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated shard ids, got {text!r}") from None
    if not ids or any(i < 0 for i in ids):
        raise argparse.ArgumentTypeError("shard ids are non-negative integers")
    return ids


_INIT_HELP = "make a new state database over an empty (0-byte) file, which is otherwise refused"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bot", description="Cogitator, a Warhammer 40,000 Discord bot.")
    sub = parser.add_subparsers(dest="command")

    run = sub.add_parser("run", help="connect to Discord (or open the console when DISCORD_TOKEN is unset)")
    run.add_argument("--shard-ids", type=_ids, help="comma-separated shard ids this process runs, e.g. 0,1")
    run.add_argument("--shard-count", type=int, help="total number of shards across all processes")
    run.add_argument("--init", action="store_true", help=_INIT_HELP)
    run.set_defaults(func=cmd_run)

    console = sub.add_parser("console", help="answer slash commands typed on standard input, offline")
    console.add_argument("--json", action="store_true", help="print one JSON line per reply")
    console.add_argument("--user", type=int, help="the user id typing (default 111)")
    console.add_argument("--channel", type=int, help="the channel id (default 1001)")
    console.add_argument("--guild", type=int, help="the guild id (default 501; 0 for direct messages)")
    console.add_argument("--init", action="store_true", help=_INIT_HELP)
    console.set_defaults(func=cmd_console)

    for name in _CLI_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as error:
            if error.name is None or not name.startswith(error.name):
                raise
            continue
        module.add_subcommands(sub)
    return parser


def _quiet_console_logs() -> None:
    """The console shares the terminal with its user: only warnings, unless a level was asked for."""
    if "COGITATOR_LOG_LEVEL" not in os.environ:
        logging.getLogger().setLevel(logging.WARNING)


def _check_storage(settings: Settings, init: bool = False) -> int | None:
    """Start-up check of the state database (bot.storage.check): None when usable, else exit code 2
    after one line on stderr naming the path and the cause."""
    from bot.storage.check import StorageError, check_postgres, check_state_database

    try:
        if settings.database_url:
            check_postgres(settings.database_url)
        else:
            check_state_database(settings.db_path, init=init)
    except StorageError as error:
        print(f"cogitator: {error}", file=sys.stderr)
        return 2
    return None


def cmd_console(args: argparse.Namespace, settings: Settings) -> int:
    from bot.console.terminal import run_console

    if (code := _check_storage(settings, getattr(args, "init", False))) is not None:
        return code
    _quiet_console_logs()
    return asyncio.run(run_console(
        settings, as_json=args.json, user=args.user, channel=args.channel, guild=args.guild,
        stdin=sys.stdin, stdout=sys.stdout, banner=None if args.json else OFFLINE_BANNER,
    ))


def cmd_run(args: argparse.Namespace, settings: Settings) -> int:
    if (code := _check_storage(settings, getattr(args, "init", False))) is not None:
        return code
    if not settings.token:
        from bot.console.terminal import run_console

        _quiet_console_logs()
        return asyncio.run(run_console(settings, as_json=False, user=None, channel=None, guild=None,
                                       stdin=sys.stdin, stdout=sys.stdout, banner=OFFLINE_BANNER))
    import aiohttp
    import discord

    try:
        return asyncio.run(_run_bot(settings, getattr(args, "shard_ids", None), getattr(args, "shard_count", None)))
    except discord.LoginFailure:
        print("cogitator: Discord rejected DISCORD_TOKEN; reset it in the Developer Portal (Bot → Reset Token)",
              file=sys.stderr)
        return 2
    except discord.PrivilegedIntentsRequired:
        print("cogitator: Discord asks for a privileged intent this bot does not use; check the Bot page",
              file=sys.stderr)
        return 2
    except (aiohttp.ClientError, OSError, discord.GatewayNotFound) as error:
        print(f"cogitator: cannot reach Discord: {error}", file=sys.stderr)
        return 1


async def _warm_catalog(bot) -> None:  # noqa: ANN001 - CogitatorBot, imported lazily
    """Open the rules catalog before connecting, in a thread.

    Opened lazily, the first lookup after every (re)start would load it inside Discord's 3-second
    window (measured ~0.7 s idle, ~1.8 s under load with the full catalog; a first build takes
    longer) while blocking the event loop. A failure only logs: lookups retry on use.
    """
    started = time.perf_counter()
    try:
        await asyncio.to_thread(lambda: bot.services.catalog)
    except Exception:
        log.warning("catalog could not be opened at start-up; lookups will retry", exc_info=True)
        return
    log.info("catalog loaded", extra={"seconds": round(time.perf_counter() - started, 2)})


async def _warm_simulator(bot) -> None:  # noqa: ANN001 - CogitatorBot, imported lazily
    """Start and warm the simulation and army-list worker processes before connecting, in a thread, so the
    first /sim or list does not pay for starting them (~1-3 s). A failure only logs: the first request retries."""
    started = time.perf_counter()
    try:
        await asyncio.to_thread(bot.services.simulation.start)
        await asyncio.to_thread(bot.services.army_reader.start)
    except Exception:
        log.warning("simulation workers could not be started; /sim will retry", exc_info=True)
        return
    log.info("simulation workers started", extra={"workers": bot.settings.sim_workers,
                                                  "seconds": round(time.perf_counter() - started, 2)})


async def _run_bot(settings: Settings, shard_ids: list[int] | None, shard_count: int | None) -> int:
    from bot.client import CogitatorBot
    from bot.endpoints import apply_endpoints

    apply_endpoints()  # test hook: env-only Discord base URLs (see bot/endpoints.py); no-op in production
    if shard_ids and not shard_count:
        raise ConfigError("--shard-ids needs --shard-count")
    if shard_ids and shard_count and max(shard_ids) >= shard_count:
        raise ConfigError("every shard id must be smaller than --shard-count")
    from bot.background import BACKGROUND_TASK_PREFIX
    from bot.ops.sdnotify import Notifier

    notifier = Notifier.from_environment(os.environ)  # before any worker process starts: they must not inherit it
    if notifier.watchdog_s:
        import faulthandler

        faulthandler.enable()  # the watchdog's SIGABRT prints every thread's stack: what hung the loop
    bot = CogitatorBot(settings, sync_on_start=settings.sync_commands, shard_ids=shard_ids, shard_count=shard_count)
    bot.notifier = notifier
    # Named as a background task: the bot's close() cancels it with the others.
    watchdog = asyncio.create_task(notifier.watchdog_forever(), name=f"{BACKGROUND_TASK_PREFIX}watchdog")
    loop = asyncio.get_running_loop()
    stopping = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stopping.set)
    await asyncio.gather(_warm_catalog(bot), _warm_simulator(bot))
    if stopping.is_set():  # stopped while loading: nothing is connected yet
        watchdog.cancel()
        bot.services.close()
        log.info("stopped")
        return 0
    async with bot:
        runner = asyncio.create_task(bot.start(settings.token))
        stopper = asyncio.create_task(stopping.wait())
        done, _ = await asyncio.wait({runner, stopper}, return_when=asyncio.FIRST_COMPLETED)
        if stopper in done:
            log.info("shutting down on signal")
            notifier.stopping()
            await bot.close()
        with contextlib.suppress(asyncio.CancelledError):
            await runner
        stopper.cancel()
    log.info("stopped")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        settings = load_settings()
    except ConfigError as error:
        print(f"cogitator: configuration error: {error}", file=sys.stderr)
        return 2
    configure_logging(settings.log_level, secrets=[settings.token or "", *url_secrets(settings.database_url)])
    func = getattr(args, "func", cmd_run)
    try:
        return func(args, settings)
    except ConfigError as error:
        print(f"cogitator: configuration error: {error}", file=sys.stderr)
        return 2
    except StorageError as error:
        print(f"cogitator: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `python -m bot lookup ... | head`: the reader left; stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    sys.exit(main())
