"""/sim's `crits:` option: the critical hit and critical wound thresholds typed as one value ("5/6").

Shared by /sim unit and /sim custom (moved out of cogs/sim.py to keep that file within its size).
"""

from __future__ import annotations

import re

from discord.app_commands import Choice

from bot.errors import UserError

# `crits:` folds the critical hit and critical wound thresholds into one option ("5/6": hits 5+, wounds
# 6+), so /sim unit stays within Discord's 25 options with `faction:` added. It is autocompleted text, not
# fixed choices: 25 listed combinations cost ~1,000 of the 4,000 characters Discord allows a command.
_CRIT_ORDER = [(6, 6), (5, 6), (6, 5), (5, 5), (4, 6), (6, 4), (4, 4), (5, 4), (4, 5), (3, 6), (6, 3), (3, 3),
               (2, 6), (6, 2), (2, 2)]
_CRIT_ORDER += [(h, w) for h in range(6, 1, -1) for w in range(6, 1, -1) if (h, w) not in _CRIT_ORDER]
CRIT_CHOICES = [
    Choice(name=f"critical hits {h}+, critical wounds {w}+" + (" (default)" if (h, w) == (6, 6) else ""),
           value=f"{h}/{w}")
    for h, w in _CRIT_ORDER
]
_CRITS = re.compile(r"^\s*([2-6])\s*\+?\s*[/,; ]\s*([2-6])\s*\+?\s*$")


def parse_crits(value: str | None) -> dict[str, int]:
    """`crits:` "5/6" (also "5+/6+", "5 6") -> the SimOptions thresholds; absent -> SimOptions' defaults."""
    if not value:
        return {}
    match = _CRITS.match(value)
    if match is None:
        raise UserError("`crits` is the critical hit and critical wound rolls as `hit/wound`, each 2 to 6: "
                        "`5/6` means critical hits on 5+ and critical wounds on 6+.", field="crits")
    return {"critical_hit": int(match.group(1)), "critical_wound": int(match.group(2))}


def crit_choices(current: str) -> list[Choice[str]]:
    """The combinations whose value or wording contains what was typed (all 25 when nothing is)."""
    typed = (current or "").strip().casefold().replace("+", "")
    return [c for c in CRIT_CHOICES if typed in c.value or typed in c.name.casefold().replace("+", "")][:25]
