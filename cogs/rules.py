"""/rule, /datasheet and /stratagem: catalog lookups with autocomplete, a "did you mean" picker that
only the asker can use, and paginated answers.

Thin by design: parse the options, ask `bot.services.catalog`, render with `bot.render.rules`. The
buttons and the picker are DynamicItems whose custom_id carries everything they need, so they keep
working after a restart.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
from pathlib import Path

import discord
from discord import app_commands
from discord.app_commands import Choice
from discord.ext import commands

from bot.catalog.model import Entry, Hit
from bot.catalog.normalize import clean_text
from bot.catalog.search import looks_like_question, query_edition
from bot.catalog.service import Catalog
from bot.discord_glue.aliases import aliased, server_alias
from bot.discord_glue.choices import faction_choices
from bot.errors import UserError
from bot.render.answers import answer_embed
from bot.render.common import NO_MENTIONS, edition_label, escape, truncate
from bot.render.points import datasheet_points_field
from bot.render.rules import (
    EMBED_TOTAL_BUDGET,
    entry_embed,
    entry_pages,
    errata_field,
    hit_detail,
    hit_label,
    load_hint,
    no_match_embed,
    not_loaded_embed,
    parts_fields,
    picker_embed,
)

log = logging.getLogger("cogitator.rules")

EDITION_CHOICES = [Choice(name="11th edition (current)", value="11e"), Choice(name="10th edition", value="10e")]
QUERY_MAX = 200
PICK_MIN_SCORE = 70.0  # below this a candidate is a "nearest suggestion", not a plausible answer
PICK_MARGIN = 15.0  # a "did you mean" choice is at most this far behind the best one (genuinely close)
PICKER_SIZE = 10
ERRATA_BUTTONS = 5  # buttons that open a target's errata/FAQ entries (Discord allows 25 components)
PART_BUTTONS = 15  # a detachment's stratagem (grey) and enhancement (green) buttons; 2 page + 1 + 5 errata left


def _catalog(interaction: discord.Interaction) -> Catalog:
    return interaction.client.services.catalog  # type: ignore[attr-defined]


def _guild_edition(interaction: discord.Interaction) -> str:
    return interaction.client.services.guild_settings.edition(interaction.guild_id)  # type: ignore[attr-defined]


def digest(entry_id: str) -> str:
    """A short stable key for an entry id, for custom_ids (Discord allows 100 characters)."""
    return hashlib.sha1(entry_id.encode()).hexdigest()[:16]


def entry_by_digest(catalog: Catalog, key: str) -> Entry | None:
    for rec in catalog.index.records:
        if digest(rec.id) == key:
            return catalog.get(rec.id)
    return None


def answer_view(entry: Entry, page: int, catalog: Catalog) -> discord.ui.View | None:
    """Page buttons for long texts, and a button to the complete rule when this source left a table empty."""
    view = discord.ui.View(timeout=None)
    pages = entry_pages(entry)
    key = digest(entry.id)
    if pages > 1:
        view.add_item(PageButton(key, page - 1, "◀ Previous", disabled=page <= 0))
        view.add_item(PageButton(key, page + 1, "Next ▶", disabled=page >= pages - 1))
    complete = catalog.complete_text_for(entry.id)
    if complete is not None:
        view.add_item(ShowButton(digest(complete.id), "Show full datasheet" if entry.kind == "datasheet"
                                 else "Show complete rule"))
    if entry.data.get("role") == "detachment":
        stratagems, enhancements = catalog.detachment_parts(entry)
        for hit in (stratagems + enhancements)[:PART_BUTTONS]:
            view.add_item(ShowButton(digest(hit.id), truncate(hit.name, 80), style=discord.ButtonStyle.secondary
                                     if hit.kind == "stratagem" else discord.ButtonStyle.success))
    for i, faq in enumerate(catalog.errata_for(entry.id)[:ERRATA_BUTTONS]):
        what = "Errata" if faq.data.get("faq_kind") == "errata" else "FAQ"
        view.add_item(ShowButton(digest(faq.id), truncate(f"{what} {i + 1}: {faq.data.get('publication', '')}", 80),
                                 style=discord.ButtonStyle.secondary))
    return view if view.children else None


def render_answer(catalog: Catalog, entry: Entry, page: int = 0) -> tuple[discord.Embed, discord.ui.View | None]:
    complete = catalog.complete_text_for(entry.id)
    embed = entry_embed(entry, page=page, complete=complete)
    if entry.data.get("role") == "detachment":
        for name, value in parts_fields(*catalog.detachment_parts(entry)):
            embed.add_field(name=name, value=value, inline=False)
    if entry.kind == "datasheet" and entry.edition == "11e":
        # the catalog file lives in the data folder, where the points are kept too
        points = datasheet_points_field(Path(catalog.store.path).parent, entry.name, entry.faction)
        if points is not None and len(embed) + len(points[0]) + len(points[1]) <= EMBED_TOTAL_BUDGET:
            embed.add_field(name=points[0], value=points[1], inline=False)
    errata = errata_field(catalog.errata_for(entry.id))
    if errata is not None and len(embed) + len(errata[0]) + len(errata[1]) <= EMBED_TOTAL_BUDGET:
        embed.add_field(name=errata[0], value=errata[1], inline=False)
    if entry.data.get("metadata_only"):
        other = _full_text_elsewhere(catalog, entry)
        if other is not None:
            embed.add_field(name="Full text", value=truncate(
                f"This source has only the metadata. The {other.edition} text is in "
                f"{other.source}: ask again with `edition:{other.edition}`.", 1024), inline=False)
    elif entry.data.get("incomplete") == "table" and complete is None:
        other = _full_text_elsewhere(catalog, entry)
        if other is not None:  # not this edition's text, so only a pointer to it
            embed.add_field(name="Full table", value=truncate(
                f"This page left the table empty. The {other.edition} version in {other.source} prints one: "
                f"ask again with `edition:{other.edition}` (check it against your edition).", 1024), inline=False)
    return embed, answer_view(entry, page, catalog)


def edition_note(catalog: Catalog, entry: Entry, asked: str, *, typed: bool = False) -> str:
    """Said in the body when the answer is from another edition than the one wanted (named in the query when
    `typed`, else the server's): whether that edition has an entry of this name at all, and how to load it."""
    from bot.catalog.normalize import normalize
    from bot.catalog.things import name_key

    same = [catalog.index.records[i] for i in catalog.index.by_key.get(name_key(normalize(entry.name)), ())]
    has_asked = any(r.edition == asked and r.kind == entry.kind for r in same)
    shown, wanted = edition_label(entry.edition), edition_label(asked)
    if has_asked:
        who = f"You asked for {wanted}" if typed else f"This server plays {wanted}"
        return f"**{shown} answer.** {who}: ask with `edition:{asked}` for that version."
    hint = "" if catalog.full_sources_loaded() else " " + load_hint(asked)
    return f"**{shown} answer:** no {wanted} entry of this name is loaded.{hint}"


def _full_text_elsewhere(catalog: Catalog, entry: Entry) -> Entry | None:
    """The same-named entry with real text (usually the other edition), for metadata-only answers."""
    from bot.catalog.normalize import normalize

    def loose(name: str) -> str:  # "Wound Rolls" (11e) is the same rule as "Wound Roll" (10e)
        return " ".join(word.rstrip("s") for word in normalize(name).split())

    for hit in catalog.search(entry.name, kind=entry.kind, limit=8, prefer_edition=None):
        if hit.id != entry.id and loose(hit.name) == loose(entry.name):
            other = catalog.get(hit.id)
            if other is not None and not other.data.get("metadata_only") and not other.data.get("incomplete"):
                return other
    return None


class PageButton(discord.ui.DynamicItem[discord.ui.Button], template=r"rules:page:(?P<key>[0-9a-f]{16}):(?P<page>-?\d{1,4})"):
    """◀ / ▶ on a long answer; anyone reading can turn the page."""

    def __init__(self, key: str, page: int, label: str = "Page", *, disabled: bool = False) -> None:
        super().__init__(discord.ui.Button(label=label, style=discord.ButtonStyle.secondary,
                                           custom_id=f"rules:page:{key}:{page}", disabled=disabled))
        self.key = key
        self.page = page

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction, item: discord.ui.Button,
                             match: re.Match[str]) -> PageButton:
        return cls(match["key"], int(match["page"]))

    async def callback(self, interaction: discord.Interaction) -> None:
        catalog = _catalog(interaction)
        entry = await asyncio.to_thread(entry_by_digest, catalog, self.key)
        if entry is None:
            await interaction.response.send_message("That entry is no longer in the catalog (it was re-imported).",
                                                    ephemeral=True, allowed_mentions=NO_MENTIONS)
            return
        page = max(0, min(self.page, entry_pages(entry) - 1))
        embed, view = render_answer(catalog, entry, page)
        view = with_miss_button(view, miss_query(interaction))
        await interaction.response.edit_message(embed=embed, view=view, allowed_mentions=NO_MENTIONS)


class ShowButton(discord.ui.DynamicItem[discord.ui.Button], template=r"rules:show:(?P<key>[0-9a-f]{16})"):
    """"Show complete rule": posts the full rule from the other source, for the person who pressed it."""

    def __init__(self, key: str, label: str = "Show complete rule", *,
                 style: discord.ButtonStyle = discord.ButtonStyle.primary) -> None:
        super().__init__(discord.ui.Button(label=label, style=style, custom_id=f"rules:show:{key}"))
        self.key = key

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction, item: discord.ui.Button,
                             match: re.Match[str]) -> ShowButton:
        return cls(match["key"])

    async def callback(self, interaction: discord.Interaction) -> None:
        catalog = _catalog(interaction)
        entry = await asyncio.to_thread(entry_by_digest, catalog, self.key)
        if entry is None:
            await interaction.response.send_message("That rule is no longer in the catalog.", ephemeral=True,
                                                    allowed_mentions=NO_MENTIONS)
            return
        embed, view = render_answer(catalog, entry)
        kwargs = {"view": view} if view else {}
        await interaction.response.send_message(embed=embed, ephemeral=True, allowed_mentions=NO_MENTIONS, **kwargs)


class PickSelect(discord.ui.DynamicItem[discord.ui.Select], template=r"rules:pick:(?P<user>[0-9]{1,20})"):
    """The "did you mean" menu; the custom_id names the asker, and only they can choose."""

    def __init__(self, user_id: int, hits: list[Hit] | None = None) -> None:
        options = [discord.SelectOption(label=truncate(h.name, 100), value=h.id if len(h.id) <= 100 else digest(h.id),
                                        description=truncate(hit_detail(h), 100))
                   for h in (hits or [])[:25]]
        super().__init__(discord.ui.Select(custom_id=f"rules:pick:{user_id}", placeholder="Choose an entry",
                                           options=options or [discord.SelectOption(label="-", value="-")]))
        self.user_id = user_id

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction, item: discord.ui.Select,
                             match: re.Match[str]) -> PickSelect:
        return cls(int(match["user"]))

    async def interaction_check(self, interaction: discord.Interaction) -> bool:
        if interaction.user.id != self.user_id:
            await interaction.response.send_message("Only the person who asked can choose here; run the command "
                                                    "yourself to get your own menu.", ephemeral=True,
                                                    allowed_mentions=NO_MENTIONS)
            return False
        return True

    async def callback(self, interaction: discord.Interaction) -> None:
        catalog = _catalog(interaction)
        values = (interaction.data or {}).get("values") or []  # type: ignore[union-attr]
        chosen = str(values[0]) if values else ""
        entry = catalog.get(chosen) or (await asyncio.to_thread(entry_by_digest, catalog, chosen)
                                        if re.fullmatch(r"[0-9a-f]{16}", chosen) else None)
        if entry is None:
            await interaction.response.send_message("That choice is no longer in the catalog.", ephemeral=True,
                                                    allowed_mentions=NO_MENTIONS)
            return
        embed, view = render_answer(catalog, entry)
        view = with_miss_button(view, miss_query(interaction))
        await interaction.response.edit_message(content=None, embed=embed, view=view, allowed_mentions=NO_MENTIONS)


MISS_PREFIX = "rules:miss:"
MISS_QUERY_MAX = 100 - len(MISS_PREFIX)  # a custom_id holds 100 characters: longer queries are kept clipped


class MissButton(discord.ui.DynamicItem[discord.ui.Button], template=r"rules:miss:(?P<query>(?s:.+))"):
    """"Not what I asked" under an answer or a menu: records the server, the query (in the custom_id, so it
    survives a restart), what the message shows and the time; never who pressed (bot/catalog/misses.py)."""

    def __init__(self, query: str) -> None:
        query = clean_text(query)[:MISS_QUERY_MAX]
        while len(query.encode("utf-16-le")) > 2 * MISS_QUERY_MAX:  # Discord counts UTF-16 units (emoji: 2)
            query = query[:-1]
        self.query = query
        super().__init__(discord.ui.Button(label="Not what I asked", style=discord.ButtonStyle.secondary,
                                           custom_id=MISS_PREFIX + self.query))

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction, item: discord.ui.Button,
                             match: re.Match[str]) -> MissButton:
        return cls(match["query"])

    async def callback(self, interaction: discord.Interaction) -> None:
        message = interaction.message
        embed = message.embeds[0] if message is not None and message.embeds else None
        shown = (embed.title or "") if embed is not None else ""
        if embed is not None and message is not None and message.components and any(
                isinstance(c, discord.SelectMenu) for row in message.components for c in getattr(row, "children", ())):
            shown += ": " + " | ".join(o.label for row in message.components for c in getattr(row, "children", ())
                                       if isinstance(c, discord.SelectMenu) for o in c.options[:5])
        misses = interaction.client.services.lookup_misses  # type: ignore[attr-defined]
        await asyncio.to_thread(misses.record, message.id if message is not None else interaction.id,
                                interaction.guild_id, self.query, shown)
        await interaction.response.send_message(
            "Thanks, noted: the bot's operator reviews the queries players mark, to teach it new words. Someone with "
            "Manage Server can also teach this server a word now with `/alias add`.", ephemeral=True,
            allowed_mentions=NO_MENTIONS)


def with_miss_button(view: discord.ui.View | None, query: str | None) -> discord.ui.View | None:
    """`view` with "Not what I asked" added (a new view when there was none); unchanged without a query."""
    if not query:
        return view
    view = view if view is not None else discord.ui.View(timeout=None)
    if len(view.children) < 25:
        view.add_item(MissButton(query))
    return view


def miss_query(interaction: discord.Interaction) -> str | None:
    """The query of the "Not what I asked" button on the message being edited, so a page turn or a choice
    in the menu keeps it."""
    message = interaction.message
    for row in (message.components if message is not None else ()):
        for component in getattr(row, "children", ()):
            custom_id = getattr(component, "custom_id", None) or ""
            if custom_id.startswith(MISS_PREFIX):
                return custom_id[len(MISS_PREFIX):]
    return None


class Rules(commands.Cog):
    def __init__(self, bot: commands.Bot) -> None:
        self.bot = bot

    async def _answer_from_rules(self, interaction: discord.Interaction, catalog: Catalog, query: str,
                                 edition: str | None, prefer: str) -> bool:
        """Answer a question from the rules passages; False when none is found (then the name search's menu or
        No match answers, which say what is not loaded)."""
        answer = await asyncio.to_thread(catalog.answer, query, edition=edition, prefer_edition=prefer)
        if not answer.passages:
            return False
        view = discord.ui.View(timeout=None)
        view.add_item(PickSelect(interaction.user.id, catalog.answerer.hits(answer)[:PICKER_SIZE]))
        await interaction.response.send_message(embed=answer_embed(answer, partial=not catalog.full_sources_loaded()),
                                                view=view, allowed_mentions=NO_MENTIONS)
        return True

    async def _lookup(self, interaction: discord.Interaction, query: str, kind: str | tuple[str, ...] | None,
                      edition: str | None, faction: str | None = None) -> None:
        catalog: Catalog = self.bot.services.catalog  # type: ignore[attr-defined]
        query = clean_text(query or "").strip()
        if len(query) > QUERY_MAX:
            query = query[:QUERY_MAX]
        if not query or not re.search(r"[0-9A-Za-z]", query):
            raise UserError("Type a name to look up, e.g. `lethal hits`, `command re-roll` or `stompa`.",
                            field="query")
        prefer = _guild_edition(interaction)
        typed_query = query if catalog.get(query) is None else None  # an id picked from autocomplete: not a query
        alias = server_alias(interaction, query)  # the server's own word for an entry (/alias)
        if alias is not None:
            query = alias.target
        # a value picked from autocomplete is an entry id
        entry = catalog.get(query)
        kinds = (kind,) if isinstance(kind, str) else kind
        if entry is not None and ((kinds and entry.kind not in kinds) or (edition and entry.edition != edition)):
            # An id of another kind or edition (picked before `edition:` was changed) is looked up by its name
            # there; read as text, the raw id matched nothing (found by the console fuzz).
            query, entry = clean_text(entry.name), None
        if entry is None and kind is None and looks_like_question(query) \
                and await self._answer_from_rules(interaction, catalog, query, edition, prefer):
            return
        if entry is None:
            resolution = await asyncio.to_thread(catalog.resolve, query, kind=kind, edition=edition,
                                                 prefer_edition=prefer, faction=(faction or None))
            if kind is None and not looks_like_question(query) and catalog.asks_the_rules(query, resolution) \
                    and await self._answer_from_rules(interaction, catalog, query, edition, prefer):
                return  # "shooting after fall back": a question without a question word
            top = max((h.score for h in resolution.candidates), default=0.0)
            plausible = [h for h in resolution.candidates if h.score >= PICK_MIN_SCORE and h.score >= top - PICK_MARGIN]
            if resolution.missing is not None:
                await interaction.response.send_message(
                    embed=not_loaded_embed(resolution.missing, resolution.candidates[:5],
                                           full=catalog.full_sources_loaded()),
                    ephemeral=True, allowed_mentions=NO_MENTIONS)
                return
            if resolution.best is not None and resolution.confident:
                entry = resolution.best
            elif not plausible:
                if kind is None and await self._answer_from_rules(interaction, catalog, query, edition, prefer):
                    return  # no name comes close ("bracketing", "woods"): the rules text that has its words, unsure
                partial = not catalog.full_sources_loaded()
                await interaction.response.send_message(
                    embed=no_match_embed(query, resolution.candidates[:5], partial=partial),
                    ephemeral=True, allowed_mentions=NO_MENTIONS)
                return
            else:  # even a single look-alike is offered, not answered: it was not a confident match
                question = looks_like_question(query)
                partial = question and not catalog.full_sources_loaded()
                view = discord.ui.View(timeout=None)
                view.add_item(PickSelect(interaction.user.id, plausible[:PICKER_SIZE]))
                view.add_item(MissButton(typed_query or query))
                await interaction.response.send_message(
                    embed=picker_embed(query, plausible, partial=partial, question=question),
                    view=view, allowed_mentions=NO_MENTIONS)
                return
        if entry is None:
            raise UserError(f"Nothing matches {escape(truncate(query, 80))}.", field="query")
        embed, view = render_answer(catalog, entry)
        typed = query_edition(query)  # "tank shock 10e": that edition, or say it is not loaded
        if edition is None and entry.edition != (typed or prefer):
            note = edition_note(catalog, entry, typed or prefer, typed=typed is not None)
            embed.description = truncate(note + "\n\n" + (embed.description or ""), 4096)
        if alias is not None:
            embed.description = truncate(f"*Server alias:* **{escape(alias.term)}** → {escape(alias.target)}\n\n"
                                         + (embed.description or ""), 4096)
        view = with_miss_button(view, typed_query)
        kwargs = {"view": view} if view else {}
        await interaction.response.send_message(embed=embed, allowed_mentions=NO_MENTIONS, **kwargs)

    async def _complete(self, interaction: discord.Interaction, current: str,
                        kind: str | tuple[str, ...] | None) -> list[Choice[str]]:
        try:
            catalog: Catalog = self.bot.services.catalog  # type: ignore[attr-defined]
            namespace = interaction.namespace
            edition = getattr(namespace, "edition", None) or None
            prefer = _guild_edition(interaction)
            hits = catalog.autocomplete(aliased(interaction, (current or "")[:QUERY_MAX]), kind=kind, edition=edition,
                                        prefer_edition=prefer, limit=25)
        except Exception:  # autocomplete must always answer; the command reports real problems
            log.exception("rules autocomplete failed")
            return []
        return [Choice(name=hit_label(h), value=h.id if len(h.id) <= 100 else truncate(h.name, 100))
                for h in hits[:25]]

    @app_commands.command(name="rule", description="Look up a rule, ability, keyword or anything in the catalog.")
    @app_commands.describe(query="Name, abbreviation (DW, CRR, FNP), rule number (24.23) or words from the text",
                           edition="Rules edition (default: this server's edition, then the other)")
    @app_commands.choices(edition=EDITION_CHOICES)
    @app_commands.describe(faction="Only this faction's entries (autocomplete lists them)")
    async def rule(self, interaction: discord.Interaction, query: str, edition: str | None = None,
                    faction: str | None = None) -> None:
        await self._lookup(interaction, query, None, edition, faction)

    @rule.autocomplete("faction")
    async def _rule_faction(self, interaction: discord.Interaction, current: str) -> list[Choice[str]]:
        return faction_choices(self.bot.services.catalog, current)  # type: ignore[attr-defined]

    @rule.autocomplete("query")
    async def _rule_complete(self, interaction: discord.Interaction, current: str) -> list[Choice[str]]:
        return await self._complete(interaction, current, None)

    @app_commands.command(name="datasheet", description="Show a unit's datasheet: profiles, weapons, abilities.")
    @app_commands.describe(name="Unit name (typos are fine)", edition="Rules edition (default: this server's)")
    @app_commands.choices(edition=EDITION_CHOICES)
    @app_commands.describe(faction="Only this faction's entries (autocomplete lists them)")
    async def datasheet(self, interaction: discord.Interaction, name: str, edition: str | None = None,
                    faction: str | None = None) -> None:
        await self._lookup(interaction, name, "datasheet", edition, faction)

    @datasheet.autocomplete("faction")
    async def _datasheet_faction(self, interaction: discord.Interaction, current: str) -> list[Choice[str]]:
        return faction_choices(self.bot.services.catalog, current)  # type: ignore[attr-defined]

    @datasheet.autocomplete("name")
    async def _datasheet_complete(self, interaction: discord.Interaction, current: str) -> list[Choice[str]]:
        return await self._complete(interaction, current, "datasheet")

    @app_commands.command(name="stratagem", description="Show a stratagem: cost, when, target, effect.")
    @app_commands.describe(name="Stratagem name or abbreviation (CRR)", edition="Rules edition (default: this server's)")
    @app_commands.choices(edition=EDITION_CHOICES)
    @app_commands.describe(faction="Only this faction's entries (autocomplete lists them)")
    async def stratagem(self, interaction: discord.Interaction, name: str, edition: str | None = None,
                    faction: str | None = None) -> None:
        await self._lookup(interaction, name, "stratagem", edition, faction)

    @stratagem.autocomplete("faction")
    async def _stratagem_faction(self, interaction: discord.Interaction, current: str) -> list[Choice[str]]:
        return faction_choices(self.bot.services.catalog, current)  # type: ignore[attr-defined]

    @stratagem.autocomplete("name")
    async def _stratagem_complete(self, interaction: discord.Interaction, current: str) -> list[Choice[str]]:
        return await self._complete(interaction, current, "stratagem")


async def setup(bot: commands.Bot) -> None:
    bot.add_dynamic_items(PageButton, ShowButton, PickSelect, MissButton)
    await bot.add_cog(Rules(bot))
