"""Editing the current item on the main screen: fields, the gold label, notes, swaps, undo and redo.

The screen opens the editors (a field's text editor, the label chooser) and
hands what was typed here. Every change is one action recorded through the
host (``Host.submit``, the session's write queue) before the screen shows it;
an edit that would leave votes on a text they did not choose asks first.
An edit is recorded on the value its editor opened with: when someone else
changed the field meanwhile, a dialog shows the three versions and the user
keeps theirs, keeps mine or merges by hand; an undo over someone else's
later change is refused with one line. A field or an adjudication changed on
two machines before a merge is settled with C (an adjudication by a reviewer).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.errors import EditConflict, UndoRefused, VotesArrived
from piqa_tui.core.votes.blind import may_see_answers
from piqa_tui.core.votes.decisions import adjudication_edited_away
from piqa_tui.core.workspace.project import ADJUDICATION, FieldConflict, field_value
from piqa_tui.render.safe_text import markup_safe
from piqa_tui.tui.controllers.host import Host
from piqa_tui.tui.dialogs.conflict import (
    KEEP_CURRENT,
    KEEP_MINE,
    KEEP_OTHER,
    MERGE,
    conflict_dialog,
    merge_conflict_dialog,
)
from piqa_tui.tui.dialogs.prompts import ChoiceDialog
from piqa_tui.tui.state.session import Session


class EditingHost(Host, Protocol):
    def show_current(self) -> None:
        """Redraw the current item as the project has it (an edit was dropped)."""
        ...

    def go_to_position(self, position: int) -> None:
        """Put the cursor on the item at ``position``, clearing filters that hide it."""
        ...

    def edit_field(self, field: str, text: str) -> None:
        """Open the editor of ``field`` on the current item with ``text`` in it (the label: its chooser)."""
        ...


class EditingController:
    """Records what the user typed, chose, swapped, undid or redid on the item under the host's cursor."""

    def __init__(self, session: Session, host: EditingHost) -> None:
        self.session = session
        self.project = session.project
        self.host = host
        self._bases: dict[tuple[str, str], str] = {}  # (item, field) -> the value its open editor started from
        self._settling: set[tuple[str, str]] = set()  # (item, field) whose editor merges a conflict by hand

    def start_edit(self, item: Item, field: str) -> str:
        """The stored text of ``field`` for an editor opening on it, kept as the base its save is recorded on."""
        value = self.value_of(item, field)
        self._bases[(item.id, field)] = value
        return value

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
        if (item.id, field) in self._settling:  # a merge by hand: recorded as the conflict's resolution
            self._settling.discard((item.id, field))
            self._bases.pop((item.id, field), None)
            self._submit_resolution(item, field, value)
            return
        if field == "note":
            base = self._bases.pop((item.id, field), None)
            if value != (self.project.state.notes.get(item.id, "") if base is None else base):
                self._submit_checked(
                    item, f"the note on {item.id}", lambda: self.project.set_note(item.id, value, base=base)
                )
            return
        self.apply_edit(item, {field: value})

    def apply_edit(self, item: Item, changes: dict[str, str], base: dict[str, str] | None = None) -> None:
        """Record an edit on ``base`` (by default what the fields' editors opened with); one that would leave
        votes on a changed text asks first."""
        if base is None:
            base = {name: self._bases.pop((item.id, name)) for name in changes if (item.id, name) in self._bases}
        lost = self.project.votes_invalidated(item.id, changes)
        blind = not may_see_answers(self.project, item.id, self.session.reviewer)
        if blind and any(name.startswith("solution") for name in changes):  # ask whatever the votes, naming none
            lost = [a for a, v in self.project.state.votes.get(item.id, {}).items() if v.choice.isdecimal()]
        decided = adjudication_edited_away(self.project, item.id, changes)
        if not lost and decided is None:
            self._submit_edit(item, changes, base, [])
            return
        if blind:
            message = (
                "Votes on this item may have chosen the text you changed. They will count as cast on an earlier "
                "version (the item needs votes again) until the annotators vote again; a reviewer's final label "
                "that chose it is set aside until a reviewer adjudicates anew."
            )
        else:
            parts = []
            if lost:
                parts.append(
                    f"{len(lost)} vote(s) on {item.id} ({', '.join(lost)}) chose the text you changed: they will "
                    "count as cast on an earlier version (the item needs votes again) until the annotators vote again."
                )
            if decided is not None:
                whose = (
                    "your adjudication"
                    if decided.who == self.project.annotator
                    else f"the adjudication by {decided.who}"
                )
                parts.append(
                    f"{whose[0].upper()}{whose[1:]} (final label {int(decided.label) + 1}) chose that text: it will be "
                    "set aside, and the item goes back to the votes, or to A, until a reviewer adjudicates anew."
                )
            message = " ".join(parts)
        choices: list[tuple[str | None, str, str]] = [
            ("edit", "Edit, and set aside what chose the earlier text", ""),
            ("cancel", "Cancel", ""),
        ]
        title = "Votes predate this edit" if lost else "A final label predates this edit"
        self.host.push_screen(
            ChoiceDialog(title, message, choices),
            lambda answer: (
                self._submit_edit(item, changes, base, lost) if answer == "edit" else self.host.show_current()
            ),
        )

    def _submit_edit(self, item: Item, changes: dict[str, str], base: dict[str, str], stale_ok: list[str]) -> None:
        """Record the edit; a vote the user was not asked about, cast by another process since the screen last
        looked, stops it (``VotesArrived``: nothing recorded) and the question is asked again with it."""

        def write() -> object:
            return self.project.edit(item.id, changes, base=base, stale_ok=stale_ok)

        def again() -> None:
            self.apply_edit(item, changes, base)

        self._submit_checked(item, f"the edit of {item.id}", write, on_votes=again)

    def _submit_checked(
        self, item: Item, what: str, write: Callable[[], object], on_votes: Callable[[], None] | None = None
    ) -> None:
        """Record ``write`` through the host; a conflict with someone else's change opens the three-way dialog,
        votes cast meanwhile on the text changed (``VotesArrived``) call ``on_votes``."""

        def attempt() -> EditConflict | VotesArrived | None:
            try:
                write()
            except (EditConflict, VotesArrived) as stopped:  # nothing recorded: the user chooses, not an error line
                return stopped
            return None

        def done(conflict: object) -> None:
            self.host.after_change([item.id])  # theirs, after a conflict: the screen shows what is stored
            if isinstance(conflict, EditConflict):
                self.host.push_screen(conflict_dialog(conflict), lambda answer: self._resolve(item, conflict, answer))
            elif isinstance(conflict, VotesArrived) and on_votes is not None:
                on_votes()

        self.host.submit(what, attempt, done)

    def _resolve(self, item: Item, conflict: EditConflict, answer: str | None) -> None:
        """Keep theirs (nothing to record; also on escape), keep mine (recorded on theirs) or merge by hand."""
        field = conflict.field
        if answer == KEEP_MINE:
            if field == "note":
                self._submit_checked(
                    item,
                    f"the note on {item.id}",
                    lambda: self.project.set_note(item.id, conflict.mine, base=conflict.theirs),
                )
            else:
                self.apply_edit(item, {field: conflict.mine}, base={field: conflict.theirs})
        elif answer == MERGE:
            self.host.edit_field(field, conflict.mine)
            self._bases[(item.id, field)] = conflict.theirs  # the merge is recorded on theirs, not on the start
        else:
            self.host.notify(markup_safe(f"kept their {field} of {item.id}; yours was not recorded"), timeout=4)

    # ------------------------------------------------- conflicts from merged machines

    def resolve_conflict(self, item: Item) -> None:
        """A field of ``item`` changed on two machines before a merge: keep the version shown, the other, or
        merge by hand. Each answer is recorded (keeping the one shown too), so the decision travels."""
        found = [c for c in self.project.conflicts() if c.item_id == item.id]
        if not found:
            self.host.notify(
                markup_safe(f"no conflict on {item.id}; the filter's conflicts queue (F) lists the items with one"),
                timeout=4,
            )
            return
        conflict = found[0]
        if conflict.field == ADJUDICATION and not self.session.ballots.reviewer:
            self.host.notify(
                markup_safe(
                    f"{item.id} was adjudicated differently on two machines: the reviewer who resolves it "
                    "starts piqa-tui with --reviewer (the decisions show the votes' outcome)"
                ),
                severity="warning",
                timeout=6,
            )
            return
        self.host.push_screen(merge_conflict_dialog(conflict), lambda answer: self._settle(item, conflict, answer))

    def _settle(self, item: Item, conflict: FieldConflict, answer: str | None) -> None:
        if answer in (KEEP_CURRENT, KEEP_OTHER):
            self._submit_resolution(
                item, conflict.field, conflict.current if answer == KEEP_CURRENT else conflict.other
            )
        elif answer == MERGE:
            self._settling.add((item.id, conflict.field))
            self._bases[(item.id, conflict.field)] = conflict.current
            self.host.edit_field(conflict.field, conflict.current)

    def _submit_resolution(self, item: Item, field: str, value: str) -> None:
        def done(_: object) -> None:
            self.host.after_change([item.id])
            left = sum(c.item_id == item.id for c in self.project.conflicts())
            more = f"; {left} more on this item: press C again" if left else ""
            self.host.notify(markup_safe(f"conflict on {field} of {item.id} resolved{more}"), timeout=4)

        what = f"the resolution of {field} on {item.id}"
        self.host.submit(what, lambda: self.project.resolve_conflict(item.id, field, value), done)

    def swap(self, item: Item, selected: str) -> None:
        """Swap the selected solution (the first when none is) with the next, the label with them."""
        if len(item.solutions) < 2:
            return
        if self.session.ballots.order(item) is not None:  # a swap would show where each text stands in the file
            self.host.notify(
                "x swaps solutions in the file, which you see in an order of your own (shuffled validation); "
                "swap them with --reviewer, in file order",
                severity="warning",
                timeout=5,
            )
            return
        a = int(selected[8:]) if selected.startswith("solution") else 0
        b = (a + 1) % len(item.solutions)

        def swapped(_: object) -> None:
            self.host.after_change([item.id])
            self.host.notify(f"swapped solutions {a + 1} and {b + 1} (and the label with them)", timeout=3)

        self.host.submit(f"the swap on {item.id}", lambda: self.project.swap_solutions(item.id, a, b), swapped)

    # ------------------------------------------------------------ undo/redo

    def undo(self) -> None:
        self._undo_redo("undo")

    def redo(self) -> None:
        self._undo_redo("redo")

    def _undo_redo(self, which: str) -> None:
        step = self.project.undo if which == "undo" else self.project.redo

        def attempt() -> str | UndoRefused | None:
            try:
                return step()
            except UndoRefused as refused:  # someone else changed the field since: their line, as it is
                return refused

        self.host.submit(which, attempt, lambda item_id: self._undone(which, item_id))  # type: ignore[arg-type]

    def _undone(self, which: str, item_id: str | UndoRefused | None) -> None:
        if isinstance(item_id, UndoRefused):
            self.host.notify(markup_safe(item_id, one_line=True), severity="warning", timeout=8)
            return
        if item_id is None:
            self.host.notify(f"nothing to {which}", timeout=2)
            return
        self.host.after_change([item_id] if item_id else [])
        if item_id in self.project.index:  # "": a decision on no single item (a cluster marked distinct)
            self.host.go_to_position(self.project.index[item_id])
        self.host.notify(f"{which} on {item_id or 'a duplicate cluster'}", timeout=2)
