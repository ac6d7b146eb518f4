"""Long rooms (issue 20): a product file over 500 lines says at its top why it is one file, so the next
one to grow past that is either split by job or explained, never long by accident."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LIMIT = 500
PRODUCT = ("bot", "cogs", "engine")


def long_files_without_a_reason(root: Path) -> list[str]:
    """Product files over LIMIT lines whose module docstring has no 'Why one file' paragraph."""
    found = []
    for folder in PRODUCT:
        for path in sorted((root / folder).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            if text.count("\n") <= LIMIT:
                continue
            docstring = ast.get_docstring(ast.parse(text)) or ""
            if "Why one file" not in docstring:
                found.append(f"{path.relative_to(root)} ({text.count(chr(10))} lines)")
    return found


def test_every_product_file_over_500_lines_says_why() -> None:
    missing = long_files_without_a_reason(REPO)
    assert not missing, f"split these by job, or say 'Why one file …' in their module docstring: {missing}"


def test_the_check_finds_a_long_file_without_a_reason(tmp_path: Path) -> None:
    (tmp_path / "bot").mkdir()
    (tmp_path / "bot" / "long.py").write_text('"""A module."""\n' + "x = 1\n" * (LIMIT + 1))
    (tmp_path / "bot" / "explained.py").write_text('"""A module.\n\nWhy one file: one job."""\n' + "x = 1\n" * (LIMIT + 1))
    (tmp_path / "bot" / "short.py").write_text("x = 1\n")
    assert long_files_without_a_reason(tmp_path) == [f"bot/long.py ({LIMIT + 2} lines)"]
