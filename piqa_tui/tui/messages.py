"""What the screens tell each other, as Textual messages (no screen calls another's methods).

A screen that changed the project, or wants an item shown, posts one of these
to the app, which brings the main screen in step (the main screen lies under
the others and owns the list). The app and the main screen post the others to
the screen on top, which redraws if it shows what changed.
"""

from __future__ import annotations

from textual.message import Message


class ItemsChanged(Message):
    """Items changed, or their votes, flags or decisions (recorded already); none: something project-wide."""

    def __init__(self, item_ids: list[str]) -> None:
        super().__init__()
        self.item_ids = item_ids


class MarksChanged(Message):
    """Decisions that only the list's marks and counts show changed (duplicate clusters resolved)."""


class ShowItem(Message):
    """Put the list's cursor on the item at ``position`` (clearing filters that hide it)."""

    def __init__(self, position: int) -> None:
        super().__init__()
        self.position = position


class OthersChanged(Message):
    """Events recorded by other processes were applied to the project (their votes, decisions, edits)."""

    def __init__(self, item_ids: list[str]) -> None:
        super().__init__()
        self.item_ids = item_ids


class ScoresChanged(Message):
    """The model's scores changed (an item was scored, a run went on)."""
