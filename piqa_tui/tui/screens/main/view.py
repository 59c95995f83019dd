"""What the main screen draws from the session: the current item, its votes and scores, the header, the marks.

The screen owns the widgets; this object fills them after a move or a change,
and keeps what drawing needs between calls (the counts, the item last shown,
where the annotator is). It decides nothing: every answer comes from the
session (``tui/state``) and core.
"""

from __future__ import annotations

from collections.abc import Callable

from textual.screen import Screen
from textual.timer import Timer

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.round.origin import origin_of
from piqa_tui.core.round.recorded import assigned_to
from piqa_tui.core.round.stages import stage_line
from piqa_tui.core.votes.blind import current_vote, has_voted
from piqa_tui.core.votes.decisions import choices as item_choices
from piqa_tui.core.workspace.project import with_field
from piqa_tui.core.workspace.suggestions import pending_by_item
from piqa_tui.core.workspace.vote_targets import STALE
from piqa_tui.render.sync_summary import sync_status
from piqa_tui.tui.controllers.display import DisplayController
from piqa_tui.tui.controllers.filtering import FilteringController
from piqa_tui.tui.controllers.scoring import ScoringController
from piqa_tui.tui.dialogs.questions import answers_status
from piqa_tui.tui.state.fields import item_fields, text_suggestion_field
from piqa_tui.tui.state.listing import row_marks
from piqa_tui.tui.state.session import Session
from piqa_tui.tui.widgets.item.item_view import ItemView
from piqa_tui.tui.widgets.item.label_line import LabelChooser, LabelLine
from piqa_tui.tui.widgets.item.score_panel import ScorePanel, ScoreView
from piqa_tui.tui.widgets.item.vote_panel import VotePanel
from piqa_tui.tui.widgets.list.item_list import ItemList
from piqa_tui.tui.widgets.status_header import HeaderInfo, StatusHeader

POSITION_DELAY = 0.5  # seconds the cursor rests on an item before it is written down as where you are


class MainView:
    """Fills the main screen's widgets from the session."""

    def __init__(
        self,
        screen: Screen[None],
        session: Session,
        filtering: FilteringController,
        scoring: ScoringController,
        display: DisplayController,
    ) -> None:
        self.screen = screen
        self.session = session
        self.project = session.project
        self.filtering = filtering
        self.scoring = scoring
        self.display = display
        self._item_list: ItemList | None = None
        self._item_view: ItemView | None = None
        self._header: StatusHeader | None = None
        self._vote_panel: VotePanel | None = None
        self._score_panel: ScorePanel | None = None
        self._counts: tuple[int, int, int, int, int] | None = None
        self._shown_index = -1
        self._shown_solutions = 0  # solutions of the item last shown: the footer's vote keys say 1-N
        self._position_timer: Timer | None = None
        self._stored_position: str | None = None  # the item id last submitted as where this annotator is

    @property
    def item_list(self) -> ItemList:
        if self._item_list is None:
            self._item_list = self.screen.query_one(ItemList)
        return self._item_list

    @property
    def item_view(self) -> ItemView:
        if self._item_view is None:
            self._item_view = self.screen.query_one(ItemView)
        return self._item_view

    @property
    def current(self) -> Item | None:
        position = self.item_list.position
        return None if position is None else self.project.items[position]

    def marks(self, position: int, item: Item) -> str:
        """The list's marks for one row."""
        return row_marks(self.session, position, item)

    # ---------------------------------------------------------------- moving

    def moved(self) -> None:
        """The list's cursor moved: show the item (once the view is there, if the list mounted first)."""
        if self._item_view is not None or self.screen.query(ItemView):
            self.show_current(only_if_moved=True)
        else:
            self.screen.call_after_refresh(self.show_current)

    def go(self, move: Callable[[], None]) -> None:
        """Move the cursor and redraw the item at once, so list and item land in the same frame."""
        move()
        self.show_current(only_if_moved=True)

    def go_to_row(self, index: int) -> None:
        self.go(lambda: self.item_list.go(index))

    def step(self, rows: int) -> None:
        """Move ``rows`` rows down (up when negative): the next and previous item keys."""
        self.go(lambda: self.item_list.move(rows))

    def page(self, pages: int) -> None:
        self.go(lambda: self.item_list.page(pages))

    def go_to_end(self, end: int) -> None:
        """The first row (``end`` 0) or the last (``end`` -1)."""
        self.go(lambda: self.item_list.go(0 if end == 0 else len(self.item_list.rows) - 1))

    def select_field(self, step: int) -> None:
        item = self.current
        names = self.item_view.in_screen_order(
            [f.name for f in item_fields(self.project.dataset, item)] if item else []
        )
        if not names:
            return
        current = self.item_view.selected
        index = names.index(current) if current in names else 0
        self.item_view.select(names[(index + step) % len(names)])

    # ----------------------------------------------------------- the item

    def show_current(self, only_if_moved: bool = False) -> None:
        """Redraw the item view and header for the item under the cursor."""
        position = self.item_list.position
        view = self.item_view
        if (
            only_if_moved
            and view.item is not None
            and position is not None
            and view.item is self.project.items[position]
        ):
            if self._shown_index == self.item_list.cursor:
                return
        self._shown_index = self.item_list.cursor
        view.display = position is not None
        if position is not None:
            self._show_item(position, self.project.items[position])
        self.update_header()

    def _show_item(self, position: int, item: Item) -> None:
        state = self.project.state
        flags = state.flags.get(item.id)
        self.item_view.show_item(
            item,
            self.session.validation.problems(position, item),
            note=state.notes.get(item.id, ""),
            status=self._status(item),
            gold_hidden=self.session.gold_hidden(item),
            flags=flags or {},
            order=self.session.ballots.order(item),
            sources={k: v for k, v in origin_of(self.project, item.id).source if k != "id"},
        )
        self.show_votes(item)
        self.show_model_score(item)
        self._remember_position_soon()
        if len(item.solutions) != self._shown_solutions:  # the footer's vote keys (1-2, 1-3) follow the item
            self._shown_solutions = len(item.solutions)
            self.screen.refresh_bindings()

    def _status(self, item: Item) -> str:
        """The item's status line: edited, your vote, its flags."""
        status = []
        if item.id in self.project.state.edited:
            status.append("✎ edited")
        mine = current_vote(self.project, item.id)
        if mine == STALE:
            status.append("your vote predates an edit: vote again")
        elif mine is not None:
            status.append(f"✓ you voted {self.session.ballots.shown_choice(item.id, mine)}")
        flags = self.project.state.flags.get(item.id)
        if flags:
            status.append("⚑ " + ", ".join(sorted(flags)))
        if answered := answers_status(self.project, item.id, self.session.ballots.visible(item.id)):
            status.append(answered)
        status.append(stage_line(self.project, item.id))  # "" unless the item is in the authoring stages
        status.append(self._suggestions_hint(item))
        return "  ".join(s for s in status if s)

    def _suggestions_hint(self, item: Item) -> str:
        """ "2 model suggestions pending — S reviews them" when the item has suggestions nobody decided."""
        found = pending_by_item(self.project).get(item.id, [])
        if not found:
            return ""
        text = sum(text_suggestion_field(self.project.dataset, s.field) for s in found)
        keys = [key for key, count in (("S reviews", text), ("K/Z decide", len(found) - text)) if count]
        return f"{len(found)} model suggestion{'s' * (len(found) != 1)} pending — {', '.join(keys)}"

    def preview(self, field: str, value: str) -> None:
        """Check the field being typed as if it were kept (not for notes)."""
        item = self.current
        if item is None or field == "note":
            return
        candidate = with_field(item, field, value)
        self.item_view.preview(candidate, self.session.validation.candidate(candidate))

    def open_label_chooser(self, item: Item) -> LabelChooser:
        """Put the gold-label chooser where the label line is."""
        label = self.item_view.query_one(LabelLine)
        chooser = LabelChooser(
            len(item.solutions), item.label, order=self.session.ballots.order(item), id="label-chooser"
        )
        label.display = False
        self.item_view.mount(chooser, after=label)
        return chooser

    def show_votes(self, item: Item) -> None:
        """Fill the vote lines of the item view (what blind mode allows)."""
        if self._vote_panel is None:
            self._vote_panel = self.item_view.query_one(VotePanel)
        self._vote_panel.show_summary(self.session.ballots.summary(item))

    def show_model_score(self, item: Item) -> None:
        """Fill the score panel for ``item`` (hidden until scoring was used on this dataset)."""
        panel = self._score_panel
        if panel is None:
            found = self.item_view.query(ScorePanel)
            if not found:
                return
            panel = self._score_panel = found.first()
        model = self.session.scores
        if not model.active:
            if panel.display:
                panel.display = False
            return
        if not panel.display:
            panel.display = True
        state, error = self.scoring.state(item.id)
        ballots = self.session.ballots
        visible = ballots.visible(item.id)
        decision = ballots.decision(item.id) if visible else None
        panel.show_view(
            ScoreView(
                rows=max(len(self.project.dataset.layout.solutions), len(item.solutions)),
                score=model.get(item),
                baseline=model.baseline(item),
                state=state,
                error=error,
                gold_hidden=self.session.gold_hidden(item),
                votes=tuple(item_choices(self.project, item.id).values()) if visible else (),
                decided=decision.label if decision is not None else None,
                template=model.template.name,
                order=self.session.ballots.order(item),
            )
        )

    # ------------------------------------------------------------- header

    def recount(self) -> None:
        """Count voted, edited and flagged items (after data changed, not on every move: O(items))."""
        project = self.project
        state = project.state
        mine = assigned_to(project) & set(project.index)
        self._counts = (
            sum(1 for item_id in state.votes if has_voted(project, item_id)),
            len(state.edited),
            sum(1 for f in state.flags.values() if f),
            len(mine),
            sum(1 for item_id in mine if has_voted(project, item_id)),
        )

    def update_header(self) -> None:
        if self._header is None:
            self._header = self.screen.query_one(StatusHeader)
        if self._counts is None:
            self.recount()
        assert self._counts is not None
        voted, edited, flagged, assigned, assigned_voted = self._counts
        session, item_list, filters = self.session, self.item_list, self.filtering.filters
        self._header.show_info(
            HeaderInfo(
                dataset=self.project.dataset.name,
                annotator=self.project.annotator,
                index=item_list.cursor + 1 if item_list.rows else 0,
                shown=len(item_list.rows),
                total=len(self.project.items),
                edited=edited,
                voted=voted,
                flagged=flagged,
                filters=filters.describe() if filters.active else "",
                bidi=str(session.bidi_mode),
                reviewer=session.reviewer,
                warning=session.disk_warning,
                busy=session.busy,
                unsaved=bool(edited) and session.unsaved,
                loading=session.loading,
                synced=sync_status(session.last_sync, session.syncing),
                assigned=assigned,
                assigned_voted=assigned_voted,
            )
        )

    # ------------------------------------------------- where the annotator is

    def _remember_position_soon(self) -> None:
        """Write where the annotator is once the cursor rests (not one write per key while j is held)."""
        if self._position_timer is not None:
            self._position_timer.stop()
        self._position_timer = self.screen.set_timer(POSITION_DELAY, self.remember_position)

    def remember_position(self) -> None:
        """Have the current item's id kept in the workspace (through the write queue), so the next open starts here."""
        self._position_timer = None
        item = self.current
        if item is None or item.id == self._stored_position:
            return
        self.display.remember_position(item.id)
        self._stored_position = item.id
