"""The current item's other columns (dialect, category, source, ...), one line each, as in the file.

``tab`` goes on from the note through these rows; the selected row is marked as a selected field is, and
``e`` or ``enter`` edits it (see ``dialogs/metadata.py``)."""

from __future__ import annotations

from rich.segment import Segment
from textual.geometry import Size
from textual.strip import Strip
from textual.widget import Widget

from piqa_tui.core.text.bidi import layout
from piqa_tui.core.text.graphemes import cell_width, truncate
from piqa_tui.render.safe_text import shown
from piqa_tui.tui.widgets.drawing import app_bidi_mode, draw_line, field_direction

NAME_WIDTH = 22


class MetadataTable(Widget):
    """``column  value`` rows; values go through the bidi adapter (they may be Arabic) and are cut to one line.

    The rows are the dataset's columns, so the height never changes from item
    to item and moving costs a repaint, not a relayout.
    """

    DEFAULT_CSS = """
    MetadataTable {
        height: auto;
        padding: 0 2;
        margin-top: 1;
    }
    MetadataTable > .metadata--name {
        text-style: bold;
        color: $text-muted;
    }
    MetadataTable > .metadata--selected {
        text-style: bold reverse;
        color: $accent;
    }
    """
    COMPONENT_CLASSES = {"metadata--name", "metadata--selected"}

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows: list[tuple[str, str]] = []
        self.selected: str | None = None  # the column the edit keys act on (None: a field above)

    def show_meta(self, rows: list[tuple[str, str]]) -> None:
        relayout = len(rows) != len(self.rows)
        self.rows = rows
        self.display = bool(rows)
        self.refresh(layout=relayout)

    def select(self, column: str | None) -> None:
        """Mark the row of ``column`` as the selected field (None: no row)."""
        if column != self.selected:
            self.selected = column
            self.refresh()

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self.rows)

    def render_line(self, y: int) -> Strip:
        width = self.content_size.width
        base = self.rich_style
        if y >= len(self.rows):
            return Strip.blank(width, base)
        column, value = self.rows[y]
        name_width = min(NAME_WIDTH, max(cell_width(c) for c, _ in self.rows) + 2, max(4, width // 3))
        name = truncate(shown(column, one_line=True), name_width - 2)
        style = "metadata--selected" if column == self.selected else "metadata--name"
        name_cells = [
            Segment(name + " " * (name_width - cell_width(name)), base + self.get_component_rich_style(style))
        ]
        room = width - name_width
        if room < 2:
            return Strip(name_cells).adjust_cell_length(width, base)
        line = layout(value or "—", room, app_bidi_mode(self), max_lines=1, direction=field_direction(self, column))[0]
        return Strip([*name_cells, *draw_line(line, room, base)]).adjust_cell_length(width, base)
