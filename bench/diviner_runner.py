"""Run scenarios through W40kDiviner's exact engine, for bench/bench_mixed.py (side by side, in a separate
process) and bench/bench_engine_limit.py (in the bench's own process, call by call).

W40kDiviner (github.com/aturchi/W40kDiviner, GPL-3.0) is NOT part of this repository and none of its
code is copied here: its modules are imported from the path of a local checkout of its `src/` folder,
and its public engine functions (attack_math.analyze_weapon, kill_chain.resolve) are called the way its
own headless tests do.

stdin: JSON list of scenarios {"ref": {T, Sv, W, invuln, fnp, models, keywords}, "weapons": [{name,
type, A, skill, S, AP, D, count, keywords}], "ctx": {...}, "damage": {"set", "mult", "add"},
"repeats": int}; stdout: JSON list of {"kills_mean", "removed_mean", "seconds": [CPU time per repeat]}.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from typing import Any


def runner(src: str) -> Callable[[dict[str, Any]], Callable[[], dict[str, Any]]]:
    """For a W40kDiviner `src/` path: scenario -> a function that runs it once through W40kDiviner and
    returns kill_chain.resolve's result (`kills`, `removed` pmfs)."""
    if src not in sys.path:
        sys.path.insert(0, src)
    import attack_math as am  # noqa: PLC0415  (W40kDiviner, from the path given)
    import kill_chain as kc  # noqa: PLC0415
    from unit_model import Weapon  # noqa: PLC0415

    def prepare(sc: dict[str, Any]) -> Callable[[], dict[str, Any]]:
        ref = dict(sc["ref"], keywords=set(sc["ref"]["keywords"]))

        def once() -> dict[str, Any]:
            allocs = []
            for w in sc["weapons"]:
                weapon = Weapon(name=w["name"], wtype=w["type"], A=w["A"], skill=w["skill"], S=w["S"],
                                AP=w["AP"], D=w["D"], count=w["count"], keywords=w["keywords"])
                mech = am.WeaponMechanics()
                am.parse_weapon_keywords(list(w["keywords"]), mech)
                dm = sc.get("damage") or {}
                if dm.get("set") is not None:
                    mech.dmg_set = dm["set"]
                mech.dmg_mult = dm.get("mult", 1.0)
                mech.dmg_add = dm.get("add", 0)
                res = am.analyze_weapon(weapon, ref, dict(sc["ctx"]), mech, alloc=True)
                allocs.append(res["alloc"])
            return kc.resolve(allocs, ref["W"], ref["models"])

        return once

    return prepare


def main() -> None:
    prepare = runner(sys.argv[1])
    out = []
    for sc in json.load(sys.stdin):
        once = prepare(sc)
        seconds = []
        res = once()
        for _ in range(sc["repeats"]):
            t = time.process_time()  # CPU time: comparable with the bench's, whatever the host's load
            res = once()
            seconds.append(time.process_time() - t)
        out.append({"kills_mean": sum(i * p for i, p in enumerate(res["kills"])),
                    "removed_mean": sum(i * p for i, p in enumerate(res["removed"])),
                    "seconds": seconds})
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
