"""The fuzz harness: one console session on its own event loop, the checks every reply must pass, and
console lines drawn from the real CommandTree.

Nothing here knows the command list: commands, options, their types, ranges, choices and autocomplete
come from `session.tree` at test time, so a new command or option is fuzzed without touching this file.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import discord
from discord import app_commands
from hypothesis import strategies as st

from bot.console.interaction import APPLICATION_ID, Reply
from bot.console.lines import ATTACHMENT_MAX, ConsoleInputError
from bot.console.session import ConsoleSession
from tests.fakediscord.validate import choices_problems, message_problems, modal_problems
from tests.fuzz import hostile, hostile_lists

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "armies"
PLAYERS = (111, 222)
OUTSIDER = 333
INTERNAL_ERROR = "Something went wrong"
FILES_MAX = 10  # attachments per message
# The bot's "no such thing" answers (unit, datasheet, stratagem, mission, card, weapon).
NOT_FOUND = re.compile(r"No datasheet matches|^No match|No \S+ mission called|No \S+ stratagem called|"
                       r"is not a secondary card|is not in .{0,200}'s army list|has no unit called|has no weapon `", re.M)
ARMY_TEXTS = ["votann_gw_app.txt", "orks_gw_wtc.txt", "votann_newrecruit_wtc.txt", "orks_listforge.txt",
              "orks_newrecruit_simple.txt"]


def examples(default: int) -> int:
    """`COGITATOR_FUZZ_EXAMPLES` scales every fuzz test (default 1 = the CI size; 10 = ten times as many)."""
    factor = float(os.environ.get("COGITATOR_FUZZ_EXAMPLES", "1") or 1)
    return max(1, round(default * factor))


def leaf_commands(tree: app_commands.CommandTree) -> list[app_commands.Command]:
    return [c for c in tree.walk_commands() if isinstance(c, app_commands.Command)]


class _Records(logging.Handler):
    """Every WARNING or worse logged anywhere while the fuzz runs (an internal error logs its traceback)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def _is_failure(record: logging.LogRecord) -> bool:
    return record.levelno >= logging.ERROR or "could not deliver" in record.getMessage()


def _describe(record: logging.LogRecord) -> str:
    text = getattr(record, "traceback_text", None) or ""
    if not text and record.exc_info:
        text = logging.Formatter().formatException(record.exc_info)
    return f"{record.name}: {record.getMessage()}\n{text}"


def reply_problems(reply: Reply) -> list[str]:
    """Why this reply is a bug: an internal error, a possible ping, or a payload Discord would reject."""
    if reply.kind in ("console", "client"):  # the console's own notes and the Discord client's refusals
        return []
    body = reply.payload
    if reply.kind == "autocomplete":
        return choices_problems(body.get("choices"))
    if reply.kind == "modal":
        return modal_problems(body)
    problems: list[str] = []
    if reply.kind in ("response", "followup", "update", "edit"):
        problems += message_problems(body)
        mentions = body.get("allowed_mentions")
        # The bot's rule: user-controlled text may *show* '@everyone' or '<@id>', but nothing may ever ping.
        if mentions is None or mentions.get("parse") or mentions.get("users") or mentions.get("roles") \
                or mentions.get("replied_user"):
            problems.append(f"may ping: allowed_mentions={mentions!r}")
        if reply.kind in ("response", "followup") and not (body.get("content") or body.get("embeds") or reply.files
                                                           or body.get("components")):
            problems.append("an empty message (Discord refuses it)")
    if len(reply.files) > FILES_MAX:
        problems.append(f"{len(reply.files)} attachments (max {FILES_MAX})")
    problems += [f"attachment {name} is {len(data)} bytes" for name, data in reply.file_data.items()
                 if len(data) > ATTACHMENT_MAX]
    text = reply.text()
    if INTERNAL_ERROR in text:
        problems.append(f"internal error shown: {text[:300]!r}")
    if _has_surrogate(_all_text(body)):
        problems.append("a lone surrogate in the payload (not valid UTF-8; Discord rejects the request)")
    return problems


def _all_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "".join(_all_text(v) for v in value.values())
    if isinstance(value, list | tuple):
        return "".join(_all_text(v) for v in value)
    return ""


_SURROGATE = re.compile("[\ud800-\udfff]")


def _has_surrogate(text: str) -> bool:
    return bool(_SURROGATE.search(text))


def _outcome(replies: list[Reply]) -> str:
    """"done" when the bot answered publicly (the command did something), else "refused"."""
    return "done" if any(not r.ephemeral and r.kind in ("response", "followup") for r in replies) else "refused"


@dataclass
class Place:
    """Where one example runs: its own channel and guild, so examples do not share state."""

    channel: int
    guild: int | None
    lines: list[str] = field(default_factory=list)  # what was sent, for the failure report


class Fuzz:
    """A console session driven from synchronous hypothesis tests (one event loop for the whole module)."""

    def __init__(self, runner: asyncio.Runner, session: ConsoleSession, workdir: Path) -> None:
        self.runner = runner
        self.session = session
        self.workdir = workdir
        self.records = _Records()
        self.used: set[str] = set()  # qualified names of commands that reached the bot
        self.kinds: Counter[str] = Counter()  # reply kinds seen (how much reached the bot), for the summary
        self.outcomes: defaultdict[str, Counter[str]] = defaultdict(Counter)  # command -> done / refused
        self.lines = 0  # console lines sent (commands, clicks, forms, autocomplete), for the summary
        self._next_place = 0
        self.files = _attachment_files(workdir)
        self._offered: dict[str, str] = {}  # option -> the autocomplete value drawn for it (this line)
        self.offered_line = False
        self.army_texts = [(FIXTURES / name).read_text(encoding="utf-8") for name in ARMY_TEXTS]

    # ------------------------------------------------------------------ running
    def run(self, coro: Any) -> Any:
        return self.runner.run(coro)

    @property
    def leaves(self) -> list[app_commands.Command]:
        return leaf_commands(self.session.tree)

    def place(self, *, dm: bool = False) -> Place:
        """A fresh channel and guild, both players with default permissions and plain names, Alice acting."""
        self._next_place += 1
        s = self.session
        s.channel_id = 500_000 + self._next_place
        s.guild_id = None if dm else 900_000 + self._next_place
        s.user_id = PLAYERS[0]
        s.names = {111: "Alice", 222: "Bob", OUTSIDER: "Carol"}
        s.permissions.clear()
        s._modal = None  # a form left open by the previous example would change what this one draws
        del self.records.records[:]
        return Place(s.channel_id, s.guild_id)

    async def send(self, place: Place, line: str, *, user: int | None = None) -> list[Reply]:
        place.lines.append(f"[{user or self.session.user_id}] {line[:300]}")
        self.lines += 1
        replies = await self.session.send(line, user=user)
        self.kinds.update(r.kind + (" ephemeral" if r.ephemeral else "") for r in replies)
        self.check(place, replies)
        if replies and replies[0].kind not in ("client", "console"):
            self.used.add(replies[0].command)
            self.outcomes[replies[0].command][_outcome(replies)] += 1
        return replies

    async def click(self, place: Place, custom_id: str, values: list[str] | None, user: int) -> list[Reply]:
        place.lines.append(f"[{user}] click {custom_id} {values or ''}")
        self.lines += 1
        replies = await self.session.click(custom_id, values=values, user=user)
        self.kinds.update(f"{r.kind} (click)" for r in replies)
        self.check(place, replies)
        return replies

    async def submit(self, place: Place, fields: dict[str, str], user: int) -> list[Reply]:
        place.lines.append(f"[{user}] submit {({k: v[:80] for k, v in fields.items()})}")
        self.lines += 1
        replies = await self.session.submit(fields, user=user)
        self.kinds.update(f"{r.kind} (form)" for r in replies)
        self.check(place, replies)
        return replies

    async def complete(self, place: Place, line: str, focused: str, user: int | None = None) -> list[dict[str, Any]]:
        """The bot's autocomplete answer for `focused` on this partial line ([] when the client refuses it)."""
        place.lines.append(f"[{user or self.session.user_id}] complete {focused} on {line[:200]}")
        self.lines += 1
        try:
            choices = await self.session.autocomplete(line, focused, user=user)
        except ConsoleInputError:
            return []
        problems = choices_problems(choices)
        assert not problems, self._report(place, problems)
        self._check_logs(place)
        return choices

    # ------------------------------------------------------------------ checks
    def check(self, place: Place, replies: list[Reply]) -> None:
        problems = [f"{r.kind}: {p}" for r in replies for p in reply_problems(r)]
        assert not problems, self._report(place, problems)
        self._check_logs(place)

    def _check_logs(self, place: Place) -> None:
        failures = [_describe(r) for r in self.records.records if _is_failure(r)]
        assert not failures, self._report(place, failures)

    def verify_state(self, place: Place) -> None:
        """Every game of the channel: the stored snapshot equals the fold of its event log (`game verify`)."""
        games = self.session.bot.services.games
        assert games.verify(place.channel), self._report(place, ["game verify failed (active or latest game)"])
        for row in games.history(place.channel, limit=1000):
            assert games.verify_game(row["game_id"]), self._report(place, [f"game {row['game_id']} does not verify"])

    @staticmethod
    def _report(place: Place, problems: list[str]) -> str:
        return "\n".join(problems) + "\n-- lines of this example:\n" + "\n".join(place.lines[-25:])

    # ------------------------------------------------------------------ drawing console lines
    async def draw_line(self, data: st.DataObject, place: Place, command: app_commands.Command,
                        user: int | None = None) -> str:
        """`/qualified name opt:value ...`: required options always, optional ones sometimes.

        Most lines pass the Discord client's checks (types, ranges, lengths, choices), so they reach the bot
        with hostile text and boundary numbers; the rest may carry anything the client then refuses (one
        refused option refuses the line, and commands have up to 20 options)."""
        valid = data.draw(st.integers(0, 4), label="client-valid?") > 0
        self._offered = {}
        chosen = [p for p in command.parameters
                  if p.required or data.draw(st.integers(0, 2), label=f"{p.display_name}?") == 0]
        values: dict[str, str] = {}
        # Plain options first, then autocomplete ones in order, each completed with everything drawn before it
        # on the line (as a person fills the form: the choices then fit the other options).
        for param in sorted(chosen, key=lambda p: bool(p.autocomplete)):
            line_so_far = " ".join([f"/{command.qualified_name}", *(f"{k}:{v}" for k, v in values.items())])
            values[param.display_name] = await self.draw_value(data, place, command, param, line_so_far, valid=valid,
                                                               user=user)
        exact = [self._offered.get(p.display_name) == values[p.display_name] for p in chosen if p.autocomplete]
        # Every autocomplete option of the line holds exactly what the bot itself offered for it.
        self.offered_line = valid and bool(exact) and all(exact)
        return " ".join([f"/{command.qualified_name}", *(f"{p.display_name}:{values[p.display_name]}" for p in chosen)])

    def check_understood(self, place: Place, replies: list[Reply]) -> None:
        """A value the bot's own autocomplete offered must not be answered with "no such thing"."""
        if not self.offered_line:
            return
        said = "\n".join(r.text() for r in replies)
        match = NOT_FOUND.search(said)
        assert match is None, self._report(place, [f"the bot's own autocomplete choice was not understood: {said[:400]!r}"])

    async def draw_value(self, data: st.DataObject, place: Place, command: app_commands.Command,
                         param: app_commands.Parameter, line_so_far: str, *, valid: bool = True,
                         user: int | None = None) -> str:
        kind = param.type
        label = param.display_name
        if param.choices:
            names = st.sampled_from([c.name for c in param.choices] + [str(c.value) for c in param.choices])
            return data.draw(names if valid else st.one_of(names, hostile.hostile_text(40)), label=label)
        if kind is discord.AppCommandOptionType.integer:
            return data.draw(hostile.integer_text(param.min_value, param.max_value, valid=valid), label=label)
        if kind is discord.AppCommandOptionType.number:
            return data.draw(hostile.number_text(param.min_value, param.max_value, valid=valid), label=label)
        if kind is discord.AppCommandOptionType.boolean:
            return data.draw(hostile.BOOLEAN_TEXT if valid else hostile.ANY_BOOLEAN_TEXT, label=label)
        if kind in (discord.AppCommandOptionType.user, discord.AppCommandOptionType.mentionable):
            return data.draw(st.sampled_from(USER_TEXT if valid else [*USER_TEXT, "0", "abc"]), label=label)
        if kind is discord.AppCommandOptionType.channel:
            return data.draw(st.sampled_from([str(place.channel), "1", "<#1001>"]), label=label)
        if kind is discord.AppCommandOptionType.attachment:
            if data.draw(st.booleans(), label=f"{label} drawn list?"):
                return "@" + self.drawn_list(data)
            return "@" + data.draw(st.sampled_from(self.files), label=label)
        if kind is discord.AppCommandOptionType.string:
            return self._fit(param, await self._draw_text(data, place, param, line_so_far, user), valid)
        raise AssertionError(f"no fuzz strategy for option type {kind!r} ({command.qualified_name} {label}): add one")

    async def _draw_text(self, data: st.DataObject, place: Place, param: app_commands.Parameter, line_so_far: str,
                         user: int | None) -> str:
        label = param.display_name
        limit = int(param.max_value) if param.max_value is not None else None
        shaped = None if param.autocomplete else SHAPED.get(label)
        if shaped is not None and data.draw(st.integers(0, 3), label=f"{label} shaped?") > 0:
            return data.draw(st.one_of(shaped, shaped, shaped.flatmap(hostile.mutate)), label=label)
        if param.autocomplete and data.draw(st.integers(0, 3), label=f"{label} real?") > 0:
            partial = data.draw(st.one_of(st.sampled_from(["", "a", "bo", "oath", "#2", "de", "co"]),
                                          hostile.hostile_text(30)), label=f"{label} partial")
            choices = await self.complete(place, f"{line_so_far} {label}:{partial}", label, user=user)
            values = [str(c["value"]) for c in choices if str(c["value"]).strip()]
            if values:
                real = data.draw(st.sampled_from(values), label=f"{label} choice")
                self._offered[label] = real
                return data.draw(hostile.mutate(real), label=label)
        return data.draw(hostile.hostile_text(limit), label=label)

    def drawn_list(self, data: st.DataObject) -> str:
        """A real army export with hostile unit names (and absurd points or counts), as a file to attach."""
        text = data.draw(hostile.army_list(self.army_texts), label="army list")
        path = self.workdir / "drawn-list.txt"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        return str(path)

    @staticmethod
    def _fit(param: app_commands.Parameter, text: str, valid: bool) -> str:
        """Within the option's length limits when the line is to pass the client (the console strips values)."""
        if not valid:
            return text
        if param.max_value is not None:
            text = text[: int(param.max_value)]
        text = text.strip()
        if len(text) < int(param.min_value or 1):
            text = (text + "x" * int(param.min_value or 1))[: max(int(param.min_value or 1), len(text))]
        return text

    def on_screen(self, place: Place) -> list[dict[str, Any]]:
        """Every enabled button and select on the messages of this channel, newest message first."""
        from bot.console.interaction import _flatten_components

        found = []
        for message in sorted(self.session._messages.values(), key=lambda m: m.id, reverse=True):
            if message.channel_id != place.channel:
                continue
            for c in _flatten_components(message.payload.get("components", [])):
                if c["type"] in ("button", "select") and not c.get("disabled") and c.get("custom_id"):
                    found.append(c)
        return found


# Free-text options by name whose values have a shape (profiles, faction names): values of that shape make
# the bot do real work; an option not listed here gets hostile text only. Keyed by option name so a new
# command with the same kind of option is covered too.
SHAPED: dict[str, st.SearchStrategy[str]] = {
    "attacker": hostile.ATTACKER,
    "target": hostile.TARGET,
    "faction": hostile.FACTIONS,
    "opponent_faction": hostile.FACTIONS,
}
USER_TEXT = ["111", "222", "333", "<@222>", "<@!111>", str(APPLICATION_ID), "9223372036854775807"]


def _attachment_files(workdir: Path) -> list[str]:
    """Real army lists (each format) and hostile files for `attachment` options."""
    real = sorted(str(p) for p in FIXTURES.iterdir() if p.is_file())
    hostile_dir = workdir / "hostile-files"
    hostile_dir.mkdir(parents=True, exist_ok=True)
    contents = {
        "empty.txt": b"",
        "binary.bin": bytes(range(256)) * 64,
        "mentions.txt": ("@everyone <@&1> <@111> ```\n" * 50 + "\u202eBoyz\u200b\n").encode(),
        "one-long-line.txt": b"Boyz " * 40_000,
        "deep.json": b"[" * 50_000 + b"]" * 50_000,
        "bad-utf8.txt": b"++ Army Roster ++\n\xff\xfe\xed Boyz\n",
        "garbage.rosz": b"PK\x03\x04" + b"\x00" * 100,
        "garbage.ros": b"<?xml version='1.0'?><roster><forces><force>" * 200,
        "\u202egnp.txt": b"Orks\n1x Boyz\n",
    }
    # Issue 19's shapes: a real list padded to 4.8 MB of lines, deep nesting in every format, non-finite, huge
    # and overlong numbers where each format keeps its counts.
    for index, (name, data) in enumerate(hostile_lists.all_shapes()):
        contents[f"{index:02d}-{name}"] = data
    for name, data in contents.items():
        (hostile_dir / name).write_bytes(data)
    return real + sorted(str(hostile_dir / name) for name in contents)
