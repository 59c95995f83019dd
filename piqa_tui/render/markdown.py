"""GitHub-flavoured Markdown tables and code, the form in which reports are pasted into papers and cards."""

from __future__ import annotations

import re
from collections.abc import Iterable


def markdown_table(header: Iterable[str], rows: Iterable[Iterable[str]]) -> list[str]:
    """Markdown table lines, with pipes in cells escaped so a value cannot break its row."""
    header = list(header)

    def line(cells: Iterable[str]) -> str:
        return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"

    return [line(header), line("---" for _ in header), *(line(r) for r in rows)]


def one_line(text: object) -> str:
    """``text`` on one line (runs of whitespace become one space): a table cell or a list entry."""
    return " ".join(str(text).split())


def inline_code(text: object) -> str:
    """``text`` as inline code on one line, fenced with more backticks than it holds."""
    text = one_line(text)
    ticks = "`" * (max(map(len, re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def fenced(text: str, info: str = "") -> list[str]:
    """``text`` in a fenced code block whose fence no line of ``text`` can close."""
    fence = "`" * max(3, max(map(len, re.findall("`{3,}", text)), default=0) + 1)
    return [f"{fence}{info}", text, fence]
