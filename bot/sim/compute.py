"""What a simulation computes, wherever it runs (a worker process of bot.sim.pool, or a thread of the bot
in bot.sim.service): the engine's checks and the chat trial budget (`prepare`), the run and its chart
(`compute`), and the engine's refusals put into the words of the profile strings and command options.

It sits below both the pool's worker and the service, so the worker needs nothing from the service
that starts it (no import cycle).
"""

from __future__ import annotations

import re
from typing import Any

from bot.errors import UserError
from bot.ops.metrics import COST_REFUSALS

# Monte Carlo in chat: the engine rolls about 2-3e7 attack dice a second here, so 100,000 trials of a
# 600-dice volley already take ~3 s. Trials are reduced (never below MIN_TRIALS) to stay within this
# many dice rolls, about 2 s; the embed says so and shows the standard errors.
DEFAULT_TRIALS = 100_000
MIN_TRIALS = 10_000
MONTECARLO_ROLL_BUDGET = 50_000_000

# Engine field paths (contract 1) in the words of the profile strings and command options.
_WEAPON_FIELDS = {
    "attacks": "A",
    "skill": "BS/WS",
    "strength": "S",
    "ap": "AP",
    "damage": "D",
    "keywords": "kw",
    "range": "range",
    "name": "name",
}
_TARGET_FIELDS = {
    "models": "target models",
    "toughness": "target T",
    "save": "target Sv",
    "invulnerable": "target inv",
    "wounds": "target W",
    "feel_no_pain": "target fnp",
    "feel_no_pain_mortal": "target fnp_mortal",
    "damage_reduction": "target dr",
    "keywords": "target kw",
    "wounds_lost": "target wounds_lost",
}


def describe_field(path: str | None) -> str | None:
    """`volley[1].weapon.attacks` -> `weapon 2 A`; `target.save` -> `target Sv`; unknown paths unchanged."""
    if not path:
        return None
    match = re.fullmatch(r"volley\[(\d+)\](?:\.weapon)?\.?(\w+)?(?:\[\d+\])?", path)
    if match:
        index = int(match.group(1)) + 1
        leaf = match.group(2)
        if leaf is None:
            return f"weapon {index}"
        if leaf == "models":
            return f"weapon {index} models"
        return f"weapon {index} {_WEAPON_FIELDS.get(leaf, leaf)}"
    match = re.fullmatch(r"target\.(\w+)(?:\[\d+\])?", path)
    if match:
        return _TARGET_FIELDS.get(match.group(1), f"target {match.group(1)}")
    if path.startswith("context."):
        return path.removeprefix("context.")
    return path


def _montecarlo_would_accept(request: dict[str, Any]) -> bool:
    """True when an exact request was refused for its size only: the same request passes all of the
    engine's checks, size limits included, as Monte Carlo with the fewest trials chat would use (bad
    profiles fail either way, so they get no such hint)."""
    if request.get("method", "exact") != "exact":
        return False
    try:
        from engine import prepare

        prepare({**request, "method": "montecarlo", "trials": MIN_TRIALS})
    except Exception:
        return False
    return True


# The engine phrases its advice for JSON callers; Discord users get the option syntax instead.
_JSON_ADVICE = re.compile(r';?\s*use\s+"method":\s*"montecarlo"', re.IGNORECASE)


def _user_error(message: str, field: str | None, request: dict[str, Any]) -> UserError:
    """Turn an engine RequestError into words for Discord; size-limit refusals suggest Monte Carlo.

    A refusal for size counts in `cogitator_sim_cost_refusals`: an exact request Monte Carlo would accept, or a
    Monte Carlo request refused on its trials (its work or estimated cost)."""
    label = describe_field(field)
    text = _JSON_ADVICE.sub("", message).strip().rstrip(".")
    if label and label.lower() not in text.lower():
        text = f"{label}: {text}"
    text += "."
    if _montecarlo_would_accept(request):
        COST_REFUSALS.inc()
        text += " That is beyond what the exact engine computes; try `method: montecarlo`."
    elif request.get("method") == "montecarlo" and field == "trials":
        COST_REFUSALS.inc()
    return UserError(text, field=field)


def _engine_message(error: Exception) -> str:
    return getattr(error, "message", None) or (str(error.args[0]) if error.args else str(error))


def _attack_dice_per_trial(groups: list[Any]) -> int:
    """Most attack dice one trial can roll (what Monte Carlo time is proportional to)."""
    return sum(int(g.models) * (len(g.attacks_per_model) - 1) for g in groups)


def prepare(request: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Every check the engine makes before working (validation and size limits), as a UserError, and
    the Monte Carlo trial budget for chat. Cheap, so the cog runs it before deferring and bad requests
    get an ephemeral reply. Returns the request to run and notes for the embed."""
    from engine import RequestError
    from engine import prepare as engine_prepare

    notes: list[str] = []
    budgeted = request.get("method") == "montecarlo" and "trials" not in request
    try:
        if not budgeted:
            engine_prepare(request)
            return request, notes
        _, groups = engine_prepare({**request, "trials": MIN_TRIALS})
        per_trial = max(1, _attack_dice_per_trial(groups))
        trials = max(MIN_TRIALS, min(DEFAULT_TRIALS, MONTECARLO_ROLL_BUDGET // per_trial) // 1000 * 1000)
        while True:  # the engine's own work limit may be tighter than the chat budget
            try:
                engine_prepare({**request, "trials": trials})
                break
            except RequestError as error:
                if getattr(error, "field", None) != "trials" or trials <= MIN_TRIALS:
                    raise
                trials = max(MIN_TRIALS, trials // 2 // 1000 * 1000)
    except RequestError as error:
        raise _user_error(_engine_message(error), getattr(error, "field", None), request) from None
    if trials < DEFAULT_TRIALS:
        notes.append(f"Monte Carlo trials reduced to {trials:,} for this large volley, to answer in seconds")
    return {**request, "trials": trials}, notes


def compute(
    request: dict[str, Any], plot_title: str | None, with_plot: bool
) -> tuple[dict[str, Any], bytes]:
    """Simulate, then draw (the body of a worker process or thread). Imports are local so a missing engine is a clear error."""
    from engine import RequestError, simulate
    from engine.plot import plot_models_killed

    try:
        result = simulate(request)
    except RequestError as error:
        raise _user_error(_engine_message(error), getattr(error, "field", None), request) from None
    png = plot_models_killed(result, title=plot_title) if with_plot else b""
    return result, png


def check_request(request: dict[str, Any]) -> tuple[dict[str, Any], float]:
    """One request of a batch (a /sim matchup cell): the engine's checks as a UserError, and its estimated
    seconds, which the batch adds up against its own budget before any of it runs."""
    from engine import RequestError
    from engine.api import estimate
    from engine.api import prepare as engine_prepare

    try:
        req, groups = engine_prepare(request)
    except RequestError as error:
        raise _user_error(_engine_message(error), getattr(error, "field", None), request) from None
    return request, float(estimate(req, groups)["seconds"])


def evaluate_row(requests: list[dict[str, Any]]) -> list[dict[str, float]]:
    """A /sim matchup row (checked requests, no chart) as one engine batch (engine.evaluate_batch: compiled
    plans shared by value, the row's summed estimate checked again against the engine's batch limit): per
    request the chance the target is destroyed, the expected models destroyed and the expected share of
    its models destroyed."""
    from engine import RequestError, evaluate_batch

    if not requests:
        return []
    try:
        batch = evaluate_batch(requests)
    except RequestError as error:
        raise UserError(_engine_message(error), field=getattr(error, "field", None)) from None
    return [{"p_destroy": float(p), "expected_models": float(k), "share": float(k) / int(n) if n else 0.0}
            for p, k, n in zip(batch.p_wipe, batch.killed_mean, batch.models, strict=True)]


def compare(requests: list[dict[str, Any]], labels: list[str], title: str) -> tuple[list[dict[str, Any]], bytes]:
    """/sim compare: the variants' results (one engine batch) and their overlaid chart."""
    from engine import RequestError, evaluate_batch
    from engine.compare_chart import plot_compare

    try:
        results = evaluate_batch(requests).results
    except RequestError as error:
        raise UserError(_engine_message(error), field=getattr(error, "field", None)) from None
    png = plot_compare([r["models_killed"]["pmf"] for r in results], labels,
                       [r["models_killed"]["mean"] for r in results], title=title)
    return results, png


def draw_matchup(rows: list[str], columns: int, shades: list[list[float | None]], labels: list[list[str]],
                 best: list[int | None], title: str, scale: str) -> bytes:
    """/sim matchup's heatmap PNG (engine.heatmap), drawn in a worker (bot.render.matchup.picture_inputs)."""
    from engine.heatmap import draw_heatmap

    return draw_heatmap(rows, columns, shades, labels, best, title=title, scale=scale)
