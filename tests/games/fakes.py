"""A small in-memory catalog with the same methods as `bot.catalog.service.Catalog`.

Entries mirror the seed pages' core stratagems (costs, +1CP sections, once-per-battle restrictions,
turn and phase as the real catalog records them), so the tracker is tested against the contract
without the cost of opening the real catalog.
"""

from __future__ import annotations

from rapidfuzz import fuzz, process

from bot.catalog.model import Entry, Hit, Resolution


def strat(edition: str, name: str, cp: int, *, restrictions: str = "", target: str = "", effect: str = "",
          cp_extra: list[str] | None = None, faction: str | None = None, turn: str = "either",
          phase: str = "any") -> Entry:
    slug = name.lower().replace(" ", "-").replace("'", "")
    data = {"cp": cp, "cp_extra": cp_extra or [], "category": "Core", "detachment": None, "type": "Core",
            "turn": turn, "phase": phase, "when": "", "target": target, "effect": effect,
            "restrictions": restrictions}
    text = f"TARGET: {target}\nEFFECT: {effect}\nRESTRICTIONS: {restrictions}"
    return Entry(f"{edition}:stratagem:fake:{slug}", "stratagem", name, edition, faction, "Fake seed", text, data)


def sheet(edition: str, name: str, faction: str) -> Entry:
    slug = name.lower().replace(" ", "-")
    return Entry(f"{edition}:datasheet:fake:{slug}", "datasheet", name, edition, faction, "Fake seed", name, {})


ENTRIES = [
    strat("10e", "Command Re-roll", 1, target="That unit or model from your army.", effect="You re-roll that roll."),
    strat("10e", "Insane Bravery", 1, phase="command", target="That unit from your army.",
          effect="Your unit automatically passes that Battle-shock test.",
          restrictions="You cannot use this Stratagem more than once per battle."),
    strat("10e", "Counter-offensive", 2, phase="fight", effect="Your unit fights next."),
    strat("10e", "Newfound Nemesis", 1, faction="Leagues of Votann",
          effect="The attacking unit gains 1 Judgement token."),
    strat("11e", "Command Re-roll", 1, target="That unit or model.", effect="You re-roll that roll."),
    strat("11e", "Insane Bravery", 1, phase="command", target="That unit.", effect="That battle-shock roll is automatically successful.",
          restrictions="You cannot use this stratagem more than once per battle."),
    strat("11e", "Counteroffensive", 2, turn="opponent", phase="fight", effect="Until the end of the phase, your unit has the Fights First ability."),
    strat("11e", "Heroic Intervention", 1, turn="opponent", phase="charge", cp_extra=["+1CP – Into the Fray"], effect="Resolve a charge with your unit."),
    sheet("10e", "Grimnyr", "Leagues of Votann"),
    sheet("11e", "Stompa", "Orks"),
    sheet("11e", "Boyz", "Orks"),
]


class FakeCatalog:
    def __init__(self, entries: list[Entry] | None = None) -> None:
        self.entries = list(entries or ENTRIES)

    def _pool(self, kind: str | None, edition: str | None, faction: str | None = None) -> list[Entry]:
        return [e for e in self.entries if (kind is None or e.kind == kind) and (edition is None or e.edition == edition)
                and (faction is None or e.faction in (None, faction))]

    def _hits(self, query: str, pool: list[Entry], limit: int) -> list[Hit]:
        found = process.extract(query.casefold(), {i: e.name.casefold() for i, e in enumerate(pool)},
                                scorer=fuzz.WRatio, limit=limit, score_cutoff=60)
        return [Hit(pool[i].id, pool[i].kind, pool[i].name, pool[i].edition, pool[i].source, score, pool[i].faction)
                for _, score, i in found]

    def search(self, query: str, *, kind: str | None = None, edition: str | None = None, limit: int = 10) -> list[Hit]:
        return self._hits(query, self._pool(kind, edition), limit)

    def autocomplete(self, text: str, *, kind: str | None = None, edition: str | None = None,
                     faction: str | None = None, limit: int = 25) -> list[Hit]:
        pool = self._pool(kind, edition, faction)
        if not text:
            return [Hit(e.id, e.kind, e.name, e.edition, e.source, 100.0, e.faction) for e in pool[:limit]]
        return self._hits(text, pool, limit)

    def resolve(self, query: str, *, kind: str | None = None, edition: str | None = None) -> Resolution:
        pool = self._pool(kind, edition)
        exact = [e for e in pool if e.name.casefold() == query.strip().casefold()]
        hits = self._hits(query, pool, 5)
        if exact:
            return Resolution(exact[0], True, hits)
        if hits and hits[0].score >= 90:
            return Resolution(self.get(hits[0].id), True, hits)
        return Resolution(None, False, hits)

    def get(self, entry_id: str) -> Entry | None:
        return next((e for e in self.entries if e.id == entry_id), None)

    def close(self) -> None:
        pass
