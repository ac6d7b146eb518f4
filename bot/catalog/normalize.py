"""Query and name normalisation: case, diacritics, punctuation and curly quotes all fold the same way."""

from __future__ import annotations

import re
import unicodedata

_QUOTES = str.maketrans({"’": "'", "‘": "'", "`": "'", "´": "'", "“": '"', "”": '"', "–": "-", "—": "-"})
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\ufeff\ufffd\ud800-\udfff]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def clean_text(text: str) -> str:
    """Lone surrogates (a broken client, or undecodable bytes read with surrogateescape) become U+FFFD, so the
    text can be encoded as UTF-8 (SQLite, Discord's JSON) and echoed back; search treats them as a space."""
    return _SURROGATE.sub("\ufffd", text) if isinstance(text, str) else ""
_NON_WORD = re.compile(r"[^a-z0-9+]+")
_PLUS_AFTER_NUMBER = re.compile(r"(?<=[0-9+]) \+")  # "4 +" is "4+"; "waaagh +1 attacks" keeps its word
_PLUS_AND = re.compile(r"(?<=[a-z]) \+ (?=[a-z])")


def fold(text: str) -> str:
    """Lowercase ASCII with diacritics removed ("Grimnyr’s Régard" -> "grimnyr's regard")."""
    text = _CONTROL.sub(" ", text.translate(_QUOTES))
    if text.isascii():  # nothing to decompose (most names and queries): the per-character pass is the cost
        return text.lower()
    text = unicodedata.normalize("NFKD", text)
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    return text.lower()


def normalize(text: str) -> str:
    """Words only: apostrophes vanish ("hit 'em" -> "hit em"), other punctuation becomes a space.

    '+' survives so that "4+" stays distinct from "4" ("4 +" too); "&" reads as "and", and so does a '+'
    standing alone between two words ("precision + dev wounds"); "waaagh +1" keeps the word "waaagh".
    """
    text = fold(text).replace("&", " and ").replace("'", "").replace("+", "+ ")
    text = _PLUS_AFTER_NUMBER.sub("+", " ".join(_NON_WORD.sub(" ", text).split()))
    return _PLUS_AND.sub(" and ", text)  # last, on the words alone, so that normalising twice changes nothing


def compact(text: str) -> str:
    """Normalised without spaces, so "re-roll" == "reroll" and "counter-offensive" == "counteroffensive"."""
    return normalize(text).replace(" ", "")


_RULE_NUMBER = re.compile(r"^\s*\d{1,2}(?:(?:\.\d{1,2})+|(?:-\d{1,2})+)\s*$")


def rule_number(text: str) -> str | None:
    """"24.23" / "5.2.1" / "13-08" -> canonical "24.23" / "05.02.01" / "13.08"; None when the text is not a rule
    number (one separator throughout: "13-08.01" is not one)."""
    if not _RULE_NUMBER.match(text or ""):
        return None
    return ".".join(f"{int(p):02d}" for p in re.split(r"[.-]", text.strip()))
