"""The browse-and-edit screen: the item list on the left, the current item on the right.

The screen is a composition: it lays out the list, the item view, the
header and the search bar, turns each key into one call on a controller
(``tui/controllers``: editing, filtering and search, files, voting, scoring,
authoring, display) or on its field editors (``fields.py``), and redraws from
the session after every change (``view.py``). The controllers reach it
through ``MainHost`` (``host.py``); the app reaches it only with messages
(``tui/messages.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from textual import events, on
from textual.actions import SkipAction
from textual.app import ComposeResult
from textual.binding import ActiveBinding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Footer, Static

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.round.recorded import assigned_to
from piqa_tui.tui.keymap import (
    MAIN_ACTIONS,
    SCORING_ACTIONS,
    SUGGEST_ACTIONS,
    VOTE_ACTIONS,
    action_names,
    bindings,
)
from piqa_tui.tui.messages import (
    Checked,
    DisplayChanged,
    ItemsChanged,
    MarksChanged,
    OthersChanged,
    ShowItem,
    Synced,
    Watch,
)
from piqa_tui.tui.screens.main.host import MainHost
from piqa_tui.tui.state.listing import Filters, filtered_positions
from piqa_tui.tui.state.session import Session
from piqa_tui.tui.widgets.item.field_block import FieldClicked
from piqa_tui.tui.widgets.item.field_editor import FieldEditor
from piqa_tui.tui.widgets.item.item_view import ItemView
from piqa_tui.tui.widgets.item.label_line import LabelChooser
from piqa_tui.tui.widgets.list.item_list import ItemList
from piqa_tui.tui.widgets.list.search_bar import SearchBar
from piqa_tui.tui.widgets.progress_strip import ProgressStrip
from piqa_tui.tui.widgets.status_header import StatusHeader

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
    "new_item",
    "next_stage",
    "give_item",
    "suggest_correction",
    "suggest_distractor",
    "suggest_translation",
    "keep_suggestion",
    "reject_suggestion",
    "review_suggestions",
    "save",
    "export",
}
# Actions that move: off while a field is edited (their keys type text there).
MOVE_ACTIONS = action_names(MAIN_ACTIONS) - {"save", "export", "copy_field", "focus_list"} | action_names(VOTE_ACTIONS)
MOVE_ACTIONS |= {"score_item", "score_all", "model_results"} | action_names(SUGGEST_ACTIONS)
# What works on a preview of a large file's first rows: moving among them, selecting and copying a field.
WHILE_LOADING = {"next_item", "prev_item", "page_down", "page_up", "first_item", "focus_list"}
WHILE_LOADING |= {"next_field", "prev_field", "copy_field", "quit", "help_quit"}


def calls(pick: Callable[[MainScreen], Callable[..., object]], *args: object) -> Callable[..., None]:
    """An action method that calls what ``pick`` chooses (a controller's method) with ``args`` and the action's own."""

    def action(self: MainScreen, *params: object) -> None:
        pick(self)(*args, *params)

    return action


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

    ACTIONS = MAIN_ACTIONS + VOTE_ACTIONS + SCORING_ACTIONS + SUGGEST_ACTIONS  # the palette's order
    # Scoring first: its escape (cancel a run) steps aside for clear_filter when no run goes on.
    BINDINGS = bindings(SCORING_ACTIONS + MAIN_ACTIONS + VOTE_ACTIONS + SUGGEST_ACTIONS)
    AUTO_FOCUS = "#item-list"

    host: MainHost  # the controllers and the view, as the routes below reach them

    # Keys that are one call on a controller, the view or the host.
    action_jump_to_id = calls(lambda screen: screen.host.filtering.jump_to_id)
    action_next_unvoted = calls(lambda screen: screen.host.filtering.next_unvoted)
    action_search_next = calls(lambda screen: screen.host.filtering.to_match, 1)
    action_search_prev = calls(lambda screen: screen.host.filtering.to_match, -1)
    action_filter = calls(lambda screen: screen.host.filtering.choose_filter)
    action_undo = calls(lambda screen: screen.host.editing.undo)
    action_redo = calls(lambda screen: screen.host.editing.redo)
    action_save = calls(lambda screen: screen.host.files.save)
    action_export = calls(lambda screen: screen.host.files.export)
    action_vote = calls(lambda screen: screen.host.voting.vote)
    action_vote_unsure = calls(lambda screen: screen.host.voting.vote_unsure)
    action_withdraw_vote = calls(lambda screen: screen.host.voting.withdraw)
    action_flag = calls(lambda screen: screen.host.voting.flag)
    action_agreement = calls(lambda screen: screen.host.voting.agreement)
    action_adjudicate = calls(lambda screen: screen.host.voting.adjudicate)
    action_set_policy = calls(lambda screen: screen.host.voting.set_policy)
    action_questions = calls(lambda screen: screen.host.voting.questions)
    action_score_item = calls(lambda screen: screen.host.scoring.score_item)
    action_score_all = calls(lambda screen: screen.host.scoring.score_all)
    action_model_results = calls(lambda screen: screen.host.open_model_results)
    action_duplicates = calls(lambda screen: screen.host.open_duplicates)
    action_new_item = calls(lambda screen: screen.host.authoring.new_item)
    action_suggest_correction = calls(lambda screen: screen.host.suggesting.suggest, "correct")
    action_suggest_distractor = calls(lambda screen: screen.host.suggesting.suggest, "distractor")
    action_suggest_translation = calls(lambda screen: screen.host.suggesting.suggest, "fill")
    action_next_stage = calls(lambda screen: screen.host.authoring.next_stage)
    action_give_item = calls(lambda screen: screen.host.assigning.give)
    action_keep_suggestion = calls(lambda screen: screen.host.authoring.decide_suggestion, True)
    action_reject_suggestion = calls(lambda screen: screen.host.authoring.decide_suggestion, False)
    action_review_suggestions = calls(lambda screen: screen.host.suggesting.review_stored)
    action_next_field = calls(lambda screen: screen.host.view.select_field, 1)
    action_prev_field = calls(lambda screen: screen.host.view.select_field, -1)
    action_next_item = calls(lambda screen: screen.host.view.step, 1)
    action_prev_item = calls(lambda screen: screen.host.view.step, -1)
    action_page_down = calls(lambda screen: screen.host.view.page, 1)
    action_page_up = calls(lambda screen: screen.host.view.page, -1)
    action_first_item = calls(lambda screen: screen.host.view.go_to_end, 0)
    action_last_item = calls(lambda screen: screen.host.view.go_to_end, -1)
    action_focus_list = calls(lambda screen: screen.host.view.item_list.focus)
    action_search = calls(lambda screen: screen.host.open_search)
    action_edit_field = calls(lambda screen: screen.host.fields.edit_selected)
    action_edit_label = calls(lambda screen: screen.host.fields.edit, "label")
    action_edit_note = calls(lambda screen: screen.host.fields.edit, "note")
    action_external_editor = calls(lambda screen: screen.host.fields.external_editor)
    action_resolve_conflict = calls(lambda screen: screen.host.fields.resolve_conflict)
    action_swap_solutions = calls(lambda screen: screen.host.fields.swap)
    action_copy_field = calls(lambda screen: screen.host.fields.copy)
    action_cycle_bidi = calls(lambda screen: screen.host.display.cycle_bidi)
    action_cycle_direction = calls(lambda screen: screen.host.display.cycle_field_direction)
    action_cycle_dataset_direction = calls(lambda screen: screen.host.display.cycle_dataset_direction)

    def __init__(self, session: Session, start: int | None = None) -> None:
        super().__init__()
        self.session = session
        self.project = session.project
        self._start = start  # the position to open at (where the annotator left off)
        self.host = MainHost(self, session)
        self._saving_left_to_lead: bool | None = None  # asked when the footer is first drawn
        self.view = self.host.view
        self.edits, self.filtering, self.files = self.host.editing, self.host.filtering, self.host.files
        self.voting, self.scoring, self.fields = self.host.voting, self.host.scoring, self.host.fields

    # ---------------------------------------------------------------- layout

    def compose(self) -> ComposeResult:
        yield StatusHeader(id="header")
        with Horizontal(id="body"):
            yield ItemList(self.project.items, self.view.marks, id="item-list")
            yield ItemView(self.project.dataset, id="item-view")
        yield ProgressStrip(id="scoring-strip")
        yield SearchBar(id="search-bar")
        yield Static(id="too-small", markup=False)
        yield Footer(compact=True)

    @property
    def item_list(self) -> ItemList:
        return self.view.item_list

    @property
    def item_view(self) -> ItemView:
        return self.view.item_view

    @property
    def current(self) -> Item | None:
        return self.view.current

    @property
    def busy(self) -> str:
        return self.session.busy

    @property
    def editing(self) -> str | None:
        """The field whose editor is open (None: none is)."""
        return self.fields.editing

    def on_mount(self) -> None:
        self.on_resize()
        if self.session.loading:  # a preview: nothing stored to read, and the rest of the file waits for its paint
            self.call_after_refresh(self._painted)
        else:
            self.scoring.load_cached()
        if assigned_to(self.project) and filtered_positions(self.session, Filters(queue="assigned")):
            self.call_after_refresh(self._open_assigned)
        elif self._start is not None:
            self.call_after_refresh(self.filtering.go_to_position, self._start)

    def _open_assigned(self) -> None:
        """A round gave this annotator items they have not voted on: open on those (where they left off when
        it is one of them)."""
        self.filtering.set_filters(Filters(queue="assigned"), keep=self._start)
        self.notify("your assigned items not yet voted on — v goes to the next; esc shows every item", timeout=4)

    def on_unmount(self) -> None:
        self.scoring.stop()
        self.host.suggesting.stop()
        self.view.remember_position()  # quitting within POSITION_DELAY of a move still remembers it

    def on_resize(self) -> None:
        width, height = self.app.size
        small = width < MIN_WIDTH or height < MIN_HEIGHT
        self.set_class(small, "-too-small")
        self.set_class(width < NARROW_WIDTH, "-narrow")  # the list takes more of a small screen
        if small:
            self.query_one("#too-small", Static).update(
                f"The terminal is {width:d}×{height:d}.\npiqa-tui needs at least {MIN_WIDTH:d}×{MIN_HEIGHT:d}:\n"
                "make the window larger or the font smaller."
            )

    @property
    def active_bindings(self) -> dict[str, ActiveBinding]:
        """The keys the footer shows: a validator in a team round is not offered ``^s save`` there (the key
        still asks first, ``FilesController.save``); asked once per screen, as a round is declared before work."""
        found = super().active_bindings
        if self._saving_left_to_lead is None:
            self._saving_left_to_lead = self.host.files.leaves_saving_to_the_lead()
        if not self._saving_left_to_lead:
            return found
        return {
            key: active._replace(binding=replace(active.binding, show=False))
            if active.binding.action == "save"
            else active
            for key, active in found.items()
        }

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if self.session.loading and action not in WHILE_LOADING:
            return False  # a preview: only moving works until every item is read
        if self.editing is not None and action in MOVE_ACTIONS | EDIT_ACTIONS:
            return False
        if action in EDIT_ACTIONS and self.session.busy:
            return None  # shown, but greyed out until the save finishes
        return True

    def on_key(self, event: events.Key) -> None:
        """On a preview, a key bound to anything but moving says why it does nothing (it is dropped, not kept)."""
        if not self.session.loading:
            return
        for _, keys in self._modal_binding_chain:
            for binding in keys.key_to_bindings.get(event.key, ()):
                if binding.action.split("(")[0] not in WHILE_LOADING:
                    event.stop()
                    event.prevent_default()
                    self.refuse_while_loading(binding.description or binding.action)
                    return

    def refuse_while_loading(self, what: str) -> None:
        self.notify(
            f"{self.session.loading}: '{what}' works once every item is read; moving works now",
            severity="warning",
            timeout=3,
        )

    def _painted(self) -> None:
        """Tell the opening worker once a preview's item and footer keys are drawn: it then reads the rest of the
        file (in a thread, but it holds the interpreter most of the time: drawing would wait for it)."""
        if self.is_attached and (self.view.current is None or not self.query_one(Footer).children):
            self.call_after_refresh(self._painted)
        else:
            self.call_after_refresh(self.session.painted.set)

    # ------------------------------------------------------ what others say

    @on(ItemList.Moved)
    def _moved(self, event: ItemList.Moved) -> None:
        self.view.moved()

    @on(ItemsChanged)
    @on(OthersChanged)
    def _items_changed(self, message: ItemsChanged | OthersChanged) -> None:
        message.stop()  # handled here: it must not bubble back to the app that passed it on
        self.host.after_change(message.item_ids)

    @on(MarksChanged)
    def _marks_changed(self, message: MarksChanged) -> None:
        message.stop()
        self.view.recount()
        self.item_list.invalidate()
        self.filtering.refilter()

    @on(Checked)
    def _checked(self, message: Checked) -> None:
        message.stop()
        self.item_list.invalidate()
        self.filtering.refilter()

    @on(ShowItem)
    def _show_item(self, message: ShowItem) -> None:
        message.stop()
        self.filtering.go_to_position(message.position)

    @on(Synced)
    def _synced(self, message: Synced) -> None:
        message.stop()
        self.view.update_header()

    @on(Watch)
    def _watch(self, message: Watch) -> None:
        message.stop()
        self.scoring.watch_stored()  # scores another process (piqa-tui score) stored meanwhile
        self.files.watch()

    @on(DisplayChanged)
    def _display_changed(self, message: DisplayChanged) -> None:
        message.stop()
        self.item_list.invalidate()
        self.view.show_current()

    # ------------------------------------------------------ filters & search

    @on(SearchBar.Search)
    def _search(self, message: SearchBar.Search) -> None:
        self.filtering.search(message.query)

    @on(SearchBar.Done)
    def _search_done(self, message: SearchBar.Done) -> None:
        if message.how == "cancel":
            self.filtering.clear_search()
        elif not self.filtering.searched(message.query):
            self.filtering.search(message.query)
        self.item_list.focus()

    def action_clear_filter(self) -> None:
        self.filtering.clear(self.query_one(SearchBar).is_open)

    # ------------------------------------------------------- field editors

    @on(FieldClicked)
    def _field_clicked(self, event: FieldClicked) -> None:
        event.stop()
        if self.fields.select(event.field) and event.edit:
            if self.session.loading:
                self.refuse_while_loading("edit")
            else:
                self.fields.edit_selected()

    @on(LabelChooser.Done)
    def _label_done(self, event: LabelChooser.Done) -> None:
        event.stop()
        self.fields.label_done(event)

    @on(FieldEditor.Changed, "ItemView FieldEditor")
    def _field_typed(self, event: FieldEditor.Changed) -> None:
        event.stop()
        self.view.preview(event.editor.field, event.value)

    @on(FieldEditor.Done, "ItemView FieldEditor")
    def _field_done(self, event: FieldEditor.Done) -> None:
        event.stop()
        self.fields.field_done(event)

    # ------------------------------------------------- voting and scoring

    def action_cancel_scoring(self) -> None:
        if self.editing is not None or not self.scoring.cancel():
            raise SkipAction()  # escape then clears the filters, as it does without a run
