"""The project drawn from its own imports, with the standard library's `ast`: every module of bot/, cogs/
and engine/, every import in it (at the top, inside functions, under TYPE_CHECKING: all of them count),
and the floor each module lives on (FLOORS, recorded in docs/architecture.md).

A module may import its own room (the same package part, as long as there is no cycle) and rooms on lower
floors. Three things are counted as faults: import cycles, imports that run back up or sideways (to a
room on the same or a higher floor), and a cog importing another cog.

`python -m tests.foundation.layers [ROOT]` prints the counts and each fault for a checkout at ROOT.
"""

from __future__ import annotations

import ast
import fnmatch
import sys
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("bot", "cogs", "engine")

# Floors from the top down; a room is a list of module names and patterns (fnmatch, `*` spans dots). A module
# lives in the room that names it, else in the first room, from the top, with a pattern that matches it
# (so `bot.games.model` is in the game model, the rest of `bot.games` in games). The command lines (`bot.*.cli`) sit in their
# feature's package but are entry points: they start processes and may reach any feature.
FLOORS: list[tuple[str, list[tuple[str, list[str]]]]] = [
    ("entry points", [("entry points", ["bot.__main__", "bot.ops_cli", "bot.console", "bot.console.*",
                                        "bot.*.cli"])]),
    ("the bot", [("client", ["bot.client"])]),
    ("cogs", [("cogs", ["cogs", "cogs.*"])]),
    ("discord glue", [("discord glue", ["bot.discord_glue", "bot.discord_glue.*"])]),
    ("services", [("services", ["bot.services"]), ("render", ["bot.render", "bot.render.*"]),
                  ("ops", ["bot.ops", "bot.ops.*"])]),
    ("features, upper", [("sim", ["bot.sim", "bot.sim.*"]), ("web", ["bot.web", "bot.web.*"])]),
    ("features", [("catalog", ["bot.catalog", "bot.catalog.*"]), ("games", ["bot.games", "bot.games.*"]),
                  ("leagues", ["bot.leagues", "bot.leagues.*"])]),
    ("units, armies, settings", [("units", ["bot.units", "bot.units.*"]), ("armies", ["bot.armies", "bot.armies.*"]),
                                 ("guild settings", ["bot.guild_settings"])]),
    ("models, storage", [("game model", ["bot.games.model", "bot.games.rules", "bot.games.events",
                                         "bot.games.summary"]),
                         ("catalog model", ["bot.catalog.model", "bot.catalog.normalize"]),
                         ("storage", ["bot.db", "bot.storage", "bot.storage.*"]),
                         ("points data", ["bot.points", "bot.points.*"])]),
    ("engine and base", [("engine", ["engine", "engine.*"]),
                         ("base", ["bot", "bot.errors", "bot.config", "bot.longlived", "bot.logging_setup",
                                   "bot.endpoints", "bot.background", "bot.masking", "bot.admission",
                                   "bot.ops.metrics", "bot.ops.sdnotify", "bot.cli_args"])]),
]


def modules(root: Path) -> dict[str, Path]:
    """Every module of the packages under `root`, by dotted name (a package by its own name)."""
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The project modules `name` imports, anywhere in its file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]

    def resolve(dotted: str) -> str | None:
        while dotted and dotted not in known:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(r for alias in node.names if (r := resolve(alias.name)))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(base_parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            for alias in node.names:  # `from bot.games import store` imports the module bot.games.store
                target = resolve(f"{base}.{alias.name}") if base else None
                if target is None or not target.startswith(f"{base}."):
                    target = resolve(base)
                if target:
                    out.add(target)
    out.discard(name)
    return out


def floor_of(module: str) -> tuple[int, str] | None:
    """(floor number, 0 = the lowest; room) of a module, or None when no room takes it. A room that names
    the module exactly takes it; otherwise the first room, from the top, with a pattern that matches."""
    placed = [(len(FLOORS) - 1 - index, room, patterns) for index, (_floor, rooms) in enumerate(FLOORS)
              for room, patterns in rooms]
    for number, room, patterns in placed:
        if module in patterns:
            return number, room
    for number, room, patterns in placed:
        if any(fnmatch.fnmatchcase(module, p) for p in patterns):
            return number, room
    return None


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles: strongly connected groups of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


@dataclass
class Drawing:
    """The import graph of a checkout and its faults."""

    graph: dict[str, set[str]]
    unplaced: list[str] = field(default_factory=list)
    cycles: list[list[str]] = field(default_factory=list)
    back_up: list[tuple[str, str]] = field(default_factory=list)  # imports of a room on the same or a higher floor
    cog_to_cog: list[tuple[str, str]] = field(default_factory=list)

    @property
    def arrows(self) -> int:
        return sum(len(targets) for targets in self.graph.values())


def draw(root: Path = REPO) -> Drawing:
    known = modules(root)
    graph = {name: imports(name, path, known) for name, path in known.items()}
    drawing = Drawing(graph, cycles=cycles(graph))
    for name in sorted(graph):
        here = floor_of(name)
        if here is None:
            drawing.unplaced.append(name)
            continue
        for target in sorted(graph[name]):
            there = floor_of(target)
            if there is None:
                continue  # reported as unplaced itself
            if there[1] != here[1] and there[0] >= here[0]:
                drawing.back_up.append((name, target))
            if name.startswith("cogs.") and target.startswith("cogs."):
                drawing.cog_to_cog.append((name, target))
    return drawing


def floors_table() -> str:
    """FLOORS as the table docs/architecture.md records (the test checks it is there, word for word)."""
    lines = []
    for index, (floor, rooms) in enumerate(FLOORS):
        number = len(FLOORS) - 1 - index
        lines.append(f"{number}  {floor}")
        for room, patterns in rooms:
            lines.append(f"     {room + ':':<16}{' '.join(patterns)}")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    drawing = draw(Path(argv[0]) if argv else REPO)
    print(f"modules {len(drawing.graph)}, arrows {drawing.arrows}, cycles {len(drawing.cycles)}, "
          f"back up {len(drawing.back_up)}, cog to cog {len(drawing.cog_to_cog)}, unplaced {len(drawing.unplaced)}")
    for group in drawing.cycles:
        print("cycle:", " -> ".join(group))
    for source, target in drawing.back_up:
        print(f"back up: {source} -> {target}  ({floor_of(source)[1]} -> {floor_of(target)[1]})")  # type: ignore[index]
    for source, target in drawing.cog_to_cog:
        print(f"cog to cog: {source} -> {target}")
    for name in drawing.unplaced:
        print("unplaced:", name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
