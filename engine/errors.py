"""The one error the engine raises for bad input."""

from __future__ import annotations


class RequestError(ValueError):
    """An invalid request: `message` says what is wrong in words, `field` is the JSON path (e.g.
    `volley[0].weapon.attacks`). Raised before any expensive work, so callers can show it directly."""

    def __init__(self, message: str, field: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.field = field

    def to_json(self) -> dict[str, str]:
        return {"error": self.message, "field": self.field}

    def __str__(self) -> str:
        return f"{self.field}: {self.message}" if self.field else self.message
