"""Hostile army-list files (issue 19's audit), built from the real fixtures: for the limit tests, the console
fuzz's attachments and bench/bench_hostile_lists.py. Each builder returns (file name, bytes).

The shapes: a real list padded with hundreds of thousands of lines, deep nesting in every tree format,
and non-finite, huge and overlong numbers where each format keeps its counts.
"""

from __future__ import annotations

import base64
import gzip
import io
import zipfile
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "armies"


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def boyz_flood(lines: int = 960_000) -> tuple[str, bytes]:
    """A real GW-app list plus `lines` lines of `Boyz` (960,000: 4.8 MB, under the 5 MB cap)."""
    return "boyz-flood.txt", fixture("votann_gw_app.txt") + b"\n" + b"Boyz\n" * lines


def listforge_deep(depth: int = 200_000) -> tuple[str, bytes]:
    """A ListForge share link whose payload is gzip('[' x depth): RecursionError in a recursive decoder."""
    packed = base64.b64encode(gzip.compress(b"[" * depth)).decode()
    return "listforge-deep.txt", f"https://listforge.club/#/listforge/{packed}".encode()


def battlescribe_number(value: str) -> tuple[str, bytes]:
    """The real .ros roster with one unit's number="..." replaced (inf, nan, 100000000000, 1e999)."""
    text = fixture("votann_battlescribe.ros").decode()
    unit = text.index('type="unit"')
    at = text.index('number="1"', unit)
    return f"number-{value}.ros", (text[:at] + f'number="{value}"' + text[at + len('number="1"'):]).encode()


def newrecruit_number(value: str) -> tuple[str, bytes]:
    """The real NewRecruit JSON with one selection's "number" written as `value` (1e999, NaN, a 5,000-digit int)."""
    text = fixture("orks_newrecruit.json").decode()
    at = text.index('"number": 1', text.index('"type": "unit"') if '"type": "unit"' in text else 0)
    return "number.json", (text[:at] + f'"number": {value}' + text[at + len('"number": 1'):]).encode()


def gw_count(count: str) -> tuple[str, bytes]:
    """The real GW-app list with one model count written as `count` ("• 100000000000x Hearthkyn Warrior")."""
    text = fixture("votann_gw_app.txt").decode()
    return "count.txt", text.replace("• 9x Hearthkyn Warrior", f"• {count}x Hearthkyn Warrior", 1).encode()


def xml_deep(depth: int = 100_000) -> tuple[str, bytes]:
    return "deep.ros", b"<roster>" + b"<selection>" * depth + b"</selection>" * depth + b"</roster>"


def xml_wide(count: int = 400_000) -> tuple[str, bytes]:
    return "wide.ros", b"<roster><forces>" + b"<force/>" * count + b"</forces></roster>"


def json_deep(depth: int = 100_000) -> tuple[str, bytes]:
    return "deep.json", b"[" * depth + b"]" * depth


def json_wide(count: int = 1_000_000) -> tuple[str, bytes]:
    return "wide.json", b'{"roster": [' + b"0," * count + b"0]}"


def long_line(chars: int = 1_000_000) -> tuple[str, bytes]:
    return "long-line.txt", fixture("votann_gw_app.txt") + b"Boyz " * (chars // 5)


def rosz(name_and_data: tuple[str, bytes]) -> tuple[str, bytes]:
    """A .ros shape zipped as a .rosz, as BattleScribe saves it."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("roster.ros", name_and_data[1])
    return name_and_data[0] + "z", buffer.getvalue()


def all_shapes() -> list[tuple[str, bytes]]:
    """Every shape once, at the audit's sizes (the biggest are 4-5 MB)."""
    return [
        boyz_flood(), listforge_deep(), xml_deep(), xml_wide(), json_deep(), json_wide(), long_line(),
        rosz(xml_deep()), rosz(battlescribe_number("inf")),
        *(battlescribe_number(v) for v in ("inf", "nan", "100000000000", "1e999", "-1", "0x10")),
        *(newrecruit_number(v) for v in ("1e999", "-1e999", "NaN", "Infinity", "100000000000", "1" * 5000, "2.5")),
        *(gw_count(c) for c in ("100000000000", "1" * 5000, "101")),
    ]
