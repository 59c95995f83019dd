"""What every controller asks of the screen that owns it: the item under the cursor, a word, a dialog."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from piqa_tui.core.dataset.item import Item
from piqa_tui.tui.dialogs.asker import Asker


class Host(Asker, Protocol):
    """The screen a controller works for."""

    @property
    def current(self) -> Item | None:
        """The item under the cursor (None when the list is empty)."""
        ...

    def after_change(self, item_ids: list[str]) -> None:
        """The project changed (recorded already): redraw what depends on ``item_ids``."""
        ...

    def record(self, what: str, attempt: Callable[[], object], done: Callable[[object], None]) -> None:
        """Run ``attempt`` (a write to the workspace), then ``done`` with its result; a busy workspace
        keeps it pending and retries (``tui/pending.py``), another failure is said, not shown as done."""
        ...


class Background(Protocol):
    """Work off the UI thread, and its results back on it."""

    def launch(self, work: Callable[[], None], *, group: str, exclusive: bool) -> None:
        """Run ``work`` off the UI thread (exclusive: cancelling the group's previous one)."""
        ...

    def deliver(self, callback: Callable[..., object], *args: object) -> None:
        """Call ``callback(*args)`` on the UI thread, from any thread, without waiting."""
        ...
