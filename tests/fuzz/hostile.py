"""Hostile values for console options, as hypothesis strategies: what a person (or a pasted list) could type.

Every strategy produces the text typed after `option:` on a console line. The console, like the Discord
client, checks types, ranges, lengths and choices before anything reaches the bot, so out-of-range values
mostly test that path; in-range boundaries and hostile text reach the bot itself.
"""

from __future__ import annotations

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


def integer_text(low: float | None, high: float | None) -> st.SearchStrategy[str]:
    """Boundaries (one past each end too), zero, negatives, huge numbers, and integers that are not integers."""
    near: list[int] = [0, 1, -1, 2**31, -(2**31), 2**53 - 1, -(2**53 - 1), 10**18, -(10**18)]
    for bound in (low, high):
        if bound is not None:
            near += [int(bound) - 1, int(bound), int(bound) + 1]
    values = st.one_of(
        st.sampled_from(near).map(str),
        st.integers(int(low) if low is not None else -1000, int(high) if high is not None else 1000).map(str),
        st.integers().map(str),
        st.sampled_from(["1.5", "1e3", "0x10", "", "٣", "１", "+5", "-0", "9" * 25, "NaN", "1_000"]),
    )
    return values


def number_text(low: float | None, high: float | None) -> st.SearchStrategy[str]:
    bounds = [b for b in (low, high) if b is not None]
    return st.one_of(
        st.sampled_from(["0", "-0.0", "1e308", "-1e308", "1e-320", "inf", "-inf", "nan", "1.5"] + [str(b) for b in bounds]),
        st.floats(allow_nan=True, allow_infinity=True).map(repr),
    )


BOOLEAN_TEXT = st.sampled_from(["true", "false", "True", "FALSE", "maybe", "1"])
