"""What every state backend provides (see `bot.storage`)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol


class StorageError(Exception):
    """The state database can't be used; the message is one line naming the database and the cause."""


class StorageUnavailable(StorageError):
    """The database server went away while the bot runs (a dropped connection, a restart): the change
    did not commit. The text is for users; the cause is chained for the log."""

    def __init__(self, detail: str = "") -> None:
        super().__init__("The database could not be reached, so nothing was saved. Try again in a minute; "
                         "if it keeps happening, tell the bot's operator.")
        self.detail = detail


class Cursor(Protocol):
    def fetchone(self) -> Any: ...
    def fetchall(self) -> list[Any]: ...
    def __iter__(self) -> Iterator[Any]: ...


class Conn(Protocol):
    def execute(self, sql: str, params: Sequence[Any] = ()) -> Cursor: ...
    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> Any: ...


class Storage(Protocol):
    dialect: str  # "sqlite" or "postgresql": picks a feature's migrations
    where: str  # the file or server, for messages (never a password)

    def read(self) -> AbstractContextManager[Conn]: ...
    def transaction(self, key: int | None = None) -> AbstractContextManager[Conn]: ...
    def migrate(self, namespace: str, migrations: dict[str, Sequence[str]]) -> int: ...
    def close(self) -> None: ...


def split_statements(sql: str, complete: Any) -> list[str]:
    """Statements of a migration script; `complete(text)` says whether `text` ends a whole statement."""
    statements, current = [], ""
    for piece in sql.split(";"):
        current += piece + ";"
        if complete(current):
            if current.strip(" \n\t;"):
                statements.append(current.strip())
            current = ""
    if current.strip(" \n\t;"):
        statements.append(current.strip())
    return statements
