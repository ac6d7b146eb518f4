"""The import formats a player or operator may load (`python -m bot import FORMAT PATH`), by name.

Used by the catalog service (imports, replays of kept imports) and by the known-names list generator
(bot/catalog/known_list.py), so it sits below both. The importers load lazily: a format costs nothing
until it is used.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path


def load_import(fmt: str, path: Path, skipped: list[str] | None = None) -> dict:
    """Parse and validate one import (nothing is written). New formats register in `IMPORT_FORMATS`;
    unknown files of a folder that were skipped are appended to `skipped`."""
    loader = IMPORT_FORMATS.get(fmt)
    if loader is None:
        raise ValueError(f"unknown import format {fmt!r}")
    return loader(Path(path), skipped)


def _load_wahapedia(path: Path, skipped: list[str] | None = None) -> dict:
    from bot.catalog.importers import wahapedia_csv

    return wahapedia_csv.load_folder(path)


def _load_gdc(path: Path, skipped: list[str] | None = None) -> dict:
    from bot.catalog.importers import gdc_json

    return gdc_json.load_path(path, skipped)


IMPORT_FORMATS: dict[str, Callable[[Path, list[str] | None], dict]] = {"wahapedia": _load_wahapedia, "gdc": _load_gdc}
