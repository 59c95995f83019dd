"""Terminal-safe text for Rich: data shown literally, never parsed as markup (nor as emoji codes).

``core.text.terminal_safe`` makes control characters visible; this module
adds what Rich needs on top, for every table and message that shows data
(category values, annotator names, ids, file names). Inside the TUI it is also the one display path of
the app's lines that hold data: ``shown`` lays them out with the bidi display adapter in the screen's mode
(``core.text.bidi_mode.set_screen_mode``), so an annotator's Arabic name in a table cell reads as it does in
the item blocks. A line that the widget wraps goes through ``shown_block`` (or ``shown(width=)``) instead: under
``--bidi app`` it is wrapped before it is reordered, so a long Arabic line reads from its first line down.
"""

from __future__ import annotations

from rich.console import RenderableType
from rich.highlighter import ReprHighlighter
from rich.markup import escape
from rich.text import Text

from piqa_tui.core.text.bidi_mode import BidiMode, screen_mode
from piqa_tui.core.text.terminal_safe import isolated, kept_isolates, terminal_safe


def shown(text: object, *, one_line: bool = False, width: int | None = None) -> str:
    """Terminal-safe ``text`` as the screen draws it: laid out by the bidi display adapter in the screen's mode
    (``core.text.bidi.on_screen``) inside the TUI, as stored elsewhere. Every line of the TUI that holds data
    goes through here (directly, or through ``markup_safe`` and ``rich_text``). ``width``: the cells of the
    widget that wraps the result, so that a line the app reorders is wrapped before it is reordered (in
    ``--bidi app``; see ``on_screen``)."""
    safe = _logical(text, one_line)
    if screen_mode() is None:  # the CLI: the adapter is not even imported
        return safe
    from piqa_tui.core.text.bidi import on_screen  # imported when a screen first draws

    return on_screen(safe, width=width)


def _logical(text: object, one_line: bool) -> str:
    """Terminal-safe ``text`` in logical order, the isolates round values kept (inside the TUI)."""
    safe = terminal_safe(text, one_line=one_line)
    if screen_mode() is None:
        return safe
    return kept_isolates(safe)  # a value isolated in the app's words keeps its own direction


def kept_apart(value: object) -> str:
    """A value (a name, an id) set inside the app's words: isolated (``terminal_safe.isolated``) where a screen
    draws the line, so a right-to-left name cannot pull the counts after it into its run (``shown`` keeps the
    isolate); as it is outside the TUI, where ``shown`` would show the isolate as an escape (the line is made
    safe as a whole there)."""
    return isolated(value) if screen_mode() is not None else str(value)


def markup_safe(text: object, *, one_line: bool = False, width: int | None = None) -> str:
    """Terminal-safe text that Rich markup shows literally (``[`` escaped), laid out as the screen draws it."""
    return escape(shown(text, one_line=one_line, width=width))


def shown_block(*parts: tuple[object, str], style: str = "", one_line: bool = False) -> RenderableType:
    """``(text, style)`` parts (the app's words, naming data) as one block that the widget drawing it wraps.

    Where the app reorders right-to-left text (``--bidi app``), the block is a ``BidiText``: laid out at the
    width it is drawn at, wrapped in logical order first and each line then reordered, so a long Arabic label
    reads from its first line down (wrapping the reordered string would put its END first). Elsewhere (the
    terminal's bidi, none, text with nothing to reorder) it is the ``Text`` of ``shown`` parts it always was.
    ``one_line``: line breaks in the parts shown as escapes (``terminal_safe``), as ``shown(one_line=True)``.
    """
    if screen_mode() is BidiMode.APP:
        from piqa_tui.core.text.bidi import BidiText, reorders  # imported when a screen first draws
        from piqa_tui.core.text.direction import Direction

        pieces = [(_logical(text, one_line), part_style) for text, part_style in parts]
        logical = "".join(piece for piece, _ in pieces)
        if reorders(logical):
            spans: list[tuple[int, int, str]] = []
            at = 0
            for piece, part_style in pieces:
                if part_style and piece:
                    spans.append((at, at + len(piece), part_style))
                at += len(piece)
            return BidiText(logical, BidiMode.APP, style or None, highlights=spans, direction=Direction.LTR)
    return Text.assemble(*((shown(text, one_line=one_line), part_style) for text, part_style in parts), style=style)


def rich_text(text: object, style: str = "", *, one_line: bool = False, highlight: bool = False) -> Text:
    """A Rich ``Text`` of terminal-safe ``text``: printed literally, never parsed as markup (nor emoji codes).

    ``highlight`` colours numbers and brackets as Rich does for a plain string
    in a table cell, so a cell looks the same as before it was made safe.
    """
    safe = Text(shown(text, one_line=one_line), style=style)
    return ReprHighlighter()(safe) if highlight else safe
