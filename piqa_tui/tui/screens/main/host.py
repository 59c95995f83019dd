"""The main screen as its controllers see it: the host protocols of ``tui/controllers``, kept by one object.

The controllers (editing, filtering and search, files, voting, scoring, authoring, assigning,
suggesting, display) are plain objects that never import a screen; this object gives them the
cursor, the list's rows, redraws and the other screens they open (the dialogs, the
write queue and background work come from ``ScreenHost``), and owns them, the view
and the field editors for the screen.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from textual.screen import Screen

from piqa_tui.core.dataset.item import Item
from piqa_tui.tui.controllers.assigning import AssigningController
from piqa_tui.tui.controllers.authoring import AuthoringController
from piqa_tui.tui.controllers.display import DisplayController
from piqa_tui.tui.controllers.editing import EditingController
from piqa_tui.tui.controllers.files import FilesController
from piqa_tui.tui.controllers.filtering import FilteringController
from piqa_tui.tui.controllers.scoring import ScoringController
from piqa_tui.tui.controllers.suggesting import SuggestingController
from piqa_tui.tui.controllers.voting import VotingController
from piqa_tui.tui.messages import DisplayChanged, Reopen, ScoresChanged
from piqa_tui.tui.screens.agreement import AgreementScreen
from piqa_tui.tui.screens.host import ScreenHost
from piqa_tui.tui.screens.main.fields import FieldEditors
from piqa_tui.tui.screens.main.view import MainView
from piqa_tui.tui.state.session import Session
from piqa_tui.tui.widgets.list.search_bar import SearchBar
from piqa_tui.tui.widgets.progress_strip import ProgressStrip


class MainHost(ScreenHost[Screen[None]]):
    """Serves the main screen's controllers (``Host`` and the protocols built on it), and owns them and the view."""

    def __init__(self, screen: Screen[None], session: Session) -> None:
        super().__init__(screen, session)
        self.editing = EditingController(session, self)
        self.filtering = FilteringController(session, self)
        self.files = FilesController(session, self)
        self.voting = VotingController(session, self)
        self.scoring = ScoringController(session, self)
        self.authoring = AuthoringController(session, self)
        self.assigning = AssigningController(session, self)
        self.suggesting = SuggestingController(session, self)
        self.display = DisplayController(session, self)
        self.view = MainView(screen, session, self.filtering, self.scoring, self.display)
        self.fields = FieldEditors(screen, self.view, self.editing)

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
        self.fields.edit_with(field, text)

    def advance(self) -> None:
        self.view.item_list.move(1)

    def open_search(self) -> None:
        self.screen.query_one(SearchBar).open()

    def close_search(self) -> None:
        self.screen.query_one(SearchBar).close()

    # ---------------------------------------------------------- display

    @property
    def selected_field(self) -> str:
        return self.view.item_view.selected

    def display_changed(self) -> None:
        self.post_to_app(DisplayChanged())  # every screen's text, this one's list and item

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
        self.post_to_app(Reopen(keep_id))
