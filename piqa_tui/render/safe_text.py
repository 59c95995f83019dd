"""Terminal-safe text for Rich: data shown literally, never parsed as markup (nor as emoji codes).

``core.text.terminal_safe`` makes control characters visible; this module
adds what Rich needs on top, for every table and message that shows data
(category values, annotator names, ids, file names). Inside the TUI it is also the one display path of
the app's lines that hold data: ``shown`` lays them out with the bidi display adapter in the screen's mode
(``core.text.bidi_mode.set_screen_mode``), so an annotator's Arabic name in a table cell reads as it does in
the item blocks.
"""

from __future__ import annotations

import re

from rich.highlighter import ReprHighlighter
from rich.markup import escape
from rich.text import Text

from piqa_tui.core.text.bidi_mode import screen_mode
from piqa_tui.core.text.terminal_safe import FIRST_STRONG_ISOLATE, POP_DIRECTIONAL_ISOLATE, terminal_safe

# An isolate ``terminal_safe`` escaped (``\\u2068 … \\u2069``) holding no other escaped bidi control.
_KEPT_ISOLATE = re.compile(r"\\u2068((?:(?!\\u20(?:6[6-9]|2[a-e])).)*?)\\u2069")


def shown(text: object, *, one_line: bool = False) -> str:
    """Terminal-safe ``text`` as the screen draws it: laid out by the bidi display adapter in the screen's mode
    (``core.text.bidi.on_screen``) inside the TUI, as stored elsewhere. Every line of the TUI that holds data
    goes through here (directly, or through ``markup_safe`` and ``rich_text``)."""
    safe = terminal_safe(text, one_line=one_line)
    if screen_mode() is None:  # the CLI: the adapter is not even imported
        return safe
    from piqa_tui.core.text.bidi import on_screen  # imported when a screen first draws

    # An isolate round a value (``isolated``: made safe inside, then wrapped) is kept, so the value keeps its
    # own direction ("Round <Arabic name>: 24 items" does not pull the 24 into the name); only a balanced
    # pair with no other bidi control inside is, so nothing the data holds can reorder the words around it.
    return on_screen(_KEPT_ISOLATE.sub(f"{FIRST_STRONG_ISOLATE}\\1{POP_DIRECTIONAL_ISOLATE}", safe))


def markup_safe(text: object, *, one_line: bool = False) -> str:
    """Terminal-safe text that Rich markup shows literally (``[`` escaped), laid out as the screen draws it."""
    return escape(shown(text, one_line=one_line))


def rich_text(text: object, style: str = "", *, one_line: bool = False, highlight: bool = False) -> Text:
    """A Rich ``Text`` of terminal-safe ``text``: printed literally, never parsed as markup (nor emoji codes).

    ``highlight`` colours numbers and brackets as Rich does for a plain string
    in a table cell, so a cell looks the same as before it was made safe.
    """
    safe = Text(shown(text, one_line=one_line), style=style)
    return ReprHighlighter()(safe) if highlight else safe
