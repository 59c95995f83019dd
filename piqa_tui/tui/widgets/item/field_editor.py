"""An in-place text editor whose cursor and deletions move by grapheme cluster.

Textual's Input moves one code point at a time, which splits a Tamil or
Bengali letter from its vowel sign or virama and an Arabic letter from its
harakat. This editor keeps the text in logical order, moves and deletes with
``core.graphemes`` (one cluster per step) and draws through the bidi adapter,
with a block cursor on the cluster it stands before.

In ``app`` mode (the program draws the line) ← and → move the cursor in
visual order: one drawn cluster left or right on screen, also through a
Latin word inside an Arabic line.  In ``terminal`` and ``off`` modes the
program does not know where the terminal put each cluster, so they move in
logical (reading) order, mirrored in a right-to-left paragraph so that ←
moves on in reading order; the footer says so while editing.
"""

from __future__ import annotations

from rich.segment import Segment
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.strip import Strip
from textual.widget import Widget

from piqa_tui.core.text.bidi import BidiMode, DisplayLine, layout
from piqa_tui.core.text.characters import is_typeable, nfc
from piqa_tui.core.text.graphemes import (
    backspace,
    cell_width,
    delete_grapheme_after,
    grapheme_spans,
    next_boundary,
    previous_boundary,
    snap_to_boundary,
)
from piqa_tui.tui.keymap import EDITOR_ACTIONS, bindings
from piqa_tui.tui.widgets.drawing import app_bidi_mode, field_direction

# The editor's actions that end the edit (the owner then saves, moves on or closes): every other one stays in it.
FINISHING = frozenset({"commit", "cancel", "commit_next", "commit_prev", "external"})


def typed_character(event: events.Key) -> str | None:
    """The text a key types, or None for a key that types nothing (enter, tab, escape, ctrl+…).

    Textual calls a key printable by ``str.isprintable``, which is False for format characters: a
    ZWNJ or ZWJ (U+200C/U+200D, which Bengali, Hindi, Malayalam and Persian spelling need), a bidi
    mark, a soft hyphen. Every character but a control one is typed as it came (an input method's
    composed text too, when it arrives as one key); what is shown or refused is for the validate
    rules to say.
    """
    text = event.character
    return text if text is not None and is_typeable(text) else None


class FieldEditor(Widget, can_focus=True):
    """Edits one field's logical text; posts ``Changed`` on every change and ``Done`` when left."""

    DEFAULT_CSS = """
    FieldEditor {
        height: auto;
        width: 1fr;
        background: $boost;
    }
    FieldEditor > .field-editor--cursor {
        background: $foreground;
        color: $background;
    }
    FieldEditor > .field-editor--placeholder {
        color: $text-muted;
        text-style: italic;
    }
    """
    COMPONENT_CLASSES = {"field-editor--cursor", "field-editor--placeholder"}

    BINDINGS = bindings(EDITOR_ACTIONS)

    cursor: reactive[int] = reactive(0, layout=False)

    class Changed(Message):
        """The text changed (for live validation)."""

        def __init__(self, editor: FieldEditor, value: str) -> None:
            super().__init__()
            self.editor = editor
            self.value = value

        @property
        def control(self) -> FieldEditor:
            return self.editor

    class Done(Message):
        """Editing ended: ``how`` is commit, cancel, next, prev or external."""

        def __init__(self, editor: FieldEditor, value: str, how: str) -> None:
            super().__init__()
            self.editor = editor
            self.value = value
            self.how = how

        @property
        def control(self) -> FieldEditor:
            return self.editor

    def __init__(
        self,
        value: str = "",
        *,
        placeholder: str = "",
        field: str = "",
        single_line: bool = True,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.value = value
        self.original = value
        self.placeholder = placeholder
        self.field = field
        self.single_line = single_line
        self.set_reactive(FieldEditor.cursor, len(value))
        self._cache: tuple[tuple[object, ...], list[DisplayLine]] | None = None

    # ------------------------------------------------------------------ state

    def load(self, value: str, field: str = "") -> None:
        """Start editing ``value`` afresh (cursor at the end)."""
        self.value = self.original = value
        self.field = field
        self.cursor = len(value)
        self.refresh(layout=True)

    def _set(self, value: str, cursor: int) -> None:
        changed = value != self.value
        self.value = value
        self.cursor = max(0, min(cursor, len(value)))
        self.refresh(layout=True)
        if changed:
            self.post_message(self.Changed(self, value))

    def insert(self, text: str) -> None:
        """Type ``text`` at the cursor (NFC, line breaks as spaces in single-line fields)."""
        if self.single_line:
            text = text.replace("\r\n", " ").replace("\n", " ").replace("\r", " ")
        before, after = self.value[: self.cursor], self.value[self.cursor :]
        joined = nfc(before + text)
        self._set(joined + after, len(joined))

    # ----------------------------------------------------------------- layout

    def lines(self, width: int) -> list[DisplayLine]:
        key = (self.value, width, app_bidi_mode(self), field_direction(self, self.field))
        if self._cache is None or self._cache[0] != key:
            # One cell is kept free for the cursor after the last cluster.
            self._cache = (key, layout(self.value, max(1, width - 1), key[2], direction=key[3]))
        return self._cache[1]

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self.lines(max(2, width)))

    def _cursor_line(self, lines: list[DisplayLine]) -> int:
        for index, line in enumerate(lines):
            if self.cursor < line.end or (self.cursor == line.end and index == len(lines) - 1):
                return index
            if index + 1 < len(lines) and self.cursor < lines[index + 1].start:
                return index  # in the spaces where the line was broken
        return len(lines) - 1

    def _rtl(self) -> bool:
        lines = self.lines(max(2, self.content_size.width))
        return lines[self._cursor_line(lines)].rtl if lines else False

    def render_line(self, y: int) -> Strip:
        width = self.content_size.width
        base = self.rich_style
        lines = self.lines(max(2, width))
        if y >= len(lines):
            return Strip.blank(width, base)
        line = lines[y]
        cursor_style = self.get_component_rich_style("field-editor--cursor") if self.has_focus else None
        if not self.value:
            hint = self.get_component_rich_style("field-editor--placeholder")
            segments = [Segment(" ", cursor_style or base), Segment(self.placeholder, base + hint)]
            return Strip(segments).adjust_cell_length(width, base)
        on_line = cursor_style is not None and self._cursor_line(lines) == y
        units: list[Segment] = []
        placed = False
        for unit in line.units:
            if on_line and unit.start <= self.cursor < unit.end:
                units.append(Segment(unit.text, base + cursor_style))
                placed = True
            else:
                units.append(Segment(unit.text, base))
        if on_line and not placed:
            caret = Segment(" ", base + cursor_style)
            if line.rtl and app_bidi_mode(self) == "app":
                units.insert(0, caret)
            else:
                units.append(caret)
        used = line.width + (1 if on_line and not placed else 0)
        pad = [Segment(" " * (width - used), base)] if line.align == "right" and used < width else []
        return Strip(pad + units).adjust_cell_length(width, base)

    # ------------------------------------------------------------------- keys

    async def _on_key(self, event: events.Key) -> None:
        """Type the key's text, or run the editor's own binding of the key here and now.

        Textual runs a binding only once the key has bubbled up to the app, after the keys that came behind it
        were typed: ``ctrl+u`` then ``abc`` in one burst would delete the ``abc``. Run here, each key takes effect
        in the order it came.
        """
        if typed := typed_character(event):
            event.stop()
            event.prevent_default()
            self.insert(typed)
            return
        binding = self._own_binding(event.key)
        if binding is not None:
            event.stop()
            event.prevent_default()
            await self.run_action(binding.action)

    def _own_binding(self, key: str) -> Binding | None:
        """The editor's binding ``key`` runs (the keymap applied, ``check_action`` asked), unless another wins."""
        active = self.screen.active_bindings.get(key)
        if active is None or active.node is not self or not active.enabled:
            return None
        return active.binding

    def takes_key(self, event: events.Key | events.Paste) -> bool:
        """Whether ``event`` only types here or moves the cursor or deletes: it ends no edit and moves no focus.

        The app passes such keys on at once, and holds the keys after any other until it is at rest
        (``tui/terminal/type_ahead.py``).
        """
        if isinstance(event, events.Paste) or typed_character(event):
            return True
        binding = self._own_binding(event.key)
        return binding is not None and binding.action not in FINISHING

    def _on_paste(self, event: events.Paste) -> None:
        event.stop()
        event.prevent_default()
        self.insert(event.text)

    def action_cursor_left(self) -> None:
        if not self._move_visually(rightward=False):
            self._move(forward=self._rtl())

    def action_cursor_right(self) -> None:
        if not self._move_visually(rightward=True):
            self._move(forward=not self._rtl())

    def action_reading_left(self) -> None:
        self.action_cursor_left()

    def action_reading_right(self) -> None:
        self.action_cursor_right()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("reading_left", "reading_right"):
            return app_bidi_mode(self) is not BidiMode.APP
        return True

    def _visual_stops(self, lines: list[DisplayLine], index: int) -> list[int]:
        """Cursor positions on line ``index`` from left to right on screen (``app`` mode)."""
        line = lines[index]
        stops = [unit.start for unit in line.units]
        if index == len(lines) - 1:  # the caret after the last cluster: at the line's reading end
            stops = [line.end, *stops] if line.rtl else [*stops, line.end]
        return stops

    def _move_visually(self, rightward: bool) -> bool:
        """One drawn cluster left or right on screen; False where visual order has no answer.

        That is outside ``app`` mode, at either end of the line (the logical
        move then goes on to the next or previous line) and where the cursor
        stands inside a drawn unit (the alef of a lam-alef ligature).
        """
        if app_bidi_mode(self) is not BidiMode.APP:
            return False
        lines = self.lines(max(2, self.content_size.width))
        index = self._cursor_line(lines)
        stops = self._visual_stops(lines, index)
        if self.cursor not in stops:
            return False
        target = stops.index(self.cursor) + (1 if rightward else -1)
        if not 0 <= target < len(stops):
            return False
        self.cursor = stops[target]
        self.refresh()
        return True

    def _move(self, forward: bool) -> None:
        self.cursor = next_boundary(self.value, self.cursor) if forward else previous_boundary(self.value, self.cursor)
        self.refresh()

    def action_home(self) -> None:
        self.cursor = 0
        self.refresh()

    def action_end(self) -> None:
        self.cursor = len(self.value)
        self.refresh()

    def _vertical(self, step: int) -> None:
        lines = self.lines(max(2, self.content_size.width))
        index = self._cursor_line(lines)
        target = index + step
        if not 0 <= target < len(lines):
            self.cursor = 0 if step < 0 else len(self.value)
        else:
            here, there = lines[index], lines[target]
            cells = cell_width(self.value[here.start : max(here.start, self.cursor)])
            position, used = there.start, 0
            for start, end in grapheme_spans(self.value[there.start : there.end]):
                if used >= cells:
                    break
                used += cell_width(self.value[there.start + start : there.start + end])
                position = there.start + end
            self.cursor = position
        self.refresh()

    def action_cursor_up(self) -> None:
        self._vertical(-1)

    def action_cursor_down(self) -> None:
        self._vertical(+1)

    def _word_start(self, index: int) -> int:
        text = self.value
        while index > 0 and text[index - 1].isspace():
            index -= 1
        while index > 0 and not text[index - 1].isspace():
            index -= 1
        return snap_to_boundary(text, index)

    def _word_end(self, index: int) -> int:
        text = self.value
        while index < len(text) and text[index].isspace():
            index += 1
        while index < len(text) and not text[index].isspace():
            index += 1
        return index

    def action_word_left(self) -> None:
        self.cursor = self._word_end(self.cursor) if self._rtl() else self._word_start(self.cursor)
        self.refresh()

    def action_word_right(self) -> None:
        self.cursor = self._word_start(self.cursor) if self._rtl() else self._word_end(self.cursor)
        self.refresh()

    def action_delete_left(self) -> None:
        self._set(*backspace(self.value, self.cursor))

    def action_delete_right(self) -> None:
        self._set(*delete_grapheme_after(self.value, self.cursor))

    def action_delete_word_left(self) -> None:
        start = self._word_start(self.cursor)
        self._set(self.value[:start] + self.value[self.cursor :], start)

    def action_delete_to_end(self) -> None:
        self._set(self.value[: self.cursor], self.cursor)

    def action_delete_to_start(self) -> None:
        self._set(self.value[self.cursor :], 0)

    def _finish(self, how: str) -> None:
        self.post_message(self.Done(self, self.value, how))

    def action_commit(self) -> None:
        self._finish("commit")

    def action_cancel(self) -> None:
        self._finish("cancel")

    def action_commit_next(self) -> None:
        self._finish("next")

    def action_commit_prev(self) -> None:
        self._finish("prev")

    def action_external(self) -> None:
        self._finish("external")

    def _on_focus(self, event: events.Focus) -> None:
        self.refresh()

    def _on_blur(self, event: events.Blur) -> None:
        self.refresh()

    async def _on_click(self, event: events.Click) -> None:
        self.focus()
