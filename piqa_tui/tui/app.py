"""The piqa-tui application: opens the dataset off the UI thread and runs the screens.

App-wide work lives here: themes and the keymap, opening (and reopening) the
dataset into a ``Session``, checking every item in the background, and
watching the workspace for other annotators' events. The app tells the main
screen what happened with messages (``tui/messages.py``) and never calls a
screen's methods; saving, exporting and the file changing on disk belong to
the main screen's files controller.
"""

from __future__ import annotations

import sqlite3
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rich.console import RenderableType
from textual import events, work
from textual.app import App
from textual.binding import Binding
from textual.message import Message
from textual.notifications import SeverityLevel
from textual.worker import get_current_worker

from piqa_tui.core.dataset.capacity import shown_solutions
from piqa_tui.core.dataset.checks import labels_look_one_based
from piqa_tui.core.dataset.item import Item
from piqa_tui.core.dataset.layout import Layout, format_mapping
from piqa_tui.core.dataset.reading import peek_rows
from piqa_tui.core.errors import LayoutError, PiqaError
from piqa_tui.core.text.bidi import BidiMode
from piqa_tui.core.text.bidi_mode import set_screen_mode
from piqa_tui.core.text.terminal_safe import clipboard_safe
from piqa_tui.core.workspace.log import checkpoint_file, default_location, storage_error
from piqa_tui.core.workspace.preferences import resume_position
from piqa_tui.render.safe_text import markup_safe, shown
from piqa_tui.tui.commands import ActionCommands
from piqa_tui.tui.controllers.sync import SyncController
from piqa_tui.tui.dialogs.mapping import MappingDialog
from piqa_tui.tui.keymap import APP_ACTIONS, Action, bindings
from piqa_tui.tui.messages import (
    Checked,
    DisplayChanged,
    ItemsChanged,
    MarksChanged,
    OthersChanged,
    Reopen,
    ShowItem,
    Synced,
    Watch,
)
from piqa_tui.tui.screens.check_terminal import CheckTerminalScreen
from piqa_tui.tui.screens.loading import LoadingScreen
from piqa_tui.tui.screens.main import MainScreen
from piqa_tui.tui.state.model_scores import LOW_MARGIN
from piqa_tui.tui.state.session import OpenRequest, Session
from piqa_tui.tui.terminal.guard import ControlCharacterFilter
from piqa_tui.tui.terminal.type_ahead import TypeAhead
from piqa_tui.tui.themes import THEMES
from piqa_tui.tui.widgets.item.field_editor import FieldEditor
from piqa_tui.tui.widgets.item.label_line import LabelChooser

POLL_SECONDS = 2.0
CHECKPOINT_SECONDS = 60.0  # a long session copies the WAL into the .sqlite file this often
CHECK_DELAY = 0.5
PREVIEW_WAIT = 1.0  # seconds the whole read waits at most for a preview of the first rows to be drawn
SYNC_MINUTE = 60.0  # seconds in a minute of ``sync_every_minutes`` (the tests make it short)
USER_ACTIVE = 0.5  # background checks pause this long after each key or click


@dataclass
class AppSettings:
    """What launch() resolved from the command line and the config file."""

    request: OpenRequest | None
    bidi_mode: BidiMode = BidiMode.APP
    theme: str = "piqa-dark"
    keys: dict[str, str] = field(default_factory=dict)
    reviewer: bool = False
    low_margin: float = LOW_MARGIN  # nats: the low-margin queue's threshold (config ``low_margin``)
    check_terminal: bool = False
    sync_every_minutes: int = 0  # config ``sync_every_minutes``: sync with the team this often (0: only by key)
    warnings: list[str] = field(default_factory=list)


TOAST_CELLS = 60  # a toast's width (Textual's own), at most the screen's less the rack's scrollbar
TOAST_FRAME = 3  # a toast's padding (1 each side) and its coloured left border (1)
TOAST_RACK_SCROLLBAR = 2  # the toast rack scrolls (overflow-y: scroll): its scrollbar's cells


class PiqaApp(App[None]):
    """Curate a PIQA-style dataset: browse, search, filter, edit, save."""

    TITLE = "piqa-tui"
    BINDINGS = bindings(APP_ACTIONS)
    COMMANDS = App.COMMANDS | {ActionCommands}
    CSS = f"""
    Screen {{
        background: $background;
    }}
    Toast {{
        width: {TOAST_CELLS};
        max-width: 70;
        padding: 1 1;  /* with its 1-cell border: TOAST_FRAME */
    }}
    """

    def __init__(self, settings: AppSettings) -> None:
        super().__init__()
        # Textual keeps its line filters in a private list; ours drops any control byte data brought.
        self._filters.append(ControlCharacterFilter())
        self.settings = settings
        self.session: Session | None = None
        self.error_message: str | None = None
        self.exit_note: str | None = None
        self.last_input = 0.0
        self.exiting = False  # set by exit(): keys and late workers then change nothing
        self.syncs = SyncController(self)
        self.type_ahead = TypeAhead(self, self._deliver)

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """A toast whose text (often naming data: ids, columns, file names) is shown literally, laid out by the
        bidi display (``render.safe_text.shown``): an Arabic column value in it reads right to left, shaped."""
        safe = markup_safe if markup else shown
        # In --bidi app a long right-to-left line is wrapped to the toast's width before it is reordered:
        # Textual would wrap the reordered string and show the end of the sentence first.
        screen = self.size.width or TOAST_CELLS + TOAST_RACK_SCROLLBAR  # 0 before the first frame
        room = min(TOAST_CELLS, screen - TOAST_RACK_SCROLLBAR) - TOAST_FRAME
        text = safe(message, width=max(8, room))
        super().notify(text, title=safe(title), severity=severity, timeout=timeout, markup=markup)

    def copy_to_clipboard(self, text: str) -> None:
        """Copy without control characters: an ESC sequence in the data must not reach the terminal or a paste."""
        super().copy_to_clipboard(clipboard_safe(text)[0])

    async def on_event(self, event: events.Event) -> None:
        if self.exiting and isinstance(event, (events.InputEvent, events.Paste)):
            return  # keys typed after quit would push screens or mount widgets on an app being torn down
        if isinstance(event, (events.Key, events.MouseDown, events.MouseScrollDown, events.MouseScrollUp)):
            self.last_input = time.monotonic()
        if isinstance(event, (events.Key, events.Paste)) and not event.is_forwarded:
            await self.type_ahead.arrive(event)  # from the terminal: in order, each once the app is done with the last
            return
        await super().on_event(event)

    async def _deliver(self, event: events.Key | events.Paste) -> None:
        """Textual's own handling of a key or paste the type-ahead passes on (none once the app is exiting)."""
        if not self.exiting:
            await super().on_event(event)

    # --------------------------------------------------------------- startup

    def run(self, *args: Any, **kwargs: Any) -> Any:
        """Run full screen, which needs a terminal on both ends: without one (a script, ``< /dev/null``,
        ``> file``) Textual would draw escape codes into the file and never see a key, spinning until killed.
        ``headless=True`` (snapshots, tests) needs none."""
        if not kwargs.get("headless") and not (sys.stdin.isatty() and sys.stdout.isatty()):
            ends = [name for name, f in (("stdin", sys.stdin), ("stdout", sys.stdout)) if not f.isatty()]
            which = " and ".join(ends) + (" are not terminals" if len(ends) == 2 else " is not a terminal")
            raise PiqaError(
                f"the TUI needs a terminal ({which}); run piqa-tui in a terminal (or over ssh -t), or use a "
                "subcommand for scripts (stats, validate, agree, export…)"
            )
        return super().run(*args, **kwargs)  # the value the app exits with (a snapshot's SVG)

    def on_mount(self) -> None:
        set_screen_mode(self.settings.bidi_mode)  # the one display path of the app's lines (core.text.bidi_mode)
        for theme in THEMES.values():
            self.register_theme(theme)
        self.theme = self.settings.theme
        if self.settings.keys:
            self.set_keymap(self.settings.keys)
        for warning in self.settings.warnings:
            self.notify(warning, severity="warning", timeout=10)
        if self.settings.check_terminal or self.settings.request is None:
            self.push_screen(CheckTerminalScreen(standalone=True))
            return
        self.push_screen(LoadingScreen(self.settings.request.path.name))
        self.open_dataset(self.settings.request)

    # Every worker names a fixed description: Textual's default is the repr of the
    # arguments, which for a list of 100,000 items took 0.7 s on the UI thread.
    @work(thread=True, exclusive=True, group="open", description="open_dataset")
    def open_dataset(self, request: OpenRequest, keep_id: str | None = None) -> None:
        try:
            bidi_mode = self.session.bidi_mode if self.session is not None else self.settings.bidi_mode
            reviewer, low_margin = self.settings.reviewer, self.settings.low_margin
            if self.session is None:
                self._preview(Session.preview(request, reviewer, low_margin, bidi_mode))
            session = Session.open(request, reviewer, low_margin, bidi_mode)
        except LayoutError as exc:
            if request.mapping is None:  # not mapped by hand: let the user map the columns here
                self.call_from_thread(self.ask_mapping, request, f"{exc}.", None, keep_id)
            else:
                self.call_from_thread(self._failed, str(exc))
            return
        except PiqaError as exc:
            self.call_from_thread(self._failed, str(exc))
            return
        except sqlite3.DatabaseError as exc:  # a damaged workspace: one line saying what to do, never a traceback
            where = Path(request.workspace) if request.workspace else default_location(request.path)
            self.call_from_thread(self._failed, str(storage_error(where, exc, "the dataset was not opened")))
            return
        self.call_from_thread(self._opened, session, keep_id)

    def _preview(self, preview: Session | None) -> None:
        """Show a large file's first rows (called from the opening worker), and wait until they are drawn: reading
        the rest then takes the interpreter, and the first screen would otherwise wait for it."""
        if preview is None or self.exiting:
            return
        self.call_from_thread(self._show_preview, preview)
        preview.painted.wait(PREVIEW_WAIT)

    def _show_preview(self, preview: Session) -> None:
        if self.exiting or self.session is not None:
            preview.painted.set()
            return
        start = preview.project.index.get(preview.start_id) if preview.start_id else None
        self.switch_screen(MainScreen(preview, start))

    def ask_mapping(self, request: OpenRequest, reason: str, layout: Layout | None, keep_id: str | None = None) -> None:
        """Show the mapping dialog; a chosen mapping reopens the dataset with it and keeps it in the workspace."""
        if self.exiting:
            return
        try:
            columns, rows = peek_rows(request.path)
        except PiqaError as exc:
            self._failed(str(exc))
            return

        def chosen(mapping: dict[str, str] | None) -> None:
            if mapping is not None:
                self.open_dataset(replace(request, mapping=format_mapping(mapping), keep_mapping=True), keep_id)
            elif self.session is None:  # nothing open to go back to
                self._failed(
                    f"{reason} No mapping was chosen; map the columns with --map prompt=COL,solutions=COL|COL,label=COL"
                )

        self.push_screen(MappingDialog(columns, rows, reason, layout), chosen)

    def _ask_label_base(self, session: Session, keep_id: str | None) -> None:
        """Labels that look 1-based (none is solution 1, some are one past the last) get the dialog, once per mapping."""
        layout = session.project.dataset.layout
        if layout.explicit or not labels_look_one_based(session.project.items):
            return
        reason = (
            f"No gold label points to solution 1 and some point past the last solution: the labels of "
            f"{session.project.dataset.name} look 1-based. Check the label base (and the columns) in the preview; "
            "saving keeps the mapping in the workspace."
        )
        self.ask_mapping(session.request, reason, replace(layout, label_base=1), keep_id)

    def exit(self, result: None = None, return_code: int = 0, message: RenderableType | None = None) -> None:
        """Exit, and from now on ignore input and opened datasets: nothing may mount while the screens close."""
        self.exiting = True
        self.syncs.stop()  # a sync waiting on the network ends now: quitting never waits for git's time limits
        super().exit(result, return_code, message)

    def _failed(self, message: str) -> None:
        if self.session is None:
            self.error_message = message
            self.exit(return_code=2)
        else:
            self.notify(message, severity="error", timeout=10)

    def _opened(self, session: Session, keep_id: str | None) -> None:
        if self.exiting:  # quit while the dataset was still opening
            if session.project.workspace is not None:
                session.project.workspace.close()
            return
        first = self.session is None
        old, self.session = self.session, session
        set_screen_mode(session.bidi_mode)
        session.writes.attach(self)
        self.syncs.opened(session)
        if old is not None:
            old.writes.abandon()
        if old is not None and old.project.workspace is not None:
            self.workers.cancel_group(self, "validate")
            old.project.workspace.close()
        keep_id = (
            keep_id or self._previewed_id() or resume_position(session.project.workspace, session.project.annotator)
        )
        start = session.project.index.get(keep_id) if keep_id else None
        self.switch_screen(MainScreen(session, start))
        if session.project.file_changed:
            self.notify(session.project.file_changed, severity="warning", timeout=15)
        if session.notice:
            self.notify(session.notice, severity="warning", timeout=15)
        for line in session.arrived:  # the team's batches a fresh clone held, applied on opening
            self.notify(line, severity="warning" if "refused" in line or "not applied" in line else "information")
        self.call_after_refresh(self._ask_label_base, session, keep_id if start is not None else None)
        if first:
            self.set_interval(POLL_SECONDS, self.poll)
            self.set_interval(CHECKPOINT_SECONDS, self.checkpoint_workspace)
            if self.settings.sync_every_minutes:
                self.set_interval(self.settings.sync_every_minutes * SYNC_MINUTE, self.sync_on_timer)
        # Checking every item competes with drawing for the interpreter: start once the first screen is up.
        self.set_timer(CHECK_DELAY, lambda: self.check_in_background(session))

    def _previewed_id(self) -> str | None:
        """The item a preview of the first rows is on: where the whole file opens (the annotator may have moved)."""
        main = self.main_screen
        if main is None or not main.session.loading or not main.query("ItemList"):
            return None
        current = main.current
        return current.id if current is not None else None

    @work(thread=True, exclusive=True, group="validate", description="check_in_background")
    def check_in_background(self, session: Session) -> None:
        """Run validate's rules over every item (the `invalid` queue and marks), gather the
        categories and build the search index, while the user is not pressing keys."""
        worker = get_current_worker()

        def pause() -> None:
            # Python runs one thread at a time: while the user is pressing keys, this work waits.
            while time.monotonic() - self.last_input < USER_ACTIVE and not worker.is_cancelled:
                time.sleep(0.05)
            time.sleep(0.0005)

        def stop() -> bool:
            pause()
            return worker.is_cancelled

        if session.validation.check_all(stop) and not worker.is_cancelled:
            session.categorical_columns()
            self.call_from_thread(self._checked, session)
            session.ensure_search_index(pause)

    def _checked(self, session: Session) -> None:
        main = self.main_screen
        if main is not None and main.session is session:
            main.post_message(Checked())

    @property
    def main_screen(self) -> MainScreen | None:
        for screen in reversed(self.screen_stack):
            if isinstance(screen, MainScreen):
                return screen
        return None

    # ------------------------------------------------- what screens say

    def _to_main(self, message: Message) -> None:
        main = self.main_screen
        if main is not None:
            main.post_message(message)

    def on_items_changed(self, message: ItemsChanged) -> None:
        """A screen over the main one changed the project: the list, the item and the header follow."""
        self._to_main(ItemsChanged(message.item_ids))

    def on_marks_changed(self, message: MarksChanged) -> None:
        self._to_main(MarksChanged())

    def on_show_item(self, message: ShowItem) -> None:
        self._to_main(ShowItem(message.position))

    def on_reopen(self, message: Reopen) -> None:
        """Read the dataset again (the file changed on disk): recorded edits are replayed over it."""
        if self.session is not None and not self.exiting:
            self.push_screen(LoadingScreen(self.session.project.dataset.name))
            self.open_dataset(self.session.request, message.keep_id)

    def on_display_changed(self, message: DisplayChanged) -> None:
        """Re-lay out every text on screen (after the bidi mode, a direction or the width policy changed)."""
        for screen in self.screen_stack:
            for widget in screen.query("FieldText, FieldEditor, MetadataTable"):
                widget.refresh(layout=True)
        self._to_main(DisplayChanged())

    # ----------------------------------------------------------- watching

    def poll(self) -> None:
        """Apply events other processes recorded; notice the dataset file changing on disk."""
        main, session = self.main_screen, self.session
        if main is None or session is None or session.busy:
            return
        self.watch_workspace_file(session)
        if self.apply_others():
            main.post_message(Watch())  # stored scores, the dataset file on disk

    def apply_others(self) -> bool:
        """Apply the events other processes (or a sync) recorded, and tell the screens; False: the workspace failed
        (said in a toast) or the session is busy."""
        main, session = self.main_screen, self.session
        if main is None or session is None or session.busy:
            return False
        before = session.project.version
        try:
            changed = session.project.refresh()
        except PiqaError as exc:
            self.notify(str(exc), severity="error")
            return False
        except sqlite3.DatabaseError as exc:  # damaged under the session: say so, keep what is on screen
            where = session.project.workspace_path
            self.notify(str(storage_error(where, exc, "others' work is not shown")), severity="error", timeout=30)
            return False
        if changed or session.project.version != before:  # item-less events (guidelines, a round) name no item
            main.post_message(OthersChanged(changed))
            if self.screen is not main:
                self.screen.post_message(OthersChanged(changed))  # agreement, adjudication: follow others' votes
        return True

    def watch_workspace_file(self, session: Session) -> None:
        """Notice the workspace file deleted (written back at once) or replaced, before the next action."""
        workspace = session.project.workspace
        if workspace is None or workspace.read_only or workspace.detached:
            return
        try:
            workspace.verify_file()
        except PiqaError as exc:
            self.notify(str(exc), severity="error", timeout=30)
        for notice in workspace.take_notices():
            self.notify(notice, severity="warning", timeout=15)

    # -------------------------------------------------------------- syncing

    def launch(self, work: Callable[[], None], *, group: str, exclusive: bool) -> None:
        self.run_worker(work, group=group, exclusive=exclusive, thread=True, description=group)

    def deliver(self, callback: Callable[..., object], *args: object) -> None:
        self.call_later(callback, *args)  # thread-safe: posts to the app's queue

    def sync_shown(self) -> None:
        self._to_main(Synced())

    def reopen_dataset(self) -> None:
        main = self.main_screen
        current = main.current if main is not None else None
        self.on_reopen(Reopen(current.id if current is not None else None))

    def action_sync(self) -> None:
        """Share this machine's work with the team and take theirs (the dataset's git repository)."""
        if self.session is not None and not self.exiting:
            self.syncs.start(self.session)

    def sync_on_timer(self) -> None:
        if self.session is not None and not self.exiting:
            self.syncs.start(self.session, timer=True)

    @work(thread=True, exclusive=True, group="checkpoint", description="checkpoint_workspace")
    def checkpoint_workspace(self) -> None:
        """Copy the WAL into the workspace file now and then, on a connection of its own (never blocks keys)."""
        session = self.session
        if session is not None and session.project.workspace is not None and not session.project.workspace.read_only:
            checkpoint_file(session.project.workspace.path)

    def on_unmount(self) -> None:
        """Every clean exit leaves the .sqlite file complete on its own (the WAL checkpointed into it)."""
        set_screen_mode(None)  # no screen any more: text is shown as stored
        if self.session is not None and self.session.project.workspace is not None:
            self.session.project.workspace.close()

    # -------------------------------------------------------------- actions

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if isinstance(self.screen, MainScreen) and self.screen.session.loading and action not in ("quit", "help_quit"):
            return False  # a preview of the first rows: no other screen until every item is read
        if action in ("quit", "help", "health", "guidelines", "progress", "sync") and isinstance(
            self.focused, (FieldEditor, LabelChooser)
        ):
            return False  # their keys type text there; ctrl+q still quits
        return True

    def get_key_display(self, binding: Binding) -> str:
        """The footer's vote and final-label keys name only the solutions this item has: 1-2, 1-3 or 1-4."""
        prefix = {"vote_1": "vote_", "adjudicate_1": "adjudicate_"}.get(binding.id or "")
        item = self._item_on_screen() if prefix else None
        if item is not None:
            shown = (
                len(item.solutions)
                if self.session is None
                else shown_solutions(self.session.project.dataset.layout, item)
            )
            keys = [self.settings.keys.get(f"{prefix}{n}", str(n)) for n in range(1, shown + 1)]
            if keys == [str(n) for n in range(1, len(keys) + 1)]:  # the default keys: a range says it
                return f"1-{len(keys)}"
            return "/".join(keys)
        return super().get_key_display(binding)

    def _item_on_screen(self) -> Item | None:
        """The item the main or the adjudication screen is on (None while either is still being built)."""
        screen = self.screen
        if isinstance(screen, MainScreen) and screen.query("ItemList"):
            return screen.current
        adjudication = sys.modules.get("piqa_tui.tui.screens.adjudication")  # not imported: not on screen either
        if (
            adjudication is not None
            and isinstance(screen, adjudication.AdjudicationScreen)
            and screen.query("DataTable")
            and self.session is not None
        ):
            item_id = screen.current_id
            return self.session.project.item(item_id) if item_id else None
        return None

    def keys_for(self, action: Action) -> str:
        return self.settings.keys.get(action.id, action.keys)

    def action_help(self) -> None:
        from piqa_tui.tui.screens.help import HelpScreen  # the screens below are imported when first asked for

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_health(self) -> None:
        from piqa_tui.tui.screens.health import HealthScreen

        if self.session is not None and not isinstance(self.screen, HealthScreen):
            self.push_screen(HealthScreen(self.session))

    def action_guidelines(self) -> None:
        from piqa_tui.tui.screens.guidelines import GuidelinesScreen

        main = self.main_screen
        if self.session is not None and not isinstance(self.screen, GuidelinesScreen):
            current = main.current if main is not None and main.query("ItemList") else None
            self.push_screen(GuidelinesScreen(self.session, current.id if current is not None else None))

    def action_progress(self) -> None:
        from piqa_tui.tui.screens.progress import ProgressScreen

        if self.session is not None and not isinstance(self.screen, ProgressScreen):
            self.push_screen(ProgressScreen(self.session))

    def action_check_terminal(self) -> None:
        self.push_screen(CheckTerminalScreen())

    async def action_quit(self) -> None:
        session = self.session
        if session is not None and session.unsaved and session.project.state.edited:
            count = len(session.project.state.edited)
            self.exit_note = (
                f"piqa-tui: {count} edited item(s) are kept in the workspace but not yet in "
                f"{session.project.dataset.path.name}; save with ctrl+s next time, or run: piqa-tui export"
            )
        self.exit()
