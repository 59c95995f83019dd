"""Editing one metadata column of an item: type a value, or choose one of the values the column already holds.

A column such as ``topic`` or ``region`` is a short vocabulary: offering what the other items hold keeps
"food" from becoming "Food" and "food " on the next item. Typing narrows the offered values (those containing
what is typed, case aside); ``tab`` goes to the list, ``enter`` there takes a value and ``enter`` in
the text keeps what is typed. The values come from the data, so they are drawn through the bidi adapter in the
column's direction. The dialog only answers the value; the editing controller records it (NFC, on the value
it opened with, so an edit made meanwhile elsewhere shows as a conflict).
"""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from piqa_tui.core.text.bidi import BidiText
from piqa_tui.core.text.terminal_safe import terminal_safe
from piqa_tui.render.safe_text import rich_text
from piqa_tui.tui.dialogs.prompts import DIALOG_CSS, DIALOG_LIST_CSS, DataText, drawn_title
from piqa_tui.tui.keymap import DIALOG_ACTIONS, bindings
from piqa_tui.tui.widgets.drawing import app_bidi_mode, field_direction
from piqa_tui.tui.widgets.item.field_editor import FieldEditor

OFFERED = 50  # values the list shows at most (typing narrows it)


class MetadataDialog(ModalScreen[str | None]):
    """Ask for the value of metadata ``column`` of item ``item_id``; answers None when cancelled."""

    DEFAULT_CSS = DIALOG_CSS.format(name="MetadataDialog") + DIALOG_LIST_CSS.format(
        name="MetadataDialog", list="OptionList"
    )

    BINDINGS = bindings(DIALOG_ACTIONS)

    def __init__(self, item_id: str, column: str, value: str, offered: list[str]) -> None:
        super().__init__()
        self.item_id = item_id
        self.column = column
        self.value = value
        self.offered = offered
        self.shown: list[str] = []  # the values the list holds now, in its order

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = drawn_title(self, DataText(f"{self.column} of {self.item_id}"))
            held = f"the values {self.column} holds: tab to choose one" if self.offered else "no item holds one yet"
            help_line = rich_text(f"{held}; enter keeps what is typed (empty: none)", one_line=True)  # a column's name
            yield Static(help_line, classes="dialog-help", markup=False)
            yield FieldEditor(self.value, field=self.column, placeholder="type, then enter (esc cancels)")
            yield OptionList()

    def on_mount(self) -> None:
        self._offer("")
        self.query_one(FieldEditor).focus()

    def _offer(self, typed: str) -> None:
        """Fill the list with the offered values that contain ``typed`` (case aside)."""
        wanted = typed.strip().casefold()
        self.shown = [v for v in self.offered if wanted in v.casefold()][:OFFERED]
        options = self.query_one(OptionList)
        options.clear_options()
        mode, direction = app_bidi_mode(self), field_direction(self, self.column)
        options.add_options(
            [Option(BidiText(terminal_safe(v, one_line=True), mode, direction=direction)) for v in self.shown]
        )
        options.display = bool(self.shown)

    @on(FieldEditor.Changed)
    def _typed(self, event: FieldEditor.Changed) -> None:
        event.stop()
        self._offer(event.value)

    @on(FieldEditor.Done)
    def _done(self, event: FieldEditor.Done) -> None:
        event.stop()
        if event.how == "cancel":
            self.dismiss(None)
        elif event.how == "commit":
            self.dismiss(event.value.strip())
        elif self.shown:  # tab or shift+tab: to the values offered
            options = self.query_one(OptionList)
            options.highlighted = 0
            options.focus()

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(self.shown[event.option_index])

    def action_cancel(self) -> None:
        self.dismiss(None)
