"""HTML (Wahapedia, game-datacards) to clean Markdown, with the standard library's HTML parser.

Why not a regex strip: nested lists, tables and entities need structure, and the output has to stay
readable in a Discord embed on a phone (no raw tags, no runs of blank lines).
"""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser

_BOLD = {"b", "strong", "k"}
_ITALIC = {"i", "em"}
_BLOCK = {"p", "div", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote"}


class _ToMarkdown(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.lists: list[str] = []  # "ul" / "ol" stack
        self.ol_counts: list[int] = []
        self.row: list[str] | None = None
        self.cell: list[str] | None = None
        self.rows: list[list[str]] = []
        self.skip = 0  # inside <script>/<style>

    # -- helpers -------------------------------------------------------------------------
    def _emit(self, text: str) -> None:
        if self.cell is not None:
            self.cell.append(text)
        else:
            self.out.append(text)

    def _newline(self) -> None:
        if self.cell is not None:
            self.cell.append(" ")
        else:
            self.out.append("\n")

    def _close(self, mark: str) -> None:
        """Close an emphasis; an empty one (`<b></b>`, `<b> </b>`) is dropped instead of printing `****`."""
        target = self.cell if self.cell is not None else self.out
        if target and target[-1] == mark:
            target.pop()
        elif len(target) >= 2 and target[-2] == mark and not target[-1].strip():
            target.pop()
            target.pop()
        else:
            trailing = ""
            if target and target[-1] != target[-1].rstrip():  # "<b>WHEN: </b>" -> "**WHEN:** "
                trailing = target[-1][len(target[-1].rstrip()):]
                target[-1] = target[-1].rstrip()
            self._emit(mark + trailing)

    # -- parser callbacks -------------------------------------------------------------------
    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style"):
            self.skip += 1
        elif tag in _BOLD:
            self._emit("**")
        elif tag in _ITALIC:
            self._emit("*")
        elif tag == "br":
            self._newline()
        elif tag in _BLOCK:
            self._newline()
            if tag.startswith("h"):
                self._emit("**")
        elif tag in ("ul", "ol"):
            self.lists.append(tag)
            self.ol_counts.append(0)
            self._newline()
        elif tag == "li":
            self._newline()
            depth = max(0, len(self.lists) - 1)
            if self.lists and self.lists[-1] == "ol":
                self.ol_counts[-1] += 1
                self._emit("  " * depth + f"{self.ol_counts[-1]}. ")
            else:
                self._emit("  " * depth + "- ")
        elif tag == "tr":
            self.row = []
        elif tag in ("td", "th"):
            self.cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style"):
            self.skip = max(0, self.skip - 1)
        elif tag in _BOLD:
            self._close("**")
        elif tag in _ITALIC:
            self._close("*")
        elif tag in _BLOCK:
            if tag.startswith("h"):
                self._emit("**")
            self._newline()
        elif tag in ("ul", "ol"):
            if self.lists:
                self.lists.pop()
                self.ol_counts.pop()
            self._newline()
        elif tag in ("td", "th"):
            if self.cell is not None and self.row is not None:
                self.row.append(_squash("".join(self.cell)))
            self.cell = None
        elif tag == "tr":
            if self.row is not None and any(self.row):
                self.rows.append(self.row)
            self.row = None
        elif tag == "table":
            self._flush_table()

    def handle_data(self, data: str) -> None:
        if not self.skip:
            self._emit(data)

    def _flush_table(self) -> None:
        # Two-column tables read best as "a — b" lines on a phone; wider ones as pipe rows.
        lines = []
        for row in self.rows:
            cells = [c for c in row if c]
            lines.append(" — ".join(cells) if len(row) <= 2 else " | ".join(row))
        self.rows = []
        if lines:
            self.out.append("\n" + "\n".join(lines) + "\n")


def _squash(text: str) -> str:
    return " ".join(text.split())


def html_to_markdown(raw: str) -> str:
    """Convert an HTML fragment to Markdown; plain text passes through with whitespace tidied."""
    if not raw:
        return ""
    raw = raw.replace("\r\n", "\n").replace("\r", "\n")
    if "<" not in raw and "&" not in raw:
        return _tidy(raw)
    parser = _ToMarkdown()
    try:
        parser.feed(raw)
        parser.close()
    except Exception:  # malformed markup: fall back to text without tags rather than failing the import
        return _tidy(html.unescape(re.sub(r"<[^>]*>", " ", raw)))
    if parser.rows:
        parser._flush_table()
    return _tidy("".join(parser.out))


def _tidy(text: str) -> str:
    text = text.replace("\xa0", " ")
    lines = [re.sub(r"[ \t]+", " ", line).strip() for line in text.split("\n")]
    lines = [re.sub(r"^[▪■•●◦]\s*", "- ", line) for line in lines]
    out: list[str] = []
    for line in lines:
        if not line and (not out or not out[-1]):
            continue
        out.append(line)
    return "\n".join(out).strip()
