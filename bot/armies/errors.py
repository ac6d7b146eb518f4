"""The one error of reading a list, shared by the decoder, the limits and the parser."""

from __future__ import annotations

from bot.errors import UserError


class ListError(UserError):
    """A list that cannot be read at all, or one over a limit; `line` points at the culprit when there is one."""

    def __init__(self, message: str, *, line: int | None = None) -> None:
        super().__init__(message, field="list")
        self.line = line
