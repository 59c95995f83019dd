"""What shows while a large dataset is read and its workspace replayed (off the UI thread)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Center, Middle
from textual.screen import Screen
from textual.widgets import LoadingIndicator, Static

from piqa_tui.render.safe_text import rich_text


class LoadingScreen(Screen[None]):
    DEFAULT_CSS = """
    LoadingScreen Static {
        width: auto;
        color: $text-muted;
    }
    LoadingScreen LoadingIndicator {
        height: 1;
    }
    """

    def __init__(self, name: str) -> None:
        super().__init__()
        self.dataset_name = name

    def compose(self) -> ComposeResult:
        with Middle():
            with Center():
                yield Static(rich_text(f"opening {self.dataset_name} …", one_line=True))
            yield LoadingIndicator()
