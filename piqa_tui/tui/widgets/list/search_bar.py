"""The search bar under the item list: one line to type a query in, searched once typing pauses."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.message import Message
from textual.timer import Timer
from textual.widgets import Static

from piqa_tui.tui.widgets.item.field_editor import FieldEditor

SEARCH_DELAY = 0.25  # seconds without a key before the query is searched (each search reads every item)


class SearchBar(Horizontal):
    """Says ``Search`` when typing pauses and ``Done`` on enter or escape; the screen does the searching."""

    DEFAULT_CSS = """
    SearchBar {
        dock: bottom;
        height: auto;
        display: none;
        background: $boost;
    }
    SearchBar.-open {
        display: block;
    }
    SearchBar > Static {
        width: auto;
        padding: 0 1;
        color: $accent;
        text-style: bold;
    }
    """

    class Search(Message):
        """Search for ``query`` (typing paused)."""

        def __init__(self, query: str) -> None:
            super().__init__()
            self.query = query

    class Done(Message):
        """The user left the bar: ``how`` is ``cancel`` (escape) or how the editor was left (enter)."""

        def __init__(self, query: str, how: str) -> None:
            super().__init__()
            self.query = query
            self.how = how

    _timer: Timer | None = None

    def compose(self) -> ComposeResult:
        yield Static("search /", markup=False)
        yield FieldEditor(
            field="search", placeholder="words of a prompt or solution; enter browses results, esc clears"
        )

    @property
    def editor(self) -> FieldEditor:
        return self.query_one(FieldEditor)

    @property
    def is_open(self) -> bool:
        return self.has_class("-open")

    def open(self) -> None:
        self.add_class("-open")
        self.editor.focus()

    def close(self) -> None:
        """Hide the bar and empty it."""
        self.remove_class("-open")
        self.editor.load("", "search")

    def _stop_timer(self) -> None:
        if self._timer is not None:
            self._timer.stop()

    @on(FieldEditor.Changed)
    def _typed(self, event: FieldEditor.Changed) -> None:
        event.stop()
        self._stop_timer()
        query = event.value
        self._timer = self.set_timer(SEARCH_DELAY, lambda: self.post_message(self.Search(query)))

    @on(FieldEditor.Done)
    def _done(self, event: FieldEditor.Done) -> None:
        event.stop()
        self._stop_timer()
        self.post_message(self.Done(event.value, event.how))
