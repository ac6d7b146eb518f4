"""Seeded property-based fuzz of console lines through the real CommandTree (issue 9, item 6).

Every command and option comes from the tree at test time. Values are hostile (huge and negative numbers,
boundaries, RTL and zero-width marks, lone surrogates, 10,000-character strings, mentions, Markdown) or
real (the bot's own autocomplete answers, the army-list fixtures). Each reply must show no internal error,
be unable to ping, and fit every Discord size limit; after each example the channel's games verify (the
stored snapshot equals the fold of the event log, as `game verify` checks).

Seeded: `derandomize=True` and no example database, so CI runs the same examples every time. Bounded:
about a minute on two cores; `COGITATOR_FUZZ_EXAMPLES=10` runs ten times as many locally.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import discord
import hypothesis
from discord import app_commands
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.foundation.test_meta import readme_commands
from tests.fuzz import hostile
from tests.fuzz.harness import FIXTURES, OUTSIDER, PLAYERS, Fuzz, Place, examples

START_11E = "/game start opponent:222 faction:Leagues of Votann opponent_faction:Orks edition:11e"
START_10E = "/game start opponent:222 faction:Orks opponent_faction:Leagues of Votann edition:10e"
ARMIES_11E = [(111, f"/army import file:@{FIXTURES / 'votann_gw_app.txt'}"),
              (222, f"/army import file:@{FIXTURES / 'orks_gw_wtc.txt'}")]
ARMIES_10E = [(111, f"/army import file:@{FIXTURES / 'orks_listforge.txt'}"),
              (222, f"/army import file:@{FIXTURES / 'votann_battlescribe.rosz'}")]
DEEP = [(111, "/game rolloff winner:111"), (111, "/clock start minutes:5"), (111, "/game next"), (111, "/game next"),
        (222, "/cp gain amount:1"), (111, "/strat use name:Command Re-roll"), (111, "/game next")]
LONG_NAMES = ["@everyone ``` **Boyz**", "\u202eKâhl\u200b", "<@111> <@&1> [x](https://example.invalid)", "W" * 80,
              "# Ork \ufeff Nob", "||spoiler|| ~~s~~ `x`"]


def _long_game() -> list[tuple[int, str]]:
    """A long game: free-text units with hostile names (no lists loaded), stratagems, VP and most of five
    battle rounds, so logs, scores, boards and summaries are as big as they get."""
    lines: list[tuple[int, str]] = [(111, START_11E), (111, "/game rolloff winner:111")]
    for i in range(45):
        user = PLAYERS[i % 2]
        name = f"{LONG_NAMES[i % len(LONG_NAMES)]} {i}"[:80]
        step = [f"/judgement add unit:{name} force:true", f"/shock unit:{name}", f"/strat use name:{name} cost:0 force:true",
                f"/vp secondary amount:1 card:{name}", "/vp add amount:1"][i % 5]
        lines += [(user, step), (user, "/game next")]
    return lines


# Where an example starts: nothing, a game, a game with both armies, or a game some turns in.
PRELUDES: dict[str, list[tuple[int, str]]] = {
    "nothing": [],
    "game 11e": [(111, START_11E)],
    "armies 11e": [(111, START_11E), *ARMIES_11E],
    "armies 10e": [(111, START_10E), *ARMIES_10E],
    "deep 11e": [(111, START_11E), *ARMIES_11E, *DEEP],
    "deep 10e": [(111, START_10E), *ARMIES_10E, *DEEP],
    "drawn armies 11e": [(111, START_11E)],  # then both players import a drawn list (see _prelude)
    "drawn armies 10e": [(111, START_10E)],
    "long 11e": _long_game(),
}
SUPPORTED_TYPES = {discord.AppCommandOptionType.string, discord.AppCommandOptionType.integer,
                   discord.AppCommandOptionType.number, discord.AppCommandOptionType.boolean,
                   discord.AppCommandOptionType.user, discord.AppCommandOptionType.mentionable,
                   discord.AppCommandOptionType.channel, discord.AppCommandOptionType.attachment}


def fuzz_settings(n: int, *, seed: int = 0) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Seeded and bounded: the same examples on every run (fixed seed, no example database), n of them
    times COGITATOR_FUZZ_EXAMPLES; COGITATOR_FUZZ_SEED picks another fixed seed to explore locally."""
    chosen = settings(max_examples=examples(n), database=None, deadline=None, print_blob=True,
                      phases=(Phase.explicit, Phase.generate, Phase.shrink), suppress_health_check=list(HealthCheck))
    fixed = hypothesis.seed(int(os.environ.get("COGITATOR_FUZZ_SEED", "0") or 0) * 1000 + seed)
    return lambda test: fixed(chosen(test))


async def _prelude(fuzz: Fuzz, place: Place, name: str, data: st.DataObject) -> None:
    for user, line in PRELUDES[name]:
        await fuzz.send(place, line, user=user)
    if name.startswith("drawn armies"):
        for user in PLAYERS:
            await fuzz.send(place, f"/army import file:@{fuzz.drawn_list(data)}", user=user)


def test_the_fuzz_enumerates_every_command_and_option(fuzz: Fuzz) -> None:
    """A meta check: what the fuzz draws from is the whole command surface the README documents."""
    names = {c.qualified_name for c in fuzz.leaves}
    assert names == readme_commands() and len(names) >= 50, sorted(names ^ readme_commands())
    for command in fuzz.leaves:
        for param in command.parameters:
            assert param.type in SUPPORTED_TYPES, f"{command.qualified_name} {param.display_name}: {param.type}"


def _command_property(fuzz: Fuzz, command: app_commands.Command, seed: int):
    """The property for one command: from a drawn starting point, one line with drawn options."""
    restricted = any(getattr(node, "default_permissions", None) for node in (command, command.parent) if node)

    @fuzz_settings(4, seed=seed)
    @given(data=st.data())
    def one_command(data: st.DataObject) -> None:
        place = fuzz.place()
        prelude = data.draw(st.sampled_from(["armies 11e", "drawn armies 11e", "deep 11e", "armies 10e",
                                             "drawn armies 10e", "game 11e", "nothing"]), label="prelude")

        async def run() -> None:
            await _prelude(fuzz, place, prelude, data)
            user = data.draw(st.sampled_from([*PLAYERS, *PLAYERS, OUTSIDER]), label="user")
            if data.draw(st.integers(0, 3), label="server manager?") > (0 if restricted else 2):
                fuzz.session.set_permissions(user, "manage_guild", "manage_channels")
            line = await fuzz.draw_line(data, place, command, user)
            fuzz.check_understood(place, await fuzz.send(place, line, user=user))

        fuzz.run(run())
        fuzz.verify_state(place)

    return one_command


def test_every_command_with_hostile_options(fuzz: Fuzz) -> None:
    """Each command of the tree in turn, with drawn options, from a drawn starting point."""
    for command in fuzz.leaves:
        for seed in range(3):  # another fixed seed while the client refused every line (a required choice, say)
            _command_property(fuzz, command, seed)()
            if command.qualified_name in fuzz.used:
                break
    # Every command was answered by the bot at least once (not only refused by the Discord client).
    missing = sorted({c.qualified_name for c in fuzz.leaves} - fuzz.used)
    assert missing == [], f"never reached the bot: {missing}"


def test_autocomplete_with_hostile_input(fuzz: Fuzz) -> None:
    """Every autocomplete callback, with hostile partial text, in a game with both armies."""
    targets = [(c, p) for c in fuzz.leaves for p in c.parameters if p.autocomplete]
    assert targets

    @fuzz_settings(40)
    @given(data=st.data())
    def complete(data: st.DataObject) -> None:
        place = fuzz.place()
        command, param = data.draw(st.sampled_from(targets), label="option")
        prelude = data.draw(st.sampled_from(["armies 11e", "drawn armies 11e", "armies 10e", "nothing"]),
                            label="prelude")
        partial = data.draw(hostile.hostile_text(), label="partial")

        async def run() -> None:
            await _prelude(fuzz, place, prelude, data)
            line = f"/{command.qualified_name} {param.display_name}:{partial}"
            user = data.draw(st.sampled_from([*PLAYERS, OUTSIDER]), label="user")
            await fuzz.complete(place, line, param.display_name, user=user)

        fuzz.run(run())

    complete()


STEPS = ["command"] * 8 + ["click"] * 3 + ["autocomplete"] * 2 + ["submit", "name", "as", "manager", "restart"]


def test_sequences_of_commands_reach_deep_states(fuzz: Fuzz) -> None:
    """Several commands in one channel by two players (and an outsider): buttons, forms, restarts, names."""

    @fuzz_settings(25)
    @given(data=st.data())
    def sequence(data: st.DataObject) -> None:
        dm = data.draw(st.integers(0, 9), label="dm?") == 0
        place = fuzz.place(dm=dm)
        prelude = data.draw(st.sampled_from(list(PRELUDES)), label="prelude")

        async def run() -> None:
            await _prelude(fuzz, place, prelude, data)
            user = PLAYERS[0]
            for _ in range(data.draw(st.integers(3, 10), label="steps")):
                step = data.draw(st.sampled_from(STEPS), label="step")
                if step == "command":
                    command = data.draw(st.sampled_from(fuzz.leaves), label="command")
                    line = await fuzz.draw_line(data, place, command, user)
                    fuzz.check_understood(place, await fuzz.send(place, line, user=user))
                elif step == "click":
                    controls = fuzz.on_screen(place)
                    if controls:
                        control = data.draw(st.sampled_from(controls), label="control")
                        values = None
                        if control["type"] == "select":
                            values = [data.draw(st.sampled_from([o["value"] for o in control["options"]]),
                                                label="value")]
                        await fuzz.click(place, control["custom_id"], values, user)
                elif step == "autocomplete":
                    command, param = data.draw(st.sampled_from(
                        [(c, p) for c in fuzz.leaves for p in c.parameters if p.autocomplete]), label="option")
                    partial = data.draw(hostile.hostile_text(), label="partial")
                    await fuzz.complete(place, f"/{command.qualified_name} {param.display_name}:{partial}",
                                        param.display_name, user=user)
                elif step == "submit":
                    if fuzz.session._modal is None:
                        await fuzz.send(place, "/army paste", user=user)
                    if fuzz.session._modal is not None:
                        text = data.draw(st.one_of(hostile.army_list(fuzz.army_texts), hostile.hostile_text(4000)),
                                         label="pasted")
                        await fuzz.submit(place, {"army:paste:text": text[:4000]}, user)
                elif step == "name":
                    # Discord's names are at most 32 characters of valid Unicode (no lone surrogates).
                    name = data.draw(hostile.hostile_text(32), label="name")[:32].encode("utf-8", "replace")
                    name = name.decode("utf-8").strip() or "x"
                    await fuzz.send(place, f":as {user}")
                    await fuzz.send(place, f":name {name}")
                elif step == "as":
                    user = data.draw(st.sampled_from([*PLAYERS, OUTSIDER]), label="user")
                elif step == "manager":
                    fuzz.session.set_permissions(user, "manage_guild", "manage_channels")
                elif step == "restart":
                    await fuzz.send(place, ":restart")

        fuzz.run(run())
        fuzz.verify_state(place)

    sequence()
