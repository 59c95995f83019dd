"""The main screen as its controllers see it: the host protocols of ``tui/controllers``, kept by one object.

The controllers (editing, filtering and search, files, voting, scoring) are
plain objects that never import a screen; this object gives them the cursor,
the list's rows, redraws, dialogs, background work and the other screens
they open, and owns them for the screen.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, cast

from textual.screen import Screen

from piqa_tui.core.dataset.item import Item
from piqa_tui.tui.controllers.authoring import AuthoringController
from piqa_tui.tui.controllers.editing import EditingController
from piqa_tui.tui.controllers.files import FilesController
from piqa_tui.tui.controllers.filtering import FilteringController
from piqa_tui.tui.controllers.scoring import ScoringController
from piqa_tui.tui.controllers.voting import VotingController
from piqa_tui.tui.external_editor import edit_externally
from piqa_tui.tui.messages import Reopen, ScoresChanged
from piqa_tui.tui.screens.agreement import AgreementScreen
from piqa_tui.tui.screens.main_view import MainView
from piqa_tui.tui.state.session import Session
from piqa_tui.tui.widgets.list.search_bar import SearchBar
from piqa_tui.tui.widgets.progress_strip import ProgressStrip


class MainHost:
    """Serves the main screen's controllers (``Host`` and the protocols built on it), and owns them and the view."""

    def __init__(self, screen: Screen[None], session: Session) -> None:
        self.screen = screen
        self.session = session
        self.editing = EditingController(session, self)
        self.filtering = FilteringController(session, self)
        self.files = FilesController(session, self)
        self.voting = VotingController(session, self)
        self.scoring = ScoringController(session, self)
        self.authoring = AuthoringController(session, self)
        self.view = MainView(screen, session, self.filtering, self.scoring)

    # ------------------------------------------------------------------ Host

    @property
    def current(self) -> Item | None:
        return self.view.current

    def after_change(self, item_ids: Iterable[str]) -> None:
        """Redraw after the project changed (by us or another process)."""
        self.session.items_changed(list(item_ids))
        self.view.recount()
        self.view.item_list.invalidate()
        self.filtering.refilter()
        self.view.show_current()

    def notify(self, message: str, *, severity: Any = "information", timeout: float | None = None) -> None:
        self.screen.notify(message, severity=severity, timeout=timeout)

    def push_screen(self, screen: Any, callback: Callable[[Any], object] | None = None) -> Any:
        return self.screen.app.push_screen(screen, cast(Any, callback))  # Textual wants a callback returning None

    def record(self, what: str, attempt: Callable[[], object], done: Callable[[object], None]) -> None:
        self.session.writes.record(what, attempt, done)

    def launch(self, work: Callable[[], None], *, group: str, exclusive: bool) -> None:
        # A fixed description: Textual's default is the repr of the callable's arguments.
        self.screen.run_worker(work, group=group, exclusive=exclusive, thread=True, description=group)

    def deliver(self, callback: Callable[..., object], *args: object) -> None:
        self.screen.call_later(callback, *args)  # thread-safe: posts to the screen's queue

    def show_current(self) -> None:
        self.view.show_current()

    def update_header(self) -> None:
        self.view.update_header()

    def set_busy(self, text: str) -> None:
        self.session.busy = text
        self.screen.refresh_bindings()
        self.view.update_header()

    # ------------------------------------------------------------ the list

    @property
    def rows(self) -> Sequence[int]:
        return self.view.item_list.rows

    @property
    def cursor(self) -> int:
        return self.view.item_list.cursor

    @property
    def position(self) -> int | None:
        return self.view.item_list.position

    def show_rows(self, rows: Sequence[int], keep: int | None, empty: str) -> None:
        self.view.item_list.set_rows(rows, keep, empty)
        self.view.show_current()

    def go_to_row(self, index: int) -> None:
        self.view.go_to_row(index)

    def go_to_position(self, position: int) -> None:
        self.filtering.go_to_position(position)

    def edit_field(self, field: str, text: str) -> None:
        self.screen.edit_field_with(field, text)  # type: ignore[attr-defined]

    def advance(self) -> None:
        self.view.item_list.move(1)

    def close_search(self) -> None:
        self.screen.query_one(SearchBar).close()

    # ---------------------------------------------------------- scoring

    @property
    def strip(self) -> ProgressStrip:
        return self.screen.query_one(ProgressStrip)

    def scores_changed(self, refilter: bool) -> None:
        self.view.item_list.invalidate()
        if refilter:
            self.filtering.refilter()
        self.view.show_current()
        app = self.screen.app
        if app.screen is not self.screen:
            app.screen.post_message(ScoresChanged())  # the results screen follows a run

    def redraw_score(self, item_id: str) -> None:
        item = self.current
        if item is not None and item.id == item_id:
            self.view.show_model_score(item)

    # -------------------------------------------------- other screens, the app

    def open_agreement(self) -> None:
        self.push_screen(AgreementScreen(self.session))

    def open_adjudication(self) -> None:
        from piqa_tui.tui.screens.adjudication import AdjudicationScreen  # imported when first opened

        self.push_screen(AdjudicationScreen(self.session))

    def open_duplicates(self) -> None:
        from piqa_tui.tui.screens.duplicates import DuplicatesScreen

        self.push_screen(DuplicatesScreen(self.session), lambda _: self.show_current())

    def open_model_results(self) -> None:
        from piqa_tui.tui.screens.model_results import ModelResultsScreen

        self.push_screen(ModelResultsScreen(self.session), lambda _: self.show_current())

    def reopen(self, keep_id: str | None) -> None:
        self.screen.app.post_message(Reopen(keep_id))

    async def edit_externally(self, item: Item, field: str, value: str) -> None:
        """Edit ``field`` in $EDITOR with the app suspended, then record it as if typed here."""
        named = self.view.item_view.shown_name(field, field).replace(" ", "-")  # the file's name says no index
        edited = await edit_externally(self.screen.app, value, f"{item.id}-{named}")
        if edited is None:
            self.show_current()
            return
        self.editing.save_field(item, field, edited)
