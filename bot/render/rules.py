"""Rules answers as embeds: rules and stratagems as paginated text, datasheets as phone-width tables.

Everything shown here comes from imported files, so it is treated as untrusted: names are escaped
(`escape`), texts keep their Markdown but lose mentions, code fences, masked links and headings
(`safe_markdown`), and anything inside a code block loses its backticks (`code_safe`).

Phone first: code-block tables stay within ~34 characters so they do not wrap on a narrow screen,
weapon profiles are two lines each (name, then the numbers), and every footer names the edition and
the source.
"""

from __future__ import annotations

import discord

from bot.catalog.model import Entry, Hit, is_detachment_entry
from bot.catalog.things import faction_key
from bot.render.common import (
    COLOUR_ERROR,
    COLOUR_RULES,
    EMBED_FIELD_VALUE_MAX,
    code_safe,
    edition_label,
    escape,
    safe_markdown,
    source_footer,
    truncate,
)

PAGE_CHARS = 1800  # a screenful on a phone; long rules paginate with buttons
KIND_LABELS = {"datasheet": "Datasheet", "weapon": "Weapon", "ability": "Ability", "stratagem": "Stratagem",
               "rule": "Rule", "detachment": "Detachment rule", "enhancement": "Enhancement", "keyword": "Keyword",
               "faq": "FAQ / errata"}
ERRATA_SHOWN = 4  # errata listed in a target's answer; the rest are counted


def hit_label(hit: Hit, *, limit: int = 100) -> str:
    """One line for autocomplete and pickers: name, edition, what it is, faction(s) and detachment(s),
    so the distinct things of one name can be told apart ("Armour of Contempt · 11e · Stratagem ·
    Adeptus Astartes +5 · 24 detachments")."""
    return truncate(f"{hit.name} · {hit_detail(hit)}", limit)


def hit_detail(hit: Hit) -> str:
    """The label without the name (a picker option's description): "11e · Stratagem · Orks"."""
    what = "Detachment" if is_detachment_entry(hit.id) else KIND_LABELS.get(hit.kind, hit.kind)
    group = where_label(hit) or (_stratagem_group(hit.id) if hit.kind == "stratagem" else None)
    return f"{hit.edition} · {what}" + (f" · {group}" if group else "")


def where_label(hit: Hit) -> str:
    """"Orks", "Space Marines +3", "Orks · War Horde", "Space Marines · 20 detachments"; '' for core things."""
    seen: dict[str, str] = {}
    for faction in hit.factions or ((hit.faction,) if hit.faction else ()):
        seen.setdefault(faction_key(faction), faction)
    factions = list(seen.values())
    if hit.faction and hit.faction in factions:  # the primary's faction first
        factions.remove(hit.faction)
        factions.insert(0, hit.faction)
    parts = []
    if factions:
        parts.append(factions[0] + (f" +{len(factions) - 1}" if len(factions) > 1 else ""))
    dets = list(dict.fromkeys(hit.detachments))
    if len(dets) == 1:
        parts.append(dets[0])
    elif dets:
        parts.append(f"{len(dets)} detachments")
    return " · ".join(parts)


def _stratagem_group(entry_id: str) -> str | None:
    """'Core' or 'Boarding Actions' from an id like `10e:stratagem:seed.boarding-actions:insane-bravery`,
    so same-named stratagems of different sets can be told apart in a picker."""
    parts = entry_id.split(":")
    if len(parts) < 4 or "." not in parts[2]:
        return None
    return parts[2].split(".", 1)[1].replace("-", " ").title()


def paginate(text: str, size: int = PAGE_CHARS) -> list[str]:
    """Split at paragraph, then line, then word boundaries; never inside a word."""
    text = text.strip() or "*(no text)*"
    pages: list[str] = []
    current = ""
    for para in text.split("\n\n"):
        candidate = f"{current}\n\n{para}" if current else para
        if len(candidate) <= size:
            current = candidate
            continue
        if current:
            pages.append(current)
            current = ""
        while len(para) > size:
            cut = para.rfind("\n", 0, size)
            if cut < size // 2:
                cut = para.rfind(" ", 0, size)
            if cut < size // 2:
                cut = size
            pages.append(para[:cut].rstrip())
            para = para[cut:].lstrip()
        current = para
    if current:
        pages.append(current)
    return pages


def _title(entry: Entry) -> str:
    number = entry.data.get("number") if isinstance(entry.data, dict) else None
    prefix = f"{number} " if number else ""  # a numbered core rule, or core stratagem (15.02 Command Re-roll)
    return escape(f"{prefix}{entry.name}", limit=256)


def _footer(entry: Entry, page: int, pages: int) -> str:
    footer = source_footer(entry.edition, entry.source)
    return truncate(footer + (f" · page {page + 1}/{pages}" if pages > 1 else ""), 2048)


def body_text(entry: Entry) -> str:
    """The full text shown for an entry (everything but datasheets), including summary and FAQ."""
    data = entry.data if isinstance(entry.data, dict) else {}
    parts: list[str] = []
    if entry.kind == "stratagem":
        head = [f"**{data.get('cp', '?')}CP**"]
        if data.get("type"):
            head.append(str(data["type"]))
        if data.get("category"):
            head.append(str(data["category"]))
        if data.get("number"):  # a core stratagem's rule number (15.02-15.12)
            head.append(f"rule {data['number']}")
        if data.get("cp_extra"):
            head.append("extra: " + ", ".join(data["cp_extra"]))
        parts.append(" · ".join(head))
    elif entry.kind == "enhancement" and data.get("cost") is not None:
        parts.append(f"**{data['cost']} pts**" + (f" · {data['detachment']}" if data.get("detachment") else ""))
    elif entry.kind == "faq":
        what = "Errata" if data.get("faq_kind") == "errata" else "FAQ"
        parts.append(f"**{what}** · {data.get('publication') or '?'}" + (f" · {data['date']}" if data.get("date")
                                                                         else ""))
    elif data.get("role") == "detachment":
        parts.append("**Detachment**" + (f" · {entry.faction}" if entry.faction else "")
                     + (f" · {data['detachment_points']} detachment points" if data.get("detachment_points")
                        else ""))
    elif entry.kind == "detachment" and data.get("detachment"):
        parts.append(f"**{data['detachment']}** detachment rule")
    parts.append(entry.text)
    if data.get("summary"):
        parts.append("**Summary**\n" + "\n".join(f"- {s}" for s in data["summary"]))
    for item in data.get("faq") or []:
        parts.append(f"**Q:** {item.get('q', '')}\n**A:** {item.get('a', '')}")
    if entry.kind == "faq" and data.get("targets"):
        parts.append("Applies to: " + ", ".join(t["name"] for t in data["targets"][:20]))
    if entry.kind == "weapon" and data.get("datasheets"):
        names = ", ".join(data["datasheets"][:30]) + (" …" if len(data["datasheets"]) > 30 else "")
        parts.append(f"Used by: {names}")
    return safe_markdown("\n\n".join(p for p in parts if p))


def entry_pages(entry: Entry) -> int:
    if entry.kind == "datasheet":
        return 1
    return len(paginate(body_text(entry)))


def entry_embed(entry: Entry, *, page: int = 0, complete: Entry | None = None) -> discord.Embed:
    """The answer for one entry. `complete` is the full rule from another source when this one's table is empty."""
    if entry.kind == "datasheet":
        return datasheet_embed(entry, complete=complete)
    pages = paginate(body_text(entry))
    page = max(0, min(page, len(pages) - 1))
    embed = discord.Embed(title=_title(entry), description=pages[page], colour=COLOUR_RULES)
    label = "Detachment" if data_role(entry) == "detachment" else KIND_LABELS.get(entry.kind, entry.kind)
    embed.set_author(name=truncate(f"{label} · {edition_label(entry.edition)}"
                                   + (f" · {safe_markdown(entry.faction)}" if entry.faction else ""), 256))
    if complete is not None and page == len(pages) - 1:
        embed.add_field(name="Complete rule", value=truncate(
            f"This source leaves a table empty. The complete rule is **{_title(complete)}** "
            f"({escape(complete.source)}) — use the button below.", EMBED_FIELD_VALUE_MAX), inline=False)
    if page == len(pages) - 1:
        add_sources(embed, entry)
    embed.set_footer(text=_footer(entry, page, len(pages)))
    return embed


def data_role(entry: Entry) -> str | None:
    return entry.data.get("role") if isinstance(entry.data, dict) else None


def parts_fields(stratagems: list[Hit], enhancements: list[Hit]) -> list[tuple[str, str]]:
    """A detachment's "Stratagems (n)" and "Enhancements (n)" fields: names (buttons open them)."""
    fields = []
    for title, hits in (("Stratagems", stratagems), ("Enhancements", enhancements)):
        if hits:
            fields.append((f"{title} ({len(hits)})", truncate(", ".join(escape(h.name) for h in hits),
                                                              EMBED_FIELD_VALUE_MAX)))
    return fields


def errata_field(errata: list[Entry]) -> tuple[str, str] | None:
    """(name, value) of the "Errata & FAQ" field on a target's answer: publication, date and the change."""
    if not errata:
        return None
    lines = []
    for e in errata[:ERRATA_SHOWN]:
        d = e.data
        head = f"**{escape(d.get('publication') or '?')}**" + (f" ({d['date']})" if d.get("date") else "")
        if d.get("faq_kind") == "errata":
            what = d.get("errata") or e.text
            lines.append(f"{head} — errata: {truncate(' '.join(what.split()), 180)}")
        else:
            lines.append(f"{head} — Q: {truncate(' '.join((d.get('question') or '').split()), 110)} "
                         f"A: {truncate(' '.join((d.get('answer') or '').split()), 70)}")
    if len(errata) > ERRATA_SHOWN:
        lines.append(f"…and {len(errata) - ERRATA_SHOWN} more (buttons below open them).")
    return f"Errata & FAQ ({len(errata)})", truncate("\n".join(lines), EMBED_FIELD_VALUE_MAX)


# ---------------------------------------------------------------------------------------------
# Datasheets


def _cell(value, width: int) -> str:
    text = "-" if value is None else str(value)
    return text[:width].rjust(width)


def profile_table(profiles: list[dict]) -> str:
    """```M  T Sv Inv W Ld OC``` rows, one per model type, names above when there are several."""
    lines = ["  M   T  Sv Inv  W  Ld OC"]
    for p in profiles:
        sv = f"{p['Sv']}+" if p.get("Sv") is not None else "-"
        inv = f"{p['InSv']}+" if p.get("InSv") else "-"
        ld = f"{p['Ld']}+" if p.get("Ld") is not None else "-"
        if len(profiles) > 1:
            lines.append(code_safe(str(p.get("name", ""))[:30]))
        lines.append(code_safe(f"{_cell(p.get('M'), 3)} {_cell(p.get('T'), 3)} {_cell(sv, 3)} {_cell(inv, 3)} "
                     f"{_cell(p.get('W'), 2)} {_cell(ld, 3)} {_cell(p.get('OC'), 2)}"))
    return "```\n" + "\n".join(lines) + "\n```"


def weapon_lines(w: dict) -> str:
    """Two lines per profile: the name (with keywords), then range/A/skill/S/AP/D."""
    rng = "Melee" if w.get("range") == "melee" else f'{w.get("range")}"'
    skill = "N/A" if w.get("skill") is None else f'{w["skill"]}+'
    label = "WS" if w.get("type") == "melee" else "BS"
    kw = f" [{', '.join(w['keywords'])}]" if w.get("keywords") else ""
    return (f"**{escape(str(w.get('name', '')))}**{escape(kw)}\n"
            "`" + code_safe(f"{rng:>5} {_stat('A', w.get('A'))} {label}{skill} S{w.get('S')} AP{w.get('AP')} "
                            f"{_stat('D', w.get('D'))}") + "`")


def _stat(label: str, value: object) -> str:
    """`A3`, but `A 3D6+3` and `D D6+2`: a dice value glued to its label would misread."""
    text = str(value)
    return f"{label} {text}" if "D" in text.upper() else f"{label}{text}"


def _chunks(lines: list[str], limit: int = EMBED_FIELD_VALUE_MAX) -> list[str]:
    out: list[str] = []
    current = ""
    for line in lines:
        line = truncate(line, limit)
        candidate = f"{current}\n{line}" if current else line
        if len(candidate) > limit:
            out.append(current)
            current = line
        else:
            current = candidate
    if current:
        out.append(current)
    return out


EMBED_TOTAL_BUDGET = 5800  # Discord refuses embeds over 6000 characters in total


def _add_field(embed: discord.Embed, name: str, value: str) -> bool:
    """Add a field if the embed stays within Discord's total size; say so once when it would not."""
    if len(embed) + len(name) + len(value) > EMBED_TOTAL_BUDGET or len(embed.fields) >= 24:
        if not any(f.name == "More" for f in embed.fields):
            embed.add_field(name="More", value="This datasheet is longer than one message; the rest is left out.",
                            inline=False)
        return False
    embed.add_field(name=name, value=value, inline=False)
    return True


def datasheet_embed(entry: Entry, *, complete: Entry | None = None) -> discord.Embed:
    data = entry.data
    embed = discord.Embed(title=escape(entry.name, limit=256), colour=COLOUR_RULES)
    embed.set_author(name=truncate(f"Datasheet · {edition_label(entry.edition)}"
                                   + (f" · {safe_markdown(entry.faction)}" if entry.faction else ""), 256))
    borrowed = (complete.data.get("profiles") if complete is not None and isinstance(complete.data, dict)
                else None)
    if data.get("profiles"):
        description = profile_table(data["profiles"])
    elif borrowed:  # the page left its table out: show the linked datasheet's, and say whose it is
        description = profile_table(borrowed) + f"\n*Profiles from {escape(complete.source)}: this page prints none.*"
    else:
        description = "*This source prints no profile table for this unit.*"
    embed.description = description
    embed.set_footer(text=_footer(entry, 0, 1))
    for kind, title in (("ranged", "Ranged weapons"), ("melee", "Melee weapons")):
        lines = [weapon_lines(w) for w in data.get("weapons") or [] if w.get("type") == kind]
        for i, chunk in enumerate(_chunks(lines)):
            _add_field(embed, title if i == 0 else f"{title} (cont.)", chunk)
    ability_lines = []
    for a in data.get("abilities") or []:
        if a.get("text"):
            ability_lines.append(f"**{escape(a['name'])}:** {safe_markdown(a['text'], limit=600)}")
        else:
            ability_lines.append(f"**{escape(a['name'])}** ({a.get('type') or 'ability'})")
    for i, chunk in enumerate(_chunks(ability_lines)):
        _add_field(embed, "Abilities" if i == 0 else "Abilities (cont.)", chunk)
    unit = []
    if data.get("composition"):
        # one line per model type or loadout sentence: "; " glued "…ward stave.; Every CORV…"
        unit.extend(f"▪ {safe_markdown(c)}" for c in data["composition"])
    if data.get("points"):
        # every points figure names where it comes from (issue 23): "Wahapedia export 2025-11-14", "wh40kdc 1.4.5"
        unit.append(f"Points ({escape(entry.source)}): " + ", ".join(f"{p['models']} model{'s' if p['models'] != 1 else ''}: {p['points']}"
                                           + (f" ({escape(str(p['label']))})" if p.get("label") else "") for p in data["points"]))
    if data.get("leader"):
        unit.append(safe_markdown(str(data["leader"])))
    if unit:
        _add_field(embed, "Unit", truncate("\n".join(unit), EMBED_FIELD_VALUE_MAX))
    keywords = escape(", ".join(data.get("keywords") or []))
    factions = escape(", ".join(data.get("faction_keywords") or []))
    if keywords or factions:
        _add_field(embed, "Keywords", truncate(keywords + (f"\nFaction: {factions}" if factions else ""),
                                               EMBED_FIELD_VALUE_MAX))
    add_sources(embed, entry, add=_add_field)
    if complete is not None:
        _add_field(embed, "More complete source", escape(f"{complete.name} ({complete.source})", limit=1024))
    return embed


def sources_text(entry: Entry) -> str:
    """One line per source of a merged thing: "wh40kdc 1.4.5 (2026-06-20): Space Marines · Gladius Task Force,
    Anvil Siege Force"; '' when the entry has a single source."""
    sources = entry.data.get("sources") if isinstance(entry.data, dict) else None
    if not sources or len(sources) < 2 and not (sources[0].get("factions", [])[1:] or sources[0].get("detachments", [])[1:]):
        return ""
    lines = []
    for src in sources:
        where = ", ".join(src.get("factions") or [])
        dets = src.get("detachments") or []
        if dets:
            shown = ", ".join(dets[:8]) + (f" +{len(dets) - 8} more" if len(dets) > 8 else "")
            where = f"{where} · {shown}" if where else shown
        date = f" ({src['date']})" if src.get("date") and src["date"] not in src["source"] else ""
        lines.append(f"- {src['source']}{date}" + (f": {where}" if where else ""))
    return "\n".join(lines)


def add_sources(embed: discord.Embed, entry: Entry, add=None) -> None:
    """The "Sources" field (every source and where it lists this thing) and, when they disagree, a
    "Sources disagree" field; the table above shows the most recent source's values."""
    text = sources_text(entry)
    disagree = entry.data.get("disagreements") if isinstance(entry.data, dict) else None
    fields = []
    if disagree:
        fields.append(("Sources disagree", "\n".join(disagree) + "\nShown above and used by /sim: the most recent "
                       "source."))
    if text:
        fields.append(("Sources", text))
    for name, value in fields:
        value = safe_markdown(value, limit=EMBED_FIELD_VALUE_MAX)  # source names and values are imported text
        if add is not None:
            add(embed, name, value)
        else:
            embed.add_field(name=name, value=value, inline=False)


# ---------------------------------------------------------------------------------------------
# Misses


def no_match_embed(query: str, suggestions: list[Hit], *, partial: bool = False) -> discord.Embed:
    """`partial`: only the embedded data is loaded, so the miss may be the data's, and the answer says how to load
    the rest instead of a silent "No match"."""
    shown = escape(truncate(" ".join(query.split()), 80)) or "that"
    if suggestions:
        lines = "\n".join(f"- {escape(hit_label(h))}" for h in suggestions[:5])
        text = f"Nothing matches **{shown}** closely. Nearest entries:\n{lines}"
    else:
        text = (f"Nothing in the catalog matches **{shown}**. Try a rule, stratagem or unit name, "
                "e.g. `lethal hits`, `command re-roll` or `stompa`.")
    if partial:
        text += f"\n\n{PARTIAL_DATA_NOTE}{load_hint()}"
    return discord.Embed(title="No match", description=text, colour=COLOUR_ERROR)


DATA_UPDATE_HINT = ("An admin can run `python -m bot data update` (or import a game-datacards folder with "
                    "`python -m bot import gdc FOLDER`) to load the complete rules.")
DATA_UPDATE_HINT_10E = ("An admin can run `python -m bot data update` (or import a Wahapedia export with "
                        "`python -m bot import wahapedia FOLDER`) to load the complete 10th edition rules.")
PARTIAL_DATA_NOTE = ("Only the embedded data is loaded (seed pages and wh40kdc unit data): most rules text and the "
                     "numbered core rules are not. ")


def load_hint(edition: str | None = None) -> str:
    """How an admin loads the complete rules of `edition` (both editions when None)."""
    return DATA_UPDATE_HINT_10E if edition == "10e" else DATA_UPDATE_HINT


def not_loaded_embed(known, mentions: list[Hit], *, full: bool) -> discord.Embed:  # noqa: ANN001 - KnownName
    """The honest miss: the name is known to exist but no loaded entry is that rule."""
    what = known.what + (f", listed in {known.source}" if getattr(known, "source", "") else "")
    article = "an" if what[:1].lower() in "aeiou" else "a"
    if full:
        text = (f"**{escape(known.name)}** is {article} {escape(what)}; none of the loaded sources has an entry "
                "of that name.")
    else:
        text = (f"**{escape(known.name)}** is {article} {escape(what)}; it is not in the embedded data (seed pages "
                f"and wh40kdc unit data). {load_hint()}")
    embed = discord.Embed(title="Not in the loaded data", description=text, colour=COLOUR_ERROR)
    if mentions:
        embed.add_field(name="Nearest entries (not that rule)", value=truncate(
            "\n".join(f"- {escape(hit_label(h))}" for h in mentions[:5]), EMBED_FIELD_VALUE_MAX), inline=False)
    return embed


def picker_embed(query: str, hits: list[Hit], *, partial: bool = False, question: bool = False) -> discord.Embed:
    """`question`: a sentence asked, none of whose hits is sure to answer it, so the menu says so instead of
    claiming a match; `partial`: asked of the embedded data only, so it also says the complete rules are not loaded."""
    shown = escape(truncate(" ".join(query.split()), 80))
    text = (f"I'm not sure which rule answers **{shown}**. The closest entries are below." if question
            else f"Several entries match **{shown}**. Choose one below.")
    if partial:
        text += f"\n\n{PARTIAL_DATA_NOTE}{load_hint()}"
    embed = discord.Embed(title="Did you mean…", colour=COLOUR_RULES, description=text)
    embed.set_footer(text="Only the person who asked can choose.")
    return embed
