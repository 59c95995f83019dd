"""Terminal-safe text for Rich: data shown literally, never parsed as markup (nor as emoji codes).

``core.text.terminal_safe`` makes control characters visible; this module
adds what Rich needs on top, for every table and message that shows data
(category values, annotator names, ids, file names).
"""

from __future__ import annotations

from rich.highlighter import ReprHighlighter
from rich.markup import escape
from rich.text import Text

from piqa_tui.core.text.terminal_safe import terminal_safe


def markup_safe(text: object, *, one_line: bool = False) -> str:
    """Terminal-safe text that Rich markup shows literally (``[`` escaped)."""
    return escape(terminal_safe(text, one_line=one_line))


def rich_text(text: object, style: str = "", *, one_line: bool = False, highlight: bool = False) -> Text:
    """A Rich ``Text`` of terminal-safe ``text``: printed literally, never parsed as markup (nor emoji codes).

    ``highlight`` colours numbers and brackets as Rich does for a plain string
    in a table cell, so a cell looks the same as before it was made safe.
    """
    safe = Text(terminal_safe(text, one_line=one_line), style=style)
    return ReprHighlighter()(safe) if highlight else safe
