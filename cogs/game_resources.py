"""The game's resources and statuses: /cp, /vp, /strat, /judgement, /riled, /waaagh, /shock, /oathband.

Each command changes the invoker's own side (or, for Judgement tokens and Oathband marks, the
opponent's units, as those rules say); the checks live in `bot.games.commands` and `bot.games.rules`.
"""

from __future__ import annotations

import asyncio
import logging
import re

import discord
from discord import app_commands
from discord.ext import commands

from bot.discord_glue.aliases import aliased
from bot.discord_glue.choices import any_card_ac, unit_choices
from bot.discord_glue.games import (
    act,
    call,
    canonical_unit,
    catalog_or_none,
    channel_of,
    current_state,
    escaped_errors,
    reply,
    resolve_card,
    store_of,
)
from bot.errors import UserError
from bot.games import commands as gc
from bot.games import mission_play as mp
from bot.games import rules
from bot.games.model import GameState, normalise_name
from bot.render import game as render
from bot.render.common import NO_MENTIONS

log = logging.getLogger("cogitator.game")

Amount = app_commands.Range[int, 1, 20]
UNTIL_CHOICES = [app_commands.Choice(name=text, value=key) for key, text in rules.RILED_DURATIONS.items()]
_ENTRY_ID = re.compile(r"^(10e|11e):stratagem:")


def _user_id(user: discord.User | discord.Member | None) -> int | None:
    return user.id if user is not None else None


async def own_unit_ac(interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
    return await unit_choices(interaction, current, side="own")


async def enemy_unit_ac(interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
    return await unit_choices(interaction, current, side="enemy")


async def any_unit_ac(interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
    return await unit_choices(interaction, current, side="any")


async def destroyed_unit_ac(interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
    """The side `mine` names (default: the enemy's), so every choice is one the command accepts (the console
    fuzz found own units offered, then refused as "not in the opponent's army list")."""
    mine = getattr(interaction.namespace, "mine", None) is True
    return await unit_choices(interaction, current, side="own" if mine else "enemy")


async def _named(interaction: discord.Interaction, raw: str, *, enemy: bool) -> str:
    """Canonical unit name for the invoker's (or their opponent's) side; unknown players are refused later."""
    state = await current_state(interaction)
    with escaped_errors():
        me = gc.require_player(state, interaction.user.id)
        owner = 1 - me if enemy else me
        return await canonical_unit(interaction, state, owner, rules.clean_name(raw))


async def stratagem_spec(interaction: discord.Interaction, state: GameState, raw: str,
                         cost: int | None) -> rules.StratagemSpec:
    """The catalog entry for the game's edition; free text only with an explicit cost."""
    raw = raw.strip()
    if not raw:
        raise UserError("Name a stratagem.", field="name")
    catalog = catalog_or_none(interaction)
    suggestions: list[str] = []
    if catalog is not None:
        entry = None
        try:
            if _ENTRY_ID.match(raw):
                entry = await asyncio.to_thread(catalog.get, raw)
            if entry is None:
                resolution = await asyncio.to_thread(catalog.resolve, aliased(interaction, raw), kind="stratagem",
                                                     edition=state.edition)
                if resolution.best is not None and resolution.confident:
                    entry = resolution.best
                else:
                    entry = await asyncio.to_thread(_pick_same_name, catalog, state, interaction.user.id, raw,
                                                    resolution.candidates)
                suggestions = [_label(h) for h in resolution.candidates[:5]]
        except UserError:
            raise
        except Exception:
            log.warning("catalog lookup failed", exc_info=True)
        if entry is not None:
            if entry.edition != state.edition:
                raise UserError(f"{entry.name} is a {entry.edition} stratagem but this game uses {state.edition}.",
                                field="name")
            return rules.StratagemSpec.from_entry(entry)
    name = rules.clean_name(raw, field="name", what="Stratagem name")
    if cost is None:
        hint = f" Did you mean: {', '.join(dict.fromkeys(suggestions))}?" if suggestions else ""
        where = "the catalog" if catalog is not None else "the catalog (not available right now)"
        raise UserError(f"No {state.edition} stratagem called {name!r} in {where}.{hint} "
                        "To record one the catalog doesn't have, give its cost with cost:.", field="name")
    insane = normalise_name(name) == "insane bravery"
    return rules.StratagemSpec(name=name, entry_id=None, cp=cost, once_per_battle=insane,
                               ignores_battleshock=insane, clears_battleshock=insane)


def _label(hit: object) -> str:
    faction = getattr(hit, "faction", None)
    return f"{getattr(hit, 'name', '?')} ({faction})" if faction else str(getattr(hit, "name", "?"))


def _pick_same_name(catalog: object, state: GameState, user_id: int, raw: str, candidates: list) -> object | None:
    """Several stratagems share the exact name typed (Core and Boarding Actions Insane Bravery): prefer the
    Core one, then the one of the player's faction; otherwise let the player choose (autocomplete)."""
    typed = normalise_name(raw)
    same = [h for h in candidates if normalise_name(h.name) == typed and h.edition == state.edition]
    if not same:
        return None
    entries = [e for e in (catalog.get(h.id) for h in same) if e is not None]  # type: ignore[attr-defined]
    core = [e for e in entries if str((e.data or {}).get("category") or "").casefold() == "core"]
    if len(core) == 1:
        return core[0]
    me = state.player_index(user_id)
    faction = normalise_name(state.players[me].faction) if me is not None else ""
    mine = [e for e in entries if e.faction and normalise_name(e.faction) == faction]
    if len(mine) == 1:
        return mine[0]
    return entries[0] if len(entries) == 1 else None


class GameResources(commands.Cog):
    cp = app_commands.Group(name="cp", description="Command points in this channel's game.", guild_only=True)
    vp = app_commands.Group(name="vp", description="Victory points in this channel's game.", guild_only=True)
    strat = app_commands.Group(name="strat", description="Stratagems in this channel's game.", guild_only=True)
    judgement = app_commands.Group(name="judgement", description="Judgement tokens (Leagues of Votann) on enemy units.",
                                   guild_only=True)
    riled = app_commands.Group(name="riled", description="Riled up (Orks, Waaagh!) on your units.", guild_only=True)
    oathband = app_commands.Group(name="oathband", description="Ruthless Efficiency (Votann Oathband, 10e).",
                                  guild_only=True)

    def __init__(self, bot: commands.Bot) -> None:
        self.bot = bot

    # ---- CP --------------------------------------------------------------------------------------

    @cp.command(name="show", description="Both players' CP and VP.")
    async def cp_show(self, interaction: discord.Interaction) -> None:
        store = store_of(interaction)
        game_id, state = await call(interaction, store.require_active, channel_of(interaction))
        await interaction.response.send_message(embed=render.board_embed(state, game_id, now=store.now()), ephemeral=True,
                                                allowed_mentions=NO_MENTIONS)

    @cp.command(name="gain", description="Gain CP (10e: at most 1 per round beyond the Command phase).")
    @app_commands.describe(amount="CP to gain", force="Override a soft rule (logged)", player="Only yourself")
    async def cp_gain(self, interaction: discord.Interaction, amount: Amount, force: bool = False,
                      player: discord.User | None = None) -> None:
        await reply(interaction, await act(interaction, gc.cp_gain, interaction.user.id, amount, force=force,
                                           target_user=_user_id(player)))

    @cp.command(name="spend", description="Spend CP (never below 0).")
    @app_commands.describe(amount="CP to spend", player="Only yourself")
    async def cp_spend(self, interaction: discord.Interaction, amount: Amount, player: discord.User | None = None) -> None:
        await reply(interaction, await act(interaction, gc.cp_spend, interaction.user.id, amount,
                                           target_user=_user_id(player)))

    @cp.command(name="set", description="Correct your CP total.")
    @app_commands.describe(amount="Your CP total", player="Only yourself")
    async def cp_set(self, interaction: discord.Interaction, amount: app_commands.Range[int, 0, 99],
                     player: discord.User | None = None) -> None:
        await reply(interaction, await act(interaction, gc.cp_set, interaction.user.id, amount,
                                           target_user=_user_id(player)))

    # ---- VP --------------------------------------------------------------------------------------

    @vp.command(name="add", description="Score other VP (not primary or secondary), e.g. battle-ready.")
    @app_commands.describe(amount="VP scored", player="Only yourself")
    async def vp_add(self, interaction: discord.Interaction, amount: app_commands.Range[int, 1, 100],
                     player: discord.User | None = None) -> None:
        await reply(interaction, await act(interaction, gc.vp_add, interaction.user.id, amount,
                                           target_user=_user_id(player)))

    @vp.command(name="primary", description="Score primary (mission) VP for this battle round.")
    @app_commands.describe(amount="Primary VP scored", round="An earlier battle round (default: this one)",
                           force="Score past the mission's cap (logged)", player="Only yourself")
    async def vp_primary(self, interaction: discord.Interaction, amount: app_commands.Range[int, 0, 100],
                         round: app_commands.Range[int, 1, 5] | None = None, force: bool = False,  # noqa: A002
                         player: discord.User | None = None) -> None:
        await reply(interaction, await act(interaction, mp.score_primary, interaction.user.id, amount, round_=round,
                                           force=force, target_user=_user_id(player)))

    @vp.command(name="secondary", description="Score secondary VP for this battle round, with the card that scored.")
    @app_commands.describe(amount="Secondary VP scored", card="The card (a tactical card is then achieved)",
                           round="An earlier battle round (default: this one)",
                           force="Score past a cap or the card's stated VP (logged)", player="Only yourself")
    @app_commands.autocomplete(card=any_card_ac)
    async def vp_secondary(self, interaction: discord.Interaction, amount: app_commands.Range[int, 0, 100],
                           card: str | None = None, round: app_commands.Range[int, 1, 5] | None = None,  # noqa: A002
                           force: bool = False, player: discord.User | None = None) -> None:
        ref = await resolve_card(interaction, card) if card else None
        await reply(interaction, await act(interaction, mp.score_secondary, interaction.user.id, amount, ref,
                                           round_=round, force=force, target_user=_user_id(player)))

    @vp.command(name="set", description="Correct your VP total.")
    @app_commands.describe(amount="Your VP total", player="Only yourself")
    async def vp_set(self, interaction: discord.Interaction, amount: app_commands.Range[int, 0, 999],
                     player: discord.User | None = None) -> None:
        await reply(interaction, await act(interaction, gc.vp_set, interaction.user.id, amount,
                                           target_user=_user_id(player)))

    # ---- stratagems ------------------------------------------------------------------------------

    @strat.command(name="use", description="Use a stratagem: pays its catalog cost and records it.")
    @app_commands.describe(name="Stratagem (from the catalog for this game's edition)",
                           unit="Target unit (yours unless only an enemy unit has that name)",
                           force="Override a soft rule (logged)", extra="Also use its +CP section",
                           cost="Cost when the catalog doesn't have it, or a modified cost")
    @app_commands.autocomplete(unit=any_unit_ac)
    async def strat_use(self, interaction: discord.Interaction, name: str, unit: str | None = None,
                        force: bool = False, extra: bool = False,
                        cost: app_commands.Range[int, 0, 20] | None = None) -> None:
        state = await current_state(interaction)
        with escaped_errors():
            gc.require_player(state, interaction.user.id)
            spec = await stratagem_spec(interaction, state, name, cost)
            target = None
            if unit is not None:
                me = state.player_index(interaction.user.id)
                cleaned = rules.clean_name(unit)
                try:
                    gc.resolve_unit(state, 1 - me, cleaned, create=False)
                    target = cleaned
                except UserError:
                    target = await canonical_unit(interaction, state, me, cleaned)
        await reply(interaction, await act(interaction, gc.use_stratagem, interaction.user.id, spec, target,
                                           force=force, extra=extra, cost=cost))

    @strat_use.autocomplete("name")
    async def strat_name_ac(self, interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
        state = store_of(interaction).state(interaction.channel_id or 0)
        catalog = catalog_or_none(interaction)
        if state is None or catalog is None:
            return []
        me = state.player_index(interaction.user.id)
        factions: list[str | None] = [state.players[me].faction] if me is not None else []
        factions.append(None)
        choices: dict[str, str] = {}
        try:
            for faction in factions:
                for hit in catalog.autocomplete(aliased(interaction, current), kind="stratagem", edition=state.edition,
                                                faction=faction,
                                                limit=25):
                    label = f"{hit.name} · {hit.faction or 'Core'}"[:100]
                    choices.setdefault(hit.id[:100], label)
        except Exception:
            log.debug("stratagem autocomplete failed", exc_info=True)
        return [app_commands.Choice(name=label, value=value) for value, label in list(choices.items())[:25]]

    # ---- Judgement tokens ------------------------------------------------------------------------

    @judgement.command(name="add", description="Give an enemy unit Judgement tokens (never more than 2).")
    @app_commands.describe(unit="Your opponent's unit", amount="Tokens to add (1-2; gains beyond 2 are ignored)",
                           force="Give them although you do not play Leagues of Votann (logged)")
    @app_commands.autocomplete(unit=enemy_unit_ac)
    async def judgement_add(self, interaction: discord.Interaction, unit: str,
                            amount: app_commands.Range[int, 1, 2] = 1, force: bool = False) -> None:
        name = await _named(interaction, unit, enemy=True)
        await reply(interaction, await act(interaction, gc.judgement, interaction.user.id, name, amount, remove=False,
                                           force=force))

    @judgement.command(name="remove", description="Remove Judgement tokens from an enemy unit.")
    @app_commands.describe(unit="Your opponent's unit", amount="Tokens to remove (1-2)")
    @app_commands.autocomplete(unit=enemy_unit_ac)
    async def judgement_remove(self, interaction: discord.Interaction, unit: str,
                               amount: app_commands.Range[int, 1, 2] = 1) -> None:
        await reply(interaction, await act(interaction, gc.judgement, interaction.user.id, unit, amount, remove=True))

    @judgement.command(name="list", description="Units with Judgement tokens.")
    async def judgement_list(self, interaction: discord.Interaction) -> None:
        state = await current_state(interaction)
        units = [u for u in state.units if u.judgement]
        await interaction.response.send_message(embed=render.units_embed(state, "Judgement tokens", units),
                                                ephemeral=True, allowed_mentions=NO_MENTIONS)

    # ---- riled up / Waaagh! ----------------------------------------------------------------------

    @riled.command(name="add", description="Your unit becomes riled up.")
    @app_commands.describe(unit="Your unit", until="How long, as the rule that riles it says",
                           force="Rile it although the rules say it cannot be (not Orks, 10e, no Waaagh! ability; logged)")
    @app_commands.autocomplete(unit=own_unit_ac)
    @app_commands.choices(until=UNTIL_CHOICES)
    async def riled_add(self, interaction: discord.Interaction, unit: str, until: str, force: bool = False) -> None:
        name = await _named(interaction, unit, enemy=False)
        await reply(interaction, await act(interaction, gc.riled, interaction.user.id, name, until, force=force))

    @riled.command(name="remove", description="Your unit is no longer riled up.")
    @app_commands.describe(unit="Your unit")
    @app_commands.autocomplete(unit=own_unit_ac)
    async def riled_remove(self, interaction: discord.Interaction, unit: str) -> None:
        await reply(interaction, await act(interaction, gc.riled, interaction.user.id, unit, "battle", remove=True))

    @app_commands.command(name="waaagh", description="Call the Waaagh! once per battle (Orks): your units with the ability.")
    @app_commands.guild_only()
    @app_commands.describe(force="Use it outside the start of a Command phase (logged)")
    async def waaagh(self, interaction: discord.Interaction, force: bool = False) -> None:
        await reply(interaction, await act(interaction, gc.waaagh, interaction.user.id, force=force))

    # ---- battle-shock ----------------------------------------------------------------------------

    @app_commands.command(name="shock", description="Mark your unit battle-shocked (clear:true when it recovers).")
    @app_commands.guild_only()
    @app_commands.describe(unit="Your unit", clear="It passed its battle-shock roll: no longer battle-shocked")
    @app_commands.autocomplete(unit=own_unit_ac)
    async def shock(self, interaction: discord.Interaction, unit: str, clear: bool = False) -> None:
        name = unit if clear else await _named(interaction, unit, enemy=False)
        await reply(interaction, await act(interaction, gc.shock, interaction.user.id, name, clear=clear))

    # ---- Oathband --------------------------------------------------------------------------------

    @oathband.command(name="mark", description="Select an enemy unit for Ruthless Efficiency (clear:true to unmark).")
    @app_commands.describe(unit="Your opponent's unit", clear="Remove the mark instead",
                           force="Mark it although the game is not 10e Needgaârd Oathband (logged)")
    @app_commands.autocomplete(unit=enemy_unit_ac)
    async def oathband_mark(self, interaction: discord.Interaction, unit: str, clear: bool = False,
                            force: bool = False) -> None:
        name = unit if clear else await _named(interaction, unit, enemy=True)
        await reply(interaction, await act(interaction, gc.oathband_mark, interaction.user.id, name, clear=clear,
                                           force=force))

    @oathband.command(name="destroyed", description="Record that a unit was destroyed.")
    @app_commands.describe(unit="The destroyed unit", mine="It is one of your units (default: an enemy unit)")
    @app_commands.autocomplete(unit=destroyed_unit_ac)
    async def oathband_destroyed(self, interaction: discord.Interaction, unit: str, mine: bool = False) -> None:
        name = await _named(interaction, unit, enemy=not mine)
        await reply(interaction, await act(interaction, gc.destroyed, interaction.user.id, name, mine=mine))

    @oathband.command(name="claim", description="Gain the Ruthless Efficiency CP (once per battle).")
    @app_commands.describe(amount="CP from your detachment's table for the round the unit died",
                           force="Claim outside the start of your Command phase (logged)")
    async def oathband_claim(self, interaction: discord.Interaction, amount: app_commands.Range[int, 1, 3],
                             force: bool = False) -> None:
        await reply(interaction, await act(interaction, gc.ruthless_claim, interaction.user.id, amount, force=force))




async def setup(bot: commands.Bot) -> None:
    await bot.add_cog(GameResources(bot))
