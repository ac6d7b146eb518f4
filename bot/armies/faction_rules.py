"""Which tracked rule belongs to which faction, edition and detachment: the one table, with its sources.

The tracker asks `check(state, player, rule)` before a faction rule changes the game. A mismatch is a *soft*
rule (the command refuses unless `force:true`, and the override is logged): a player's faction at
`/game start` is free text, and a list may be missing, so the bot warns rather than forbids. What it reads:
the player's imported army (faction, detachments) when there is one, else the faction typed at
`/game start` matched against the names and common short forms below.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bot.games.model import GameState, normalise_name


@dataclass(frozen=True)
class FactionRule:
    key: str
    name: str
    faction: str  # the faction name as the datasets spell it
    editions: tuple[str, ...]
    detachment: str | None  # a detachment rule: the detachment whose name contains this
    targets: str  # "own" or "enemy" units
    source: str  # where the rule says so


FACTION_ALIASES = {
    "Leagues of Votann": ("leagues of votann", "league of votann", "votann", "lov", "kin", "kindred"),
    "Orks": ("orks", "ork", "orkz", "greenskins"),
}

RULES = {
    "judgement": FactionRule(
        "judgement", "Judgement tokens (Eye of the Ancestors)", "Leagues of Votann", ("10e", "11e"), None, "enemy",
        "Seed 000 (10e Votann Grimnyr page), Eye of the Ancestors: \"If your Army Faction is [LEAGUES OF VOTANN], "
        "each time an enemy unit destroys a unit from your army, that enemy unit gains 1 Judgement token\"."),
    "riled": FactionRule(
        "riled", "Riled up (Waaagh!)", "Orks", ("11e",), None, "own",
        "Seed 001 (11e Orks Stompa page), Waaagh!: \"Friendly ORKS units with this ability can … become riled up, "
        "as stated in other rules\". 10e has no riled-up status."),
    "waaagh": FactionRule(
        "waaagh", "Waaagh!", "Orks", ("10e", "11e"), None, "own",
        "11e: seed 001, War Cry (once per battle, per army): \"friendly ORKS units with the Waaagh! ability are "
        "riled up until the end of the next turn\". 10e: the Orks army rule Waaagh! (Wahapedia 10e export, "
        "Abilities.csv 000003676): once per battle, at the start of your Command phase, until the start of your "
        "next Command phase, for units from your army with this ability."),
    "oathband": FactionRule(
        "oathband", "Ruthless Efficiency", "Leagues of Votann", ("10e",), "Oathband", "enemy",
        "Seed 000, Oathband Detachment rule Ruthless Efficiency (10e): \"At the start of the battle, select a "
        "number of units from your opponent's army\"."),
}


def plays(state: GameState, player: int, faction: str) -> bool | None:
    """True/False when the army or the typed faction says; None when the typed faction is unrecognisable."""
    army = state.armies.get(str(player))
    if army is not None:
        return normalise_name(str(army.get("faction") or "")) == normalise_name(faction)
    typed = normalise_name(state.players[player].faction)
    for name, aliases in FACTION_ALIASES.items():
        if typed == normalise_name(name) or typed in aliases or any(a in typed.split() for a in aliases if len(a) > 3):
            return name == faction
    return None


def check(state: GameState, player: int, key: str) -> list[str]:
    """The soft-rule warnings for `player` using rule `key` in this game (empty: it is theirs to use)."""
    rule = RULES[key]
    warnings: list[str] = []
    if state.edition not in rule.editions:
        only = " and ".join(rule.editions)
        warnings.append(f"{rule.name} is a {only} rule; this game is {state.edition}.")
    who = state.players[player]
    mine = plays(state, player, rule.faction)
    if mine is False:
        warnings.append(f"{rule.name} belongs to {rule.faction} armies; {who.name} plays "
                        f"{_faction(state, player)}.")
    elif mine is None:
        warnings.append(f"{rule.name} belongs to {rule.faction} armies, and {who.name}'s faction "
                        f"{who.faction!r} is not one the bot recognises.")
    if rule.detachment:
        army = state.armies.get(str(player))
        if army is not None and not any(rule.detachment.casefold() in str(d).casefold()
                                        for d in army.get("detachments") or []):
            listed = ", ".join(army.get("detachments") or []) or "none listed"
            warnings.append(f"{rule.name} is the {rule.detachment} detachment's rule; {who.name}'s army list "
                            f"has {listed}.")
    return warnings


def _faction(state: GameState, player: int) -> str:
    army: dict[str, Any] | None = state.armies.get(str(player))
    return str(army.get("faction")) if army else state.players[player].faction


def table() -> list[dict[str, Any]]:
    """The table as data (for docs and tests)."""
    return [{"rule": r.name, "faction": r.faction, "editions": list(r.editions), "detachment": r.detachment,
             "targets": r.targets, "source": r.source} for r in RULES.values()]
