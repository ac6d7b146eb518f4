"""YAML read safely and within bounds: PyYAML's C safe loader, after a pass over its events that refuses
what could make loading or walking the document unbounded.

Why the pass: the safe loader builds no objects from tags, but an alias still stands for the whole node
it names, so ten nested aliases of ten can stand for 10^10 nodes when walked (a "billion laughs"); and
libyaml's composer recurses per nesting level, so a few hundred thousand `[` crash the process (measured:
a segfault at depth 100,000). The event stream is flat, so both are counted before anything is composed.
"""

from __future__ import annotations

from typing import Any

import yaml

MAX_YAML_BYTES = 2 * 1024 * 1024  # the largest MFM file (Space Marines) is 52 KB
MAX_DEPTH = 32  # an MFM file nests 6 deep
MAX_ALIASES = 100  # the MFM files use none
MAX_NODES = 200_000  # nodes after expanding every alias; Space Marines has about 9,000


class YamlRefused(ValueError):
    """The text is not YAML we accept; the message is one line saying why."""


def load(text: str) -> Any:
    """The document in `text`, or YamlRefused: over the size, nesting, alias or expanded-node bounds, or not
    YAML at all."""
    if len(text) > MAX_YAML_BYTES:
        raise YamlRefused(f"{len(text):,} characters; the limit is {MAX_YAML_BYTES:,}")
    try:
        _check_events(text)
        return yaml.load(text, Loader=yaml.CSafeLoader)  # noqa: S506 - the C *safe* loader
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        line = f" (line {where.line + 1})" if where is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise YamlRefused(f"not valid YAML{line}: {str(problem)[:120]}") from None


def _check_events(text: str) -> None:
    depth = 0
    nodes = 0
    aliases = 0
    sizes: dict[str, int] = {}  # anchor -> nodes under it (expanded)
    open_: list[tuple[str | None, int]] = []  # (anchor, nodes before it) per open collection
    for event in yaml.parse(text, Loader=yaml.CSafeLoader):
        if isinstance(event, yaml.AliasEvent):
            aliases += 1
            if aliases > MAX_ALIASES:
                raise YamlRefused(f"more than {MAX_ALIASES} aliases (anchors and aliases are not used by the MFM)")
            nodes += sizes.get(event.anchor, 1)
        elif isinstance(event, yaml.ScalarEvent):
            nodes += 1
            if event.anchor:
                sizes[event.anchor] = 1
        elif isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                raise YamlRefused(f"nested more than {MAX_DEPTH} deep")
            open_.append((event.anchor, nodes))
            nodes += 1
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
            anchor, before = open_.pop()
            if anchor:
                sizes[anchor] = nodes - before
        if nodes > MAX_NODES:
            raise YamlRefused(f"more than {MAX_NODES:,} nodes once aliases are expanded (a YAML bomb?)")
