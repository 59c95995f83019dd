"""GitHub-flavoured Markdown tables, the form in which reports are pasted into papers and cards."""

from __future__ import annotations

from collections.abc import Iterable


def markdown_table(header: Iterable[str], rows: Iterable[Iterable[str]]) -> list[str]:
    """Markdown table lines, with pipes in cells escaped so a value cannot break its row."""
    header = list(header)

    def line(cells: Iterable[str]) -> str:
        return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"

    return [line(header), line("---" for _ in header), *(line(r) for r in rows)]
