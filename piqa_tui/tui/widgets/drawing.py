"""Drawing display lines: what every widget that shows dataset text has in common.

Widgets keep the stored (logical) text; the lines they draw come from
``core.bidi.layout`` at their width and the app's bidi mode, so
right-to-left paragraphs wrap first and are reordered per line, and
highlights (logical spans) stay on the right words wherever reordering
put them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip
from textual.widget import Widget

from piqa_tui.core.text.bidi import BidiMode, DisplayLine
from piqa_tui.core.text.direction import Direction, Directions

if TYPE_CHECKING:
    from piqa_tui.tui.state.session import Session


def _session(widget: Widget) -> Session | None:
    """The open session: the one place widgets read app state from (None outside piqa-tui, e.g. in widget tests)."""
    return getattr(widget.app, "session", None)


def app_bidi_mode(widget: Widget) -> BidiMode:
    """The session's bidi mode; before a dataset is open the configured one (``app`` outside piqa-tui)."""
    session = _session(widget)
    if session is not None:
        return session.bidi_mode
    settings = getattr(widget.app, "settings", None)
    return settings.bidi_mode if settings is not None else BidiMode.APP


def app_directions(widget: Widget) -> Directions:
    """The directions set for the open dataset and its columns (all ``auto`` when none is open)."""
    session = _session(widget)
    return session.directions if session is not None else Directions()


def field_direction(widget: Widget, field: str) -> Direction:
    """The direction a field (``prompt``, ``solution1``, ``note``, a metadata column) is laid out in."""
    return app_directions(widget).of(field)


def line_segments(
    line: DisplayLine, width: int, base: Style, spans: Sequence[tuple[int, int, Style]] = ()
) -> list[Segment]:
    """One display line as segments filling ``width`` cells: aligned, with styled logical spans."""
    segments: list[Segment] = []
    if line.align == "right" and line.width < width:
        segments.append(Segment(" " * (width - line.width), base))
    if not spans:  # one segment for the whole line: fewer objects for Textual to cut and join
        segments.append(Segment(line.text, base))
    else:
        for unit in line.units:
            style = base
            for start, end, extra in spans:
                if start < unit.end and unit.start < end:
                    style = style + extra
            segments.append(Segment(unit.text, style))
    if line.align != "right" and line.width < width:
        segments.append(Segment(" " * (width - line.width), base))
    return segments


def draw_line(line: DisplayLine, width: int, base: Style, spans: Sequence[tuple[int, int, Style]] = ()) -> Strip:
    """One display line as a strip of ``width`` cells: aligned, with styled logical spans."""
    return Strip(line_segments(line, width, base, spans)).adjust_cell_length(width, base)
