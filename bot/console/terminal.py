"""The console's terminal front end: `python -m bot console` reads lines from stdin and prints each reply,
readable for a person or as one JSON object per line (`--json`) for scripts.
"""

from __future__ import annotations

import asyncio
import json

from bot.config import Settings
from bot.console.interaction import Reply
from bot.console.session import ConsoleSession


def render_human(reply: Reply) -> str:
    """A terminal rendering of one reply: readable, with the structure of the Discord embed."""
    lines: list[str] = []
    tag = {"defer": "… thinking", "autocomplete": "autocomplete", "console": "console", "client": "discord"}.get(reply.kind)
    head = f"[{reply.command}]" + (f" ({tag})" if tag else "") + (" [only you]" if reply.ephemeral else "")
    lines.append(head)
    if reply.content:
        lines += ["  " + line for line in reply.content.splitlines()]
    for embed in reply.embeds:
        if embed.get("title"):
            lines.append(f"  ┌─ {embed['title']}")
        for line in (embed.get("description") or "").splitlines():
            lines.append(f"  │ {line}")
        for f in embed.get("fields", []):
            lines.append(f"  │ ▸ {f['name']}")
            lines += [f"  │   {line}" for line in f["value"].splitlines()]
        if embed.get("image"):
            lines.append(f"  │ [image: {embed['image']}]")
        if embed.get("footer"):
            lines.append(f"  └─ {embed['footer']}")
    for name in reply.files:
        lines.append(f"  📎 {name} ({len(reply.file_data.get(name, b''))} bytes)")
    for c in reply.components:
        if c["type"] == "select":
            lines.append(f"  [select {c['custom_id']}]")
            for o in c.get("options", []):
                detail = f" — {o['description']}" if o.get("description") else ""
                lines.append(f"    ◦ {o['label']}{detail}  →  {o['value']}")
        elif c["type"] == "text_input":
            lines.append(f"  [field {c['custom_id']}] {c.get('label') or ''}")
        else:
            state = " (disabled)" if c.get("disabled") else ""
            lines.append(f"  [button {c['custom_id']}] {c.get('label') or ''}{state}")
    for choice in reply.choices:
        lines.append(f"  • {choice.get('name')}  →  {choice.get('value')}")
    return "\n".join(lines)


async def run_console(settings: Settings, *, as_json: bool, user: int | None, channel: int | None,
                      guild: int | None, stdin, stdout, banner: str | None = None) -> int:
    async with ConsoleSession.opened(settings) as session:
        if user:
            session.user_id = user
        if channel:
            session.channel_id = channel
        if guild is not None:
            session.guild_id = guild or None
        interactive = not as_json and stdin.isatty()
        if banner and not as_json:
            print(banner, file=stdout, flush=True)
        loop = asyncio.get_running_loop()
        while True:
            if interactive:
                print("> ", end="", file=stdout, flush=True)
            line = await loop.run_in_executor(None, stdin.readline)
            if not line:
                break
            for reply in await session.send(line):
                if as_json:
                    print(json.dumps(reply.to_json(), ensure_ascii=False), file=stdout, flush=True)
                else:
                    print(render_human(reply), file=stdout, flush=True)
    return 0
