"""The mission catalog for the tracker: missions, their primary cards, the secondary deck and the caps.

Source: wh40kdc's embedded data (11th edition: 25 missions from Chapter Approved 2026-2027, 43 mission
cards with their VP awards and timing, deployment patterns and the force-disposition matchups). No source
the project has carries 10th-edition missions (the Wahapedia 10e export has no mission tables and the seed
pages only mention missions), so a 10e game records its mission and secondary cards as free text, with the
10e caps below. See docs/rules-notes.md ("Missions and scoring").
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from bot.catalog.model import slug
from bot.errors import UserError
from bot.games.rules import clean_name
from bot.longlived import freeze_loaded

SOURCE = "wh40kdc"
MAX_TEXT = 80  # free-text mission, deployment and card names


@dataclass(frozen=True)
class Caps:
    """Victory-point ceilings of a mission; None = no such cap."""

    primary_game: int | None
    primary_round: int | None
    secondary_game: int | None
    secondary_round: int | None
    total: int
    tactical_card: int = 5  # one scoring of a tactical card (wh40kdc scoring.TACTICAL_CARD_CAP)

    def to_dict(self) -> dict[str, int | None]:
        return dict(self.__dict__)


# 11e: the defaults of wh40kdc's mission schema (45 primary and 45 secondary per game, 15 of each per battle
# round) and its per-player grand total (scoring.GAME_VP_CAP = 100). 10e (Leviathan / Pariah Nexus mission
# packs, not in our data): primary 50, secondary 40, total 100; no per-round caps are applied.
EDITION_CAPS = {
    "11e": Caps(primary_game=45, primary_round=15, secondary_game=45, secondary_round=15, total=100),
    "10e": Caps(primary_game=50, primary_round=None, secondary_game=40, secondary_round=None, total=100),
}

# Where sources disagree on a cap, the tracker applies the mission data and says what the other source says
# (edition -> Caps field -> (the other figure, who gives it)). Issue 13 quotes the stream tools' "primary VP 50"
# as the 11e example; wh40kdc's 11e missions carry 45.
OTHER_CAPS: dict[str, dict[str, tuple[int, str]]] = {
    "11e": {"primary_game": (50, "stream tools such as gdstreamer")},
}


def cap_disagreement(edition: str, cap: str, applied: int | None) -> str | None:
    """"wh40kdc's mission data; stream tools … say 50, not applied" when another source gives this cap a different
    figure than the one applied, else None."""
    other = OTHER_CAPS.get(edition, {}).get(cap)
    if other is None or other[0] == applied:
        return None
    return f"{SOURCE}'s mission data; {other[1]} say {other[0]}: not applied"


_TIMING = {"end-of-turn": "end of turn", "start-of-turn": "start of turn", "end-of-battle": "end of the battle",
           "end-of-phase": "end of {phase} phase", "start-of-phase": "start of {phase} phase"}
_WHOSE = {"your-turn": "your", "opponent-turn": "opponent's", "either": "either player's"}


@dataclass(frozen=True)
class Card:
    """A mission card (a mission's primary, or a secondary in the deck)."""

    id: str
    name: str
    kind: str  # "primary" | "secondary"
    text: str
    awards: tuple[dict[str, Any], ...] = ()
    actions: tuple[str, ...] = ()
    subtype: str | None = None

    def award_lines(self) -> list[str]:
        """One short line per VP award: amount, what it counts, when, and which battle rounds."""
        return [_award_line(a) for a in self.awards]

    def max_vp(self, mode: str) -> int | None:
        """The most one scoring of this card can give under `mode` ("tactical" | "fixed"); None = uncapped.

        Awards with different triggers (end of your turn / end of the opponent's turn) never score
        together, so the answer is the best single trigger; within one, exclusive tiers count once.
        """
        buckets: dict[tuple[str, str, str], tuple[float, dict[str, float]]] = {}
        for award in self.awards:
            if award.get("mode") not in (None, mode):
                continue
            if award.get("vp") is not None:
                value: float = award["vp"]
            elif award.get("vp_max") is not None:
                value = award["vp_max"]
            elif award.get("vp_per") is not None:
                value = math.inf
            else:
                continue
            t = award.get("trigger") or {}
            key = (t.get("timing", ""), t.get("player_turn", ""), t.get("phase", ""))
            flat, groups = buckets.get(key, (0.0, {}))
            group = award.get("exclusive_group")
            if group:
                groups[group] = max(groups.get(group, 0.0), value)
            else:
                flat += value
            buckets[key] = (flat, groups)
        totals = [flat + sum(groups.values()) for flat, groups in buckets.values()] or [0.0]
        total = max(totals)
        if mode == "tactical":
            total = min(total, EDITION_CAPS["11e"].tactical_card)
        return None if total == math.inf else int(total)

    @property
    def modes(self) -> tuple[str, ...]:
        """Fixed and tactical both, unless the card's awards are tagged for one approach only."""
        tagged = {a.get("mode") for a in self.awards if a.get("mode")}
        return ("tactical", "fixed") if not tagged or tagged == {"tactical", "fixed"} else tuple(sorted(tagged))

    @property
    def summary(self) -> str:
        """The first sentence of the card's community summary (wh40kdc prose, not rules text)."""
        sentences = re.split(r"(?<=[.!?])\s+", self.text.strip())
        if len(sentences) > 1 and len(sentences[0]) < 60 and re.search(r"\bagainst\b|\bmirror\b", sentences[0]):
            sentences = sentences[1:]  # "Take-and-Hold against Reconnaissance." restates the matchup
        first = sentences[0]
        return first if len(first) <= 160 else first[:159].rstrip() + "…"


@dataclass(frozen=True)
class Mission:
    id: str
    name: str
    edition: str
    source: str
    caps: Caps
    primary: Card | None = None
    matchup: str | None = None  # "Take and Hold vs Disruption"
    deployments: tuple[str, ...] = ()

    @property
    def rule_line(self) -> str:
        """The primary rule in one line."""
        if self.primary is None:
            return "primary rule not in the catalog"
        return self.primary.summary


@dataclass(frozen=True)
class Deployment:
    id: str
    name: str
    description: str


@dataclass
class MissionCatalog:
    """Missions, secondary decks and deployments by edition, loaded once from wh40kdc."""

    missions: dict[str, list[Mission]] = field(default_factory=dict)
    secondaries: dict[str, list[Card]] = field(default_factory=dict)
    deployments: dict[str, list[Deployment]] = field(default_factory=dict)

    def has_missions(self, edition: str) -> bool:
        return bool(self.missions.get(edition))

    def mission(self, edition: str, key: str) -> Mission | None:
        """By id or name, without case or punctuation."""
        wanted = slug(key)
        return next((m for m in self.missions.get(edition, []) if wanted in (m.id, slug(m.name))), None)

    def card(self, edition: str, key: str) -> Card | None:
        wanted = slug(key)
        return next((c for c in self.secondaries.get(edition, []) if wanted in (c.id, slug(c.name))), None)

    def deployment(self, edition: str, key: str) -> Deployment | None:
        wanted = slug(key)
        return next((d for d in self.deployments.get(edition, []) if wanted in (d.id, slug(d.name))), None)

    def search(self, items: list[Any], text: str, limit: int = 25) -> list[Any]:
        """Prefix matches first, then substring matches, by name."""
        needle = text.casefold().strip()
        starts = [i for i in items if i.name.casefold().startswith(needle)]
        inside = [i for i in items if needle in i.name.casefold() and i not in starts]
        return (starts + inside)[:limit]


def _award_line(award: dict[str, Any]) -> str:
    if award.get("vp") is not None:
        amount = f"{award['vp']}VP"
    elif award.get("vp_per") is not None:
        amount = f"{award['vp_per']}VP per {str(award.get('per', 'item')).replace('-', ' ')}"
        if award.get("vp_max") is not None:
            amount += f" (max {award['vp_max']})"
    else:
        amount = "VP"
    if award.get("cumulative"):
        amount = "+" + amount
    trigger = award.get("trigger") or {}
    when = _TIMING.get(trigger.get("timing", ""), trigger.get("timing", "")).format(phase=trigger.get("phase", ""))
    whose = _WHOSE.get(trigger.get("player_turn", ""), "")
    if whose and "turn" in when:
        when = when.replace("turn", f"{whose} turn")
    elif whose and "phase" in when:
        when = when.replace("end of ", f"end of {whose} ").replace("start of ", f"start of {whose} ")
    rounds = trigger.get("battle_round") or {}
    lo, hi = rounds.get("min"), rounds.get("max")
    span = ""
    if lo and hi:
        span = f", round {lo}" if lo == hi else f", rounds {lo}-{hi}"
    elif lo:
        span = f", round {lo}+"
    elif hi:
        span = f", rounds 1-{hi}"
    mode = f" [{award['mode']}]" if award.get("mode") else ""
    return f"{amount} · {when}{span}{mode}"


def _edition(record: dict[str, Any]) -> str | None:
    raw = str((record.get("game_version") or {}).get("edition", ""))
    return {"11th": "11e", "10th": "10e"}.get(raw)


def build(raw: dict[str, list[Any]]) -> MissionCatalog:
    """The catalog from wh40kdc's raw bundle (also used by tests with a small bundle of the same shape)."""
    catalog = MissionCatalog()
    cards = {}
    for rec in raw.get("mission_cards", []):
        edition = _edition(rec)
        if edition is None:
            continue
        card = Card(id=rec["id"], name=rec["name"], kind=rec.get("card_type", "secondary"), text=rec.get("text", ""),
                    awards=tuple(rec.get("awards") or ()),
                    actions=tuple(a.get("action_id") or "action" for a in rec.get("actions") or ()),
                    subtype=rec.get("subtype"))
        cards[(edition, card.kind, card.id)] = card
        if card.kind == "secondary":
            catalog.secondaries.setdefault(edition, []).append(card)
    dispositions = {d["id"]: d["name"] for d in raw.get("force_dispositions", [])}
    matchups: dict[str, list[str]] = {}
    for m in raw.get("mission_matchups", []):
        label = f"{dispositions.get(m['disposition'], m['disposition'])} vs " \
                f"{dispositions.get(m['opponent_disposition'], m['opponent_disposition'])}"
        matchups.setdefault(m["mission_id"], []).append(label)
    deployments = {d["id"]: d["name"] for d in raw.get("deployment_patterns", [])}
    for rec in raw.get("missions", []):
        edition = _edition(rec)
        if edition is None:
            continue
        base = EDITION_CAPS.get(edition, EDITION_CAPS["11e"])
        caps = Caps(primary_game=rec.get("vp_per_game_cap", base.primary_game),
                    primary_round=rec.get("vp_per_round_cap", base.primary_round),
                    secondary_game=rec.get("secondary_vp_per_game_cap", base.secondary_game),
                    secondary_round=rec.get("secondary_vp_per_round_cap", base.secondary_round),
                    total=base.total)
        catalog.missions.setdefault(edition, []).append(Mission(
            id=rec["id"], name=rec["name"], edition=edition, source=rec.get("source") or SOURCE, caps=caps,
            primary=cards.get((edition, "primary", rec["id"])),
            matchup=" / ".join(matchups.get(rec["id"], [])) or None,
            deployments=tuple(deployments.get(d, d) for d in rec.get("deployment_pattern_ids") or ()),
        ))
    for rec in raw.get("deployment_patterns", []):
        edition = _edition(rec)
        if edition is not None:
            catalog.deployments.setdefault(edition, []).append(
                Deployment(id=rec["id"], name=rec["name"], description=rec.get("description", "")))
    return catalog


@cache
def catalog() -> MissionCatalog:
    """The process-wide catalog (wh40kdc's bundle is parsed once and cached by wh40kdc itself), kept out of
    the garbage collector's full collections (`bot.longlived`: otherwise any later command could pay ~0.1-0.2 s
    for a collection walking the bundle)."""
    from wh40kdc.data.bundle import raw_data

    built = build(raw_data())
    freeze_loaded()
    return built


def caps_of(mission: dict[str, Any] | None, edition: str) -> Caps:
    """The caps a game's recorded mission carries, else the edition's."""
    if mission and mission.get("caps"):
        return Caps(**mission["caps"])
    return EDITION_CAPS[edition]


def mission_record(edition: str, raw: str | None, deployment: str | None) -> dict[str, Any] | None:
    """What a game stores about its mission: the catalog's mission when the name matches, else free text."""
    if raw is None or not raw.strip():
        if deployment:
            raise UserError("Give the mission too (mission:), or leave out the deployment.", field="deployment")
        return None
    cat = catalog()
    name = clean_name(raw, field="mission", what="Mission", limit=MAX_TEXT)
    dep_name = clean_name(deployment, field="deployment", what="Deployment", limit=MAX_TEXT) if deployment else None
    if dep_name:
        known = cat.deployment(edition, dep_name)
        dep_name = known.name if known else dep_name
    found = cat.mission(edition, name)
    if found is None and cat.has_missions(edition):
        names = ", ".join(m.name for m in cat.search(cat.missions[edition], name, limit=8)) or \
            ", ".join(m.name for m in cat.missions[edition][:8]) + ", …"
        raise UserError(f"No {edition} mission called {name!r} in the mission catalog ({SOURCE}). "
                        f"Missions: {names}.", field="mission")
    if found is None:
        return {"id": None, "name": name, "edition": edition, "deployment": dep_name, "primary": None,
                "matchup": None, "caps": EDITION_CAPS[edition].to_dict(), "catalog": False}
    return {"id": found.id, "name": found.name, "edition": edition, "deployment": dep_name or
            (found.deployments[0] if len(found.deployments) == 1 else None),
            "primary": found.rule_line, "matchup": found.matchup, "caps": found.caps.to_dict(), "catalog": True}
