"""The main screen's field editors: which field is open, opening and closing its editor, and what its keys do.

The item view draws the fields; this object opens a field's text editor or the label chooser where the
field is, keeps which one is open (the screen turns off the moving keys meanwhile), and hands what was
typed to the editing controller, which submits it. It also runs $EDITOR on a field and copies one.
"""

from __future__ import annotations

from textual.screen import Screen

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.round.metadata import column_values
from piqa_tui.tui.controllers.editing import EditingController
from piqa_tui.tui.dialogs.metadata import MetadataDialog
from piqa_tui.tui.screens.main.view import MainView
from piqa_tui.tui.terminal.clipboard import copy_text
from piqa_tui.tui.terminal.external_editor import edit_externally
from piqa_tui.tui.widgets.item.field_editor import FieldEditor
from piqa_tui.tui.widgets.item.label_line import LabelChooser, LabelLine


class FieldEditors:
    """Opens and closes the current item's field editors for ``screen`` and passes their text to ``edits``."""

    def __init__(self, screen: Screen[None], view: MainView, edits: EditingController) -> None:
        self.screen = screen
        self.view = view
        self.edits = edits
        self.editing: str | None = None  # the field being edited

    def select(self, field: str) -> bool:
        """Select ``field`` on the item (a click); False, and nothing selected, while an editor is open."""
        if self.editing is not None:
            return False
        self.view.item_view.select(field)
        return True

    def edit_selected(self) -> None:
        """Open the selected field's editor (the label's chooser, unless blind mode hides the label)."""
        item = self.view.current
        if item is None:
            return
        field = self.view.item_view.selected
        if field == "label":
            if not self.edits.label_hidden(item):
                self.edits.start_edit(item, "label")
                self._start("label", self.view.open_label_chooser(item))
            return
        if field.startswith("meta:"):
            self._edit_meta(item, field, self.edits.start_edit(item, field))
            return
        self._start(field, self.view.item_view.block(field).start_edit(self.edits.start_edit(item, field)))

    def _edit_meta(self, item: Item, field: str, text: str) -> None:
        """Open the dialog of metadata ``field`` with ``text`` in it, offering the values its column holds."""
        column = field.removeprefix("meta:")
        translated = any(column in columns for columns in self.view.item_view.translations.values())
        offered = [] if translated else column_values(self.edits.project, column)  # a translation is the item's own

        def done(value: str | None) -> None:
            if value is None:
                self.view.show_current()
            else:
                self.edits.save_field(item, field, value)
            self.view.item_list.focus()

        self.screen.app.push_screen(MetadataDialog(item.id, column, text, offered), done)

    def edit(self, field: str) -> None:
        """Select ``field`` and open its editor (the label and note keys)."""
        self.view.item_view.select(field)
        self.edit_selected()

    def edit_with(self, field: str, text: str) -> None:
        """Open the editor of ``field`` on the current item with ``text`` in it (a merge by hand)."""
        item = self.view.current
        if item is None:
            return
        item_view = self.view.item_view
        if self.editing not in (None, "label"):  # the next field's editor, opened as the conflict was saved
            item_view.block(self.editing).stop_edit()
        item_view.select(field)
        if field == "label":
            self._start("label", self.view.open_label_chooser(item))
        elif field.startswith("meta:"):
            self._edit_meta(item, field, text)
        else:
            self._start(field, item_view.block(field).start_edit(text))

    def _start(self, field: str, editor: FieldEditor | LabelChooser) -> None:
        self.editing = field
        self.screen.refresh_bindings()
        self.screen.call_after_refresh(editor.focus)

    def _stop(self) -> None:
        self.editing = None
        self.screen.refresh_bindings()

    def label_done(self, event: LabelChooser.Done) -> None:
        """The label chooser closed: submit the label chosen (unless cancelled)."""
        event.chooser.remove()
        self.view.item_view.query_one(LabelLine).display = True
        self._stop()
        item = self.view.current
        if event.how == "commit" and item is not None:
            self.edits.apply_edit(item, {"label": event.value})
        self.view.item_list.focus()

    def field_done(self, event: FieldEditor.Done) -> None:
        """A field's editor closed: submit its text, hand it to $EDITOR, or go on to the next field's editor."""
        field = event.editor.field
        item = self.view.current
        self.view.item_view.block(field).stop_edit()
        self._stop()
        if item is None:
            return
        if event.how == "external":
            self.screen.app.call_later(self.edit_externally, item, field, event.value)
            return
        if event.how != "cancel":
            self.edits.save_field(item, field, event.value)
        else:
            self.view.show_current()
        if event.how in ("next", "prev"):
            self.view.select_field(1 if event.how == "next" else -1)
            if self.view.item_view.selected != "label" and not self.view.item_view.selected.startswith("meta:"):
                self.edit_selected()
                return
        self.view.item_list.focus()

    def external_editor(self) -> None:
        """Edit the selected field in $EDITOR (the label is chosen, not typed)."""
        item = self.view.current
        if item is None:
            return
        field = self.view.item_view.selected
        if field == "label":
            self.screen.notify("the label is chosen, not typed: press e or l", timeout=3)
            return
        self.screen.app.call_later(self.edit_externally, item, field, self.edits.start_edit(item, field))

    async def edit_externally(self, item: Item, field: str, value: str) -> None:
        """Edit ``field`` in $EDITOR with the app suspended, then submit it as if typed here."""
        named = self.view.item_view.shown_name(field, field).replace(" ", "-")  # the file's name says no index
        edited = await edit_externally(self.screen.app, value, f"{item.id}-{named}")
        if edited is None:
            self.view.show_current()
            return
        self.edits.save_field(item, field, edited)

    def resolve_conflict(self) -> None:
        item = self.view.current
        if item is not None:
            self.edits.resolve_conflict(item)

    def swap(self) -> None:
        item = self.view.current
        if item is not None:
            self.edits.swap(item, self.view.item_view.selected)

    def copy(self) -> None:
        """Copy the selected field's text (what blind mode shows of it)."""
        item = self.view.current
        field = self.view.item_view.selected
        value = self.edits.copied_text(item, field) if item is not None else None
        if value is not None:
            copy_text(self.screen.app, value, f"the {self.view.item_view.shown_name(field, field)}")
