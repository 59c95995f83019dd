"""What the app and the screens tell each other, as Textual messages (no one calls a screen's methods).

A screen that changed the project, or wants an item shown, posts one of these
to the app, which passes it on to the main screen (it lies under the others
and owns the list). The app tells the main screen what it noticed (other
processes' events, the poll's tick, every item checked, the display changed)
the same way, and the main screen posts to the screen on top, which redraws if
it shows what changed. The main screen asks the app to read the dataset again
with ``Reopen``. Whoever handles a message meant for it stops it, so it does not
bubble back to the app that passed it on.
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


class Watch(Message):
    """The app's poll: look for what other processes did meanwhile (stored scores, the dataset file on disk)."""


class Synced(Message):
    """A sync with the team started or ended: the header says when the last one was and what waits."""


class Checked(Message):
    """Every item was checked against validate's rules: the ``invalid`` queue and the marks are complete."""


class DisplayChanged(Message):
    """How text is laid out changed (the bidi mode, a direction, the width policy): redraw every text."""


class Reopen(Message):
    """Read the dataset again from disk (recorded edits replayed), the cursor kept on ``keep_id``."""

    def __init__(self, keep_id: str | None) -> None:
        super().__init__()
        self.keep_id = keep_id
