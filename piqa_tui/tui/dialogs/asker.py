"""What a dialog needs of whoever opens it: a way to say a line and to push a screen (``Asker``), and what a
controller needs besides: a way to submit a write (``Submitter``).

``App``, the main screen and every controller's host are askers, so dialogs open from any of them
without importing the controllers that use them; every screen's host is a submitter, so a controller
writes the same way whichever screen owns it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol


class Asker(Protocol):
    """Says a line and asks a question: ``App`` and the main screen both are one."""

    def notify(self, message: str, *, severity: Any = "information", timeout: float | None = None) -> None: ...

    def push_screen(self, screen: Any, callback: Callable[[Any], object] | None = None) -> Any: ...


class Submitter(Asker, Protocol):
    """An asker that also takes writes: what a controller asks of every screen it works for."""

    def submit(self, what: str, attempt: Callable[[], object], done: Callable[[object], None]) -> None:
        """Hand ``attempt`` (a write to the workspace) to the session's write queue, which commits it and then calls
        ``done`` with its result; a busy workspace keeps it pending and retried (``tui/state/writes.py``), another
        failure is said, not shown as done."""
        ...
