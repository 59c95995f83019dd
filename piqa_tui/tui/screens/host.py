"""What every screen lends the controllers it owns: toasts, dialogs, the write queue and work off the UI thread.

A controller never imports a screen: it reaches its screen through a host protocol (``tui/controllers/host.py``
and the protocol each controller adds). ``ScreenHost`` keeps the part every protocol shares, for any screen,
so each screen's host adds only what is its own, and every write of every screen takes one route: a
controller submits (``submit``; a preference such as where the annotator is, ``submit_preference``), the
session's write queue commits (``Writes.commit``, ``Writes.commit_preference``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar, cast

from textual.message import Message
from textual.screen import Screen

from piqa_tui.tui.state.session import Session

S = TypeVar("S", bound=Screen[Any])


class ScreenHost(Generic[S]):
    """Serves the ``Submitter`` and ``Background`` protocols for ``screen`` (a screen's host builds on it)."""

    def __init__(self, screen: S, session: Session) -> None:
        self.screen = screen
        self.session = session

    def notify(self, message: str, *, severity: Any = "information", timeout: float | None = None) -> None:
        self.screen.notify(message, severity=severity, timeout=timeout)

    def push_screen(self, screen: Any, callback: Callable[[Any], object] | None = None) -> Any:
        return self.screen.app.push_screen(screen, cast(Any, callback))  # Textual wants a callback returning None

    def submit(self, what: str, attempt: Callable[[], object], done: Callable[[object], None]) -> None:
        self.session.writes.commit(what, attempt, done)

    def submit_preference(self, what: str, attempt: Callable[[], object]) -> None:
        self.session.writes.commit_preference(what, attempt)

    def launch(self, work: Callable[[], None], *, group: str, exclusive: bool) -> None:
        # A fixed description: Textual's default is the repr of the callable's arguments.
        self.screen.run_worker(work, group=group, exclusive=exclusive, thread=True, description=group)

    def deliver(self, callback: Callable[..., object], *args: object) -> None:
        self.screen.call_later(callback, *args)  # thread-safe: posts to the screen's queue

    def post_to_app(self, message: Message) -> None:
        """Tell the app (and through it the screen under this one) what changed."""
        self.screen.app.post_message(message)
