"""A one-line strip with a text and a progress bar, shown only while a background run goes on.

``scoring 120/1,838 · 2.6 items/s · ETA 11 min · esc cancels`` under the item
list, ``finding duplicates · 1,234 items/s · esc cancels`` on the duplicates
screen: one widget for both, told what to say by the run's owner.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import ProgressBar, Static


def duration(seconds: float) -> str:
    """A short, rounded duration for an ETA: ``40 s``, ``11 min``, ``2.5 h``."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


class ProgressStrip(Horizontal):
    """The line above the footer while a run goes on; hidden otherwise."""

    DEFAULT_CSS = """
    ProgressStrip {
        height: 1;
        display: none;
        padding: 0 1;
        background: $boost;
    }
    ProgressStrip.-running {
        display: block;
    }
    ProgressStrip > Static {
        width: 1fr;
        color: $accent;
    }
    ProgressStrip > ProgressBar {
        width: auto;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.text = ""

    def compose(self) -> ComposeResult:
        yield Static(markup=False)
        yield ProgressBar(show_eta=False)

    def start(self, text: str) -> None:
        """Show the strip with ``text`` and a bar that moves without a total yet."""
        self.add_class("-running")
        self.query_one(ProgressBar).update(total=None, progress=0)
        self.say(text)

    def show(self, text: str, done: int, total: int) -> None:
        self.query_one(ProgressBar).update(total=max(1, total), progress=done)
        self.say(text)

    def say(self, text: str) -> None:
        """Change the text only (a stage, "cancelling…")."""
        self.text = text
        self.query_one(Static).update(text)

    def stop(self) -> None:
        self.remove_class("-running")
