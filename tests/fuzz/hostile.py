"""Hostile values for console options, as hypothesis strategies: what a person (or a pasted list) could type.

Every strategy produces the text typed after `option:` on a console line. The console, like the Discord
client, checks types, ranges, lengths and choices before anything reaches the bot, so out-of-range values
mostly test that path; in-range boundaries and hostile text reach the bot itself.
"""

from __future__ import annotations

import re

from hypothesis import strategies as st

# Text that has a meaning on Discord or breaks naive code: mentions, markdown, direction and zero-width marks,
# lone surrogates (not encodable as UTF-8), control characters, format strings, SQL, numbers as text.
ATOMS = [
    "@everyone", "@here", "<@111>", "<@!222>", "<@&1>", "<#1001>", "</game start:1>", "<t:0:R>", "<:emoji:1>",
    "```", "```py\nprint(1)\n```", "`", "[link](https://example.invalid)", "**bold**", "__u__", "||spoiler||",
    "~~s~~", "# heading", "-# small", "> quote", "* item", "\\", "\u202e", "\u202d", "\u2066", "\u200f", "\u200b",
    "\u200d", "\ufeff", "\u00ad", "\u2028", "\ud800", "\udbff", "\udfff", "\x00", "\x1b[31m", "\t", "Z\u0351\u0352\u0353\u0354",
    "🏳️‍🌈", "ﷺ", "𒐫", "\uffff", "'", '"', "%s%n", "{0}", "{}", "${x}", "'; DROP TABLE games;--", "NaN", "-1",
    "1e309", "9" * 40, "Boyz", "Warboss", "Kâhl", "Oath of Moment", "Command Re-roll", "#2", "·", ":", "=",
]

# Characters from the awkward corners of Unicode, for random strings built from them.
AWKWARD = st.one_of(
    st.characters(categories=["Cs"]),  # lone surrogates U+D800-DFFF
    st.sampled_from("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"),  # bidi controls
    st.sampled_from("\u200b\u200c\u200d\u2060\ufeff\u00ad\u180e"),  # zero-width
    st.characters(categories=["Mn", "Me"]),  # combining marks (zalgo)
    st.characters(categories=["Cc", "Cf", "Zs", "Zl", "Zp", "Co", "Cn"]),
    st.characters(min_codepoint=0x1F300, max_codepoint=0x1FAFF),  # emoji (astral: two UTF-16 units)
    st.characters(min_codepoint=0x0590, max_codepoint=0x08FF),  # Hebrew, Arabic (right to left)
    st.sampled_from("@#<>&*_~`|\\[]()!:/=-+'\""),
    st.characters(codec="ascii"),
)

LONG_UNIT = st.sampled_from(["a", "W", "9", "@everyone ", "`", "\u202e", "\u200b", "\ud800", "👍", "ﷺ", "Boyz "])


def long_text(min_size: int = 1000, max_size: int = 10_000) -> st.SearchStrategy[str]:
    """Up to 10,000 characters: one unit repeated (cheap to generate, long for the bot)."""
    return st.tuples(LONG_UNIT, st.integers(min_size, max_size)).map(lambda t: (t[0] * t[1])[: t[1]])


# The characters and strings most likely to break something; drawn far more often than the rest.
NASTY = ["\ud800", "\udbff", "\udfff", "\u202e", "\u200b", "\ufeff", "@everyone", "<@111>", "<@&1>", "```", "\x00",
         "[x](https://example.invalid)", "**", "\\", "`"]
ATOM = st.one_of(st.sampled_from(NASTY), st.sampled_from(ATOMS))


def hostile_text(max_size: int | None = None) -> st.SearchStrategy[str]:
    """Any hostile string; `max_size` keeps most draws within an option's max_length (some go over it)."""
    short = max_size if max_size is not None and max_size < 200 else 200
    pieces = st.lists(st.one_of(ATOM, ATOM, st.text(AWKWARD, max_size=12)), min_size=1, max_size=6)
    return st.one_of(
        pieces.map("".join),
        ATOM,
        st.text(AWKWARD, min_size=1, max_size=short),
        long_text(),
        st.text(min_size=1, max_size=40),
    )


def mutate(real: str) -> st.SearchStrategy[str]:
    """A real name, exact or with something hostile around it (what a careless paste looks like)."""
    return st.one_of(
        st.just(real),
        st.just(real),
        st.just(real),
        st.tuples(ATOM, st.sampled_from(["prefix", "suffix", "both", "inside"])).map(
            lambda t: _wrap(real, *t)),
        st.just(real.upper()),
        st.just(real[: max(1, len(real) // 2)]),
    )


def _wrap(real: str, atom: str, where: str) -> str:
    if where == "prefix":
        return atom + real
    if where == "suffix":
        return real + atom
    if where == "both":
        return atom + real + atom
    middle = len(real) // 2
    return real[:middle] + atom + real[middle:]


def integer_text(low: float | None, high: float | None, *, valid: bool = True) -> st.SearchStrategy[str]:
    """Boundaries, zero, in-range values; unless `valid`, also what the Discord client refuses (one past each
    end, huge numbers, integers that are not integers)."""
    lo = int(low) if low is not None else -(2**53 - 1)
    hi = int(high) if high is not None else 2**53 - 1
    inside = [v for v in (0, 1, -1, 2, lo, hi, lo + 1, hi - 1, 2**31, -(2**31), 2**53 - 1, -(2**53 - 1)) if lo <= v <= hi]
    accepted = st.one_of(st.sampled_from(inside), st.integers(lo, hi)).map(str)
    if valid:
        return accepted
    return st.one_of(
        accepted,
        st.sampled_from([lo - 1, hi + 1, 10**18, -(10**18)]).map(str),
        st.sampled_from(["1.5", "1e3", "0x10", "", "٣", "１", "+5", "-0", "9" * 25, "NaN", "1_000"]),
    )


def number_text(low: float | None, high: float | None, *, valid: bool = True) -> st.SearchStrategy[str]:
    lo = float(low) if low is not None else -1e308
    hi = float(high) if high is not None else 1e308
    accepted = st.one_of(st.sampled_from([repr(v) for v in (lo, hi, 0.0, -0.0, 1.5, 5e-324) if lo <= v <= hi]),
                         st.floats(lo, hi, allow_nan=False).map(repr))
    if valid:
        return accepted
    return st.one_of(accepted, st.sampled_from(["inf", "-inf", "nan", "1e309", "x"]))


BOOLEAN_TEXT = st.sampled_from(["true", "false", "True", "FALSE"])
ANY_BOOLEAN_TEXT = st.one_of(BOOLEAN_TEXT, st.sampled_from(["maybe", "1", ""]))


# ---- shaped values: close enough to valid that the bot does real work with them -----------------------------
def _mostly(valid: list[str], edge: list[str]) -> st.SearchStrategy[str]:
    """Usually a valid value, sometimes an edge or invalid one (one bad value refuses the whole profile)."""
    return st.one_of(st.sampled_from(valid), st.sampled_from(valid), st.sampled_from(valid), st.sampled_from(edge))


DICE = ["1", "2", "3", "D3", "D6", "D6+2", "2D6", "3D3+1", "D3+3"]
DICE_EDGE = ["D6+200", "10D6+200", "999", "1000", "0", "-1", "D7", "D1000", "100D6"]
WEAPON_KEYWORDS = ["TWIN-LINKED", "DEVASTATING WOUNDS", "SUSTAINED HITS D3", "SUSTAINED HITS 2", "LETHAL HITS",
                   "ANTI-INFANTRY 2+", "ANTI-VEHICLE 4+", "MELTA 4", "BLAST", "TORRENT", "HAZARDOUS", "LANCE",
                   "PRECISION", "IGNORES COVER", "RAPID FIRE D6", "HEAVY", "INDIRECT FIRE", "EXTRA ATTACKS"]
KEYWORD_EDGE = ["\u202eLANCE", "@everyone", "SUSTAINED HITS 99999", "RAPID FIRE 10D6+200", "ANTI-INFANTRY 1+", "MELTA D6+200"]


def _pairs(pairs: list[tuple[str, st.SearchStrategy[str]]], required: str) -> st.SearchStrategy[str]:
    drawn = [st.tuples(st.just(key), values, st.integers(0, 3)) for key, values in pairs]
    return st.tuples(*drawn).map(
        lambda items: " ".join(f"{k}={v}" for k, v, keep in items if keep == 0 or k in required.split()))


KEYWORDS = st.lists(_mostly(WEAPON_KEYWORDS, KEYWORD_EDGE), max_size=4).map(lambda kws: '"' + ", ".join(kws) + '"')
ATTACKER_GROUP = _pairs([
    ("A", _mostly(DICE, DICE_EDGE)), ("BS", _mostly(["2", "3+", "4", "6"], ["1", "7", "*", "torrent", "0"])),
    ("S", _mostly(["3", "4", "8", "14"], ["1", "1000", "0", "1001"])),
    ("AP", _mostly(["0", "-1", "-3"], ["-6", "3", "-1000"])), ("D", _mostly(DICE, DICE_EDGE)),
    ("kw", KEYWORDS), ("models", _mostly(["1", "5", "10"], ["100", "1000", "0"])),
    ("range", _mostly(["12", "24"], ["0", "1000"])), ("name", st.sampled_from(ATOMS).map(lambda a: f'"{a}"')),
], "A BS S D")
TARGET = _pairs([
    ("T", _mostly(["3", "4", "5", "10"], ["1", "12", "1000", "0"])), ("Sv", _mostly(["2", "3+", "4", "6"], ["7", "1"])),
    ("W", _mostly(["1", "3", "12"], ["24", "1000", "0"])), ("inv", _mostly(["4", "5"], ["2", "7", "-"])),
    ("models", _mostly(["1", "3", "10", "20"], ["100", "1000", "0"])), ("fnp", _mostly(["5", "6"], ["2", "7"])),
    ("fnp_mortal", _mostly(["5"], ["4", "1"])), ("dr", _mostly(["1"], ["2", "6", "1000"])),
    ("wounds_lost", _mostly(["0", "1"], ["999"])), ("kw", KEYWORDS),
], "T Sv W")
ATTACKER = st.one_of(
    ATTACKER_GROUP,
    ATTACKER_GROUP,
    st.lists(ATTACKER_GROUP, min_size=2, max_size=9).map("; ".join),
    st.tuples(ATTACKER_GROUP, st.sampled_from(["VEHICLE", "MONSTER", "INFANTRY"])).map(
        lambda t: f'{t[0]} unit_kw="{t[1]}"'),
)
FACTIONS = st.sampled_from(["Orks", "Leagues of Votann", "Adeptus Custodes", "Space Marines", "orks", "Votann",
                            "Necrons", "Tyranids"])


# ---- army lists with hostile unit names, points and counts (real exports, names replaced) -------------------
_UNIT_LINE = re.compile(r"^(\S[^\n]*?) \((\d[\d,]*) (Points|pts)\)$", re.M)
_COUNT = re.compile(r"^(\s+• )(\d+)x ", re.M)
NAME = st.one_of(hostile_text(60), long_text(200, 10_000), st.sampled_from(ATOMS)).map(
    lambda s: " ".join(s.replace("(", "[").split()) or "x")
POINTS = st.one_of(st.none(), st.sampled_from(["0", "1", "9999", "10000", "10001", "999999999999999999999", "1,000,000"]))
COUNTS = st.one_of(st.none(), st.sampled_from(["0", "1", "100", "1000", "99999999999"]))


def army_list(texts: list[str]) -> st.SearchStrategy[str]:
    """A real export with some unit names replaced by hostile ones, and sometimes absurd points or counts."""
    return st.tuples(st.sampled_from(texts), st.lists(NAME, min_size=1, max_size=8), POINTS, COUNTS).map(_inject)


def _inject(drawn: tuple[str, list[str], str | None, str | None]) -> str:
    text, names, points, count = drawn
    pending = iter(names)

    def unit(m: re.Match[str]) -> str:
        name = next(pending, None)
        return m.group(0) if name is None else f"{name} ({points or m.group(2)} {m.group(3)})"

    text = _UNIT_LINE.sub(unit, text, count=len(names) + 1)
    if count is not None:
        text = _COUNT.sub(lambda m: f"{m.group(1)}{count}x ", text, count=2)
    return text


def request_head(target: str, *, line_max: int = 7900, lines_max: int = 50) -> st.SearchStrategy[tuple[bytes, list[int]]]:
    """An HTTP request head for `target` (each line within aiohttp's own limits, so only the total can be
    at fault) and where to cut it into separate sends: one send, many small pieces, a cut inside the closing
    blank line. Heads range from a few bytes to ~400 KB, many near the live board's 32 KB cap."""
    start = f"GET {target} HTTP/1.1\r\nHost: a\r\nConnection: close\r\n".encode()

    def build(values: list[int]) -> bytes:
        return start + b"".join(b"X-%d: %s\r\n" % (i, b"v" * n) for i, n in enumerate(values)) + b"\r\n"

    near_cap = st.lists(st.just(line_max), min_size=3, max_size=5).flatmap(
        lambda big: st.integers(0, line_max).map(lambda tail: [*big, tail]))
    heads = st.one_of(st.lists(st.integers(0, line_max), max_size=lines_max), near_cap).map(build)

    def cuts(head: bytes) -> st.SearchStrategy[tuple[bytes, list[int]]]:
        inside_end = st.sampled_from([[len(head) - k] for k in (1, 2, 3)])
        anywhere = st.lists(st.integers(1, len(head) - 1), max_size=8).map(lambda c: sorted(set(c)))
        return st.tuples(st.just(head), st.one_of(st.just([]), inside_end, anywhere))

    return heads.flatmap(cuts)
