"""The browse-and-edit screen: the item list on the left, the current item on the right.

The screen owns the user's place (filters, search, the selected field, the
field being edited) and turns keys into calls on the project. Every change
goes through ``Project`` (recorded in the workspace before it shows), then
the list, the item view and the header are redrawn from the project.
Voting and scoring are controllers the screen owns (``tui/controllers``): their
keys call them, and the screen serves them as their host (the current item,
redraws, dialogs, background work).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable
from typing import Any

from textual import on, work
from textual.actions import SkipAction
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Static
from textual.worker import get_current_worker

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.errors import WorkspaceError
from piqa_tui.core.text.direction import DIRECTION_CYCLE, Direction, column_of
from piqa_tui.core.votes.blind import current_vote, has_voted, may_see_answers
from piqa_tui.core.votes.decisions import choices as item_choices
from piqa_tui.core.workspace.preferences import store_position
from piqa_tui.core.workspace.project import field_value, with_field
from piqa_tui.core.workspace.vote_targets import STALE
from piqa_tui.tui.controllers.scoring import ScoringController
from piqa_tui.tui.controllers.voting import VotingController
from piqa_tui.tui.fields import Field, item_fields
from piqa_tui.tui.keymap import (
    MAIN_ACTIONS,
    SCORING_ACTIONS,
    VOTE_ACTIONS,
    action_names,
    bindings,
)
from piqa_tui.tui.listing import QUEUES, Filters, filtered_positions, row_marks
from piqa_tui.tui.messages import ScoresChanged
from piqa_tui.tui.screens.dialogs import ChoiceDialog, TextPrompt
from piqa_tui.tui.search import SearchResult
from piqa_tui.tui.session import Session
from piqa_tui.tui.voting import choice_text
from piqa_tui.tui.widgets.field_block import FieldClicked
from piqa_tui.tui.widgets.field_editor import FieldEditor
from piqa_tui.tui.widgets.item_list import ItemList
from piqa_tui.tui.widgets.item_view import ItemView
from piqa_tui.tui.widgets.label_line import LabelChooser, LabelLine
from piqa_tui.tui.widgets.progress_strip import ProgressStrip
from piqa_tui.tui.widgets.score_panel import ScorePanel, ScoreView
from piqa_tui.tui.widgets.status_header import HeaderInfo, StatusHeader
from piqa_tui.tui.widgets.vote_panel import VotePanel

SEARCH_DELAY = 0.25
MIN_WIDTH = 60
MIN_HEIGHT = 16
NARROW_WIDTH = 100

# Actions that change data: off while a field is edited or the file is being saved.
EDIT_ACTIONS = {
    "edit_field",
    "external_editor",
    "edit_label",
    "edit_note",
    "swap_solutions",
    "undo",
    "redo",
    "save",
    "export",
}
# Actions that move: off while a field is edited (their keys type text there).
MOVE_ACTIONS = action_names(MAIN_ACTIONS) - {"save", "export", "copy_field", "focus_list"} | action_names(VOTE_ACTIONS)
MOVE_ACTIONS |= {"score_item", "score_all", "model_results"}


class SearchBar(Horizontal):
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

    def compose(self) -> ComposeResult:
        yield Static("search /", markup=False)
        yield FieldEditor(
            field="search", placeholder="words of a prompt or solution; enter browses results, esc clears"
        )

    @property
    def editor(self) -> FieldEditor:
        return self.query_one(FieldEditor)


POSITION_DELAY = 0.5  # seconds the cursor rests on an item before it is written down as where you are


class MainScreen(Screen[None]):
    DEFAULT_CSS = """
    MainScreen #body {
        height: 1fr;
    }
    MainScreen #too-small {
        display: none;
        width: 1fr;
        height: 1fr;
        content-align: center middle;
        text-align: center;
        color: $warning;
    }
    MainScreen.-narrow ItemList {
        width: 46%;
    }
    MainScreen.-too-small #too-small {
        display: block;
    }
    MainScreen.-too-small #body, MainScreen.-too-small SearchBar, MainScreen.-too-small Footer {
        display: none;
    }
    """

    ACTIONS = MAIN_ACTIONS + VOTE_ACTIONS + SCORING_ACTIONS  # the palette's order
    # Scoring first: its escape (cancel a run) steps aside for clear_filter when no run goes on.
    BINDINGS = bindings(SCORING_ACTIONS + MAIN_ACTIONS + VOTE_ACTIONS)

    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session = session
        self.project = session.project
        self.filters = Filters()
        self.search_result: SearchResult | None = None
        self.editing: str | None = None  # the field being edited
        self.busy = ""
        self._item_list: ItemList | None = None
        self._item_view: ItemView | None = None
        self._header: StatusHeader | None = None
        self._counts: tuple[int, int, int] | None = None
        self._shown_index = -1
        self._search_timer: Timer | None = None
        self._vote_panel: VotePanel | None = None
        self._score_panel: ScorePanel | None = None
        self.voting = VotingController(session, self)
        self.scoring = ScoringController(session, self)
        self._position_timer: Timer | None = None
        self._shown_solutions = 0  # solutions of the item last shown: the footer's vote keys say 1-N
        self._stored_position: str | None = None  # the item id last written as where this annotator is

    # ---------------------------------------------------------------- layout

    def compose(self) -> ComposeResult:
        yield StatusHeader(id="header")
        with Horizontal(id="body"):
            yield ItemList(self.project.items, self._marks, id="item-list")
            yield ItemView(self.project.dataset, id="item-view")
        yield ProgressStrip(id="scoring-strip")
        yield SearchBar(id="search-bar")
        yield Static(id="too-small", markup=False)
        yield Footer(compact=True)

    @property
    def header(self) -> StatusHeader:
        if self._header is None:
            self._header = self.query_one(StatusHeader)
        return self._header

    @property
    def item_list(self) -> ItemList:
        if self._item_list is None:
            self._item_list = self.query_one(ItemList)
        return self._item_list

    @property
    def item_view(self) -> ItemView:
        if self._item_view is None:
            self._item_view = self.query_one(ItemView)
        return self._item_view

    AUTO_FOCUS = "#item-list"

    def on_mount(self) -> None:
        self._check_size()
        self.scoring.load_cached()

    def on_unmount(self) -> None:
        self.scoring.stop()
        self.remember_position()  # quitting within POSITION_DELAY of a move still remembers it

    def on_resize(self) -> None:
        self._check_size()

    def _check_size(self) -> None:
        width, height = self.app.size
        small = width < MIN_WIDTH or height < MIN_HEIGHT
        self.set_class(small, "-too-small")
        self.set_class(width < NARROW_WIDTH, "-narrow")  # the list takes more of a small screen
        if small:
            self.query_one("#too-small", Static).update(
                f"The terminal is {width}×{height}.\npiqa-tui needs at least {MIN_WIDTH}×{MIN_HEIGHT}:\n"
                "make the window larger or the font smaller."
            )

    def _marks(self, position: int, item: Item) -> str:
        return row_marks(self.session, position, item)

    def _empty_message(self) -> str:
        return (
            f"no items match {self.filters.describe()} — esc clears"
            if self.filters.active
            else "the dataset has no items"
        )

    # -------------------------------------------------------- current item

    @property
    def current(self) -> Item | None:
        position = self.item_list.position
        return None if position is None else self.project.items[position]

    @property
    def fields(self) -> list[Field]:
        item = self.current
        return item_fields(self.project.dataset, item) if item else []

    @on(ItemList.Moved)
    def _moved(self, event: ItemList.Moved) -> None:
        if self._item_view is not None or self.query(ItemView):
            self.show_current(only_if_moved=True)
        else:  # the list mounted before the view: show the item once both are there
            self.call_after_refresh(self.show_current)

    def _go(self, move: Callable[[], None]) -> None:
        """Move the cursor and redraw the item at once, so list and item land in the same frame."""
        move()
        self.show_current(only_if_moved=True)

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
            item = self.project.items[position]
            state = self.project.state
            status = []
            if item.id in state.edited:
                status.append("✎ edited")
            mine = current_vote(self.project, item.id)
            if mine == STALE:
                status.append("your vote predates an edit: vote again")
            elif mine is not None:
                status.append(f"✓ you voted {choice_text(mine)}")
            flags = state.flags.get(item.id)
            if flags:
                status.append("⚑ " + ", ".join(sorted(flags)))
            view.show_item(
                item,
                self.session.validation.problems(position, item),
                note=state.notes.get(item.id, ""),
                status="  ".join(status),
                gold_hidden=self.app.gold_hidden(item) if hasattr(self.app, "gold_hidden") else False,
                flags=flags or {},
            )
            self.show_votes(item)
            self.show_model_score(item)
            self._remember_position_soon()
            if len(item.solutions) != self._shown_solutions:  # the footer's vote keys (1-2, 1-3) follow the item
                self._shown_solutions = len(item.solutions)
                self.refresh_bindings()
        self.update_header()

    # ------------------------------------------------- where the annotator is

    def _remember_position_soon(self) -> None:
        """Write where the annotator is once the cursor rests (not one write per key while j is held)."""
        if self._position_timer is not None:
            self._position_timer.stop()
        self._position_timer = self.set_timer(POSITION_DELAY, self.remember_position)

    def remember_position(self) -> None:
        """Keep the current item's id in the workspace, so the next open starts here."""
        self._position_timer = None
        item = self.current
        if item is None or item.id == self._stored_position:
            return
        try:
            store_position(self.project.workspace, self.project.annotator, item.id)
        except (sqlite3.ProgrammingError, WorkspaceError):
            return  # a reload closed this workspace first, or it is read-only or busy: a place to resume is no data
        self._stored_position = item.id

    def action_next_unvoted(self) -> None:
        rows, cursor = self.item_list.rows, self.item_list.cursor
        for step in range(1, len(rows) + 1):
            index = (cursor + step) % len(rows)
            if not has_voted(self.project, self.project.items[rows[index]].id):
                if index <= cursor:
                    self.notify("wrapped round to the top", timeout=2)
                self._go(lambda index=index: self.item_list.go(index))
                return
        where = f" among {self.filters.describe()}" if self.filters.active else ""
        self.notify(f"you have voted on every item{where}", timeout=3)

    def recount(self) -> None:
        """Count voted, edited and flagged items (after data changed, not on every move: O(items))."""
        project = self.project
        state = project.state
        self._counts = (
            sum(1 for item_id in state.votes if has_voted(project, item_id)),
            len(state.edited),
            sum(1 for f in state.flags.values() if f),
        )

    def update_header(self) -> None:
        project = self.project
        item_list = self.item_list
        if self._counts is None:
            self.recount()
        voted, edited, flagged = self._counts  # type: ignore[misc]
        info = HeaderInfo(
            dataset=project.dataset.name,
            annotator=project.annotator,
            index=item_list.cursor + 1 if item_list.rows else 0,
            shown=len(item_list.rows),
            total=len(project.items),
            edited=edited,
            voted=voted,
            flagged=flagged,
            filters=self.filters.describe() if self.filters.active else "",
            bidi=str(getattr(self.app, "bidi_mode", "")),
            reviewer=getattr(self.app, "reviewer", False),
            warning=getattr(self.app, "disk_warning", ""),
            busy=self.busy,
            unsaved=bool(edited) and getattr(self.app, "unsaved", True),
        )
        self.header.show_info(info)

    # ------------------------------------------------------------- checks

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if self.editing is not None and action in MOVE_ACTIONS | EDIT_ACTIONS:
            return False
        if action in EDIT_ACTIONS and self.busy:
            return None  # shown, but greyed out until the save finishes
        return True

    # --------------------------------------------------------------- moving

    def action_next_item(self) -> None:
        self._go(lambda: self.item_list.move(1))

    def action_prev_item(self) -> None:
        self._go(lambda: self.item_list.move(-1))

    def action_page_down(self) -> None:
        self._go(lambda: self.item_list.page(1))

    def action_page_up(self) -> None:
        self._go(lambda: self.item_list.page(-1))

    def action_first_item(self) -> None:
        self._go(lambda: self.item_list.go(0))

    def action_last_item(self) -> None:
        self._go(lambda: self.item_list.go(len(self.item_list.rows) - 1))

    def action_focus_list(self) -> None:
        self.item_list.focus()

    def go_to_position(self, position: int) -> None:
        """Put the cursor on an item, clearing filters that hide it."""
        rows = self.item_list.rows
        if position not in rows:
            if self.filters.active:
                self.notify(f"cleared the filters ({self.filters.describe()}) to show that item", timeout=4)
            self.set_filters(Filters(), keep=position)
            rows = self.item_list.rows
        self.item_list.go(rows.index(position))

    def action_jump_to_id(self) -> None:
        def check(value: str) -> str | None:
            return None if value in self.project.index else f"no item with id '{value}'"

        def jump(value: str | None) -> None:
            if value:
                self.go_to_position(self.project.index[value])

        self.app.push_screen(TextPrompt("Go to id", "Type an item id exactly as in the file.", check=check), jump)

    # ------------------------------------------------------ filters & search

    def set_filters(self, filters: Filters, keep: int | None = None) -> None:
        """Apply ``filters`` and redraw the list, keeping the cursor on ``keep`` (or the current item)."""
        self.filters = filters
        keep = self.item_list.position if keep is None else keep
        ranked = self.search_result.positions if (filters.search and self.search_result) else None
        if not filters.active:
            rows: range | list[int] = range(len(self.project.items))
        else:
            rows = filtered_positions(self.session, filters, ranked)
        self.item_list.set_rows(rows, keep, self._empty_message())
        self.show_current()

    def refilter(self) -> None:
        """Recompute the rows after data changed (an item may have left or joined a queue)."""
        if self.filters.queue != "all" or self.filters.column is not None:
            self.set_filters(self.filters)

    def action_search(self) -> None:
        bar = self.query_one(SearchBar)
        bar.add_class("-open")
        bar.editor.focus()

    @on(FieldEditor.Changed, "#search-bar FieldEditor")
    def _search_typed(self, event: FieldEditor.Changed) -> None:
        event.stop()
        # Search once typing pauses, not on every key (each search reads every item).
        if self._search_timer is not None:
            self._search_timer.stop()
        value = event.value
        self._search_timer = self.set_timer(SEARCH_DELAY, lambda: self.run_search(value))

    @on(FieldEditor.Done, "#search-bar FieldEditor")
    def _search_done(self, event: FieldEditor.Done) -> None:
        event.stop()
        if self._search_timer is not None:
            self._search_timer.stop()
        if event.how == "cancel":
            self.clear_search()
        elif self.search_result is None or self.search_result.query != event.value:
            self.run_search(event.value)
        self.item_list.focus()

    def clear_search(self) -> None:
        bar = self.query_one(SearchBar)
        bar.remove_class("-open")
        bar.editor.load("", "search")
        self.search_result = None
        if self.filters.search:
            self.set_filters(Filters(self.filters.queue, self.filters.column, self.filters.value, ""))

    @work(thread=True, exclusive=True, group="search", description="run_search")
    def run_search(self, query: str) -> None:
        worker = get_current_worker()
        if not query.strip():
            self.app.call_from_thread(self.clear_search)
            return
        self.app.call_from_thread(self.set_busy, "searching")
        index = self.session.ensure_search_index()
        result = index.search(query)
        if not worker.is_cancelled:
            self.app.call_from_thread(self._search_finished, result)

    def _search_finished(self, result: SearchResult) -> None:
        self.search_result = result
        self.set_busy("")
        filters = Filters(self.filters.queue, self.filters.column, self.filters.value, result.query)
        self.set_filters(filters, keep=result.positions[0] if result.positions else None)
        if result.positions:
            self.item_list.go(0)
        self.notify(f"“{result.query}”: {result.exact} containing it, {result.fuzzy} similar", timeout=3)

    def action_search_next(self) -> None:
        self._to_match(1)

    def action_search_prev(self) -> None:
        self._to_match(-1)

    def _to_match(self, step: int) -> None:
        """The next or previous match (the list shows only matches while a search is on); say so when none is."""
        if self.search_result is None:
            self.notify("no search — / searches prompts and solutions", timeout=2)
            return
        self._go(lambda: self.item_list.move(step))

    def action_clear_filter(self) -> None:
        if self.filters.active or self.query_one(SearchBar).has_class("-open"):
            self.search_result = None
            bar = self.query_one(SearchBar)
            bar.remove_class("-open")
            bar.editor.load("", "search")
            self.set_filters(Filters())

    def action_filter(self) -> None:
        choices: list[tuple[str | None, str, str]] = [(None, "Queues", "")]
        for name, queue in QUEUES.items():
            if name == "invalid" and not self.session.validation.complete:
                count = "checking…"
            else:
                count = str(len(filtered_positions(self.session, Filters(queue=name))))
            current = "  ← now" if self.filters.queue == name else ""
            choices.append((f"queue:{name}", f"{name} ({count})", queue.help + current))
        for column, values in self.session.categorical_columns().items():
            choices.append((None, column, ""))
            for value, count in values:
                choices.append((f"column:{column}\x1f{value}", f"{value or '(empty)'} ({count})", ""))
        if self.filters.column is not None:
            choices.append((None, "", ""))
            choices.append(("column-clear", "any value of every column", "drop the column filter"))

        def chosen(key: str | None) -> None:
            if key is None:
                return
            f = self.filters
            if key.startswith("queue:"):
                self.set_filters(Filters(key[6:], f.column, f.value, f.search))
            elif key.startswith("column:"):
                column, _, value = key[7:].partition("\x1f")
                self.set_filters(Filters(f.queue, column, value, f.search))
            elif key == "column-clear":
                self.set_filters(Filters(f.queue, None, None, f.search))

        self.app.push_screen(
            ChoiceDialog("Filter", "Show only items in a queue, or with one value of a column.", choices), chosen
        )

    # ---------------------------------------------------------------- fields

    def _select_field(self, step: int) -> None:
        names = [f.name for f in self.fields]
        if not names:
            return
        current = self.item_view.selected
        index = names.index(current) if current in names else 0
        self.item_view.select(names[(index + step) % len(names)])

    @on(FieldClicked)
    def _field_clicked(self, event: FieldClicked) -> None:
        event.stop()
        if self.editing is not None:
            return
        self.item_view.select(event.field)
        if event.edit:
            self.action_edit_field()

    def action_next_field(self) -> None:
        self._select_field(1)

    def action_prev_field(self) -> None:
        self._select_field(-1)

    def action_edit_field(self) -> None:
        item = self.current
        if item is None:
            return
        field = self.item_view.selected
        if field == "label":
            self._edit_label(item)
            return
        value = self.project.state.notes.get(item.id, "") if field == "note" else field_value(item, field)
        editor = self.item_view.block(field).start_edit(value)
        self.editing = field
        self.refresh_bindings()
        self.call_after_refresh(editor.focus)

    def action_edit_label(self) -> None:
        self.item_view.select("label")
        self.action_edit_field()

    def action_edit_note(self) -> None:
        self.item_view.select("note")
        self.action_edit_field()

    def _edit_label(self, item: Item) -> None:
        if getattr(self.app, "gold_hidden", lambda item: False)(item):
            self.notify(
                "blind mode: vote on this item first to see and set its gold label (or start with --reviewer)",
                timeout=4,
            )
            return
        label = self.item_view.query_one(LabelLine)
        chooser = LabelChooser(len(item.solutions), item.label, id="label-chooser")
        label.display = False
        self.item_view.mount(chooser, after=label)
        self.editing = "label"
        self.refresh_bindings()
        self.call_after_refresh(chooser.focus)

    @on(LabelChooser.Done)
    def _label_done(self, event: LabelChooser.Done) -> None:
        event.stop()
        event.chooser.remove()
        self.item_view.query_one(LabelLine).display = True
        self.editing = None
        self.refresh_bindings()
        item = self.current
        if event.how == "commit" and item is not None:
            self.apply_edit(item, {"label": event.value})
        self.item_list.focus()

    @on(FieldEditor.Changed, "ItemView FieldEditor")
    def _field_typed(self, event: FieldEditor.Changed) -> None:
        event.stop()
        item = self.current
        if item is None or event.editor.field == "note":
            return
        candidate = with_field(item, event.editor.field, event.value)
        self.item_view.preview(candidate, self.session.validation.candidate(candidate))

    @on(FieldEditor.Done, "ItemView FieldEditor")
    def _field_done(self, event: FieldEditor.Done) -> None:
        event.stop()
        field = event.editor.field
        item = self.current
        self.item_view.block(field).stop_edit()
        self.editing = None
        self.refresh_bindings()
        if item is None:
            return
        if event.how == "external":
            self.app.call_later(self._external_edit, item, field, event.value)
            return
        if event.how != "cancel":
            self.save_field(item, field, event.value)
        else:
            self.show_current()
        if event.how in ("next", "prev"):
            self._select_field(1 if event.how == "next" else -1)
            if self.item_view.selected != "label":
                self.action_edit_field()
                return
        self.item_list.focus()

    def save_field(self, item: Item, field: str, value: str) -> None:
        """Record a field's new text (a note goes to the notes, the rest is an undoable edit)."""
        if field == "note":
            if value != self.project.state.notes.get(item.id, ""):
                self.app.pending.record(
                    f"the note on {item.id}",
                    lambda: self.project.set_note(item.id, value),
                    lambda _: self.after_change([item.id]),
                )
            return
        self.apply_edit(item, {field: value})

    def apply_edit(self, item: Item, changes: dict[str, str]) -> None:
        """Record an edit; one that would leave votes on a changed text asks first."""
        lost = self.project.votes_invalidated(item.id, changes)
        blind = not may_see_answers(self.project, item.id, getattr(self.app, "reviewer", False))
        if blind and any(name.startswith("solution") for name in changes):  # ask whatever the votes, naming none
            lost = [a for a, v in self.project.state.votes.get(item.id, {}).items() if v.choice.isdigit()]
        if not lost:
            self._record_edit(item, changes)
            return
        whose = (
            "Votes on this item may have chosen"
            if blind
            else f"{len(lost)} vote(s) on {item.id} ({', '.join(lost)}) chose"
        )
        message = (
            f"{whose} the text you changed. They will count as cast on an earlier version "
            "(the item needs votes again) until the annotators vote again."
        )
        choices = [("edit", "Edit and mark those votes as cast on an earlier version", ""), ("cancel", "Cancel", "")]
        self.app.push_screen(
            ChoiceDialog("Votes predate this edit", message, choices),
            lambda answer: self._record_edit(item, changes) if answer == "edit" else self.show_current(),
        )

    def _record_edit(self, item: Item, changes: dict[str, str]) -> None:
        self.app.pending.record(
            f"the edit of {item.id}",
            lambda: self.project.edit(item.id, changes),
            lambda _: self.after_change([item.id]),
        )

    def action_external_editor(self) -> None:
        item = self.current
        if item is None:
            return
        field = self.item_view.selected
        if field == "label":
            self.notify("the label is chosen, not typed: press e or l", timeout=3)
            return
        value = self.project.state.notes.get(item.id, "") if field == "note" else field_value(item, field)
        self.app.call_later(self._external_edit, item, field, value)

    async def _external_edit(self, item: Item, field: str, value: str) -> None:
        edited = await self.app.edit_externally(value, f"{item.id}-{field}")
        if edited is None:
            self.show_current()
            return
        self.save_field(item, field, edited)

    def action_swap_solutions(self) -> None:
        item = self.current
        if item is None or len(item.solutions) < 2:
            return
        selected = self.item_view.selected
        a = int(selected[8:]) if selected.startswith("solution") else 0
        b = (a + 1) % len(item.solutions)

        def swapped(_: object) -> None:
            self.after_change([item.id])
            self.notify(f"swapped solutions {a + 1} and {b + 1} (and the label with them)", timeout=3)

        self.app.pending.record(f"the swap on {item.id}", lambda: self.project.swap_solutions(item.id, a, b), swapped)

    def action_copy_field(self) -> None:
        item = self.current
        if item is None:
            return
        field = self.item_view.selected
        if field == "label" and self.app.gold_hidden(item):
            self.notify("the gold label stays hidden until you have voted on this item", severity="warning", timeout=3)
            return
        value = self.project.state.notes.get(item.id, "") if field == "note" else field_value(item, field)
        self.app.copy_to_clipboard(value)
        self.notify(f"copied the {field} ({len(value)} characters, as stored)", timeout=3)

    # ------------------------------------------------------------ undo/redo

    def action_undo(self) -> None:
        self._undo_redo("undo")

    def action_redo(self) -> None:
        self._undo_redo("redo")

    def _undo_redo(self, which: str) -> None:
        self.app.pending.record(
            which,
            self.project.undo if which == "undo" else self.project.redo,
            lambda item_id: self._undone(which, item_id),
        )  # type: ignore[arg-type]

    def _undone(self, which: str, item_id: str | None) -> None:
        if item_id is None:
            self.notify(f"nothing to {which}", timeout=2)
            return
        self.after_change([item_id] if item_id else [])
        if item_id in self.project.index:  # "": a decision on no single item (a cluster marked distinct)
            self.go_to_position(self.project.index[item_id])
        self.notify(f"{which} on {item_id or 'a duplicate cluster'}", timeout=2)

    # ---------------------------------------------------------- data changed

    def after_change(self, item_ids: Iterable[str]) -> None:
        """Redraw after the project changed (by us or another process)."""
        ids = list(item_ids)
        self.session.items_changed(ids)
        self.recount()
        if hasattr(self.app, "unsaved"):
            self.app.unsaved = True
        self.item_list.invalidate()
        self.refilter()
        self.show_current()

    def marks_changed(self) -> None:
        """Decisions that only marks and counts show changed (duplicate clusters resolved)."""
        self.recount()
        self.item_list.invalidate()
        self.refilter()

    def set_busy(self, text: str) -> None:
        self.busy = text
        self.refresh_bindings()
        self.update_header()

    # ---------------------------------------------------------- app actions

    def action_save(self) -> None:
        self.app.save_dataset()

    def action_export(self) -> None:
        self.app.export_dataset()

    def action_cycle_bidi(self) -> None:
        self.app.cycle_bidi()

    def action_cycle_direction(self) -> None:
        field = self.item_view.selected
        if field == "label":
            self.notify("select a text field (tab) to set its direction", timeout=3)
            return
        self._cycle_direction(column_of(field), self.session.directions.of(field))

    def action_cycle_dataset_direction(self) -> None:
        self._cycle_direction(None, self.session.directions.dataset)

    def _cycle_direction(self, column: str | None, now: Direction) -> None:
        """Set the next direction for ``column`` (``None``: the dataset), redraw, and say what it is."""
        direction = DIRECTION_CYCLE[(DIRECTION_CYCLE.index(now) + 1) % len(DIRECTION_CYCLE)]
        kept = ""
        try:
            self.session.set_direction(column, direction)
        except WorkspaceError as exc:
            kept = f" (for this session only: {exc})"
        self.app.redraw_text()
        words = {
            Direction.AUTO: "auto (detected per paragraph)",
            Direction.RTL: "right-to-left",
            Direction.LTR: "left-to-right",
        }
        self.notify(f"{column or 'dataset'}: {words[direction]}{kept}", timeout=6 if kept else 3)

    def action_duplicates(self) -> None:
        from piqa_tui.tui.screens.duplicates import DuplicatesScreen

        self.app.push_screen(DuplicatesScreen(self.session), lambda _: self.show_current())

    # ------------------------------------------------- voting (controller)

    def action_vote(self, choice: int) -> None:
        self.voting.vote(choice)

    def action_vote_unsure(self) -> None:
        self.voting.vote_unsure()

    def action_withdraw_vote(self) -> None:
        self.voting.withdraw()

    def action_flag(self) -> None:
        self.voting.flag()

    def action_agreement(self) -> None:
        self.voting.agreement()

    def action_adjudicate(self) -> None:
        self.voting.adjudicate()

    def action_set_policy(self) -> None:
        self.voting.set_policy()

    def show_votes(self, item: Item) -> None:
        """Fill the vote lines of the item view (what blind mode allows)."""
        if self._vote_panel is None:
            self._vote_panel = self.item_view.query_one(VotePanel)
        self._vote_panel.show_summary(self.session.ballots.summary(item))

    # ------------------------------------------------ scoring (controller)

    def action_score_item(self) -> None:
        self.scoring.score_item()

    def action_score_all(self) -> None:
        self.scoring.score_all()

    def action_cancel_scoring(self) -> None:
        if self.editing is not None or not self.scoring.cancel():
            raise SkipAction()  # escape then clears the filters, as it does without a run

    def action_model_results(self) -> None:
        from piqa_tui.tui.screens.model_results import ModelResultsScreen

        self.app.push_screen(ModelResultsScreen(self.session), lambda _: self.show_current())

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
                gold_hidden=self.app.gold_hidden(item) if hasattr(self.app, "gold_hidden") else False,
                votes=tuple(item_choices(self.project, item.id).values()) if visible else (),
                decided=decision.label if decision is not None else None,
                template=model.template.name,
            )
        )

    # ------------------------------------------------- host of the controllers

    def advance(self) -> None:
        self.item_list.move(1)

    def record(self, what: str, attempt: Callable[[], object], done: Callable[[object], None]) -> None:
        self.app.pending.record(what, attempt, done)

    def push_screen(self, screen: Any, callback: Callable[[Any], object] | None = None) -> Any:
        return self.app.push_screen(screen, callback)

    def launch(self, work: Callable[[], None], *, group: str, exclusive: bool) -> None:
        # A fixed description: Textual's default is the repr of the callable's arguments.
        self.run_worker(work, group=group, exclusive=exclusive, thread=True, description=group)

    def deliver(self, callback: Callable[..., object], *args: object) -> None:
        self.call_later(callback, *args)  # thread-safe: posts to this screen's queue

    @property
    def strip(self) -> ProgressStrip:
        return self.query_one(ProgressStrip)

    def scores_changed(self, refilter: bool) -> None:
        self.item_list.invalidate()
        if refilter:
            self.refilter()
        self.show_current()
        if self.app.screen is not self:
            self.app.screen.post_message(ScoresChanged())  # the results screen follows a run

    def redraw_score(self, item_id: str) -> None:
        item = self.current
        if item is not None and item.id == item_id:
            self.show_model_score(item)
