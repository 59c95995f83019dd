"""The piqa-tui application: opens the dataset off the UI thread and runs the screens.

App-wide work lives here: themes and the keymap, saving and exporting (in
worker threads, with the file-changed-on-disk check first), the $EDITOR
escape hatch, watching the workspace for other annotators' events and the
dataset file for other writers.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from textual import events, work
from textual.app import App
from textual.binding import Binding
from textual.notifications import SeverityLevel
from textual.worker import get_current_worker

from piqa_tui.core.dataset.checks import labels_look_one_based
from piqa_tui.core.dataset.files import output_files, peek_rows
from piqa_tui.core.dataset.item import Item
from piqa_tui.core.dataset.layout import Layout, format_mapping
from piqa_tui.core.errors import LayoutError, PiqaError
from piqa_tui.core.text.bidi import BidiMode
from piqa_tui.core.text.terminal_safe import terminal_safe
from piqa_tui.core.workspace.log import checkpoint_file
from piqa_tui.core.workspace.preferences import resume_position
from piqa_tui.render.safe_text import markup_safe
from piqa_tui.tui.commands import ActionCommands
from piqa_tui.tui.keymap import APP_ACTIONS, Action, bindings
from piqa_tui.tui.messages import ItemsChanged, MarksChanged, OthersChanged, ShowItem
from piqa_tui.tui.model_scores import LOW_MARGIN
from piqa_tui.tui.pending import PendingWrites
from piqa_tui.tui.screens.adjudication import AdjudicationScreen
from piqa_tui.tui.screens.check_terminal import CheckTerminalScreen
from piqa_tui.tui.screens.dialogs import ChoiceDialog, TextPrompt
from piqa_tui.tui.screens.help import HelpScreen
from piqa_tui.tui.screens.loading import LoadingScreen
from piqa_tui.tui.screens.main import MainScreen
from piqa_tui.tui.screens.mapping import MappingDialog
from piqa_tui.tui.session import OpenRequest, Session
from piqa_tui.tui.terminal_guard import ControlCharacterFilter
from piqa_tui.tui.themes import THEMES
from piqa_tui.tui.widgets.field_editor import FieldEditor
from piqa_tui.tui.widgets.label_line import LabelChooser

POLL_SECONDS = 2.0
CHECKPOINT_SECONDS = 60.0  # a long session copies the WAL into the .sqlite file this often
CHECK_DELAY = 0.5
USER_ACTIVE = 0.5  # background checks pause this long after each key or click
BIDI_CYCLE = (BidiMode.APP, BidiMode.TERMINAL, BidiMode.OFF)


@dataclass
class AppSettings:
    """What launch() resolved from the command line and the config file."""

    request: OpenRequest | None
    bidi_setting: str = "auto"
    bidi_mode: BidiMode = BidiMode.APP
    theme: str = "piqa-dark"
    keys: dict[str, str] = field(default_factory=dict)
    reviewer: bool = False
    low_margin: float = LOW_MARGIN  # nats: the low-margin queue's threshold (config ``low_margin``)
    check_terminal: bool = False
    warnings: list[str] = field(default_factory=list)


class PiqaApp(App[None]):
    """Curate a PIQA-style dataset: browse, search, filter, edit, save."""

    TITLE = "piqa-tui"
    BINDINGS = bindings(APP_ACTIONS)
    COMMANDS = App.COMMANDS | {ActionCommands}
    CSS = """
    Screen {
        background: $background;
    }
    Toast {
        max-width: 70;
    }
    """

    def __init__(self, settings: AppSettings) -> None:
        super().__init__()
        # Textual keeps its line filters in a private list; ours drops any control byte data brought.
        self._filters.append(ControlCharacterFilter())
        self.settings = settings
        self.bidi_mode = settings.bidi_mode
        self.reviewer = settings.reviewer
        self.session: Session | None = None
        self.disk_warning = ""
        self.unsaved = False
        self.error_message: str | None = None
        self.exit_note: str | None = None
        self._disk_notified = False
        self.last_input = 0.0

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """A toast whose text (often naming data: ids, columns, file names) is shown literally."""
        safe = markup_safe if markup else terminal_safe
        super().notify(safe(message), title=safe(title), severity=severity, timeout=timeout, markup=markup)

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, (events.Key, events.MouseDown, events.MouseScrollDown, events.MouseScrollUp)):
            self.last_input = time.monotonic()
        await super().on_event(event)

    # --------------------------------------------------------------- startup

    def on_mount(self) -> None:
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
            session = Session.open(request, reviewer=self.reviewer, low_margin=self.settings.low_margin)
        except LayoutError as exc:
            if request.mapping is None:  # not mapped by hand: let the user map the columns here
                self.call_from_thread(self.ask_mapping, request, f"{exc}.", None, keep_id)
            else:
                self.call_from_thread(self._failed, str(exc))
            return
        except PiqaError as exc:
            self.call_from_thread(self._failed, str(exc))
            return
        self.call_from_thread(self._opened, session, keep_id)

    def ask_mapping(self, request: OpenRequest, reason: str, layout: Layout | None, keep_id: str | None = None) -> None:
        """Show the mapping dialog; a chosen mapping reopens the dataset with it and keeps it in the workspace."""
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

    def _ask_label_base(self, session: Session) -> None:
        """Labels that look 1-based (none is solution 1, some are one past the last) get the dialog, once per mapping."""
        layout = session.project.dataset.layout
        if layout.explicit or not labels_look_one_based(session.project.items):
            return
        reason = (
            f"No gold label points to solution 1 and some point past the last solution: the labels of "
            f"{session.project.dataset.name} look 1-based. Check the label base (and the columns) in the preview; "
            "saving keeps the mapping in the workspace."
        )
        current = self.main_screen.current if self.main_screen is not None else None
        self.ask_mapping(session.request, reason, replace(layout, label_base=1), current.id if current else None)

    def _failed(self, message: str) -> None:
        if self.session is None:
            self.error_message = message
            self.exit(return_code=2)
        else:
            self.notify(message, severity="error", timeout=10)

    def _opened(self, session: Session, keep_id: str | None) -> None:
        first = self.session is None
        old, self.session = self.session, session
        session.writes.attach(self)
        if old is not None:
            old.writes.abandon()
        if old is not None and old.project.workspace is not None:
            self.workers.cancel_group(self, "validate")
            old.project.workspace.close()
        self.unsaved = bool(session.project.state.edited)
        self.disk_warning = ""
        self._disk_notified = False
        main = MainScreen(session)
        self.switch_screen(main)
        keep_id = keep_id or resume_position(session.project.workspace, session.project.annotator)
        if keep_id and keep_id in session.project.index:
            main.call_after_refresh(main.go_to_position, session.project.index[keep_id])
        if session.project.file_changed:
            self.notify(session.project.file_changed, severity="warning", timeout=15)
        if session.notice:
            self.notify(session.notice, severity="warning", timeout=15)
        self.call_after_refresh(self._ask_label_base, session)
        if first:
            self.set_interval(POLL_SECONDS, self.poll)
            self.set_interval(CHECKPOINT_SECONDS, self.checkpoint_workspace)
        # Checking every item competes with drawing for the interpreter: start once the first screen is up.
        self.set_timer(CHECK_DELAY, lambda: self.check_in_background(session))

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
            main.item_list.invalidate()
            main.refilter()

    @property
    def pending(self) -> PendingWrites:
        """The open session's write queue (screens reach it as ``session.writes``)."""
        assert self.session is not None, "no session open: nothing can be recorded yet"
        return self.session.writes

    @property
    def main_screen(self) -> MainScreen | None:
        for screen in reversed(self.screen_stack):
            if isinstance(screen, MainScreen):
                return screen
        return None

    # ------------------------------------------------- what screens say

    def on_items_changed(self, message: ItemsChanged) -> None:
        """A screen over the main one changed the project: the list, the item and the header follow."""
        main = self.main_screen
        if main is not None:
            main.after_change(message.item_ids)

    def on_marks_changed(self, message: MarksChanged) -> None:
        main = self.main_screen
        if main is not None:
            main.marks_changed()

    def on_show_item(self, message: ShowItem) -> None:
        main = self.main_screen
        if main is not None:
            main.go_to_position(message.position)

    # ----------------------------------------------------------- watching

    def poll(self) -> None:
        """Apply events other processes recorded; notice the dataset file changing on disk."""
        main, session = self.main_screen, self.session
        if main is None or session is None or main.busy:
            return
        self.watch_workspace_file(session)
        try:
            changed = session.project.refresh()
        except PiqaError as exc:
            self.notify(str(exc), severity="error")
            return
        if changed:
            main.after_change(changed)
            if self.screen is not main:
                self.screen.post_message(OthersChanged(changed))  # agreement, adjudication: follow others' votes
        main.scoring.watch_stored()  # scores another process (piqa-tui score) stored meanwhile
        stamp = session.stat()
        if stamp != session.disk_stamp and not self.disk_warning:
            self.check_disk(session)

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

    @work(thread=True, exclusive=True, group="checkpoint", description="checkpoint_workspace")
    def checkpoint_workspace(self) -> None:
        """Copy the WAL into the workspace file now and then, on a connection of its own (never blocks keys)."""
        session = self.session
        if session is not None and session.project.workspace is not None and not session.project.workspace.read_only:
            checkpoint_file(session.project.workspace.path)

    def on_unmount(self) -> None:
        """Every clean exit leaves the .sqlite file complete on its own (the WAL checkpointed into it)."""
        if self.session is not None and self.session.project.workspace is not None:
            self.session.project.workspace.close()

    @work(thread=True, exclusive=True, group="disk", description="check_disk")
    def check_disk(self, session: Session) -> None:
        changed = session.project.disk_changed()
        self.call_from_thread(self._disk_checked, session, changed)

    def _disk_checked(self, session: Session, changed: bool) -> None:
        if session is not self.session:
            return
        session.disk_stamp = session.stat()
        if changed:
            self.disk_warning = "file changed on disk"
            if not self._disk_notified:
                self._disk_notified = True
                self.notify(
                    f"{session.project.dataset.name} was changed on disk by another program. "
                    "Saving will ask first; you can reload it (your recorded edits are replayed) or export elsewhere.",
                    severity="warning",
                    timeout=15,
                )
            if self.main_screen:
                self.main_screen.update_header()

    # --------------------------------------------------------------- saving

    def save_dataset(self) -> None:
        main, session = self.main_screen, self.session
        if main is None or session is None or main.busy:
            return
        main.set_busy("saving")
        self._save(session)

    @work(thread=True, exclusive=True, group="io", description="_save")
    def _save(self, session: Session) -> None:
        project = session.project
        if project.disk_changed():
            self.call_from_thread(self._ask_disk_changed, session)
            return
        try:
            written = project.save()
        except (PiqaError, OSError) as exc:
            self.call_from_thread(self._io_done, f"not saved: {exc}", "error")
            return
        session.disk_stamp = session.stat()
        self.call_from_thread(self._saved, written)

    def _saved(self, written: Iterable[Path]) -> None:
        self.unsaved = False
        self.disk_warning = ""
        self._io_done(f"saved {', '.join(str(p) for p in written)}", "information")

    def _io_done(self, message: str, severity: str) -> None:
        main = self.main_screen
        if main is not None:
            main.set_busy("")
        self.notify(message, severity=severity, timeout=6 if severity != "error" else 12)  # type: ignore[arg-type]

    def _ask_disk_changed(self, session: Session) -> None:
        main = self.main_screen
        if main is not None:
            main.set_busy("")
        self.disk_warning = "file changed on disk"
        name = session.project.dataset.name

        def chosen(key: str | None) -> None:
            if key == "export":
                self.export_dataset()
            elif key == "reload":
                self.reload()

        self.push_screen(
            ChoiceDialog(
                "The file changed on disk",
                f"{name} was changed by another program since piqa-tui opened it. Nothing was written.",
                [
                    ("export", "Export to another file…", "keeps both versions"),
                    ("reload", "Reload the file from disk", "your recorded edits are replayed over the new content"),
                    ("cancel", "Cancel", "leave everything as it is"),
                ],
            ),
            chosen,
        )

    def reload(self) -> None:
        main, session = self.main_screen, self.session
        if session is None:
            return
        keep = main.current.id if main and main.current else None
        self.push_screen(LoadingScreen(session.project.dataset.name))
        self.open_dataset(session.request, keep)

    def export_dataset(self) -> None:
        session = self.session
        if session is None:
            return
        project = session.project
        source = project.dataset.path
        suggestion = str(source.with_name(f"{source.stem}.export{source.suffix}"))

        def outputs(value: str) -> list[Path]:
            return output_files(project.dataset, Path(value).expanduser())

        def check(value: str) -> str | None:
            if not value:
                return "give a file name"
            try:  # the dataset and the workspace are refused here; an existing file is asked about next
                project.check_outputs(outputs(value), replace=True)
            except PiqaError as exc:
                return (
                    f"{exc}"
                    if "source dataset" not in str(exc)
                    else "that is the dataset itself: use save (ctrl+s) to write it"
                )
            return None

        def export(out: Path) -> None:
            main = self.main_screen
            if main is not None:
                main.set_busy("exporting")
            self._export(session, out)

        def chosen(value: str | None) -> None:
            if value:
                out = Path(value).expanduser()
                self.ask_before_replacing(outputs(value), lambda: export(out))

        self.push_screen(
            TextPrompt(
                "Export",
                "Write the current state to a file; the format follows the extension (.tsv .csv .jsonl .parquet).",
                suggestion,
                check,
            ),
            chosen,
        )

    def ask_before_replacing(self, outputs: list[Path], then: Callable[[], None]) -> None:
        """Run ``then`` at once when no output exists, else after the user agrees to replace them."""
        existing = [p for p in outputs if p.exists()]
        if not existing:
            then()
            return

        def chosen(key: str | None) -> None:
            if key == "replace":
                then()

        names = ", ".join(str(p) for p in existing)
        self.push_screen(
            ChoiceDialog(
                "Replace the file?",
                f"{names} already exists.",
                [("replace", "Replace it", "the old content is lost"), ("cancel", "Cancel", "write nothing")],
            ),
            chosen,
        )

    @work(thread=True, exclusive=True, group="io", description="_export")
    def _export(self, session: Session, out: Path) -> None:
        try:
            written = session.project.export(out, replace=True)  # the user was asked before an existing file
        except (PiqaError, OSError) as exc:
            self.call_from_thread(self._io_done, f"not exported: {exc}", "error")
            return
        self.call_from_thread(self._io_done, f"exported {', '.join(str(p) for p in written)}", "information")

    # ------------------------------------------------------------- $EDITOR

    async def edit_externally(self, text: str, name: str) -> str | None:
        """Edit ``text`` in $VISUAL/$EDITOR with the app suspended; None when the editor failed."""
        editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
        safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in name)[:60]
        with tempfile.NamedTemporaryFile("w", suffix=f"-{safe}.txt", delete=False, encoding="utf-8") as fh:
            fh.write(text + "\n")
            path = fh.name
        try:
            command = [*shlex.split(editor), path]
            driver = self._driver
            try:
                if driver is not None and driver.can_suspend:
                    with self.suspend():
                        result = subprocess.run(command)
                else:
                    result = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True)
            except OSError as exc:
                self.notify(f"could not run {editor!r}: {exc}; set $EDITOR", severity="error")
                return None
            if result.returncode != 0:
                self.notify(
                    f"{editor} exited with status {result.returncode}; the field is unchanged", severity="warning"
                )
                return None
            with open(path, encoding="utf-8") as fh:
                edited = fh.read()
        finally:
            os.unlink(path)
        import unicodedata

        edited = edited[:-1] if edited.endswith("\n") else edited
        return unicodedata.normalize("NFC", edited.replace("\r\n", "\n"))

    # -------------------------------------------------------------- display

    def gold_hidden(self, item: Item) -> bool:
        """Whether the gold label stays hidden for this item: blind mode until you voted on it (not for reviewers)."""
        session = self.session
        return session is not None and not session.ballots.visible(item.id)

    def cycle_bidi(self) -> None:
        index = BIDI_CYCLE.index(self.bidi_mode) if self.bidi_mode in BIDI_CYCLE else -1
        self.bidi_mode = BIDI_CYCLE[(index + 1) % len(BIDI_CYCLE)]
        self.redraw_text()
        self.notify(f"right-to-left display: {self.bidi_mode}", timeout=2)

    def redraw_text(self) -> None:
        """Re-lay out every text on screen (after the bidi mode or the width policy changed)."""
        for screen in self.screen_stack:
            for widget in screen.query("FieldText, FieldEditor, MetadataTable"):
                widget.refresh(layout=True)
        main = self.main_screen
        if main is not None:
            main.item_list.invalidate()
            main.show_current()

    # -------------------------------------------------------------- actions

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("quit", "help") and isinstance(self.focused, (FieldEditor, LabelChooser)):
            return False  # their keys type text there; ctrl+q still quits
        return True

    def get_key_display(self, binding: Binding) -> str:
        """The footer's vote and final-label keys name only the solutions this item has: 1-2, 1-3 or 1-4."""
        prefix = {"vote_1": "vote_", "adjudicate_1": "adjudicate_"}.get(binding.id or "")
        item = self._item_on_screen() if prefix else None
        if item is not None:
            keys = [self.settings.keys.get(f"{prefix}{n}", str(n)) for n in range(1, len(item.solutions) + 1)]
            if keys == [str(n) for n in range(1, len(keys) + 1)]:  # the default keys: a range says it
                return f"1-{len(keys)}"
            return "/".join(keys)
        return super().get_key_display(binding)

    def _item_on_screen(self) -> Item | None:
        """The item the main or the adjudication screen is on (None while either is still being built)."""
        screen = self.screen
        if isinstance(screen, MainScreen) and screen.query("ItemList"):
            return screen.current
        if isinstance(screen, AdjudicationScreen) and screen.query("DataTable") and self.session is not None:
            item_id = screen.current_id
            return self.session.project.item(item_id) if item_id else None
        return None

    def keys_for(self, action: Action) -> str:
        return self.settings.keys.get(action.id, action.keys)

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_check_terminal(self) -> None:
        self.push_screen(CheckTerminalScreen())

    async def action_quit(self) -> None:
        session = self.session
        if session is not None and self.unsaved and session.project.state.edited:
            count = len(session.project.state.edited)
            self.exit_note = (
                f"piqa-tui: {count} edited item(s) are kept in the workspace but not yet in "
                f"{session.project.dataset.path.name}; save with ctrl+s next time, or run: piqa-tui export"
            )
        self.exit()
