"""Scoring the player set (player_queries.py) through the real slash commands in the console."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from bot.catalog.normalize import normalize
from bot.catalog.things import name_key
from bot.console.session import ConsoleSession

from .player_queries import PLAYER_QUERIES

_KIND_OF_LABEL = {"Datasheet": "datasheet", "Weapon": "weapon", "Ability": "ability", "Stratagem": "stratagem",
                  "Rule": "rule", "Detachment rule": "detachment", "Detachment": "detachment",
                  "Enhancement": "enhancement", "Keyword": "keyword"}
_OPTION = {"rule": "query", "datasheet": "name", "stratagem": "name"}


@dataclass
class Shown:
    form: str  # "answer" | "picker" | "not-loaded" | "no-match" | "error"
    kind: str | None = None
    name: str | None = None
    edition: str | None = None
    body: str = ""


@dataclass
class Score:
    total: int = 0
    right: int = 0  # the expected entry on top (direct answer or first choice)
    honest: int = 0  # "not in the loaded data" where the expected entry is indeed not loaded
    confident_wrong: list[tuple[str, str]] = field(default_factory=list)
    misses: list[tuple[str, str, str]] = field(default_factory=list)


def shown(replies: list) -> Shown:
    """What the first visible reply shows: a direct answer, a picker's first choice, or an honest miss."""
    for reply in replies:
        if reply.kind == "autocomplete" or not (reply.embeds or reply.content):
            continue
        embed = reply.embeds[0] if reply.embeds else {}
        title = embed.get("title") or ""
        if title == "Not in the loaded data":
            return Shown("not-loaded")
        if title == "No match":
            return Shown("no-match")
        for comp in reply.components:
            if comp.get("type") == "select" and comp.get("options"):
                first = comp["options"][0]
                parts = (first.get("description") or "").split(" · ")
                return Shown("picker", _KIND_OF_LABEL.get(parts[1] if len(parts) > 1 else ""),
                             first["label"], parts[0] if parts else None)
        author = ((embed.get("author") or {}).get("name") or "") if isinstance(embed.get("author"), dict) else ""
        footer = embed.get("footer") or ""
        edition = "11e" if footer.startswith("11th") else "10e" if footer.startswith("10th") else None
        kind = _KIND_OF_LABEL.get(author.split(" · ")[0]) if author else None
        if title and edition:
            return Shown("answer", kind, re.sub(r"^\d+(\.\d+)+\s+", "", title), edition,
                         embed.get("description") or "")
        return Shown("error")
    return Shown("error")


def edition_note(body: str) -> bool:
    return "edition answer:** no" in body


def matches(s: Shown, kind: str, name: str, edition: str | None) -> bool:
    return (s.form in ("answer", "picker") and (s.kind is None or s.kind == kind)
            and name_key(normalize(s.name or "")) == name_key(normalize(name))
            and (edition is None or s.edition == edition))


def loaded(catalog, kind: str, name: str, edition: str | None) -> bool:  # noqa: ANN001 - Catalog
    """Whether the catalog has the expected entry at all (else the honest answer is "not loaded")."""
    for idx in catalog.index.by_key.get(name_key(normalize(name)), ()):
        rec = catalog.index.records[idx]
        if rec.kind == kind and (edition is None or rec.edition == edition):
            return True
    return False


async def run(console: ConsoleSession, rows=PLAYER_QUERIES) -> Score:  # noqa: ANN001
    catalog = console.bot.services.catalog
    score = Score()
    for query, command, kind, name, edition in rows:
        score.total += 1
        replies = await console.send(f"/{command} {_OPTION[command]}:{query}")
        s = shown(replies)
        expected = f"{name} ({kind}, {edition or 'any'})"
        got = f"{s.form}: {s.name} ({s.kind}, {s.edition})"
        if matches(s, kind, name, edition):
            score.right += 1
        elif s.form == "not-loaded" and not loaded(catalog, kind, name, edition):
            score.honest += 1
        elif (s.form == "answer" and matches(s, kind, name, None) and edition_note(s.body)
              and not loaded(catalog, kind, name, edition)):
            score.honest += 1  # the other edition's rule, saying so in the body: the asked one is not loaded
        else:
            if s.form == "answer":
                score.confident_wrong.append((query, f"{expected} -> {got}"))
            score.misses.append((query, expected, got))
    return score
