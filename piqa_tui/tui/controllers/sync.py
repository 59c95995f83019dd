"""The TUI's sync with the team (``core.sync.exchange.sync``, what ``piqa-tui sync`` runs): by key or on a timer.

A sync talks to git and may wait on the network, so it runs off the UI thread, one at a time (``background.py``),
on a workspace connection of its own: the events it brings are in the log when it ends, and the host then applies
them the way it applies another process's (``project.refresh`` and ``OthersChanged``), so conflicts reach the
conflicts queue and blind annotators see others' votes only once they have voted. The result is one toast (what
went out, what came in by kind, the conflicts, what waits to be pushed); a repository that is not ready is one
line. The timer's sync is skipped while one runs or a write waits, and speaks only when something came in or
went wrong (the same failure once, not every few minutes). When the app closes, a sync waiting on the network is
stopped (``stop``): its fetch or push ends at once, so quitting never waits for git's time limits; what it
committed stays, and the next sync finishes the job. A sync whose merge brought the team's newer dataset file
(a lead's save) reads it again, as a reload does: the recorded work replays over it.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Protocol

from textual.notifications import SeverityLevel

from piqa_tui.core.errors import PiqaError
from piqa_tui.core.sync.exchange import SyncReport, last_sync, sync
from piqa_tui.render.sync_summary import sync_toast
from piqa_tui.tui.controllers.background import BackgroundRuns, Run
from piqa_tui.tui.controllers.host import Background
from piqa_tui.tui.state.session import Session

TOAST_SECONDS = 12


class SyncHost(Background, Protocol):
    def notify(self, message: str, *, severity: SeverityLevel = "information", timeout: float | None = None) -> None:
        """A toast."""
        ...

    def apply_others(self) -> bool:
        """Apply what other processes (a sync included) recorded in the workspace meanwhile, as the poll does
        (False: not now, or the workspace failed: said already)."""
        ...

    def sync_shown(self) -> None:
        """The last sync changed (started, ended): the header says so."""
        ...

    def reopen_dataset(self) -> None:
        """Read the dataset file again (the sync's merge brought the team's newer version), the cursor kept."""
        ...


class SyncController:
    """Runs the syncs of the app's session, one at a time."""

    def __init__(self, host: SyncHost) -> None:
        self.host = host
        self.runs = BackgroundRuns(lambda work: host.launch(work, group="sync", exclusive=False), host.deliver)
        self.timer_error = ""  # the timer's last failure, said once (not again every few minutes)
        self._closing = threading.Event()  # set when the app closes: the sync under way stops

    @property
    def running(self) -> bool:
        return self.runs.running

    def stop(self) -> None:
        """The app closes: end the sync under way at its next wait on the network; start no other."""
        self._closing.set()

    def opened(self, session: Session) -> None:
        """A session opened: the header shows its workspace's last sync."""
        workspace = session.project.workspace
        try:
            session.last_sync = last_sync(workspace) if workspace is not None else None
        except sqlite3.DatabaseError:
            session.last_sync = None

    def start(self, session: Session, *, timer: bool = False) -> None:
        """Sync ``session``'s dataset with its repository's remote. ``timer``: the periodic sync, which is skipped
        while one runs or a write waits, and is quiet when nothing came in."""
        if self._closing.is_set():
            return
        if self.runs.running:
            if not timer:
                self.host.notify("a sync is already running", timeout=3)
            return
        workspace = session.project.workspace
        if timer and (session.writes_waiting or session.busy):
            return
        if workspace is None or workspace.read_only:
            if not timer:
                self.host.notify("no sync: this workspace is open read-only", severity="error", timeout=8)
            return
        dataset, where = session.project.dataset.path, session.project.workspace_path
        session.syncing = True
        self.host.sync_shown()
        self.runs.start(lambda run: self._sync(run, session, dataset, where, timer))

    def _sync(self, run: Run, session: Session, dataset: Path, where: Path, timer: bool) -> None:
        """In a worker thread: one sync, its report or its one-line error back on the UI thread."""
        try:
            report = sync(dataset, where, self._closing)
        except (PiqaError, OSError, sqlite3.DatabaseError) as exc:
            run.report(self._ended, run, session, None, str(exc), timer)
            return
        run.report(self._ended, run, session, report, "", timer)

    def _ended(self, run: Run, session: Session, report: SyncReport | None, error: str, timer: bool) -> None:
        if not self.runs.end(run):
            return
        session.syncing = False
        if report is None:
            self.host.sync_shown()
            if not timer or error != self.timer_error:
                self.host.notify(f"no sync: {error}", severity="error", timeout=TOAST_SECONDS)
            self.timer_error = error if timer else ""
            return
        self.timer_error = ""
        self.opened(session)
        if report.dataset_updated:  # the team's newer dataset file: read it, the recorded work replayed over it
            self.host.reopen_dataset()
        self.host.apply_others()  # what arrived: the list, the item, the queues (blind rules hold)
        self.host.sync_shown()
        conflicts = len(session.project.conflicts()) if set(report.received) - {"vote"} else None
        if timer and not report.received and not report.refused:
            return
        severity: SeverityLevel = "warning" if report.refused else "information"
        self.host.notify(sync_toast(report, conflicts), severity=severity, timeout=TOAST_SECONDS)
