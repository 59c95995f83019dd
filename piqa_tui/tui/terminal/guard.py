"""The TUI's last line of defence against control characters in data.

Widgets show data through ``terminal_safe`` (ids, names, metadata) or the bidi
display adapter (item text), which make controls visible or drop them. This
line filter runs over every line Textual draws and removes any C0/C1 control
that slipped through, so an ESC in a value can never reach the terminal as a
command (an OSC 0 retitling the window, an OSC 52 clipboard write). Control
characters take no cells, so removing them keeps every line's width.
"""

from __future__ import annotations

import re

from rich.segment import Segment
from textual.color import Color
from textual.filter import LineFilter

_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


class ControlCharacterFilter(LineFilter):
    """Removes C0/C1 control characters from the text of every segment drawn."""

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        if not any(_CONTROL.search(seg.text) for seg in segments if not seg.control):
            return segments  # the common case: nothing to change, no new list
        return [seg if seg.control else Segment(_CONTROL.sub("", seg.text), seg.style) for seg in segments]
