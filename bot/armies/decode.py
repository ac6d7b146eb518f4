"""Bytes as players export them -> the payload wh40kdc's adapters read (text, or a JSON tree).

Every step is bounded before it runs: the raw size, a `.rosz` archive's member count and inflated size
(read in chunks, so a zip bomb stops at the limit), a ListForge share payload's inflated size, and XML that
declares a DOCTYPE or entities (billion laughs) is refused. What the content may cost (lines, nesting depth,
nodes, numbers) is checked while it is read, before any full parse (bot.armies.limits). Text is normalised for the quirks of copied
lists: non-breaking and thin spaces, curly apostrophes and quotes, `◦` sub-bullets, comma thousands.
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import re
import zipfile
import zlib
from dataclasses import dataclass
from typing import Any
from xml.etree import ElementTree

from bot.armies import limits
from bot.armies.errors import ListError

MAX_BYTES = 5 * 1024 * 1024  # a 2,000-point list is a few KB; BattleScribe XML of an Onslaught list < 1 MB
MAX_INFLATED = 5 * 1024 * 1024  # what a .rosz or a ListForge payload may inflate to
MAX_ZIP_MEMBERS = 8

BATTLESCRIBE_XMLNS = "http://www.battlescribe.net/schema/rosterSchema"


@dataclass(frozen=True)
class Payload:
    """What the adapters get: `value` is a str (text formats) or a dict (JSON trees); `source` says how it came."""

    value: Any
    source: str  # "text", "json", "listforge-url", "battlescribe-xml", "battlescribe-rosz"


_SPACES = re.compile("[\u00a0\u202f\u2007\u2009\u200a\u3000]")
_ZERO_WIDTH = re.compile("[\u200b\u200c\u200d\ufeff]")
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u02bc": "'", "\u201c": '"', "\u201d": '"'})
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")
_SUB_BULLET = re.compile(r"^(\s+)[◦○▪‣∙•]\s*", re.MULTILINE)


def normalise_text(text: str) -> str:
    """The copy-paste quirks, undone: NBSP/thin spaces, zero-width marks, curly quotes, `◦`, `2,000`, CRLF."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _ZERO_WIDTH.sub("", _SPACES.sub(" ", text)).translate(_QUOTES)
    text = _THOUSANDS.sub("", text)
    # The GW app nests a model's wargear under "◦"; wh40kdc's framed GW adapter only reads "•" bullets (a
    # deeper "•" is a child), so every indented bullet glyph becomes "•".
    return _SUB_BULLET.sub(lambda m: f"{m.group(1)}• ", text)


def decode(data: bytes | str, filename: str | None = None) -> Payload:
    """Recognise the container (zip, XML, JSON, ListForge URL, text) and return the adapters' payload."""
    raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    if len(raw) > MAX_BYTES:
        raise ListError(f"The list is {len(raw) / 1024 / 1024:.1f} MB; the limit is {MAX_BYTES // 1024 // 1024} MB.")
    if not raw.strip():
        raise ListError("The list is empty.")
    name = (filename or "").casefold()
    if raw[:4] == b"PK\x03\x04" or name.endswith(".rosz"):
        return Payload(_battlescribe_tree(_unzip_roster(raw)), "battlescribe-rosz")
    text = _text(raw)
    stripped = text.lstrip()
    if stripped.startswith("<"):
        return Payload(_battlescribe_tree(raw), "battlescribe-xml")
    if stripped.startswith(("{", "[")):
        return Payload(load_json(stripped, "The file"), "json")
    first = stripped.split(None, 1)[0] if stripped else ""
    if "/listforge/" in first or first.startswith("H4sIA"):
        return Payload(decode_listforge(first), "listforge-url")
    limits.check_text(text)
    return Payload(normalise_text(text), "text")


def load_json(text: str, what: str) -> Any:
    """JSON text -> its tree, within the limits: depth and node count streamed before the parse, numbers
    checked while it parses and by key after it (bot.armies.limits)."""
    limits.check_json_shape(text)
    try:
        tree = json.loads(text, **limits.JSON_HOOKS)
    except json.JSONDecodeError as error:
        raise ListError(f"{what} looks like JSON but is not valid JSON: {error.msg}.", line=error.lineno) from None
    limits.check_tree(tree)
    return tree


def _text(raw: bytes) -> str:
    for encoding in ("utf-8-sig", "utf-16") if raw[:2] in (b"\xff\xfe", b"\xfe\xff") else ("utf-8-sig",):
        try:
            return raw.decode(encoding)
        except UnicodeDecodeError:
            continue
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        raise ListError("The file is not text (or not UTF-8): is it really an army list?", line=line) from None


def _inflate(stream: Any, what: str) -> bytes:
    """Read a decompressing stream up to MAX_INFLATED bytes, never more."""
    out = bytearray()
    while True:
        chunk = stream.read(64 * 1024)
        if not chunk:
            return bytes(out)
        out += chunk
        if len(out) > MAX_INFLATED:
            raise ListError(f"The {what} inflates to more than {MAX_INFLATED // 1024 // 1024} MB: refused "
                            "(an army list is far smaller; this looks like a zip bomb).")


def _unzip_roster(raw: bytes) -> bytes:
    try:
        archive = zipfile.ZipFile(io.BytesIO(raw))
        members = [m for m in archive.infolist() if not m.is_dir()]
    except (zipfile.BadZipFile, OSError, ValueError) as error:
        raise ListError(f"The .rosz file is not a valid zip archive ({error}).") from None
    if not members:
        raise ListError("The .rosz archive is empty.")
    if len(members) > MAX_ZIP_MEMBERS:
        raise ListError(f"The .rosz archive holds {len(members)} files; a roster holds one.")
    member = next((m for m in members if m.filename.casefold().endswith(".ros")), members[0])
    try:
        with archive.open(member) as stream:
            return _inflate(stream, ".rosz archive")
    except (zipfile.BadZipFile, zlib.error, NotImplementedError, RuntimeError, EOFError) as error:
        raise ListError(f"The .rosz archive cannot be read ({error}).") from None


def decode_listforge(text: str) -> Any:
    """A ListForge share URL or bare base64 segment -> its JSON, inflated with a bound (wh40kdc's is unbounded)."""
    segment = text.strip()
    marker = segment.find("/listforge/")
    if marker != -1:
        segment = segment[marker + len("/listforge/"):]
    elif re.match(r"^https?://", segment, re.IGNORECASE):
        segment = segment.rsplit("/", 1)[-1]
    segment = segment.split("?", 1)[0]
    try:
        packed = base64.b64decode(segment + "=" * (-len(segment) % 4), validate=False)
        stream = zlib.decompressobj(wbits=31)  # gzip framing
        inflated = stream.decompress(packed, MAX_INFLATED + 1)
    except (binascii.Error, ValueError, zlib.error) as error:
        raise ListError(f"The ListForge link cannot be decoded ({error}).") from None
    if len(inflated) > MAX_INFLATED:
        raise ListError("The ListForge payload inflates to more than 5 MB: refused.")
    try:
        text = inflated.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ListError(f"The ListForge link does not hold a roster ({error}).") from None
    return load_json(text, "The ListForge link's roster")


# ---- BattleScribe XML -> the JSON tree wh40kdc's BattleScribe walker reads ---------------------------------

_DOCTYPE = re.compile(rb"<!(?:DOCTYPE|ENTITY)", re.IGNORECASE)


def _battlescribe_tree(raw: bytes) -> dict[str, Any]:
    """A `.ros` roster as the `{"roster": {"forces": [...]}}` tree NewRecruit exports (same BattleScribe schema)."""
    if _DOCTYPE.search(raw[:65536]) or _DOCTYPE.search(raw):
        raise ListError("The roster XML declares a DOCTYPE or entities; BattleScribe files never do, so it is refused.")
    root = _parse_xml(raw)
    if _local(root.tag) != "roster":
        raise ListError(f"The XML is not a BattleScribe roster (its root is <{_local(root.tag)}>).")
    roster = _element(root)
    roster["xmlns"] = BATTLESCRIBE_XMLNS
    tree = {"name": root.get("name"), "generatedBy": root.get("generatedBy") or "BattleScribe", "roster": roster}
    limits.check_tree(tree)
    return tree


def _parse_xml(raw: bytes) -> ElementTree.Element:
    """The XML tree, fed to the parser in 64 KB pieces: it stops at the first element past the depth or
    node limit, before the rest is read (a flat or deep bomb never becomes a whole tree)."""
    parser = ElementTree.XMLPullParser(events=("start", "end"))
    depth = nodes = 0
    root: ElementTree.Element | None = None
    try:
        for start in range(0, len(raw), 64 * 1024):
            parser.feed(raw[start:start + 64 * 1024])
            for event, element in parser.read_events():
                if event == "end":
                    depth -= 1
                    continue
                root = element if root is None else root
                depth += 1
                nodes += 1
                if depth > limits.MAX_DEPTH:
                    raise ListError(f"The roster XML nests deeper than {limits.MAX_DEPTH} elements; the limit is "
                                    f"{limits.MAX_DEPTH} (a roster nests about 12).")
                if nodes > limits.MAX_NODES:
                    raise ListError(f"The roster XML has more than {limits.MAX_NODES:,} elements; the limit is "
                                    f"{limits.MAX_NODES:,} (a 2,000-point roster has a few thousand).")
        parser.close()
    except ElementTree.ParseError as error:
        line = getattr(error, "position", (None,))[0]
        raise ListError(f"The roster is not valid XML ({error}).", line=line) from None
    if root is None:
        raise ListError("The roster is not valid XML (no element).")
    return root


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


# Containers whose children become JSON arrays, as in NewRecruit's JSON export.
_LISTS = {"forces", "selections", "categories", "costs", "rules", "profiles", "characteristics"}


_XML_NUMBER = re.compile(rf"-?\d{{1,{limits.MAX_DIGITS}}}(?:\.\d{{1,6}})?")


def _element(node: ElementTree.Element) -> dict[str, Any]:
    """One element as NewRecruit's JSON has it (recursive: _parse_xml bounded the depth at MAX_DEPTH)."""
    out: dict[str, Any] = {}
    for key, value in node.attrib.items():
        out[key] = _xml_number(key, value) if key in ("number", "value") else value
    for child in node:
        tag = _local(child.tag)
        if tag in _LISTS:
            out[tag] = [_element(item) for item in child]
        elif tag in ("description", "characteristic"):
            continue  # rules prose: never read
        else:
            out[tag] = _element(child)
    return out


def _xml_number(key: str, text: str) -> int | float:
    """A roster's number="..." or value="...": plain decimal digits only (not inf, nan, 1e999 or 0x10)."""
    if not _XML_NUMBER.fullmatch(text.strip()):
        raise ListError(f"The roster has {key}=\"{text[:20]}\", which is not a number a list can hold (a plain "
                        f"decimal of at most {limits.MAX_DIGITS} digits).")
    number = float(text)
    return int(number) if number.is_integer() else number
