"""Resolve one weapon group against the target under an edition: the numbers every roll is checked
against, and the roll-classification functions shared by the exact and the Monte Carlo engines.

Both engines use the same `hit_category`/`wound_category`/`save_passes` rules for one unmodified D6
result (exact: enumerated over the six faces; Monte Carlo: as look-up tables indexed by sampled dice),
so the rules live in one place and the engines differ only in how they combine probabilities.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from engine import dice
from engine.editions import HIT_MODIFIER_CAP, SHARED_RULES, WOUND_MODIFIER_CAP, Edition, clamp, wound_needed
from engine.profiles import Attacker, Context, Group, Target

FAIL, HIT, CRIT = 0, 1, 2


@dataclass
class ResolvedGroup:
    """Everything needed to roll one weapon group's attacks against the target."""

    name: str
    models: int
    attacks_per_model: np.ndarray  # pmf of attack dice one model gathers (A + BLAST/RAPID FIRE/CLEAVE)
    auto_hit: bool  # TORRENT / no BS: automatic hits, never critical (11e 01.05.01)
    skill: int  # effective BS/WS after cover (11e), 2..6
    hit_mod: int  # capped at +-1
    crit_hit: int
    hit_min_unmodified: int  # 11e INDIRECT FIRE: unmodified results below this fail (else 2)
    reroll_hits: str | None
    sustained: np.ndarray | None  # pmf of extra hits per critical hit
    lethal: bool
    wound_needed: int
    wound_mod: int
    crit_wound: int
    reroll_wounds: str | None
    devastating: bool
    save_threshold: int  # lowest unmodified save roll that saves (>= 7: no save); a 1 always fails
    damage: np.ndarray  # pmf of damage per attack after MELTA and damage reduction (min 1)
    mortal_damage: np.ndarray  # pmf of the mortal wounds one DEVASTATING critical wound inflicts (edition)
    fnp: float  # probability one wound is NOT lost to normal damage
    fnp_mortal: float  # probability one mortal wound is NOT lost
    hazardous: bool
    precision: bool = False
    # Mixed targets (contract 1b): per model group, in request order, what depends on the model that
    # receives the wound: save threshold, damage pmf (after MELTA and the group's damage modifiers) and
    # the Feel No Pain keep probabilities. Empty for a single-profile target.
    group_saves: list[int] = field(default_factory=list)
    group_damage: list[np.ndarray] = field(default_factory=list)
    group_mortal_damage: list[np.ndarray] = field(default_factory=list)  # like mortal_damage, per group
    group_fnp: list[float] = field(default_factory=list)
    group_fnp_mortal: list[float] = field(default_factory=list)
    applied: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    # --- the rules for one unmodified D6 result (1..6) -----------------------------------------
    def hit_category(self, r: int) -> int:
        """10e seed Hit Roll / 11e 05.01, in table order: an unmodified 1 fails (so does a result below
        the INDIRECT FIRE floor); a critical is always a hit; otherwise the modified roll must reach BS."""
        if r == 1 or r < self.hit_min_unmodified:
            return FAIL
        if r >= self.crit_hit:
            return CRIT
        return HIT if r + self.hit_mod >= self.skill else FAIL

    def wound_category(self, r: int) -> int:
        """10e seed Wound Roll / 11e 05.02: unmodified 1 fails; critical wounds always wound."""
        if r == 1:
            return FAIL
        if r >= self.crit_wound:
            return CRIT
        return HIT if r + self.wound_mod >= self.wound_needed else FAIL

    def save_passes(self, r: int) -> bool:
        """10e seed Saving Throw / 11e 05.04: an unmodified 1 fails; otherwise the better save is used."""
        return r != 1 and r >= self.save_threshold

    # --- look-up tables over faces (index = unmodified result; index 0 unused) -----------------
    def hit_table(self) -> tuple[np.ndarray, np.ndarray]:
        """(category per face, re-roll this face?) for hit rolls."""
        return _table(self.hit_category, self.reroll_hits)

    def wound_table(self) -> tuple[np.ndarray, np.ndarray]:
        return _table(self.wound_category, self.reroll_wounds)

    def save_table(self) -> np.ndarray:
        return np.array([False] + [self.save_passes(r) for r in range(1, 7)])

    # --- exact single-roll probabilities --------------------------------------------------------
    def hit_probs(self) -> np.ndarray:
        """P(fail), P(hit), P(critical hit) of one hit roll, re-rolls included."""
        return _roll_probs(self.hit_category, self.reroll_hits)

    def wound_probs(self) -> np.ndarray:
        return _roll_probs(self.wound_category, self.reroll_wounds)

    def save_prob(self) -> float:
        return sum(self.save_passes(r) for r in range(1, 7)) / 6

    def group_save_probs(self) -> list[float]:
        """P(save) against each model group of a mixed target (an unmodified 1 always fails)."""
        return [sum(r != 1 and r >= t for r in range(1, 7)) / 6 for t in self.group_saves]


def _rerolled(policy: str | None, r: int, category: int) -> bool:
    """Re-roll policies of contract 1, applied to the unmodified roll before modifiers (01.05.02)."""
    if policy is None:
        return False
    if policy == "ones":
        return r == 1
    if policy == "failed":
        return category == FAIL
    return category != CRIT  # "non_critical": fish for criticals


def _table(category, policy) -> tuple[np.ndarray, np.ndarray]:
    cats = [FAIL] + [category(r) for r in range(1, 7)]
    again = [False] + [_rerolled(policy, r, cats[r]) for r in range(1, 7)]
    return np.array(cats, dtype=np.int8), np.array(again)


def _roll_probs(category, policy) -> np.ndarray:
    single = [0.0, 0.0, 0.0]
    for r in range(1, 7):
        single[category(r)] += 1 / 6
    out = [0.0, 0.0, 0.0]
    for r in range(1, 7):
        c = category(r)
        if _rerolled(policy, r, c):
            for k in range(3):
                out[k] += single[k] / 6
        else:
            out[c] += 1 / 6
    return np.array(out)


def _fnp_keep(value: int | None) -> float:
    """Probability a wound is not lost to a Feel No Pain X+ roll (11e 24.12)."""
    return 0.0 if value is None else (7 - value) / 6


def resolve(group: Group, target: Target, context: Context, attacker: Attacker, ed: Edition) -> ResolvedGroup:
    """Apply the weapon's keywords, the context and the edition to one weapon group."""
    w = group.weapon
    tk = target.keywords
    applied: list[str] = []
    ignored: list[str] = []
    notes: list[str] = []
    active: dict[str, list] = {}
    for kw in w.keywords:
        if not kw.known:
            ignored.append(kw.raw)
            continue
        if not kw.applies_to(tk):
            notes.append(f"{w.name}: {kw.raw} does not apply against this target ({kw.condition}).")
            continue
        active.setdefault(kw.name, []).append(kw)

    def take(name: str):
        found = active.get(name)
        if not found:
            return None
        if len(found) > 1:  # 11e 24.02: duplicated abilities are not cumulative; the attacker picks one
            notes.append(f"{w.name}: {len(found)} instances of {name}; the best one is used (24.02).")
        return found

    def mark(kw_list) -> None:
        applied.extend(k.raw for k in kw_list)

    melee = w.melee
    # ---- attack dice ---------------------------------------------------------------------------
    per_model = w.attacks.pmf()
    if kws := take("BLAST"):
        values = [k.value.plus if k.value else None for k in kws]
        extra = max(ed.blast_dice(v, target.models) for v in values)
        if any(v is not None for v in values) and not ed.blast_uses_value:
            notes.append(f"{w.name}: BLAST X is an 11e form; in 10e BLAST adds 1 attack per five models.")
        per_model = dice.shift(per_model, extra)
        mark(kws)
    if kws := take("RAPID FIRE"):
        if context.half_range:
            best = max((k.value for k in kws), key=lambda d: d.mean)
            per_model = np.convolve(per_model, best.pmf())
        else:
            notes.append(f"{w.name}: RAPID FIRE needs half range (context.half_range is false).")
        mark(kws)
    if kws := take("CLEAVE"):
        extra = ed.cleave_dice(max(k.value.plus for k in kws), target.models)
        if extra is None:
            ignored.extend(k.raw for k in kws)
            notes.append(f"{w.name}: CLEAVE is an 11e ability and is not modelled in 10e.")
        else:
            per_model = dice.shift(per_model, extra)
            mark(kws)

    # ---- hit roll ------------------------------------------------------------------------------
    torrent = take("TORRENT")
    auto_hit = w.skill is None or torrent is not None
    if torrent:
        mark(torrent)
    skill = w.skill if w.skill is not None else 2
    hit_mod = context.hit_modifier
    reroll_hits = context.reroll_hits
    hit_min = 2
    cover = context.cover and not melee
    if context.cover and melee:
        notes.append(f"{w.name}: the benefit of cover only applies to ranged attacks (this weapon is melee).")
    if kws := take("IGNORES COVER"):
        mark(kws)
        if cover:
            notes.append(f"{w.name}: IGNORES COVER - the target has no benefit of cover.")
        cover_allowed = False
    else:
        cover_allowed = True
    if kws := take("INDIRECT FIRE"):
        if ed.models_indirect_fire and not melee:
            mark(kws)
            cover = cover_allowed  # 10.07: the target has the benefit of cover
            if reroll_hits is not None:
                notes.append(f"{w.name}: INDIRECT FIRE - hit rolls cannot be re-rolled (10.07).")
            reroll_hits = None
            hit_min = ed.indirect_min_unmodified(context.stationary)
            if not auto_hit:
                notes.append(f"{w.name}: INDIRECT FIRE - unmodified hit rolls of 1-{hit_min - 1} fail (10.07).")
        else:
            ignored.extend(k.raw for k in kws)
            if not melee:
                notes.append(f"{w.name}: INDIRECT FIRE is not modelled in 10e (it depends on visibility).")
    cover = cover and cover_allowed
    if kws := take("HEAVY"):
        mark(kws)
        if context.stationary and not melee:
            hit_mod += 1
    hit_mod = clamp(hit_mod, HIT_MODIFIER_CAP)
    if cover and ed.cover_worsens_bs and not auto_hit:
        skill = min(6, skill + 1)
    sustained = None
    if kws := take("SUSTAINED HITS"):
        mark(kws)
        best = max((k.value for k in kws), key=lambda d: d.mean)
        sustained = best.pmf()
    lethal = False
    if kws := take("LETHAL HITS"):
        mark(kws)
        lethal = True
    if auto_hit and (sustained is not None or lethal):
        notes.append(f"{w.name}: automatic hits are never critical hits (01.05.01), so SUSTAINED/LETHAL HITS never trigger.")

    # ---- wound roll ----------------------------------------------------------------------------
    needed = wound_needed(w.strength, target.toughness)
    wound_mod = context.wound_modifier
    if kws := take("LANCE"):
        mark(kws)
        if context.charged:
            wound_mod += 1
    wound_mod = clamp(wound_mod, WOUND_MODIFIER_CAP)
    crit_wound = context.critical_wound
    if kws := take("ANTI"):
        for k in kws:
            if k.anti_keyword in tk:
                crit_wound = min(crit_wound, k.threshold)
                applied.append(k.raw)
            else:
                notes.append(f"{w.name}: {k.raw} - the target lacks {k.anti_keyword}.")
    reroll_wounds = context.reroll_wounds
    if kws := take("TWIN-LINKED"):
        mark(kws)
        if reroll_wounds in (None, "ones"):
            reroll_wounds = "failed"
    devastating = False
    if kws := take("DEVASTATING WOUNDS"):
        mark(kws)
        devastating = True

    # ---- save ----------------------------------------------------------------------------------
    save_threshold = _save_threshold(w, target.save, target.invulnerable, context, ed, cover, notes)

    # ---- damage --------------------------------------------------------------------------------
    dmg = w.damage.pmf()
    if kws := take("MELTA"):
        mark(kws)
        if context.half_range:
            best = max((k.value for k in kws), key=lambda d: d.mean)
            dmg = np.convolve(dmg, best.pmf())
        else:
            notes.append(f"{w.name}: MELTA needs half range (context.half_range is false).")
    weapon_dmg = dmg
    dmg = modified_damage(weapon_dmg, target.damage_set, target.halve_damage, target.damage_reduction)

    hazardous = False
    if kws := take("HAZARDOUS"):
        mark(kws)
        hazardous = True
    precision = False
    if kws := take("PRECISION"):
        mark(kws)
        if target.mixed and any(g.character for g in target.groups):
            precision = True
            notes.append(f"{w.name}: PRECISION - its wounds go to the CHARACTER models while any are left "
                         "(assumed visible; the attacker always chooses them).")
        else:
            notes.append(f"{w.name}: PRECISION changes nothing against a target without a CHARACTER group. "
                         f"{SHARED_RULES['PRECISION']}")
    group_saves: list[int] = []
    group_damage: list[np.ndarray] = []
    group_mortal_damage: list[np.ndarray] = []
    group_fnp: list[float] = []
    group_fnp_mortal: list[float] = []
    if target.mixed:
        for mg in target.groups:
            group_saves.append(_save_threshold(w, mg.save, mg.invulnerable, context, ed, cover, notes))
            group_damage.append(modified_damage(weapon_dmg, mg.damage_set, mg.halve_damage, mg.damage_reduction))
            group_mortal_damage.append(group_damage[-1] if ed.devastating_damage_modified else weapon_dmg)
            keep = _fnp_keep(mg.feel_no_pain)
            group_fnp.append(keep)
            group_fnp_mortal.append(max(keep, _fnp_keep(mg.feel_no_pain_mortal)))

    fnp = _fnp_keep(target.feel_no_pain)
    fnp_m = max(fnp, _fnp_keep(target.feel_no_pain_mortal))
    return ResolvedGroup(
        name=w.name, models=group.models, attacks_per_model=per_model, auto_hit=auto_hit, skill=skill,
        hit_mod=hit_mod, crit_hit=context.critical_hit, hit_min_unmodified=hit_min, reroll_hits=reroll_hits,
        sustained=sustained, lethal=lethal, wound_needed=needed, wound_mod=wound_mod, crit_wound=crit_wound,
        reroll_wounds=reroll_wounds, devastating=devastating, save_threshold=save_threshold, damage=dmg,
        mortal_damage=dmg if ed.devastating_damage_modified else weapon_dmg,
        fnp=fnp, fnp_mortal=fnp_m, hazardous=hazardous, precision=precision, group_saves=group_saves,
        group_damage=group_damage, group_mortal_damage=group_mortal_damage, group_fnp=group_fnp, group_fnp_mortal=group_fnp_mortal, applied=applied,
        ignored=ignored, notes=notes,
    )


def _save_threshold(w, save: int, invulnerable: int | None, context: Context, ed: Edition, cover: bool,
                    notes: list[str]) -> int:
    """Lowest unmodified save roll that saves, for one model's Sv and invulnerable save (10e seed
    Saving Throw, 11e 05.04). The 10e cover exception (Sv 3+ against AP 0) reads this model's save."""
    armour_mod = w.ap + context.save_modifier
    if cover and ed.cover_improves_save:
        if save <= 3 and w.ap == 0:
            note = "Cover: a Save of 3+ or better gets no benefit of cover against AP 0 (10e)."
            if note not in notes:
                notes.append(note)
        else:
            armour_mod += 1
    invuln_mod = context.save_modifier
    if ed.save_improvement_cap is not None:
        armour_mod = min(armour_mod, ed.save_improvement_cap)
        invuln_mod = min(invuln_mod, ed.save_improvement_cap)
    threshold = save - armour_mod  # Sv 7 (no save) can still be reached by +1 cover in 10e
    if invulnerable is not None:
        threshold = min(threshold, invulnerable - invuln_mod)
    return max(threshold, 2)


def modified_damage(dmg: np.ndarray, damage_set: int | None, halve: bool, reduction: int) -> np.ndarray:
    """Damage pmf after the target's modifiers, in contract 1's order: set the Damage characteristic,
    halve it (rounding up), then subtract `reduction` (to a minimum of 1). See docs/rules-notes.md."""
    if damage_set is None and not halve and not reduction:
        return dmg
    out = np.zeros(max(dmg.size, (damage_set or 0) + 1))
    for v, p in enumerate(dmg):
        if not p:
            continue
        d = v
        if d and damage_set is not None:
            d = damage_set
        if d and halve:
            d = (d + 1) // 2
        if d and reduction:
            d = max(1, d - reduction)
        out[d] += p
    return np.trim_zeros(out, "b")
