"""The item's flags with their notes, under the problems: what the flagger wrote is read where the item is.

The note is dataset-language text (an Arabic remark on a Darija item), so it
is laid out by the bidi adapter like every other text, in the note column's
direction.
"""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text
from textual.widgets import Static

from piqa_tui.core.text.bidi import BidiText
from piqa_tui.tui.widgets.drawing import app_bidi_mode, field_direction


class FlagsLine(Static):
    """``⚑ reason — note`` per flag; hidden when the item has none."""

    DEFAULT_CSS = """
    FlagsLine {
        height: auto;
        padding: 0 2;
        color: $warning;
    }
    """

    def show_flags(self, flags: dict[str, str]) -> None:
        shown = tuple(sorted(flags.items()))
        if shown == getattr(self, "_shown", None):
            return
        self._shown = shown
        self.display = bool(shown)
        parts: list[RenderableType] = []
        for reason, note in shown:
            parts.append(Text.assemble(("⚑ ", "bold"), (reason, "bold"), (" — note:" if note else "", "dim")))
            if note:  # its own line, laid out right to left where it is Arabic
                parts.append(BidiText(note, app_bidi_mode(self), direction=field_direction(self, "note")))
        self.update(Group(*parts))
