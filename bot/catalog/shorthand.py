"""Community shorthand in a query, read as what it means: "5+++" is Feel No Pain 5+, "4++" a 4+ invulnerable
save, "T12" Toughness 12, "rule 13.08" / "core 09.07" / "24.33" a core rule number.

The grammar is data (`data/shorthand.toml`), so a new shape is a line there, not a new hand-set reading in
search.py. A match replaces its words by the words they stand for (searched like any name) and adds the core
rules that define it, so "does 5+++ work against mortals" is searched as "does feel no pain work against
mortals". Matching is on the folded query (dots and "+" kept, which `normalize` would drop), whole words only.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from bot.catalog.normalize import fold, rule_number

MAX_INPUT_CHARS = 800  # the search clips queries long before this; bounded regex work on hostile input
_EDGE_BEFORE = r"(?<![a-z0-9+.])"
_EDGE_AFTER = r"(?![a-z0-9+.])"


class ShorthandError(ValueError):
    """The shorthand file is malformed (a bad pattern or a missing field); names the rule."""


@dataclass(frozen=True)
class Rule:
    pattern: re.Pattern[str]
    reads: str
    rules: tuple[str, ...]
    number: str | None  # the named group holding a rule number
    says: str


@dataclass(frozen=True)
class Reading:
    """The query with its shorthand replaced, the core rule numbers it names (most relevant first), and what
    each piece of shorthand was read as ("5+++" -> "Feel No Pain 5+"), for the answer to say."""

    text: str
    numbers: tuple[str, ...]
    said: tuple[tuple[str, str], ...]


class Grammar:
    """An ordered list of shorthand rules; `read` applies them to a query."""

    def __init__(self, rules: list[Rule]) -> None:
        self.rules = rules

    def read(self, query: str) -> Reading | None:
        """The reading of `query`, or None when it holds no shorthand."""
        text = " ".join(fold(query or "")[:MAX_INPUT_CHARS].split())
        numbers: list[str] = []
        said: list[tuple[str, str]] = []
        for rule in self.rules:
            def replace(m: re.Match[str], rule: Rule = rule) -> str:
                groups = {k: v or "" for k, v in m.groupdict().items()}
                number = rule_number(groups.get(rule.number, "")) if rule.number else None
                if rule.number and number is None:
                    return m.group(0)  # "rule 1.999": not a rule number; leave it to the name search
                for n in ((number,) if number else ()) + rule.rules:
                    if n not in numbers:
                        numbers.append(n)
                said.append((m.group(0), rule.says.format(**{**groups, **({rule.number: number} if number else {})})))
                return f" {rule.reads} "
            text = rule.pattern.sub(replace, text)
        if not said:
            return None
        return Reading(" ".join(text.split()), tuple(numbers), tuple(said))


def load(path: Path) -> Grammar:
    """`data/shorthand.toml`: a list of `[[shorthand]]` tables (pattern, reads, rules, number, says)."""
    with open(path, "rb") as fh:
        raw = tomllib.load(fh)
    rules = []
    for i, item in enumerate(raw.get("shorthand", [])):
        where = f"{path.name}: shorthand #{i + 1}"
        try:
            pattern = re.compile(_EDGE_BEFORE + "(?:" + item["pattern"] + ")" + _EDGE_AFTER)
            number = item.get("number")
            if number is not None and number not in pattern.groupindex:
                raise ShorthandError(f"{where}: number group {number!r} is not in the pattern")
            numbers = tuple(item.get("rules", ()))
            bad = [n for n in numbers if rule_number(n) != n]
            if bad:
                raise ShorthandError(f"{where}: {bad[0]!r} is not a rule number like 05.04")
            rules.append(Rule(pattern, str(item["reads"]), numbers, number, str(item["says"])))
        except KeyError as exc:
            raise ShorthandError(f"{where}: missing {exc.args[0]!r}") from exc
        except re.error as exc:
            raise ShorthandError(f"{where}: bad pattern: {exc}") from exc
    return Grammar(rules)


EMPTY = Grammar([])
