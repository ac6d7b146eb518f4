# ruff: noqa: B023  (the per-group closures are only called inside their own loop iteration)
"""Brute-force reference: enumerate every die of a tiny volley, one attack at a time.

Written independently of engine.rules/engine.exact from the rule texts (scalar code, no numpy
convolutions): each D6 (attack count, hit, re-roll, SUSTAINED D3, wound, save, damage, every Feel No
Pain roll) is branched on explicitly, and identical game states are merged in a dict. Only usable for
a handful of dice, which is the point: it is slow and obviously right.
"""

from __future__ import annotations

from collections import defaultdict

from engine.profiles import Keyword, parse_keyword

D6 = range(1, 7)


def dice_faces(expr) -> list[tuple[int, float]]:
    """(value, probability) pairs of "3", "D3", "D6", "2D6", "D6+2" by enumerating D6 faces."""
    if isinstance(expr, int):
        return [(expr, 1.0)]
    text = expr.upper().replace(" ", "")
    plus = 0
    if "+" in text:
        text, p = text.split("+")
        plus = int(p)
    if "D" not in text:
        return [(int(text) + plus, 1.0)]
    n, faces = text.split("D")
    n = int(n) if n else 1
    out: dict[int, float] = {0: 1.0}
    for _ in range(n):
        nxt: dict[int, float] = defaultdict(float)
        for v, p in out.items():
            for f in D6:
                face = (f + 1) // 2 if faces == "3" else f
                nxt[v + face] += p / 6
        out = nxt
    return [(v + plus, p) for v, p in out.items()]


def _kw(weapon: dict, target_kw: set[str]) -> dict[str, Keyword]:
    out = {}
    for raw in weapon.get("keywords", []):
        k = parse_keyword(raw)
        if k.known and (k.condition is None or k.condition.holds(frozenset(target_kw))):
            out[k.name] = k
    return out


def brute(req: dict) -> dict:
    """models_killed pmf, damage pmf and stage means by exhaustive enumeration."""
    ed = req.get("edition", "11e")
    t = req["target"]
    ctx = req.get("context", {})
    K, W = t["models"], t["wounds"]
    tkw = {k.upper() for k in t.get("keywords", [])}
    fnp = t.get("feel_no_pain")
    fnp_m = t.get("feel_no_pain_mortal")
    fnp_m = min(x for x in (fnp, fnp_m, 7) if x is not None)
    fnp = fnp if fnp is not None else 7
    dr = t.get("damage_reduction", 0)
    # state: (killed, lost, deferred-dev count this group, 10e pending mortal wounds) -> probability
    states: dict[tuple, float] = {(0, t.get("wounds_lost", 0), 0, 0): 1.0}
    stages = defaultdict(float)

    def damage_events(expr, melta, reduce=True):
        """(damage value, probability) after MELTA and damage reduction (min 1)."""
        out = defaultdict(float)
        for d, p in dice_faces(expr):
            for m, pm in melta:
                out[max(1, d + m - dr) if dr and reduce else d + m] += p * pm
        return list(out.items())

    def lose(state, n_wounds, keep_on):
        """Branch on each Feel No Pain roll; wounds left after the model is destroyed are lost."""
        out = defaultdict(float)
        out[(state, False)] = 1.0
        for _ in range(n_wounds):
            nxt = defaultdict(float)
            for ((k, j, dv, pend), done), p in out.items():
                if done or k >= K:
                    nxt[((k, j, dv, pend), True)] += p
                    continue
                for f in D6:
                    if f >= keep_on:
                        nxt[((k, j, dv, pend), False)] += p / 6
                    elif j + 1 >= W:
                        nxt[((k + 1, 0, dv, pend), True)] += p / 6
                    else:
                        nxt[((k, j + 1, dv, pend), False)] += p / 6
            out = nxt
        res = defaultdict(float)
        for (st, _done), p in out.items():
            res[st] += p
        return res

    for group in req["volley"]:
        wpn = group["weapon"]
        kw = _kw(wpn, tkw)
        melee = wpn.get("range") == "melee"
        n_models = group.get("models", 1)
        # ---- attack dice count
        extra = 0
        if "BLAST" in kw:
            x = kw["BLAST"].value.plus if (kw["BLAST"].value and ed == "11e") else 1
            extra += x * (K // 5)
        if "CLEAVE" in kw and ed == "11e":
            extra += kw["CLEAVE"].value.plus * (K // 5)
        rf = [(0, 1.0)]
        if "RAPID FIRE" in kw and ctx.get("half_range"):
            rf = dice_faces(str(kw["RAPID FIRE"].value))
        count = {0: 1.0}
        for _ in range(n_models):
            nxt = defaultdict(float)
            for c, p in count.items():
                for a, pa in dice_faces(wpn["attacks"]):
                    for r, pr in rf:
                        nxt[c + a + extra + r] += p * pa * pr
            count = nxt
        # ---- per-roll rules
        torrent = wpn.get("skill") is None or "TORRENT" in kw
        indirect = "INDIRECT FIRE" in kw and ed == "11e" and not melee
        cover = ctx.get("cover", False) and not melee and "IGNORES COVER" not in kw
        if indirect and "IGNORES COVER" not in kw:
            cover = True
        bs = wpn.get("skill") or 2
        if cover and ed == "11e":
            bs = min(6, bs + 1)
        hmod = ctx.get("hit_modifier", 0) + (1 if "HEAVY" in kw and ctx.get("stationary") and not melee else 0)
        hmod = max(-1, min(1, hmod))
        hmin = (4 if ctx.get("stationary") else 6) if indirect else 2
        hcrit = ctx.get("critical_hit", 6)
        hre = None if indirect else ctx.get("reroll_hits")

        def hit_cat(r):
            if r == 1 or r < hmin:
                return 0
            if r >= hcrit:
                return 2
            return 1 if r + hmod >= bs else 0

        s, tough = wpn["strength"], t["toughness"]
        need = 2 if s >= 2 * tough else 3 if s > tough else 4 if s == tough else 6 if 2 * s <= tough else 5
        wmod = ctx.get("wound_modifier", 0) + (1 if "LANCE" in kw and ctx.get("charged") else 0)
        wmod = max(-1, min(1, wmod))
        wcrit = ctx.get("critical_wound", 6)
        if "ANTI" in kw and kw["ANTI"].anti_keyword in tkw:
            wcrit = min(wcrit, kw["ANTI"].threshold)
        wre = ctx.get("reroll_wounds")
        if "TWIN-LINKED" in kw and wre in (None, "ones"):
            wre = "failed"

        def wound_cat(r):
            if r == 1:
                return 0
            if r >= wcrit:
                return 2
            return 1 if r + wmod >= need else 0

        def rolled(cat_fn, policy):
            """Distribution of the category of one roll with its re-roll policy."""
            out = defaultdict(float)
            for r in D6:
                c = cat_fn(r)
                again = (policy == "ones" and r == 1) or (policy == "failed" and c == 0) or (
                    policy == "non_critical" and c != 2)
                if again:
                    for r2 in D6:
                        out[cat_fn(r2)] += 1 / 36
                else:
                    out[c] += 1 / 6
            return out

        ap, sv, inv, smod = wpn.get("ap", 0), t["save"], t.get("invulnerable"), ctx.get("save_modifier", 0)

        def saved(r):
            if r == 1:
                return False
            if ed == "10e":
                am = ap + smod + (1 if cover and not (sv <= 3 and ap == 0) else 0)
                ok = r + min(am, 1) >= sv
                return ok or (inv is not None and r + min(smod, 1) >= inv)
            return r + ap + smod >= sv or (inv is not None and r + smod >= inv)

        p_fail_save = sum(1 for r in D6 if not saved(r)) / 6
        melta = [(0, 1.0)]
        if "MELTA" in kw and ctx.get("half_range"):
            melta = dice_faces(str(kw["MELTA"].value))
        dmg = damage_events(wpn["damage"], melta)
        # DEVASTATING mortal wounds: 10e after the model's modifiers; 11e 24.10 before any (MELTA only)
        dmg_dev = dmg if ed == "10e" else damage_events(wpn["damage"], melta, reduce=False)
        dev = "DEVASTATING WOUNDS" in kw
        lethal = "LETHAL HITS" in kw
        sus = dice_faces(str(kw["SUSTAINED HITS"].value)) if "SUSTAINED HITS" in kw else [(0, 1.0)]
        hit_dist = {1: 1.0} if torrent else rolled(hit_cat, hre)
        wound_dist = rolled(wound_cat, wre)

        def one_wounded_hit(states_in, auto):
            """Resolve one hit that has wounded (or auto-wounded): save, damage, FNP."""
            out = defaultdict(float)
            for st, p in states_in.items():
                out[st] += p * (1 - p_fail_save)
                for d, pd in dmg:
                    for st2, p2 in lose(st, d, fnp).items():
                        out[st2] += p * p_fail_save * pd * p2
            return out

        def one_hit(states_in):
            out = defaultdict(float)
            for cat, pc in wound_dist.items():
                if cat == 0:
                    for st, p in states_in.items():
                        out[st] += p * pc
                elif cat == 2 and dev:
                    for (k, j, dv, pend), p in states_in.items():
                        out[(k, j, dv + 1, pend)] += p * pc
                else:
                    for st, p in one_wounded_hit(states_in, False).items():
                        out[st] += p * pc
            return out

        # stage means (linearity: expectation per die times expected dice)
        e_dice = sum(c * p for c, p in count.items())
        e_sus = sum(x * p for x, p in sus)
        ph, pc = hit_dist.get(1, 0.0), hit_dist.get(2, 0.0)
        e_hits = ph + pc * (1 + (0 if torrent else e_sus))
        p_w = wound_dist.get(1, 0.0) + wound_dist.get(2, 0.0)
        rolled_hits = ph + pc * ((0 if torrent else e_sus) + (0 if lethal and not torrent else 1))
        auto_w = pc if (lethal and not torrent) else 0.0
        stages["attacks"] += e_dice
        stages["hits"] += e_dice * e_hits
        stages["wounds"] += e_dice * (rolled_hits * p_w + auto_w)
        p_devcrit = wound_dist.get(2, 0.0) if dev else 0.0
        stages["unsaved"] += e_dice * (rolled_hits * (p_devcrit + (p_w - p_devcrit) * p_fail_save) + auto_w * p_fail_save)

        new_states = defaultdict(float)
        for c, pcount in count.items():
            cur = dict(states)
            for _ in range(c):
                nxt = defaultdict(float)
                for cat, pcat in hit_dist.items():
                    if cat == 0:
                        for st, p in cur.items():
                            nxt[st] += p * pcat
                        continue
                    if cat == 2 and not torrent:
                        for x, px in sus:
                            part = dict(cur)
                            part = one_wounded_hit(part, True) if lethal else one_hit(part)
                            for _ in range(x):
                                part = one_hit(part)
                            for st, p in part.items():
                                nxt[st] += p * pcat * px
                    else:
                        for st, p in one_hit(cur).items():
                            nxt[st] += p * pcat
                cur = nxt
            for st, p in cur.items():
                new_states[st] += p * pcount
        # devastating wounds of this group
        states = defaultdict(float)
        for (k, j, dv, pend), p in new_states.items():
            part = {(k, j, 0, pend): 1.0}
            for _ in range(dv):
                nxt = defaultdict(float)
                for st, q in part.items():
                    for d, pd in dmg_dev:
                        if ed == "10e":  # mortal wounds pending until the end of the volley, after FNP
                            for st2, p2 in _fnp_count(st, d, fnp_m).items():
                                nxt[st2] += q * pd * p2
                        else:
                            for st2, p2 in lose(st, d, fnp_m).items():
                                nxt[st2] += q * pd * p2
                part = nxt
            for st, q in part.items():
                states[st] += p * q
    # 10e: pending mortal wounds spill over at the end
    flat = defaultdict(float)
    for (k, j, _dv, pend), p in states.items():
        f = min(k * W + j + pend, K * W)
        flat[f] += p
    killed = [0.0] * (K + 1)
    damage = [0.0] * (K * W - t.get("wounds_lost", 0) + 1)
    for f, p in flat.items():
        killed[f // W] += p
        damage[f - t.get("wounds_lost", 0)] += p
    return {"killed": killed, "damage": damage, "stages": dict(stages)}


def _fnp_count(state, d, keep_on):
    """10e: roll FNP for each of d mortal wounds now; the survivors wait on the pending counter."""
    out = defaultdict(float)
    out[state] = 1.0
    for _ in range(d):
        nxt = defaultdict(float)
        for (k, j, dv, pend), p in out.items():
            for f in D6:
                if f >= keep_on:
                    nxt[(k, j, dv, pend)] += p / 6
                else:
                    nxt[(k, j, dv, pend + 1)] += p / 6
        out = nxt
    return out


# ------------------------------------------------------------------------------------------------
# Mixed targets (contract 1b), written from the contract's text: every model is tracked on its own.
# ------------------------------------------------------------------------------------------------


def _model_damage(expr, melta, grp) -> list[tuple[int, float]]:
    """(damage, probability) after MELTA, then the receiving model's set / halve / reduction."""
    out = defaultdict(float)
    for d, p in dice_faces(expr):
        for m, pm in melta:
            v = d + m
            if grp.get("damage_set") is not None:
                v = grp["damage_set"]
            if grp.get("halve_damage"):
                v = -(-v // 2)
            if grp.get("damage_reduction", 0):
                v = max(1, v - grp["damage_reduction"])
            out[v] += p * pm
    return list(out.items())


def brute_mixed(req: dict) -> dict:
    """Unit pmf, per-group pmfs, damage pmf and stage means for a target with `groups`, by enumeration.

    State: (wounds lost per model, 10e pending mortal wounds per weapon, index of the last model
    destroyed, this weapon's deferred 11e critical wounds)."""
    ed = req.get("edition", "11e")
    t = req["target"]
    groups = t["groups"]
    ctx = req.get("context", {})
    models = []  # (group index, W, character)
    for gi, g in enumerate(groups):
        models += [(gi, g["wounds"], bool(g.get("character")))] * g["models"]
    K = len(models)
    body = [g["toughness"] for g in groups if not g.get("character")]
    tough = max(body or [g["toughness"] for g in groups])
    tkw = {k.upper() for k in t.get("keywords", [])}
    first = next((i for i, m in enumerate(models) if not m[2]), 0)
    lost0 = [0] * K
    lost0[first] = t.get("wounds_lost", 0)
    n_weapons = len(req["volley"])
    states: dict[tuple, float] = {(tuple(lost0), (0,) * n_weapons, -1, 0): 1.0}
    stages = defaultdict(float)

    def receiver(lost, precision):
        """The model the next wound goes to, by contract 1b, or None when the unit is destroyed."""
        alive = [i for i in range(K) if lost[i] < models[i][1]]
        nonchar = [i for i in alive if not models[i][2]]
        chars = [i for i in alive if models[i][2]]
        order = (chars, nonchar) if precision else (nonchar, chars)
        for side in order:
            wounded = [i for i in side if lost[i] > 0]
            if wounded:
                return wounded[0]
            if side:
                return side[0]
        return None

    def fnp_of(i, mortal):
        g = groups[models[i][0]]
        f = g.get("feel_no_pain")
        if mortal:
            f = min(x for x in (f, g.get("feel_no_pain_mortal"), 7) if x is not None)
        return f if f is not None else 7

    def lose(st, i, n, mortal):
        """Model i takes n wounds one by one, each with its Feel No Pain; excess is lost."""
        out = defaultdict(float)
        out[st] = 1.0
        keep_on = fnp_of(i, mortal)
        for _ in range(n):
            nxt = defaultdict(float)
            for (lost, pend, last, dv), p in out.items():
                if lost[i] >= models[i][1]:
                    nxt[(lost, pend, last, dv)] += p
                    continue
                for f in D6:
                    if f >= keep_on:
                        nxt[(lost, pend, last, dv)] += p / 6
                    else:
                        nl = list(lost)
                        nl[i] += 1
                        nxt[(tuple(nl), pend, i if nl[i] >= models[i][1] else last, dv)] += p / 6
            out = nxt
        return out

    for wi, group in enumerate(req["volley"]):
        wpn = group["weapon"]
        kw = _kw(wpn, tkw)
        melee = wpn.get("range") == "melee"
        precision = "PRECISION" in kw and any(m[2] for m in models)
        extra = 0
        if "BLAST" in kw:
            x = kw["BLAST"].value.plus if (kw["BLAST"].value and ed == "11e") else 1
            extra += x * (K // 5)
        if "CLEAVE" in kw and ed == "11e":
            extra += kw["CLEAVE"].value.plus * (K // 5)
        rf = [(0, 1.0)]
        if "RAPID FIRE" in kw and ctx.get("half_range"):
            rf = dice_faces(str(kw["RAPID FIRE"].value))
        count = {0: 1.0}
        for _ in range(group.get("models", 1)):
            nxt = defaultdict(float)
            for c, p in count.items():
                for a, pa in dice_faces(wpn["attacks"]):
                    for r, pr in rf:
                        nxt[c + a + extra + r] += p * pa * pr
            count = nxt
        torrent = wpn.get("skill") is None or "TORRENT" in kw
        cover = ctx.get("cover", False) and not melee and "IGNORES COVER" not in kw
        bs = wpn.get("skill") or 2
        if cover and ed == "11e":
            bs = min(6, bs + 1)
        hmod = max(-1, min(1, ctx.get("hit_modifier", 0)))
        hcrit = ctx.get("critical_hit", 6)

        def hit_cat(r):
            if r == 1:
                return 0
            if r >= hcrit:
                return 2
            return 1 if r + hmod >= bs else 0

        s = wpn["strength"]
        need = 2 if s >= 2 * tough else 3 if s > tough else 4 if s == tough else 6 if 2 * s <= tough else 5
        wmod = max(-1, min(1, ctx.get("wound_modifier", 0)))
        wcrit = ctx.get("critical_wound", 6)
        if "ANTI" in kw and kw["ANTI"].anti_keyword in tkw:
            wcrit = min(wcrit, kw["ANTI"].threshold)
        wre = ctx.get("reroll_wounds")
        if "TWIN-LINKED" in kw and wre in (None, "ones"):
            wre = "failed"

        def wound_cat(r):
            if r == 1:
                return 0
            if r >= wcrit:
                return 2
            return 1 if r + wmod >= need else 0

        def rolled(cat_fn, policy):
            out = defaultdict(float)
            for r in D6:
                c = cat_fn(r)
                again = (policy == "ones" and r == 1) or (policy == "failed" and c == 0) or (
                    policy == "non_critical" and c != 2)
                if again:
                    for r2 in D6:
                        out[cat_fn(r2)] += 1 / 36
                else:
                    out[c] += 1 / 6
            return out

        ap, smod = wpn.get("ap", 0), ctx.get("save_modifier", 0)

        def p_fail(i):
            g = groups[models[i][0]]
            sv, inv = g["save"], g.get("invulnerable")

            def saved(r):
                if r == 1:
                    return False
                if ed == "10e":
                    am = ap + smod + (1 if cover and not (sv <= 3 and ap == 0) else 0)
                    return r + min(am, 1) >= sv or (inv is not None and r + min(smod, 1) >= inv)
                return r + ap + smod >= sv or (inv is not None and r + smod >= inv)

            return sum(1 for r in D6 if not saved(r)) / 6

        melta = [(0, 1.0)]
        if "MELTA" in kw and ctx.get("half_range"):
            melta = dice_faces(str(kw["MELTA"].value))
        dev = "DEVASTATING WOUNDS" in kw
        lethal = "LETHAL HITS" in kw
        sus = dice_faces(str(kw["SUSTAINED HITS"].value)) if "SUSTAINED HITS" in kw else [(0, 1.0)]
        hit_dist = {1: 1.0} if torrent else rolled(hit_cat, ctx.get("reroll_hits"))
        wound_dist = rolled(wound_cat, wre)
        chars = [i for i in range(K) if models[i][2]]
        amount_model = chars[0] if precision else first  # 10e: whose damage modifiers set the amount

        def one_wounded_hit(states_in):
            """One wound that needs a saving throw: allocate, save of that model, damage, FNP."""
            out = defaultdict(float)
            for st, p in states_in.items():
                lost, pend, last, dv = st
                i = receiver(lost, precision)
                pf = p_fail(i if i is not None else last)
                stages["unsaved"] += p * pf
                out[st] += p * (1 - pf)
                if i is None:
                    out[st] += p * pf
                    continue
                for d, pd in _model_damage(wpn["damage"], melta, groups[models[i][0]]):
                    for st2, p2 in lose(st, i, d, False).items():
                        out[st2] += p * pf * pd * p2
            return out

        def one_hit(states_in):
            out = defaultdict(float)
            for cat, pc in wound_dist.items():
                if cat == 0:
                    for st, p in states_in.items():
                        out[st] += p * pc
                elif cat == 2 and dev:
                    for (lost, pend, last, dv), p in states_in.items():
                        stages["unsaved"] += p * pc
                        out[(lost, pend, last, dv + 1)] += p * pc
                else:
                    for st, p in one_wounded_hit({st: q * pc for st, q in states_in.items()}).items():
                        out[st] += p
            return out

        e_dice = sum(c * p for c, p in count.items())
        e_sus = sum(x * p for x, p in sus)
        ph, pcr = hit_dist.get(1, 0.0), hit_dist.get(2, 0.0)
        stages["attacks"] += e_dice
        stages["hits"] += e_dice * (ph + pcr * (1 + (0 if torrent else e_sus)))
        p_w = wound_dist.get(1, 0.0) + wound_dist.get(2, 0.0)
        rolled_hits = ph + pcr * ((0 if torrent else e_sus) + (0 if lethal and not torrent else 1))
        stages["wounds"] += e_dice * (rolled_hits * p_w + (pcr if (lethal and not torrent) else 0.0))

        new_states = defaultdict(float)
        for c, pcount in count.items():
            cur = {st: p * pcount for st, p in states.items()}  # weighted: stage sums stay expectations
            for _ in range(c):
                nxt = defaultdict(float)
                for cat, pcat in hit_dist.items():
                    if cat == 0:
                        for st, p in cur.items():
                            nxt[st] += p * pcat
                        continue
                    if cat == 2 and not torrent:
                        for x, px in sus:
                            part = {st: p * pcat * px for st, p in cur.items()}
                            part = one_wounded_hit(part) if lethal else one_hit(part)
                            for _ in range(x):
                                part = one_hit(part)
                            for st, p in part.items():
                                nxt[st] += p
                    else:
                        for st, p in one_hit({st: p * pcat for st, p in cur.items()}).items():
                            nxt[st] += p
                cur = nxt
            for st, p in cur.items():
                new_states[st] += p
        # this weapon's devastating wounds
        states = defaultdict(float)
        for (lost, pend, last, dv), p in new_states.items():
            part = {(lost, pend, last, 0): 1.0}
            for _ in range(dv):
                nxt = defaultdict(float)
                for st, q in part.items():
                    lost2, pend2, last2, _ = st
                    if ed == "10e":  # pending until the end of the volley, recorded per weapon
                        for d, pd in _model_damage(wpn["damage"], melta, groups[models[amount_model][0]]):
                            pl = list(pend2)
                            pl[wi] += d
                            nxt[(lost2, tuple(pl), last2, 0)] += q * pd
                        continue
                    i = receiver(lost2, precision)
                    if i is None:
                        nxt[st] += q
                        continue
                    # 11e 24.10: the attack sequence ends before allocation, so the model's damage
                    # modifiers do not change the mortal wounds (only MELTA does)
                    for d, pd in _model_damage(wpn["damage"], melta, {}):
                        for st2, p2 in lose(st, i, d, True).items():
                            nxt[st2] += q * pd * p2
                part = nxt
            for st, q in part.items():
                states[st] += p * q
    # 10e: pending mortal wounds, weapon by weapon in volley order, one at a time (spilling over)
    if ed == "10e":
        for wi, group in enumerate(req["volley"]):
            kw = _kw(group["weapon"], tkw)
            precision = "PRECISION" in kw and any(m[2] for m in models)
            done = defaultdict(float)
            for st, p in states.items():
                part = {st: p}
                for _ in range(st[1][wi]):
                    nxt = defaultdict(float)
                    for st2, q in part.items():
                        i = receiver(st2[0], precision)
                        if i is None:
                            nxt[st2] += q
                            continue
                        for st3, q3 in lose(st2, i, 1, True).items():
                            nxt[st3] += q * q3
                    part = nxt
                for (lost, pend, last, dv), q in part.items():
                    done[(lost, pend[:wi] + (0,) + pend[wi + 1 :], last, dv)] += q
            states = done
    killed = [0.0] * (K + 1)
    per_group = [[0.0] * (g["models"] + 1) for g in groups]
    total_w = sum(m[1] for m in models)
    damage = [0.0] * (total_w - t.get("wounds_lost", 0) + 1)
    for (lost, _pend, _last, _dv), p in states.items():
        dead = [lost[i] >= models[i][1] for i in range(K)]
        killed[sum(dead)] += p
        for gi in range(len(groups)):
            per_group[gi][sum(1 for i in range(K) if dead[i] and models[i][0] == gi)] += p
        damage[sum(lost) - t.get("wounds_lost", 0)] += p
    return {"killed": killed, "groups": per_group, "damage": damage, "stages": dict(stages)}
