"""How the main screen draws text: the bidi mode (B) and the writing direction of a column or the dataset.

Keys (``keymap.MAIN_ACTIONS``): ``cycle_bidi`` steps the right-to-left display mode for every screen;
``cycle_direction`` the selected field's column, ``cycle_dataset_direction`` the whole dataset's, through
auto, right-to-left and left-to-right. A direction is kept in the workspace for the next session (one
that cannot be kept holds for this session, and says so); the host redraws every screen.
"""

from __future__ import annotations

from typing import Protocol

from piqa_tui.core.errors import WorkspaceError
from piqa_tui.core.text.direction import DIRECTION_CYCLE, Direction, column_of
from piqa_tui.tui.dialogs.asker import Asker
from piqa_tui.tui.state.session import Session

DIRECTION_WORDS = {
    Direction.AUTO: "auto (detected per paragraph)",
    Direction.RTL: "right-to-left",
    Direction.LTR: "left-to-right",
}


class DisplayHost(Asker, Protocol):
    @property
    def selected_field(self) -> str:
        """The field selected on the current item."""
        ...

    def display_changed(self) -> None:
        """Redraw every screen's dataset text (the list, the item, the screens open over them)."""
        ...


class DisplayController:
    """Steps the bidi mode and the directions, and says what they are now."""

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
        said = f"{column or 'dataset'}: {DIRECTION_WORDS[direction]}"
        kept = True
        try:
            self.session.set_direction(column, direction)
        except WorkspaceError as exc:
            said, kept = f"{said} (for this session only: {exc})", False
        self.host.display_changed()
        self.host.notify(said, timeout=3 if kept else 6)
