"""Forms (modals) that outlive the process that opened them.

Discord delivers a submitted form by its custom_id only, possibly to a bot process started after the one that
showed it. discord.py keeps one form per custom_id and retires it after its first submission, so a form
opened before a restart (or a second player's open form of the same kind) got no answer, and its text was lost.
A `StandingForm` is one instance per kind, registered at start-up (`register`), that never retires and reads
each submission from the interaction itself, never from its own fields. A submission for a form this process
does not know is answered with `FORM_GONE` by the bot (`is_known`), never dropped.
"""

from __future__ import annotations

from typing import Any

import discord
from discord.ext import commands

FORM_GONE = ("This form was opened before the bot restarted and can no longer be read: nothing was saved. "
             "Open it again (for a list: /army paste) and paste again.")


class StandingForm(discord.ui.Modal):
    """A form answered by custom_id, whichever process showed it; shared by every submission of its kind."""

    def __init__(self, *, custom_id: str, **options: Any) -> None:
        super().__init__(custom_id=custom_id, timeout=None, **options)

    def stop(self) -> None:
        """Never retire: discord.py stops a form after a submission, which would unregister the kind."""


def submitted(interaction: discord.Interaction, custom_id: str) -> str:
    """The value typed into field `custom_id` of this submission ("" when the field is missing)."""
    pending: list[Any] = list((interaction.data or {}).get("components") or [])
    while pending:
        component = pending.pop()
        if not isinstance(component, dict):
            continue
        if component.get("custom_id") == custom_id and isinstance(component.get("value"), str):
            return component["value"]
        pending.extend(component.get("components") or [])
        if isinstance(component.get("component"), dict):  # a field inside a label
            pending.append(component["component"])
    return ""


def register(bot: commands.Bot, form: StandingForm) -> None:
    """Take every submission of `form`'s custom_id in this process, from now on (a cog's setup)."""
    bot.add_view(form)
    bot.standing_forms.add(form.custom_id)  # type: ignore[attr-defined]  # CogitatorBot's


def is_unknown_form(interaction: discord.Interaction, forms: set[str]) -> bool:
    """True for a submitted form that none of the registered kinds (`forms`, by custom_id) answers."""
    return (interaction.type is discord.InteractionType.modal_submit
            and (interaction.data or {}).get("custom_id") not in forms)
