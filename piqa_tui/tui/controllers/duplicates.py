"""The duplicates screen's work: the scan (in a thread, with progress and cancel) and every cluster decision.

The scan runs off the UI thread (``DuplicatesHost.launch``) as one numbered run (``background.py``): its
progress, items/s and the model's embedding ETA go to the host's strip, and a cancelled or replaced run's
reports are dropped. The finished scan is kept on the session, so coming back shows it again until an item
changes. A decision (keep one, mark distinct, merge the notes) goes through ``core.dedup.resolution`` as one
action: this controller submits it, and once it is committed says so and tells the host, whose list drops
the cluster (until then it stays listed, open).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Protocol, cast

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.dedup.clusters import Cluster, Member
from piqa_tui.core.dedup.resolution import keep_one, mark_distinct, merge_notes
from piqa_tui.core.dedup.scan import DuplicateScan, ScanCancelled, ScanRequest, scan
from piqa_tui.core.dedup.semantic import EmbeddingProgress
from piqa_tui.core.errors import PiqaError
from piqa_tui.render.progress import embedding_text
from piqa_tui.tui.controllers.background import BackgroundRuns, Run
from piqa_tui.tui.controllers.host import Background, Strip
from piqa_tui.tui.dialogs.asker import Submitter
from piqa_tui.tui.dialogs.prompts import TextPrompt
from piqa_tui.tui.state.session import Session

PROGRESS_INTERVAL = 0.05  # seconds between progress messages from the worker


class DuplicatesHost(Submitter, Background, Protocol):
    @property
    def strip(self) -> Strip: ...

    @property
    def selected(self) -> tuple[Cluster, Member] | None:
        """The cluster under the cursor and its chosen member (None: no cluster listed)."""
        ...

    def worker_cancelled(self) -> Callable[[], bool]:
        """From a worker's thread: whether the UI has cancelled that worker (its screen left, say)."""
        ...

    def scan_started(self, items: int, request: ScanRequest) -> None:
        """A scan of ``items`` items started: the list waits for it."""
        ...

    def scan_stopped(self) -> None:
        """The scan ended, was cancelled or failed: list the clusters open now."""
        ...

    def catch_up(self) -> None:
        """Apply what other processes recorded meanwhile (a decision is made on what they decided too)."""
        ...

    def resolved(self, cluster: Cluster, distinct: bool, others: bool) -> None:
        """A decision on ``cluster`` is committed (``others``: clusters were decided elsewhere meanwhile)."""
        ...


class DuplicatesController:
    """Runs the scans and submits the decisions of one duplicates screen."""

    def __init__(self, session: Session, host: DuplicatesHost) -> None:
        self.session = session
        self.project = session.project
        self.host = host
        self.result: DuplicateScan | None = session.duplicate_scan
        self.request: ScanRequest = self.result.request if self.result else ScanRequest()
        self.runs = BackgroundRuns(lambda work: host.launch(work, group="duplicates", exclusive=True), host.deliver)
        self.embedding_text = ""  # while the model embeds: its count, rate and ETA
        self._started = 0.0
        self._scan_items = 0

    # ------------------------------------------------------------- scanning

    @property
    def scanning(self) -> bool:
        return self.runs.running

    def start_scan(self, request: ScanRequest) -> None:
        self.request = request
        self._started = time.monotonic()
        self.embedding_text = ""
        items = list(self.project.items)  # a snapshot: the worker never reads the live list
        self._scan_items = len(items)
        self.runs.start(lambda run: self._scan(run, request, items))
        self.host.strip.start(self._scan_text("finding duplicates"))
        self.host.scan_started(len(items), request)

    def toggle_semantic(self) -> None:
        self.start_scan(replace(self.request, semantic=not self.request.semantic))

    def rescan(self) -> None:
        self.start_scan(self.request)

    def _scan(self, run: Run, request: ScanRequest, items: list[Item]) -> None:
        """In a worker thread: one scan, reporting progress and its end through ``run``."""
        cancelled = self.host.worker_cancelled()
        last = 0.0
        ended: list[tuple[DuplicateScan | None, str] | BaseException] = []

        def progress(done: int, total: int) -> None:
            nonlocal last
            if run.cancel.is_set():
                raise ScanCancelled
            now = time.monotonic()
            if now - last >= PROGRESS_INTERVAL or done >= total:
                last = now
                run.report(self._progress, done, total)

        def body() -> None:
            try:
                ended.append(
                    (
                        scan(
                            self.project,
                            items,
                            request,
                            progress,
                            note=lambda text: run.report(self._stage, text),
                            embedding=lambda status: run.report(self._embedding, status),
                        ),
                        "",
                    )
                )
            except ScanCancelled:
                ended.append((None, ""))
            except (PiqaError, OSError, ValueError) as exc:
                ended.append((None, str(exc)))
            except BaseException as exc:  # a bug: raised again in the worker, where Textual reports it
                ended.append(exc)

        # The scan itself runs in a daemon thread: loading a model cannot be interrupted,
        # and neither escape nor quitting should wait for it (the worker's own thread
        # belongs to an executor that the interpreter joins at exit).
        thread = threading.Thread(target=body, name="piqa-duplicates", daemon=True)
        thread.start()
        while thread.is_alive():
            thread.join(0.1)
            if cancelled():
                run.cancel.set()
            if run.cancel.is_set():
                return
        outcome = ended[0]
        if isinstance(outcome, BaseException):
            raise outcome
        run.report(self._ended, run, *outcome)

    def _scan_text(self, text: str) -> str:
        return f"{text} · esc cancels"

    def _stage(self, text: str) -> None:
        """A stage without progress of its own (reading the other file, loading the model)."""
        self.host.strip.say(self._scan_text(text + "…"))

    def _embedding(self, status: EmbeddingProgress) -> None:
        """The model is embedding: the strip says how far, how fast and how long still (the bar keeps the scan's steps)."""
        self.embedding_text = embedding_text(status) if status.done < status.total else ""
        if self.embedding_text:
            self.host.strip.say(self._scan_text(self.embedding_text))

    def _progress(self, done: int, total: int) -> None:
        elapsed = time.monotonic() - self._started
        rate = self._scan_items * done / total / elapsed if elapsed > 0 and total else 0
        text = self.embedding_text or f"finding duplicates · {rate:,.0f} items/s"
        self.host.strip.show(self._scan_text(text), done, total)

    def _ended(self, run: Run, result: DuplicateScan | None, error: str) -> None:
        """The scan finished: ``result``, or ``error`` (a message for the user), or neither (cancelled)."""
        if not self.runs.end(run):
            return
        self.host.strip.stop()
        if result is not None:
            self.result = self.session.duplicate_scan = result
            found = len(result.clusters)
            self.host.notify(
                f"{found} duplicate cluster{'s' if found != 1 else ''} found in {result.seconds:.1f} s", timeout=3
            )
            self.request = result.request
            if result.notice:
                self.host.notify(result.notice, severity="warning", timeout=12)
            if result.warning:
                self.request = replace(self.request, semantic=False)
                self.host.notify(result.warning, severity="warning", timeout=12)
        elif error:
            self.host.notify(f"no scan: {error}", severity="error", timeout=12)
            if self.request.against is not None:  # the other file was the problem: scan without it next time
                self.request = replace(self.request, against=None)
        self.host.scan_stopped()

    def cancel_scan(self) -> None:
        self.runs.drop()  # whatever the worker still sends is stale now
        self.host.strip.stop()
        self.host.notify("scan cancelled", timeout=3)
        self.host.scan_stopped()

    def against(self) -> None:
        """Ask for another file to check this dataset's items against (leakage), and scan."""
        r = self.request
        source = self.project.dataset.path

        def check(value: str) -> str | None:
            if not value:
                return None
            path = Path(value).expanduser()
            if not path.is_file():
                return f"no file {path}"
            if path.resolve() == source.resolve():
                return "that is this dataset: give the other file (e.g. the training set)"
            return None

        def chosen(value: str | None) -> None:
            if value is None:
                return
            against = Path(value).expanduser() if value else None
            self.start_scan(replace(r, against=against))

        self.host.push_screen(
            TextPrompt(
                "Leakage check",
                "Find items of this dataset that duplicate items of another file (e.g. test against train). "
                "Leave empty to look inside this dataset only.",
                str(r.against) if r.against else "",
                check,
            ),
            chosen,
        )

    # ------------------------------------------------------------ resolving

    def keep(self) -> None:
        """Keep the chosen member; the cluster's other members of this dataset are flagged as duplicates."""
        selected = self.host.selected
        if selected is None:
            return
        cluster, keep = selected

        def decide() -> str:
            flagged = keep_one(self.project, cluster, keep.id)
            gone = ", ".join(flagged) if flagged else "nothing in this dataset"
            return f"kept {keep.id}; flagged as duplicate: {gone}"

        self._submit(cluster, f"keeping {keep.id} of its cluster", decide)

    def distinct(self) -> None:
        """Mark the cluster's members as different items, with the reason asked for."""
        selected = self.host.selected
        if selected is None:
            return
        cluster = selected[0]
        ids = ", ".join(m.id for m in cluster.members)

        def chosen(reason: str | None) -> None:
            if reason is None:
                return

            def decide() -> str:
                mark_distinct(self.project, cluster, reason)
                return f"{ids}: marked as distinct items; this cluster is not shown again"

            self._submit(cluster, f"marking {ids} distinct", decide, distinct=True)

        self.host.push_screen(
            TextPrompt("Mark as distinct", f"{ids} are different items. Why? (optional; enter confirms, esc cancels)"),
            chosen,
        )

    def merge_notes(self) -> None:
        """Merge the members' notes into the chosen one (a member of this dataset)."""
        selected = self.host.selected
        if selected is None or self.result is None:
            return
        cluster, into = selected
        if not self.result.is_local(into):
            self.host.notify(
                f"{into.id} is in {into.source}: choose a member of this dataset to merge the notes into", timeout=5
            )
            return

        def decide() -> str:
            merged = merge_notes(self.project, cluster, into.id)
            return f"notes merged into {into.id}" if merged else f"no notes to merge; cluster resolved with {into.id}"

        self._submit(cluster, f"merging the notes into {into.id}", decide)

    def _submit(self, cluster: Cluster, what: str, decide: Callable[[], str], distinct: bool = False) -> None:
        """Submit one decision on ``cluster``; once it is committed, say it and tell the host."""

        def attempt() -> tuple[str, bool]:
            self.host.catch_up()  # decide on what others recorded too (a note written meanwhile is merged)
            decisions = len(self.project.state.dedup)
            message = decide()
            return message, len(self.project.state.dedup) != decisions + 1  # others decided meanwhile

        def committed(outcome: object) -> None:
            message, others = cast(tuple[str, bool], outcome)
            self.host.notify(message, timeout=4)
            self.host.resolved(cluster, distinct, others)

        self.host.submit(what, attempt, committed)
