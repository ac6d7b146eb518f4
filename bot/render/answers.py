"""A question's answer from the rules text (bot/catalog/answers.py) as one embed a phone shows in a screenful:
the quoted sentences with their rule number and source, then the other close passages, related entries and FAQ.
"""

from __future__ import annotations

import discord

from bot.catalog.answers import Answer, Quote
from bot.render.common import COLOUR_RULES, edition_label, safe_markdown, truncate
from bot.render.rules import KIND_LABELS, PARTIAL_DATA_NOTE, load_hint

ANSWER_FOOTER = "Answer quoted from the rules text"  # bench/bench_answers.py reads replies by this footer
NOT_SURE = "I'm not sure"
OTHER_QUOTE_CHARS = 220  # the closest passages after the first are shortened: the menu opens them in full


SUMMARY_LABEL = "Community summary from 40kdc-data (CC BY 4.0), not the rules text"


def citation(q: Quote) -> str:
    """"**01.05.02 Re-rolls** · Rule · 11th edition · game-datacards …" (the number only when it has one; the
    numbers other sources print when they differ; the label of a community summary, which is no rules text)."""
    p = q.passage
    name = f"{p.number} {p.name}" if p.number else p.name
    line = (f"**{safe_markdown(truncate(name, 120))}** · {KIND_LABELS.get(p.kind, p.kind)} · "
            f"{edition_label(p.edition)} · {safe_markdown(truncate(p.source, 80))}")
    if p.other_numbers:
        line += f" · sources disagree on the number: also {safe_markdown(truncate(p.other_numbers, 120))}"
    return line + (f"\n*{SUMMARY_LABEL}:*" if p.summary else "")


def _quoted(text: str, limit: int) -> str:
    lines = safe_markdown(truncate(text, limit)).splitlines()
    return "\n".join(f"> {line}" if line.strip() else ">" for line in lines)


def answer_embed(answer: Answer, *, partial: bool = False) -> discord.Embed:
    """`partial`: only the embedded data is loaded, so the answer says the complete rules are not."""
    asked = truncate(" ".join(answer.query.split()), 200)
    if not answer.passages:
        text = f"{NOT_SURE}: no rules text shares the words of this question. Try naming the rule or ability."
    elif answer.confident:
        first = answer.passages[0]
        text = f"{citation(first)}\n{_quoted(first.text, 900)}"
        if answer.passages[1:]:
            text += "\n\n**Also close:**\n" + "\n".join(f"{citation(q)}\n{_quoted(q.text, OTHER_QUOTE_CHARS)}"
                                                          for q in answer.passages[1:])
    else:
        text = (f"{NOT_SURE} which rule answers this. The closest rules:\n\n"
                + "\n\n".join(f"{citation(q)}\n{_quoted(q.text, OTHER_QUOTE_CHARS + 80)}" for q in answer.passages))
    if partial:
        text += f"\n\n{PARTIAL_DATA_NOTE}{load_hint()}"
    embed = discord.Embed(title=truncate(asked, 256) or "Question", colour=COLOUR_RULES, description=truncate(text, 3800))
    if answer.related:
        embed.add_field(name="Related", value=truncate(" · ".join(
            f"{safe_markdown(r.name)} ({KIND_LABELS.get(r.kind, r.kind)}, {r.edition})" for r in answer.related), 1024),
            inline=False)
    if answer.faq:
        embed.add_field(name="FAQ and errata", value=truncate("\n".join(
            f"• {safe_markdown(truncate(f.name, 150))}" for f in answer.faq), 1024), inline=False)
    embed.set_footer(text=f"{ANSWER_FOOTER}. Open any of these below.")
    return embed
