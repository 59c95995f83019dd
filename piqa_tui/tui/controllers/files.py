"""The dataset file on the main screen: save, export, reload, and the file changing on disk.

Keys (``keymap.MAIN_ACTIONS``): ctrl+s saves, X exports. In a team round (a round in force) a validator (no
``--reviewer``) is asked before saving: a laptop whose dataset file was saved is refused by ``workspace merge``
(a different dataset file) and its work is in the workspace already, so saving is the lead's; their footer
leaves ``^s save`` out (``leaves_saving_to_the_lead``). Writing runs off the
UI thread (``FilesHost.launch``) and checks first whether another program
changed the file since it was read; if so nothing is written and the user
chooses between exporting elsewhere and reloading (recorded edits are
replayed over the new content). The app's poll asks ``watch`` to look at the
file's (mtime, size); the session keeps the warning the header shows. A dataset
file in a git repository is committed once saved (``core.sync.git.commit_saved``:
that file alone), so the team's next sync shares it; the toast says so in a line.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Protocol

from piqa_tui.core.dataset.writing import output_files
from piqa_tui.core.errors import PiqaError
from piqa_tui.core.round.recorded import round_in_force
from piqa_tui.core.sync.git import commit_saved
from piqa_tui.tui.controllers.host import Background, Host
from piqa_tui.tui.dialogs.prompts import ChoiceDialog, TextPrompt
from piqa_tui.tui.dialogs.replace import ask_before_replacing
from piqa_tui.tui.state.session import Session


class FilesHost(Host, Background, Protocol):
    def set_busy(self, text: str) -> None:
        """Say what the screen is busy with (``""``: nothing); edits stay off meanwhile."""
        ...

    def update_header(self) -> None: ...

    def reopen(self, keep_id: str | None) -> None:
        """Read the dataset again from disk, keeping the cursor on ``keep_id``."""
        ...


class FilesController:
    """Writes the dataset (save, export), reloads it, and notices it changing on disk."""

    def __init__(self, session: Session, host: FilesHost) -> None:
        self.session = session
        self.project = session.project
        self.host = host

    # ---------------------------------------------------------------- saving

    def leaves_saving_to_the_lead(self) -> bool:
        """Whether this user, a validator in a team round, is asked before saving (see the module docstring)."""
        if self.session.reviewer:
            return False
        try:
            return round_in_force(self.project.workspace) is not None
        except PiqaError:
            return True  # a round is recorded, if unreadable: a team's

    def save(self) -> None:
        if self.session.busy:
            return
        if self.leaves_saving_to_the_lead():
            self.host.push_screen(
                ChoiceDialog(
                    "Save the dataset file?",
                    "Your work is recorded in the workspace already; sync or workspace merge carries it to the "
                    "team. In a team round the lead saves the file: workspace merge refuses a laptop whose "
                    "dataset file was saved (it is then a different file).",
                    [
                        ("keep", "Don't save", "everything stays recorded in the workspace"),
                        ("save", "Save anyway", "write the file on this laptop"),
                    ],
                ),
                lambda key: self._start_saving() if key == "save" else None,
            )
            return
        self._start_saving()

    def _start_saving(self) -> None:
        self.host.set_busy("saving")
        self.host.launch(self._save, group="io", exclusive=True)

    def _save(self) -> None:
        """In a worker thread: write the file, unless another program changed it meanwhile."""
        if self.project.disk_changed():
            self.host.deliver(self._ask_disk_changed)
            return
        version = self.project.version  # the state the file will hold (a change during the write moves it)
        try:
            written = self.project.save()
        except (PiqaError, OSError) as exc:
            self.host.deliver(self._io_done, f"not saved: {exc}", "error")
            return
        self.session.disk_stamp = self.session.stat()
        committed = commit_saved(written, "save")  # in the dataset's git repository: the next sync shares it
        self.host.deliver(self._saved, written, committed, version)

    def _saved(self, written: Iterable[Path], committed: str | None, version: int) -> None:
        self.session.written(version)
        said = f"saved {', '.join(str(p) for p in written)}" + (f"; {committed}" if committed else "")
        self._io_done(said, "warning" if committed and "not committed" in committed else "information")

    def _io_done(self, message: str, severity: str) -> None:
        self.host.set_busy("")
        self.host.notify(message, severity=severity, timeout=6 if severity != "error" else 12)

    def _ask_disk_changed(self) -> None:
        self.host.set_busy("")
        self.session.disk_changed()
        name = self.project.dataset.name

        def chosen(key: str | None) -> None:
            if key == "export":
                self.export()
            elif key == "reload":
                self.reload()

        self.host.push_screen(
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
        current = self.host.current
        self.host.reopen(current.id if current else None)

    # ------------------------------------------------------------- exporting

    def export(self) -> None:
        """Ask for a file name (checked as typed), then write the current state there."""
        source = self.project.dataset.path
        suggestion = str(source.with_name(f"{source.stem}.export{source.suffix}"))

        def chosen(value: str | None) -> None:
            if value:
                out = Path(value).expanduser()
                ask_before_replacing(self.host, self._outputs(value), lambda: self._start_export(out))

        self.host.push_screen(
            TextPrompt(
                "Export",
                "Write the current state to a file; the format follows the extension (.tsv .csv .jsonl .parquet).",
                suggestion,
                self._check_export,
            ),
            chosen,
        )

    def _outputs(self, value: str) -> list[Path]:
        return output_files(self.project.dataset, Path(value).expanduser())

    def _check_export(self, value: str) -> str | None:
        if not value:
            return "give a file name"
        try:  # the dataset and the workspace are refused here; an existing file is asked about next
            self.project.check_outputs(self._outputs(value), replace=True)
        except PiqaError as exc:
            return (
                f"{exc}"
                if "source dataset" not in str(exc)
                else "that is the dataset itself: use save (ctrl+s) to write it"
            )
        return None

    def _start_export(self, out: Path) -> None:
        self.host.set_busy("exporting")
        self.host.launch(lambda: self._export(out), group="io", exclusive=True)

    def _export(self, out: Path) -> None:
        """In a worker thread: write the current state to ``out`` (the user was asked before replacing it)."""
        try:
            written = self.project.export(out, replace=True)
        except (PiqaError, OSError) as exc:
            self.host.deliver(self._io_done, f"not exported: {exc}", "error")
            return
        self.host.deliver(self._io_done, f"exported {', '.join(str(p) for p in written)}", "information")

    # ------------------------------------------------------ changed on disk

    def watch(self) -> None:
        """From the app's poll: a changed (mtime, size) starts a check of the content, off the UI thread."""
        if self.session.stat() != self.session.disk_stamp and not self.session.disk_warning:
            self.host.launch(self._check_disk, group="disk", exclusive=True)

    def _check_disk(self) -> None:
        self.host.deliver(self._disk_checked, self.project.disk_changed())

    def _disk_checked(self, changed: bool) -> None:
        self.session.disk_stamp = self.session.stat()
        if not changed:
            return
        if self.session.disk_changed():  # the first time: say so once
            self.host.notify(
                f"{self.project.dataset.name} was changed on disk by another program. "
                "Saving will ask first; you can reload it (your recorded edits are replayed) or export elsewhere.",
                severity="warning",
                timeout=15,
            )
        self.host.update_header()
