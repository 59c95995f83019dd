"""One text field of the current item (the prompt, a solution, the note) in its own block.

The stored text is on the left; columns that translate or correct it (MSA,
English, "Translated/Corrected ...") stand beside it when the block is wide
and under it when narrow. All of it is drawn by one Line-API widget,
``FieldText``, because the item view is refilled on every move and every
widget more costs layout and paint time. While the field is being edited, a
``FieldEditor`` takes the text's place and the translations stay below it.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.geometry import Size
from textual.message import Message
from textual.selection import Selection
from textual.strip import Strip
from textual.widget import Widget

from piqa_tui.core.text.bidi import DisplayLine, layout
from piqa_tui.tui.widgets.drawing import app_bidi_mode, app_directions, line_segments
from piqa_tui.tui.widgets.item.field_editor import FieldEditor

SIDE_BY_SIDE = 64  # narrower than this, translations go under the text
GAP = " │ "
DIM = Style(dim=True)

# One drawn row: (column cells, [(line or caption, kind)]) per column; see FieldText._rows.
Cell = tuple[DisplayLine | str | None, str]


class FieldText(Widget):
    """A field's text (with its differing words lit) and its translation columns."""

    DEFAULT_CSS = """
    FieldText {
        height: auto;
    }
    FieldText > .field-text--highlight {
        background: $warning 35%;
        text-style: bold;
    }
    FieldText > .field-text--placeholder {
        color: $text-muted;
        text-style: italic;
    }
    FieldText > .field-text--caption {
        color: $text-muted;
        text-style: underline;
    }
    FieldText > .field-text--translation {
        color: $text-muted;
    }
    """
    COMPONENT_CLASSES = {
        "field-text--highlight",
        "field-text--placeholder",
        "field-text--caption",
        "field-text--translation",
    }

    def __init__(self, placeholder: str = "", *, field: str = "", classes: str | None = None) -> None:
        super().__init__(classes=classes)
        self.field = field  # the field shown: its direction is set under this name
        self.text = ""
        self.placeholder = placeholder
        self.highlights: tuple[tuple[int, int], ...] = ()
        self.translations: tuple[tuple[str, str], ...] = ()
        self.show_original = True
        self._cache: tuple[tuple[object, ...], list[list[Cell]], list[int]] | None = None

    def set_content(
        self,
        text: str,
        highlights: Sequence[tuple[int, int]] = (),
        translations: Sequence[tuple[str, str]] = (),
        show_original: bool = True,
    ) -> None:
        """Show ``text`` (logical) with ``highlights`` lit, and ``translations`` as (column, text)."""
        new = (text, tuple(highlights), tuple(translations), show_original)
        if new == (self.text, self.highlights, self.translations, self.show_original):
            return
        width = self.content_size.width
        height = len(self._rows(width)[0]) if width else -1
        self.text, self.highlights, self.translations, self.show_original = new
        # A relayout of the screen costs far more than a repaint: only when the height changes.
        self.refresh(layout=not width or len(self._rows(width)[0]) != height)

    # ----------------------------------------------------------------- layout

    def _rows(self, width: int) -> tuple[list[list[Cell]], list[int]]:
        """Rows of cells and the column widths, for ``width`` cells (cached)."""
        mode = app_bidi_mode(self)
        directions = app_directions(self)
        key = (self.text, self.translations, self.show_original, width, mode, directions)
        if self._cache is not None and self._cache[0] == key:
            return self._cache[1], self._cache[2]
        width = max(1, width)
        columns: list[list[Cell]] = []
        original = self.text or self.placeholder
        kind = "text" if self.text else "placeholder"
        side = bool(self.translations) and self.show_original and width >= SIDE_BY_SIDE
        if side:
            gaps = len(GAP) * len(self.translations)
            share = (width - gaps) // (len(self.translations) + 2)
            widths = [width - gaps - share * len(self.translations)] + [share] * len(self.translations)
            columns.append(
                [(line, kind) for line in layout(original, widths[0], mode, direction=directions.of(self.field))]
            )
            for (column, value), w in zip(self.translations, widths[1:]):
                lines = layout(value or "—", w, mode, direction=directions.of(column))
                columns.append([(column, "caption"), *((line, "translation") for line in lines)])
            height = max(len(c) for c in columns)
            rows = [[col[i] if i < len(col) else (None, "blank") for col in columns] for i in range(height)]
        else:
            widths = [width]
            own = layout(original, width, mode, direction=directions.of(self.field))
            rows = [[(line, kind)] for line in own] if self.show_original else []
            for column, value in self.translations:
                rows.append([(column, "caption")])
                rows.extend(
                    [(line, "translation")]
                    for line in layout(value or "—", width, mode, direction=directions.of(column))
                )
        self._cache = (key, rows, widths)
        return rows, widths

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self._rows(width)[0])

    def render_line(self, y: int) -> Strip:
        width = self.content_size.width
        base = self.rich_style
        rows, widths = self._rows(width)
        if y >= len(rows):
            return Strip.blank(width, base)
        segments: list[Segment] = []
        for index, ((content, kind), cells) in enumerate(zip(rows[y], widths)):
            if index:
                segments.append(Segment(GAP, base + DIM))
            segments.extend(self._cell(content, kind, cells, base))
        return Strip(segments).adjust_cell_length(width, base)

    def _cell(self, content: DisplayLine | str | None, kind: str, cells: int, base: Style) -> list[Segment]:
        if content is None:
            return [Segment(" " * cells, base)]
        if isinstance(content, str):  # a caption: the column's name
            name = content[:cells]
            return [
                Segment(name, base + self.get_component_rich_style("field-text--caption")),
                Segment(" " * (cells - len(name)), base),
            ]
        if kind == "placeholder":
            return line_segments(content, cells, base + self.get_component_rich_style("field-text--placeholder"))
        if kind == "translation":
            return line_segments(content, cells, base + self.get_component_rich_style("field-text--translation"))
        mark = self.get_component_rich_style("field-text--highlight")
        return line_segments(content, cells, base, [(a, b, mark) for a, b in self.highlights])

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        """Copying from the screen gives the stored text, not its shaped display form."""
        return (self.text, "\n") if self.text else None


class FieldClicked(Message):
    """A field was clicked (``edit`` on a double click): the mouse way to select and edit it."""

    def __init__(self, field: str, edit: bool) -> None:
        super().__init__()
        self.field = field
        self.edit = edit


class FieldBlock(Vertical):
    """A bordered block showing one field; ``-selected`` marks the field the edit keys act on."""

    DEFAULT_CSS = """
    FieldBlock {
        height: auto;
        border: round $panel-lighten-2;
        border-title-color: $text-muted;
        border-subtitle-color: $success;
        padding: 0 1;
    }
    FieldBlock.-selected {
        border: round $accent;
        border-title-color: $accent;
        border-title-style: bold;
    }
    FieldBlock.-editing {
        border: double $accent;
    }
    """

    def __init__(
        self, field: str, title: str, translations: Sequence[str] = (), *, placeholder: str = "(empty)"
    ) -> None:
        super().__init__(id=f"field-{field}", classes="field-block")
        self.field = field
        self.border_title = title
        self.translation_columns = list(translations)
        self.placeholder = placeholder
        self.editor: FieldEditor | None = None
        self.text = ""
        self.highlights: tuple[tuple[int, int], ...] = ()
        self.translations: tuple[tuple[str, str], ...] = ()

    def compose(self) -> ComposeResult:
        # Made here and kept (refilled on every move), so no query can miss it while the screen is swapped.
        self.body = FieldText(self.placeholder, field=self.field)
        yield self.body

    def show(
        self, text: str, highlights: Sequence[tuple[int, int]] = (), translations: dict[str, str] | None = None
    ) -> None:
        """Display ``text`` (logical) and the current values of the translation columns, after any other text given
        beside it (a machine translation's ``source``)."""
        self.text = text
        self.highlights = tuple(highlights)
        given = translations or {}
        beside = tuple((c, v) for c, v in given.items() if c not in self.translation_columns)
        self.translations = beside + tuple((c, given.get(c, "")) for c in self.translation_columns)
        self.body.set_content(text, self.highlights, self.translations, show_original=self.editor is None)

    def set_highlights(self, text: str, highlights: Sequence[tuple[int, int]]) -> None:
        """Redraw with other highlights (live while another solution is edited)."""
        self.body.set_content(text, highlights, self.translations, show_original=self.editor is None)

    def on_click(self, event: events.Click) -> None:
        if self.editor is None:
            event.stop()
            self.post_message(FieldClicked(self.field, event.chain >= 2))

    def start_edit(self, value: str) -> FieldEditor:
        """Put an editor holding ``value`` where the text was; returns it (not yet focused)."""
        if self.editor is None:
            self.editor = FieldEditor(value, field=self.field, placeholder="type here; enter keeps, esc drops")
            self.mount(self.editor, before=self.body)
        else:
            self.editor.load(value, self.field)
        self.body.set_content(self.text, self.highlights, self.translations, show_original=False)
        self.body.display = bool(self.translations)
        self.add_class("-editing")
        return self.editor

    def stop_edit(self) -> None:
        if self.editor is not None:
            self.editor.remove()
            self.editor = None
        self.body.display = True
        self.body.set_content(self.text, self.highlights, self.translations, show_original=True)
        self.remove_class("-editing")
