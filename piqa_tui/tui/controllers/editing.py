"""Editing the current item on the main screen: fields, the gold label, notes, swaps, undo and redo.

The screen opens the editors (a field's text editor, the label chooser) and
hands what was typed here. Every change is one action recorded through the
host (``Host.record``, the pending-writes queue) before the screen shows it;
an edit that would leave votes on a text they did not choose asks first.
"""

from __future__ import annotations

from typing import Protocol

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.votes.blind import may_see_answers
from piqa_tui.core.workspace.project import field_value
from piqa_tui.tui.controllers.host import Host
from piqa_tui.tui.dialogs.prompts import ChoiceDialog
from piqa_tui.tui.state.session import Session


class EditingHost(Host, Protocol):
    def show_current(self) -> None:
        """Redraw the current item as the project has it (an edit was dropped)."""
        ...

    def go_to_position(self, position: int) -> None:
        """Put the cursor on the item at ``position``, clearing filters that hide it."""
        ...


class EditingController:
    """Records what the user typed, chose, swapped, undid or redid on the item under the host's cursor."""

    def __init__(self, session: Session, host: EditingHost) -> None:
        self.session = session
        self.project = session.project
        self.host = host

    def value_of(self, item: Item, field: str) -> str:
        """The stored text of ``field`` (``note``: this item's note)."""
        return self.project.state.notes.get(item.id, "") if field == "note" else field_value(item, field)

    def label_hidden(self, item: Item) -> bool:
        """Blind mode keeps the gold label of ``item`` hidden (and unset) until you voted: say so."""
        if not self.session.gold_hidden(item):
            return False
        self.host.notify(
            "blind mode: vote on this item first to see and set its gold label (or start with --reviewer)",
            timeout=4,
        )
        return True

    def copied_text(self, item: Item, field: str) -> str | None:
        """The text to copy for ``field`` as stored; None (said) for a gold label blind mode hides."""
        if field == "label" and self.session.gold_hidden(item):
            self.host.notify(
                "the gold label stays hidden until you have voted on this item", severity="warning", timeout=3
            )
            return None
        return self.value_of(item, field)

    # ---------------------------------------------------------------- edits

    def save_field(self, item: Item, field: str, value: str) -> None:
        """Record a field's new text (a note goes to the notes, the rest is an undoable edit)."""
        if field == "note":
            if value != self.project.state.notes.get(item.id, ""):
                self.host.record(
                    f"the note on {item.id}",
                    lambda: self.project.set_note(item.id, value),
                    lambda _: self.host.after_change([item.id]),
                )
            return
        self.apply_edit(item, {field: value})

    def apply_edit(self, item: Item, changes: dict[str, str]) -> None:
        """Record an edit; one that would leave votes on a changed text asks first."""
        lost = self.project.votes_invalidated(item.id, changes)
        blind = not may_see_answers(self.project, item.id, self.session.reviewer)
        if blind and any(name.startswith("solution") for name in changes):  # ask whatever the votes, naming none
            lost = [a for a, v in self.project.state.votes.get(item.id, {}).items() if v.choice.isdigit()]
        if not lost:
            self._record_edit(item, changes)
            return
        whose = (
            "Votes on this item may have chosen"
            if blind
            else f"{len(lost)} vote(s) on {item.id} ({', '.join(lost)}) chose"
        )
        message = (
            f"{whose} the text you changed. They will count as cast on an earlier version "
            "(the item needs votes again) until the annotators vote again."
        )
        choices: list[tuple[str | None, str, str]] = [
            ("edit", "Edit and mark those votes as cast on an earlier version", ""),
            ("cancel", "Cancel", ""),
        ]
        self.host.push_screen(
            ChoiceDialog("Votes predate this edit", message, choices),
            lambda answer: self._record_edit(item, changes) if answer == "edit" else self.host.show_current(),
        )

    def _record_edit(self, item: Item, changes: dict[str, str]) -> None:
        self.host.record(
            f"the edit of {item.id}",
            lambda: self.project.edit(item.id, changes),
            lambda _: self.host.after_change([item.id]),
        )

    def swap(self, item: Item, selected: str) -> None:
        """Swap the selected solution (the first when none is) with the next, the label with them."""
        if len(item.solutions) < 2:
            return
        a = int(selected[8:]) if selected.startswith("solution") else 0
        b = (a + 1) % len(item.solutions)

        def swapped(_: object) -> None:
            self.host.after_change([item.id])
            self.host.notify(f"swapped solutions {a + 1} and {b + 1} (and the label with them)", timeout=3)

        self.host.record(f"the swap on {item.id}", lambda: self.project.swap_solutions(item.id, a, b), swapped)

    # ------------------------------------------------------------ undo/redo

    def undo(self) -> None:
        self._undo_redo("undo")

    def redo(self) -> None:
        self._undo_redo("redo")

    def _undo_redo(self, which: str) -> None:
        self.host.record(
            which,
            self.project.undo if which == "undo" else self.project.redo,
            lambda item_id: self._undone(which, item_id),  # type: ignore[arg-type]
        )

    def _undone(self, which: str, item_id: str | None) -> None:
        if item_id is None:
            self.host.notify(f"nothing to {which}", timeout=2)
            return
        self.host.after_change([item_id] if item_id else [])
        if item_id in self.project.index:  # "": a decision on no single item (a cluster marked distinct)
            self.host.go_to_position(self.project.index[item_id])
        self.host.notify(f"{which} on {item_id or 'a duplicate cluster'}", timeout=2)
