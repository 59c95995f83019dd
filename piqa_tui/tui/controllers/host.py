"""What every controller asks of the screen that owns it: a word, a dialog, a write (``Submitter``), the item under
the cursor (``Host``), work off the UI thread (``Background``) and its progress strip (``Strip``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from piqa_tui.core.dataset.item import Item
from piqa_tui.tui.dialogs.asker import Submitter


class Host(Submitter, Protocol):
    """The screen a main-screen controller works for: a submitter with a cursor."""

    @property
    def current(self) -> Item | None:
        """The item under the cursor (None when the list is empty)."""
        ...

    def after_change(self, item_ids: list[str]) -> None:
        """The project changed (recorded already): redraw what depends on ``item_ids``."""
        ...


class Background(Protocol):
    """Work off the UI thread, and its results back on it."""

    def launch(self, work: Callable[[], None], *, group: str, exclusive: bool) -> None:
        """Run ``work`` off the UI thread (exclusive: cancelling the group's previous one)."""
        ...

    def deliver(self, callback: Callable[..., object], *args: object) -> None:
        """Call ``callback(*args)`` on the UI thread, from any thread, without waiting."""
        ...


class Strip(Protocol):
    """The progress strip, as the controller drives it (``ProgressStrip``)."""

    def start(self, text: str) -> None: ...

    def show(self, text: str, done: int, total: int) -> None: ...

    def say(self, text: str) -> None: ...

    def stop(self) -> None: ...
