"""Errors that carry a message meant for the user.

Services raise `UserError` for anything the person typing can fix (a bad option, an unknown unit, a
refused action). The tree's error handler shows its text ephemerally; everything else becomes a
generic message with an error id, and its traceback goes to the log under that id.
"""

from __future__ import annotations


class UserError(Exception):
    """A problem the user can fix; `str(error)` is shown to them as-is."""

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field

    def __str__(self) -> str:
        return self.message


class ConfigError(Exception):
    """A bad setting: start-up stops with one clear line on stderr."""
