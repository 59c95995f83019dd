"""A ``DataTable`` that shows its str cells and labels as text: Textual would parse them as markup.

A str cell such as an id ``[@click=app.quit]x`` becomes a clickable action
in a plain ``DataTable``; here every str passes the safe renderer
(``render.safe_text.rich_text``) on its way in, so no screen has to remember.
"""

from __future__ import annotations

from rich.text import Text, TextType
from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey, RowKey

from piqa_tui.render.safe_text import rich_text


def plain(cell: Text | str) -> Text:
    """A cell as terminal-safe text, never markup; a ``Text`` (already built from safe parts) as it is."""
    return cell if isinstance(cell, Text) else rich_text(cell, one_line=True)


class PlainDataTable(DataTable[Text | str]):
    """The TUI's one data table: the same widget, with every str made literal text."""

    def add_column(
        self, label: TextType, *, width: int | None = None, key: str | None = None, default: Text | str | None = None
    ) -> ColumnKey:
        return super().add_column(
            plain(label), width=width, key=key, default=None if default is None else plain(default)
        )

    def add_row(
        self, *cells: Text | str, height: int | None = 1, key: str | None = None, label: TextType | None = None
    ) -> RowKey:
        shown = [plain(cell) for cell in cells]
        return super().add_row(*shown, height=height, key=key, label=None if label is None else plain(label))
