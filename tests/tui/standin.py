"""The main screen as the controllers see it, without Textual: a cursor over the rows, what was said and asked.

The controllers under test are real, and so are the session, its project and
workspace, and the model: only the screen is replaced, by this object that
keeps the host protocol (``controllers.host``) and writes down what the
controller asked of it. Background work runs in real threads, started when the
test calls ``settle``; what they deliver runs on the test's thread, as it would
on the UI thread.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Sequence
from typing import Any

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.errors import PiqaError
from piqa_tui.tui.state.session import Session


class StripRecord:
    """The progress strip: every text it was told, and whether it is shown."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.shown = False

    def start(self, text: str) -> None:
        self.shown = True
        self.texts.append(text)

    def show(self, text: str, done: int, total: int) -> None:
        self.texts.append(text)

    def say(self, text: str) -> None:
        self.texts.append(text)

    def stop(self) -> None:
        self.shown = False


class ScreenStandIn:
    def __init__(self, session: Session) -> None:
        self.session = session
        self.rows: Sequence[int] = range(len(session.project.items))  # the positions the list shows
        self.cursor = 0  # the row under the cursor
        self.busy = ""
        self.opened: list[str] = []  # the screens asked for over this one
        self.reopened: list[str | None] = []  # reloads asked for, with the item id to keep
        self.headers = 0
        self.search_open = False
        self.notes: list[tuple[str, str]] = []  # (severity, message)
        self.pushed: list[tuple[Any, Callable[[Any], object] | None]] = []
        self.changed: list[list[str]] = []
        self.strip = StripRecord()
        self.score_redraws: list[str] = []
        self.redraws = 0
        self._waiting: list[Callable[[], None]] = []
        self._inbox: queue.Queue[tuple[Callable[..., object], tuple[object, ...]]] = queue.Queue()

    # --------------------------------------------------------------- Host

    @property
    def position(self) -> int | None:
        return self.rows[self.cursor] if 0 <= self.cursor < len(self.rows) else None

    @position.setter
    def position(self, position: int) -> None:
        self.go_to_position(position)

    @property
    def current(self) -> Item | None:
        position = self.position
        return None if position is None else self.session.project.items[position]

    def after_change(self, item_ids: list[str]) -> None:
        self.changed.append(list(item_ids))
        self.session.items_changed(list(item_ids))

    def notify(self, message: str, *, severity: Any = "information", timeout: float | None = None) -> None:
        self.notes.append((severity, message))

    def push_screen(self, screen: Any, callback: Callable[[Any], object] | None = None) -> None:
        self.pushed.append((screen, callback))

    def submit(self, what: str, attempt: Callable[[], object], done: Callable[[object], None]) -> None:
        """As the session's write queue does when the workspace is free: write, then go on."""
        try:
            result = attempt()
        except PiqaError as exc:
            self.notify(f"{what} was not recorded: {exc}", severity="error")
            return
        done(result)

    def advance(self) -> None:
        self.go_to_row(self.cursor + 1)

    def open_agreement(self) -> None:
        self.opened.append("agreement")

    def open_adjudication(self) -> None:
        self.opened.append("adjudication")

    # ------------------------------------------- EditingHost, FilteringHost, FilesHost

    def go_to_row(self, index: int) -> None:
        self.cursor = min(max(index, 0), max(len(self.rows) - 1, 0))  # as the list keeps its cursor on a row

    def go_to_position(self, position: int) -> None:
        self.go_to_row(list(self.rows).index(position))

    def show_rows(self, rows: Sequence[int], keep: int | None, empty: str) -> None:
        self.rows = rows
        self.cursor = list(rows).index(keep) if keep is not None and keep in rows else 0

    def set_busy(self, text: str) -> None:
        self.busy = self.session.busy = text

    def close_search(self) -> None:
        self.search_open = False

    def update_header(self) -> None:
        self.headers += 1

    def reopen(self, keep_id: str | None) -> None:
        self.reopened.append(keep_id)

    # ---------------------------------------------------------- ScoringHost

    def launch(self, work: Callable[[], None], *, group: str, exclusive: bool) -> None:
        self._waiting.append(work)

    def deliver(self, callback: Callable[..., object], *args: object) -> None:
        self._inbox.put((callback, args))

    def scores_changed(self, refilter: bool) -> None:
        self.redraws += 1

    def redraw_score(self, item_id: str) -> None:
        self.score_redraws.append(item_id)

    def show_current(self) -> None:
        self.redraws += 1

    # ------------------------------------------------------------ the test's

    def answer(self, value: Any) -> None:
        """Answer the last dialog the controller opened, as the user would."""
        screen, callback = self.pushed[-1]
        assert callback is not None, f"{type(screen).__name__} expects no answer"
        callback(value)

    def said(self, severity: str | None = None) -> list[str]:
        return [text for level, text in self.notes if severity is None or level == severity]

    def settle(self, timeout: float = 300.0) -> None:
        """Start the background work asked for, wait for it, and run what it delivered, until nothing is left."""
        while self._waiting or not self._inbox.empty():
            threads = [threading.Thread(target=work, daemon=True) for work in self._waiting]
            self._waiting.clear()
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(timeout)
                assert not thread.is_alive(), "the background work did not end"
            while not self._inbox.empty():
                callback, args = self._inbox.get()
                callback(*args)
