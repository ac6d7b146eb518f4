"""The /sim answer: one embed with the numbers a player acts on, and the plot as its image.

Order of the fields follows the questions people ask at the table: how many die on average, will it
wipe them, what are the odds of at least k, then the detail (damage, stage means, hazard losses,
keywords applied and ignored). Everything user-typed (unit and weapon names) is escaped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import discord

from bot.render.common import (
    COLOUR_SIM,
    EMBED_DESCRIPTION_MAX,
    EMBED_FIELD_VALUE_MAX,
    EMBED_TITLE_MAX,
    escape,
    source_footer,
    truncate,
)

PLOT_FILENAME = "sim.png"
MAX_THRESHOLDS = 5


@dataclass(frozen=True)
class SimDescription:
    """What was simulated, in words, built by the cog from the options (not from the result)."""

    title: str
    attacker_lines: list[str]
    target_line: str
    edition: str
    source: str
    options: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    abilities: list[str] = field(default_factory=list)
    tracked: list[str] = field(default_factory=list)  # a game's tracked state (/sim between tracked units)
    # Target groups (name, models, CHARACTER?) in request order, for kills per group (contract 1b).
    groups: list[tuple[str, int, bool]] = field(default_factory=list)


def group_kills(result: dict[str, Any], groups: list[tuple[str, int, bool]]) -> str | None:
    """`Intercessors 4.1 of 5 · Captain 0.3 of 1 (P dead 22%)` from the engine's per-group results."""
    per_group = result.get("groups") or []
    if len(groups) < 2 or len(per_group) != len(groups):
        return None
    parts = []
    for (name, models, character), found in zip(groups, per_group, strict=True):
        killed = found.get("models_killed") or {}
        text = f"{escape(name, limit=40)} {float(killed.get('mean', 0.0)):.1f} of {models}"
        pmf = killed.get("pmf") or []
        if character and len(pmf) > models:
            text += f" (P dead {percent(float(pmf[models]))})"
        parts.append(text)
    return " · ".join(parts)


def percent(p: float) -> str:
    """A probability for people: whole percents, one decimal below 10%, never a false 0% or 100%."""
    if p <= 0:
        return "0%"
    if p >= 1:
        return "100%"
    if p < 0.001:
        return "<0.1%"
    if p > 0.999:
        return ">99.9%"
    if p < 0.1:
        return f"{p * 100:.1f}%"
    if p > 0.99:
        return f"{p * 100:.1f}%"
    return f"{p * 100:.0f}%"


def survival(pmf: list[float]) -> list[float]:
    """P(at least k) for k = 0..len(pmf)-1."""
    out = [0.0] * len(pmf)
    running = 0.0
    for k in range(len(pmf) - 1, -1, -1):
        running += pmf[k]
        out[k] = min(1.0, running)
    return out


def interesting_thresholds(pmf: list[float], limit: int = MAX_THRESHOLDS) -> list[int]:
    """The k worth a 'P(>= k)' line: not near-certain, not near-impossible, spread evenly, wipe excluded
    (it has its own field). Falls back to k=1 so there is always an answer to 'will anything die?'."""
    models = len(pmf) - 1
    if models < 2:
        return []
    at_least = survival(pmf)
    candidates = [k for k in range(1, models) if 0.01 <= at_least[k] <= 0.99]
    if not candidates:
        return [1]
    if len(candidates) <= limit:
        return candidates
    step = (len(candidates) - 1) / (limit - 1)
    return sorted({candidates[round(i * step)] for i in range(limit)})


def _mean_with_error(value: float, error: float | None) -> str:
    """`1.39`, or `1.39 ± 0.003` for Monte Carlo: the standard error to two significant digits."""
    if not error or error != error:  # None, 0 or NaN
        return f"{value:.2f}"
    digits = max(2, min(4, 1 - math.floor(math.log10(abs(error)))))
    return f"{value:.{digits}f} ± {error:.{digits}f}"


def _standard_error(result: dict[str, Any], key: str) -> float | None:
    errors = result.get("standard_error") or {}
    value = errors.get(key)
    if isinstance(value, dict):
        value = value.get("mean")
    return float(value) if isinstance(value, int | float) else None


def _keyword_lines(applied: list[str], ignored: list[str]) -> tuple[str, str]:
    applied_text = ", ".join(escape(k) for k in applied) or "none"
    ignored_text = ", ".join(escape(k) for k in ignored) or "none"
    return truncate(applied_text, EMBED_FIELD_VALUE_MAX), truncate(ignored_text, EMBED_FIELD_VALUE_MAX)


def applied_keywords(volley: list[dict[str, Any]], ignored: list[str]) -> list[str]:
    """Every weapon keyword in the volley the engine did not report as ignored, in order, once each."""
    skip = {k.strip().upper() for k in ignored}
    seen: dict[str, None] = {}
    for group in volley:
        for keyword in group.get("weapon", {}).get("keywords", []):
            key = " ".join(str(keyword).split()).upper()
            if key and key not in skip:
                seen.setdefault(key, None)
    return list(seen)


def sim_embed(result: dict[str, Any], request: dict[str, Any], description: SimDescription) -> discord.Embed:
    """The answer embed; attach the plot as `PLOT_FILENAME` alongside it."""
    killed = result["models_killed"]
    pmf = [float(p) for p in killed["pmf"]]
    models = len(pmf) - 1
    lines = [*description.attacker_lines, f"**vs** {description.target_line}"]
    if description.options:
        lines.append("*" + ", ".join(description.options) + "*")
    embed = discord.Embed(
        title=truncate(description.title, EMBED_TITLE_MAX),
        description=truncate("\n".join(lines), EMBED_DESCRIPTION_MAX),
        colour=COLOUR_SIM,
    )
    mean_error = _standard_error(result, "models_killed")
    embed.add_field(
        name="Expected kills",
        value=f"**{_mean_with_error(float(killed['mean']), mean_error)}** of {models}",
        inline=True,
    )
    embed.add_field(name="P(wipe)", value=f"**{percent(float(result['p_wipe']))}**", inline=True)
    if (per_group := group_kills(result, description.groups)) is not None:
        embed.add_field(name="Kills per group", value=truncate(per_group, EMBED_FIELD_VALUE_MAX), inline=False)
    damage = result.get("damage") or {}
    if "mean" in damage:
        embed.add_field(
            name="Expected damage",
            value=f"{_mean_with_error(float(damage['mean']), _standard_error(result, 'damage'))} wounds",
            inline=True,
        )
    ks = interesting_thresholds(pmf)
    if ks:
        at_least = survival(pmf)
        embed.add_field(
            name="Chance to kill at least",
            value=" · ".join(f"{k}: **{percent(at_least[k])}**" for k in ks),
            inline=False,
        )
    stages = result.get("stages") or {}
    if stages:
        order = [("attacks", "attacks"), ("hits", "hits"), ("wounds", "wounds"), ("unsaved", "unsaved")]
        chain = " → ".join(f"{float(stages[key]):.1f} {label}" for key, label in order if key in stages)
        embed.add_field(name="Average per stage", value=chain, inline=False)
    hazard = result.get("attacker_mortal_wounds") or {}
    volley = request.get("volley", [])
    hazardous = any(
        str(k).strip().upper().startswith("HAZARDOUS")
        for g in volley
        for k in g.get("weapon", {}).get("keywords", [])
    )
    if hazardous or float(hazard.get("mean", 0.0)) > 0:
        hazard_pmf = [float(p) for p in hazard.get("pmf", [1.0])]
        any_loss = 1.0 - hazard_pmf[0] if hazard_pmf else 0.0
        embed.add_field(
            name="Attacker hazard losses",
            value=f"{float(hazard.get('mean', 0.0)):.2f} mortal wounds on average; P(any) {percent(any_loss)}",
            inline=False,
        )
    ignored = [str(k) for k in result.get("ignored_keywords", [])]
    engine_applied = result.get("applied_keywords")
    applied_list = (
        [str(k) for k in engine_applied] if engine_applied is not None else applied_keywords(volley, ignored)
    )
    applied, ignored_text = _keyword_lines(applied_list, ignored)
    embed.add_field(name="Keywords applied", value=applied, inline=True)
    embed.add_field(name="Keywords ignored", value=ignored_text, inline=True)
    if description.tracked:
        embed.add_field(
            name="Tracked state",
            value=truncate("\n".join(f"• {escape(t)}" for t in description.tracked), EMBED_FIELD_VALUE_MAX),
            inline=False,
        )
    if description.abilities:
        embed.add_field(
            name="Abilities applied",
            value=truncate("\n".join(f"• {escape(a)}" for a in description.abilities), EMBED_FIELD_VALUE_MAX),
            inline=False,
        )
    notes = [escape(n) for n in description.notes] + [escape(str(n)) for n in result.get("notes", [])]
    if notes:
        embed.add_field(
            name="Notes", value=truncate("\n".join(f"• {n}" for n in notes), EMBED_FIELD_VALUE_MAX)
        )
    method = result.get("method", request.get("method", "exact"))
    if method == "montecarlo":
        trials = int(request.get("trials", 100_000))
        method_text = f"Monte Carlo, {trials:,} trials"
    else:
        method_text = "exact"
    embed.set_footer(
        text=truncate(f"{source_footer(description.edition, description.source)} · {method_text}", 2048)
    )
    embed.set_image(url=f"attachment://{PLOT_FILENAME}")
    return embed


def dice_text(value: int | str) -> str:
    return str(value)


def weapon_line(models: int, weapon: dict[str, Any]) -> str:
    """`2 × Big Shoota — A 3 · BS 5+ · S 5 · AP 0 · D 1` (escaped name), as read off the card."""
    skill = weapon.get("skill")
    label = "WS" if weapon.get("range") == "melee" else "BS"
    skill_text = "N/A" if skill is None else f"{skill}+"
    name = escape(str(weapon.get("name", "Weapon")), limit=80)
    return (
        f"{models} × {name} — A {dice_text(weapon['attacks'])} · {label} {skill_text} · S {weapon['strength']} · "
        f"AP {weapon['ap']} · D {dice_text(weapon['damage'])}"
    )


def target_line(name: str | None, target: dict[str, Any]) -> str:
    """`5 × Terminator — T 5 · Sv 2+ · 4++ · W 3 · FNP 5+`, as typed or read from its datasheet."""
    save = target["save"]
    parts = [f"T {target['toughness']}", "no save" if save >= 7 else f"Sv {save}+"]
    if target.get("invulnerable"):
        parts.append(f"{target['invulnerable']}++")
    parts.append(f"W {target['wounds']}")
    if target.get("feel_no_pain"):
        parts.append(f"FNP {target['feel_no_pain']}+")
    if target.get("feel_no_pain_mortal"):
        parts.append(f"FNP {target['feel_no_pain_mortal']}+ vs mortals")
    if target.get("damage_reduction"):
        parts.append(f"-{target['damage_reduction']} damage")
    if target.get("wounds_lost"):
        parts.append(f"one model already down {target['wounds_lost']} W")
    label = escape(name, limit=80) if name else "target"
    return f"{target['models']} × {label} — " + " · ".join(parts)
