"""How the main screen draws text: the bidi mode (B) and the writing direction of a column or the dataset;
and where the annotator is, for the next session to open at.

Keys (``keymap.MAIN_ACTIONS``): ``cycle_bidi`` steps the right-to-left display mode for every screen;
``cycle_direction`` the selected field's column, ``cycle_dataset_direction`` the whole dataset's, through
auto, right-to-left and left-to-right. A direction applies at once and is submitted to the session's write
queue to be kept in the workspace for the next session (a busy workspace keeps it waiting and retried; one
that cannot keep it says so, and the direction holds for this session); the host redraws every screen. Where
the annotator rests is a preference submitted the same way, without a word (``Writes.commit_preference``).
These are the workspace's preferences (``core/workspace/preferences.py``): no write of them bypasses the queue.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Protocol

from piqa_tui.core.text.direction import DIRECTION_CYCLE, Direction, column_of
from piqa_tui.core.workspace.log import Workspace
from piqa_tui.core.workspace.preferences import store_direction, store_position
from piqa_tui.tui.dialogs.asker import Submitter
from piqa_tui.tui.state.session import Session

DIRECTION_WORDS = {
    Direction.AUTO: "auto (detected per paragraph)",
    Direction.RTL: "right-to-left",
    Direction.LTR: "left-to-right",
}


class DisplayHost(Submitter, Protocol):
    @property
    def selected_field(self) -> str:
        """The field selected on the current item."""
        ...

    def display_changed(self) -> None:
        """Redraw every screen's dataset text (the list, the item, the screens open over them)."""
        ...

    def submit_preference(self, what: str, attempt: Callable[[], object]) -> None:
        """Hand ``attempt`` (a preference the workspace keeps) to the session's write queue, which commits it in
        its turn and says nothing of it (``Writes.commit_preference``)."""
        ...


class DisplayController:
    """Steps the bidi mode and the directions, and says what they are now; submits the preferences to keep."""

    def __init__(self, session: Session, host: DisplayHost) -> None:
        self.session = session
        self.host = host

    def cycle_bidi(self) -> None:
        mode = self.session.cycle_bidi()
        self.host.display_changed()
        self.host.notify(f"right-to-left display: {mode}", timeout=2)

    def cycle_field_direction(self) -> None:
        field = self.host.selected_field
        if field == "label":
            self.host.notify("select a text field (tab) to set its direction", timeout=3)
            return
        self.cycle_direction(field)

    def cycle_dataset_direction(self) -> None:
        self.cycle_direction(None)

    def cycle_direction(self, field: str | None) -> None:
        """Set the next direction for ``field``'s column (``None``: the dataset), redraw, and say what it is."""
        directions = self.session.directions
        column = column_of(field) if field is not None else None
        now = directions.of(field) if field is not None else directions.dataset
        direction = DIRECTION_CYCLE[(DIRECTION_CYCLE.index(now) + 1) % len(DIRECTION_CYCLE)]
        self.session.set_direction(column, direction)
        self.host.display_changed()
        self.host.notify(f"{column or 'dataset'}: {DIRECTION_WORDS[direction]}", timeout=3)
        workspace = self.session.project.workspace
        self.host.submit(
            f"the direction of {column or 'the dataset'} for the next session",
            lambda: store_direction(workspace, column, direction),
            _kept,
        )

    def remember_position(self, item_id: str) -> None:
        """Keep ``item_id`` as where this annotator is, so that the next session opens there."""
        workspace, annotator = self.session.project.workspace, self.session.project.annotator
        self.host.submit_preference("where you are", lambda: _store_position(workspace, annotator, item_id))


def _kept(_: object) -> None:
    """A direction kept in the workspace: it was shown and said already."""


def _store_position(workspace: Workspace | None, annotator: str, item_id: str) -> None:
    try:
        store_position(workspace, annotator, item_id)
    except sqlite3.ProgrammingError:
        return  # a reload closed this session's workspace first: the new session keeps its own place
