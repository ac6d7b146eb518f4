"""Mission play as commands: the mission, the roll-off and first turn, VP by category, secondaries, the clock.

Like `bot.games.commands`, each function takes the current state (never mutated here) and returns an
`Outcome` with the events to append; refusals are `UserError`s and soft rules (the VP caps, a card's
stated VP) are `SoftRuleError`s unless `force` is set. Card names are resolved against the mission
catalog (`bot.games.missions`) by `card_ref` before a command runs, outside the store's transaction.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any

from bot.catalog.model import slug
from bot.errors import UserError
from bot.games import missions, rules
from bot.games.commands import (
    Outcome,
    event,
    forced_note,
    own_target,
    require_player,
    require_running,
    soft,
)
from bot.games.events import ACTIVE_CARD, held_card
from bot.games.model import LAST_ROUND, GameState

MAX_VP_SCORE = 100  # one /vp primary or /vp secondary
MAX_CLOCK_MINUTES = 600
MAX_ROLLOFF_ROUNDS = 50  # ties re-roll; 50 ties in a row (p = 6^-50) falls back to a coin flip
MODES = ("tactical", "fixed")

Roll = Callable[[], int]


def _d6() -> int:
    return secrets.randbelow(6) + 1


# ---- the mission ---------------------------------------------------------------------------------

def set_mission(state: GameState, user_id: int, record: dict[str, Any] | None, *, force: bool = False) -> Outcome:
    """Choose (or clear) the mission; once the battle is under way it is a soft rule."""
    actor = require_player(state, user_id)
    warnings = []
    scored = any(any(p.vp_primary) or any(p.vp_secondary) for p in state.players)
    if state.turn > 0 or state.phase != "command" or scored:
        warnings.append("The battle is already under way; changing the mission now keeps the VP already scored.")
    warnings = soft(warnings, force)
    if record is None:
        summary = "Mission cleared"
    else:
        summary = f"Mission: {record['name']}" + (f" on {record['deployment']}" if record.get("deployment") else "")
    summary += forced_note(warnings)
    return Outcome([event("mission", actor, summary, {"mission": record}, overrides=warnings)], summary, warnings)


# ---- the roll-off and the first turn ---------------------------------------------------------------

def rolloff(state: GameState, user_id: int, *, winner_user: int | None = None, roll: Roll | None = None) -> Outcome:
    """Roll a D6 each, re-rolling ties (11e 01.05.05), or record the winner of a physical roll-off."""
    actor = require_player(state, user_id)
    roll = roll or _d6
    names = [p.name for p in state.players]
    if winner_user is not None:
        winner = state.player_index(winner_user)
        if winner is None:
            raise UserError(f"The winner must be one of the players ({' or '.join(names)}).", field="winner")
        summary = f"Roll-off (physical dice, recorded by {names[actor]}): {names[winner]} wins"
        data = {"rolls": [], "winner": winner, "physical": True}
    else:
        rolls: list[list[int]] = []
        while len(rolls) < MAX_ROLLOFF_ROUNDS:
            rolls.append([roll(), roll()])
            if rolls[-1][0] != rolls[-1][1]:
                break
        last = rolls[-1]
        winner = (0 if last[0] > last[1] else 1) if last[0] != last[1] else secrets.randbelow(2)
        shown = ", then ".join(f"{names[0]} {a} – {b} {names[1]}" for a, b in rolls)
        summary = f"Roll-off: {shown}: {names[winner]} wins"
        data = {"rolls": rolls, "winner": winner, "physical": False}
    if first_turn_open(state):
        summary += " and chooses who takes the first turn"
    return Outcome([event("rolloff", actor, summary, data)], summary)


def first_turn_open(state: GameState) -> bool:
    """Who goes first can be (re)decided only during the battle's first turn."""
    return state.round == 1 and state.turn == 0 and not state.over and state.ended is None


def choose_first(state: GameState, user_id: int, first: int, *, force: bool = False) -> Outcome:
    """The roll-off winner picks who takes the first turn of each battle round."""
    actor = require_player(state, user_id)
    require_running(state)
    if state.rolloff is None:
        raise UserError("Roll off first (/game rolloff); its winner chooses who takes the first turn.")
    winner = state.rolloff["winner"]
    if actor != winner:
        raise UserError(f"Only {state.players[winner].name}, who won the roll-off, chooses who goes first.",
                        field="user")
    if not first_turn_open(state):
        raise UserError("The first turn is over: who goes first can no longer change (use /game undo to go back).")
    warnings = []
    if state.phase != "command":
        warnings.append("The first turn is already past its Command phase.")
    warnings = soft(warnings, force)
    name = state.players[first].name
    who = "themselves" if first == actor else name
    summary = f"{state.players[actor].name} chooses {who} to take the first turn: round 1, {name}'s " \
              f"{state.phase.capitalize()} phase"
    data: dict[str, Any] = {"player": first}
    clock = state.clock
    if clock is not None and clock.running and clock.follow and clock.holder != first:
        data["clock_to"] = first  # a clock started before the roll-off follows the player whose turn it now is
        summary += f"; the clock passes to {name}"
    summary += forced_note(warnings)
    return Outcome([event("first", actor, summary, data, overrides=warnings)], summary, warnings)


# ---- VP by category --------------------------------------------------------------------------------

def _round(state: GameState, round_: int | None) -> int:
    if round_ is None:
        return state.round
    if isinstance(round_, int) and round_ > state.round:
        raise UserError(f"Battle round {round_} has not begun: this is round {state.round} (round: scores an "
                        "earlier round, leave it out for this one).", field="round")
    return rules.check_amount(round_, field="round", low=1, high=state.round, what="The battle round")


def _cap_warnings(state: GameState, actor: int, round_: int, amount: int, category: str) -> list[str]:
    """Soft: the mission's (or the edition's) caps, each named with its number."""
    caps = missions.caps_of(state.mission, state.edition)
    me = state.players[actor]
    label = f"the {state.mission['name']} mission" if state.mission else f"{state.edition} games"
    warnings = []
    if category == "primary":
        per_round, per_game, have = caps.primary_round, caps.primary_game, me.vp_primary
    else:
        per_round, per_game, have = caps.secondary_round, caps.secondary_game, me.vp_secondary
    slot = round_ - 1
    if per_round is not None and have[slot] + amount > per_round:
        warnings.append(f"{category.capitalize()} VP are capped at {per_round} per battle round in {label}; "
                        f"this would make {have[slot] + amount} in round {round_}.")
    if per_game is not None and sum(have) + amount > per_game:
        other = missions.cap_disagreement(state.edition, f"{category}_game", per_game)
        warnings.append(f"{category.capitalize()} VP are capped at {per_game} per game in {label}"
                        + (f" ({other})" if other else "") + f"; this would make {sum(have) + amount}.")
    if me.vp + amount > caps.total:
        warnings.append(f"A player's total is capped at {caps.total}VP in {label}; this would make {me.vp + amount}.")
    return warnings


def score_primary(state: GameState, user_id: int, amount: int, *, round_: int | None = None, force: bool = False,
                  target_user: int | None = None) -> Outcome:
    actor = require_player(state, user_id)
    own_target(state, actor, target_user)
    rules.check_amount(amount, field="amount", low=0, high=MAX_VP_SCORE, what="Primary VP")
    rnd = _round(state, round_)
    warnings = soft(_cap_warnings(state, actor, rnd, amount, "primary"), force)
    me = state.players[actor]
    summary = f"{me.name} scores {amount} primary VP in round {rnd} ({me.vp} → {me.vp + amount})" + \
        forced_note(warnings)
    data = {"player": actor, "round": rnd, "amount": amount}
    return Outcome([event("vp_primary", actor, summary, data, overrides=warnings)], summary, warnings)


def card_ref(edition: str, raw: str, *, mode: str | None = None) -> dict[str, Any]:
    """{"card", "name", "mode"} for a secondary named by id or name: the edition's deck when the catalog has
    one (anything else is refused with the deck), else free text (10e)."""
    if mode is not None and mode not in MODES:
        raise UserError(f"Unknown mode {mode!r}: choose tactical or fixed.", field="mode")
    name = rules.clean_name(raw, field="card", what="Card name", limit=missions.MAX_TEXT)
    deck = missions.catalog().secondaries.get(edition, [])
    if not deck:
        return {"card": slug(name), "name": name, "mode": mode or "tactical", "catalog": False}
    card = missions.catalog().card(edition, name)
    if card is None:
        raise UserError(f"{name!r} is not a secondary card of {edition} missions. Cards that apply: "
                        f"{', '.join(c.name for c in deck)}.", field="card")
    if mode is not None and mode not in card.modes:
        raise UserError(f"{card.name} is played {' or '.join(card.modes)} only.", field="mode")
    return {"card": card.id, "name": card.name, "mode": mode or "tactical", "catalog": True}


def _in_play(state: GameState, player: int) -> list[str]:
    return [c["name"] for c in state.players[player].secondaries if c["status"] in ACTIVE_CARD]


def _card_refusal(state: GameState, actor: int, text: str, *, held_only: bool = False) -> UserError:
    """A refusal naming the cards that apply: for keep/discard the cards you hold; to draw, the deck minus the
    cards you hold or achieved; to score, the cards you hold, then the deck minus what you achieved."""
    held = _in_play(state, actor)
    hint = f" Your cards in play: {', '.join(held)}." if held else " You hold no cards (/secondary draw)."
    if not held_only:
        deck = missions.catalog().secondaries.get(state.edition, [])
        achieved = {c["card"] for c in state.players[actor].secondaries if c["status"] == "achieved"}
        left = [c.name for c in deck if c.id not in achieved and c.name not in held]
        if left:
            hint += f" {'Other cards' if held else 'Cards'} that apply: {', '.join(left)}."
    return UserError(text + hint, field="card")


def score_secondary(state: GameState, user_id: int, amount: int, ref: dict[str, Any] | None, *,
                    round_: int | None = None, force: bool = False, target_user: int | None = None) -> Outcome:
    """Secondary VP for the round; with a card, the card scores it (a tactical card is then achieved)."""
    actor = require_player(state, user_id)
    own_target(state, actor, target_user)
    rules.check_amount(amount, field="amount", low=0, high=MAX_VP_SCORE, what="Secondary VP")
    rnd = _round(state, round_)
    warnings = _cap_warnings(state, actor, rnd, amount, "secondary")
    me = state.players[actor]
    card_data = None
    label = ""
    if ref is not None:
        held = held_card(state, actor, ref["card"])
        mode = held["mode"] if held else ref["mode"]
        done = [c for c in me.secondaries if c["card"] == ref["card"] and c["status"] == "achieved"]
        if held is None and done:
            raise _card_refusal(state, actor, f"{ref['name']} was already achieved (round {done[-1]['round']}).")
        card = missions.catalog().card(state.edition, ref["card"]) if ref.get("catalog") else None
        most = card.max_vp(mode) if card else None
        if most is not None and amount > most:
            warnings.insert(0, f"{ref['name']} scores at most {most}VP at a time ({mode}).")
        card_data = {"card": ref["card"], "name": ref["name"], "mode": mode}
        label = f" with {ref['name']}" + (" (achieved)" if mode == "tactical" else "")
    warnings = soft(warnings, force)
    summary = f"{me.name} scores {amount} secondary VP{label} in round {rnd} ({me.vp} → {me.vp + amount})" + \
        forced_note(warnings)
    data = {"player": actor, "round": rnd, "amount": amount, "card": card_data}
    return Outcome([event("vp_secondary", actor, summary, data, overrides=warnings)], summary, warnings)


def secondary(state: GameState, user_id: int, action: str, ref: dict[str, Any]) -> Outcome:
    """Draw a card into your hand, or keep or discard one you hold."""
    actor = require_player(state, user_id)
    require_running(state)
    me = state.players[actor]
    held = held_card(state, actor, ref["card"])
    if action == "draw":
        if held is not None:
            raise _card_refusal(state, actor, f"You already hold {ref['name']}.")
        if any(c["card"] == ref["card"] and c["status"] == "achieved" for c in me.secondaries):
            raise _card_refusal(state, actor, f"{ref['name']} was already achieved.")
        summary = f"{me.name} draws {ref['name']} ({ref['mode']})"
    elif action in ("keep", "discard"):
        if held is None:
            raise _card_refusal(state, actor, f"You do not hold {ref['name']}.", held_only=True)
        if held["mode"] == "fixed" and action == "discard":
            raise UserError(f"{ref['name']} is a fixed secondary: it stays for the whole battle.", field="card")
        summary = f"{me.name} {'keeps' if action == 'keep' else 'discards'} {ref['name']}"
    else:
        raise UserError(f"Unknown action {action!r}.", field="action")
    data = {"player": actor, "action": action, "card": {"card": ref["card"], "name": ref["name"], "mode": ref["mode"]}}
    return Outcome([event("secondary", actor, summary, data)], summary)


# ---- the chess clock --------------------------------------------------------------------------------

def clock_start(state: GameState, user_id: int, minutes: int, *, follow: bool = True, force: bool = False) -> Outcome:
    actor = require_player(state, user_id)
    require_running(state)
    rules.check_amount(minutes, field="minutes", low=1, high=MAX_CLOCK_MINUTES, what="Minutes per player")
    warnings = []
    if state.clock is not None and not state.clock.stopped:
        if state.clock.running:
            raise UserError("The clock is already running. Pause it with /clock pause, or pass it with the board's "
                            "Pass clock button.")
        warnings.append("Starting the clock again resets both players' time.")
    warnings = soft(warnings, force)
    holder = state.active
    summary = f"Chess clock: {minutes} min each, {state.players[holder].name}'s time runs" + \
        ("; it follows the active player" if follow else "") + forced_note(warnings)
    data = {"budget_s": [minutes * 60, minutes * 60], "holder": holder, "follow": follow}
    return Outcome([event("clock_start", actor, summary, data, overrides=warnings)], summary, warnings)


def _clock(state: GameState) -> Any:
    if state.clock is None or state.clock.stopped:
        raise UserError("No chess clock is running in this game. Start one with /clock start.")
    if state.over:  # the battle's end stopped it (events._next); /game undo goes back into the battle
        raise UserError("The battle is over: the chess clock stopped with it (time used: /game score). "
                        "Use /game undo to go back into the battle.")
    return state.clock


def clock_pause(state: GameState, user_id: int) -> Outcome:
    actor = require_player(state, user_id)
    clock = _clock(state)
    if not clock.running:
        raise UserError("The clock is already paused. Resume it with /clock resume.")
    summary = f"Clock paused by {state.players[actor].name}"
    return Outcome([event("clock_pause", actor, summary)], summary)


def clock_resume(state: GameState, user_id: int) -> Outcome:
    actor = require_player(state, user_id)
    clock = _clock(state)
    if clock.running:
        raise UserError("The clock is already running.")
    require_running(state)
    summary = f"Clock resumed: {state.players[clock.holder].name}'s time runs"
    return Outcome([event("clock_resume", actor, summary)], summary)


def clock_pass(state: GameState, user_id: int) -> Outcome:
    """Hand the clock to the opponent; only the player whose time is running can."""
    actor = require_player(state, user_id)
    clock = _clock(state)
    if not clock.running:
        raise UserError("The clock is paused. Resume it with /clock resume.")
    if clock.holder != actor:
        raise UserError(f"Only {state.players[clock.holder].name}, whose clock is running, can pass it.",
                        field="user")
    to = 1 - actor
    summary = f"{state.players[actor].name} passes the clock to {state.players[to].name}"
    return Outcome([event("clock_pass", actor, summary, {"to": to})], summary)


def rounds_played(state: GameState) -> range:
    """Battle rounds to show in a score table: 1 up to the current one."""
    return range(1, min(state.round, LAST_ROUND) + 1)
