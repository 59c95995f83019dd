"""The duplicates screen: find near-duplicate clusters (and leakage against another file), resolve each.

The scan runs in a thread worker with a progress strip and items/s, and stops
on escape; the screen answers keys meanwhile. The clusters still open are
listed at the top; the selected one's members stand side by side below with
the words that differ lit. Every decision goes through ``core.resolution``
(one action in the workspace, recorded through the session's write queue); a
cluster leaves the list once its decision is recorded. The last scan
is kept on the session, so coming back shows it again until an item changes.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer, Static
from textual.worker import get_current_worker

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.dedup.clusters import Cluster, Member
from piqa_tui.core.dedup.resolution import (
    cluster_key,
    keep_one,
    mark_distinct,
    merge_notes,
)
from piqa_tui.core.dedup.scan import (
    DuplicateScan,
    ScanCancelled,
    ScanRequest,
    default_choice,
    differences,
    scan,
)
from piqa_tui.core.dedup.semantic import EmbeddingProgress
from piqa_tui.core.errors import PiqaError
from piqa_tui.core.text.terminal_safe import terminal_safe
from piqa_tui.render.progress import embedding_text
from piqa_tui.tui.background import BackgroundRuns, Run
from piqa_tui.tui.dialogs.prompts import TextPrompt
from piqa_tui.tui.keymap import DUPLICATE_ACTIONS, bindings, unlisted
from piqa_tui.tui.messages import MarksChanged, ShowItem
from piqa_tui.tui.state.session import Session
from piqa_tui.tui.widgets.duplicates.cluster_list import ClusterList
from piqa_tui.tui.widgets.duplicates.cluster_view import ClusterView, MemberCard
from piqa_tui.tui.widgets.progress_strip import ProgressStrip

PROGRESS_INTERVAL = 0.05  # seconds between progress messages from the worker
WATCH_SECONDS = 2.0  # how often decisions recorded by other annotators are looked for

# Actions that need a finished scan and a cluster under the cursor.
RESOLVE_ACTIONS = {"keep", "distinct", "merge_notes", "next_member", "prev_member", "show_item"}


def _member_keys(cluster: Cluster) -> set[str]:
    """The members as the workspace names them in decisions (``resolution.cluster_key``)."""
    return set(cluster_key(cluster).split("|"))


class DuplicatesScreen(Screen[None]):
    DEFAULT_CSS = """
    DuplicatesScreen > #dup-header {
        dock: top;
        height: auto;
        max-height: 2;  /* the model and its rule wrap onto a second line on narrow terminals */
        background: $panel;
        padding: 0 1;
    }
    """

    ACTIONS = DUPLICATE_ACTIONS
    BINDINGS = bindings(ACTIONS) + unlisted("help", "quit")  # esc back, ^p lists everything
    AUTO_FOCUS = None

    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session = session
        self.project = session.project
        self.result: DuplicateScan | None = session.duplicate_scan
        self.request: ScanRequest = self.result.request if self.result else ScanRequest()
        self.clusters: list[Cluster] = []  # the open ones, as listed
        self.chosen = 0  # the member keep and merge act on
        self._shown: Cluster | None = None  # the cluster whose members are on screen
        self.runs = BackgroundRuns(self._launch, self.call_later)  # call_later is thread-safe
        self._started = 0.0
        self._embedding_text = ""  # while the model embeds: its count, rate and ETA
        self._scan_items = 0
        self._decisions = -1  # len(project.state.dedup) when the list was last built

    # ---------------------------------------------------------------- layout

    def compose(self) -> ComposeResult:
        yield Static(id="dup-header", markup=False)
        yield ProgressStrip(id="scan-strip")
        yield ClusterList(id="cluster-list")
        yield ClusterView(id="cluster-view")
        yield Footer(compact=True)

    @property
    def cluster_list(self) -> ClusterList:
        return self.query_one(ClusterList)

    @property
    def cluster_view(self) -> ClusterView:
        return self.query_one(ClusterView)

    def on_mount(self) -> None:
        self.set_interval(WATCH_SECONDS, self._watch)
        if self.result is not None and self.result.is_current(self.project):
            self.show_clusters()
        else:
            self.start_scan(self.request)

    # ------------------------------------------------------------- scanning

    @property
    def scanning(self) -> bool:
        return self.runs.running

    @property
    def strip(self) -> ProgressStrip:
        return self.query_one(ProgressStrip)

    def _launch(self, work: Callable[[], None]) -> None:
        self.run_worker(work, group="duplicates", exclusive=True, thread=True, description="duplicates scan")

    def start_scan(self, request: ScanRequest) -> None:
        self.request = request
        self._started = time.monotonic()
        self._embedding_text = ""
        items = list(self.project.items)  # a snapshot: the worker never reads the live list
        self._scan_items = len(items)
        self.runs.start(lambda run: self._scan(run, request, items))
        self.strip.start(self._scan_text("finding duplicates"))
        self.cluster_list.show_clusters([], self._prompt_of, self._label_of, empty_message="scanning…")
        self.cluster_view.show_message(
            f"Looking for duplicates among {len(items):,} items ({request.describe()})… esc cancels."
        )
        self.refresh_bindings()
        self.update_header()

    def _scan(self, run: Run, request: ScanRequest, items: list[Item]) -> None:
        """In a worker thread: one scan, reporting progress and its end through ``run``."""
        worker = get_current_worker()
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
            if worker.is_cancelled:
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
        self.strip.say(self._scan_text(text + "…"))

    def _embedding(self, status: EmbeddingProgress) -> None:
        """The model is embedding: the strip says how far, how fast and how long still (the bar keeps the scan's steps)."""
        self._embedding_text = embedding_text(status) if status.done < status.total else ""
        if self._embedding_text:
            self.strip.say(self._scan_text(self._embedding_text))

    def _progress(self, done: int, total: int) -> None:
        elapsed = time.monotonic() - self._started
        rate = self._scan_items * done / total / elapsed if elapsed > 0 and total else 0
        text = self._embedding_text or f"finding duplicates · {rate:,.0f} items/s"
        self.strip.show(self._scan_text(text), done, total)

    def _ended(self, run: Run, result: DuplicateScan | None, error: str) -> None:
        """The scan finished: ``result``, or ``error`` (a message for the user), or neither (cancelled)."""
        if not self.runs.end(run):
            return
        self._stop_strip()
        if result is not None:
            self.result = self.session.duplicate_scan = result
            found = len(result.clusters)
            self.notify(
                f"{found} duplicate cluster{'s' if found != 1 else ''} found in {result.seconds:.1f} s", timeout=3
            )
            self.request = result.request
            if result.notice:
                self.notify(result.notice, severity="warning", timeout=12)
            if result.warning:
                self.request = replace(self.request, semantic=False)
                self.notify(result.warning, severity="warning", timeout=12)
        elif error:
            self.notify(f"no scan: {error}", severity="error", timeout=12)
            if self.request.against is not None:  # the other file was the problem: scan without it next time
                self.request = replace(self.request, against=None)
        self.show_clusters()

    def _stop_strip(self) -> None:
        self.strip.stop()
        self.refresh_bindings()

    def cancel_scan(self) -> None:
        self.runs.drop()  # whatever the worker still sends is stale now
        self._stop_strip()
        self.notify("scan cancelled", timeout=3)
        self.show_clusters()

    def on_unmount(self) -> None:
        self.runs.drop()

    # -------------------------------------------------------------- showing

    def _prompt_of(self, member: Member) -> str:
        return self.result.item(member).prompt if self.result else ""

    def _label_of(self, member: Member) -> str:
        if self.result is None or self.result.is_local(member):
            return member.id
        return f"⇄{member.id}"

    def show_clusters(self, cursor: int | None = None, still_open: list[Cluster] | None = None) -> None:
        """List the open clusters again (after a scan or a decision), keeping the cursor's row.

        ``still_open``: the list already brought up to date by the caller, which spares
        asking the workspace's decisions about every cluster again.
        """
        result = self.result
        keep = self.cluster_list.cursor if cursor is None else cursor
        if still_open is not None:
            self.clusters = still_open
        else:
            self.clusters = result.open(self.project) if result else []
        self._decisions = len(self.project.state.dedup)
        if result is not None:
            self.session.marks.duplicates = result.duplicate_ids(self.clusters)
        if result is None:
            empty = "no scan yet: r scans"
        elif result.clusters:
            empty = "every cluster is resolved"
        else:
            empty = "no duplicates found"
        self.cluster_list.show_clusters(self.clusters, self._prompt_of, self._label_of, keep, empty)
        if self.clusters:
            self._follow_cursor(force=True)
        else:
            self._shown = None
            self.cluster_view.show_message(self._nothing_message())
        self.update_header()
        self.refresh_bindings()
        self._refresh_main()

    def _nothing_message(self) -> str:
        result = self.result
        if result is None:
            return "No scan yet. r scans; s turns the semantic signal on; a checks leakage against another file."
        found = len(result.clusters)
        what = "No duplicate clusters found" if not found else f"All {found} clusters are resolved"
        return (
            f"{what} ({result.request.describe()}). "
            "r scans again · s turns the semantic signal "
            + ("off" if result.request.semantic else "on")
            + " · a checks leakage against another file · esc goes back"
        )

    @on(ClusterList.Moved)
    def _moved(self, message: ClusterList.Moved) -> None:
        self._follow_cursor()

    def _follow_cursor(self, force: bool = False) -> None:
        """Show the cluster under the cursor; a cluster newly under it starts with its default choice.

        Called at once by the moving keys (a key pressed right after must act on the
        new cluster) and again by the list's Moved message (clicks), which then does nothing.
        """
        cluster = self.cluster_list.current
        if cluster is None or self.result is None:
            self._shown = None
            return
        if cluster is not self._shown:
            self._shown = cluster
            self.chosen = default_choice(self.result, cluster)
        elif not force:
            return
        self.show_members()

    def _gold_hidden(self, cluster: Cluster) -> list[bool]:
        """Blind mode, per member: a member of this dataset shows its gold once voted on; one from the
        --against file (which cannot be voted on) once every member of this dataset has been, as its
        gold would give theirs away."""
        assert self.result is not None
        ballots = self.session.ballots
        local = [self.result.is_local(m) for m in cluster.members]
        seen = [ballots.visible(m.id) if is_local else True for m, is_local in zip(cluster.members, local)]
        all_seen = all(seen)
        return [not (seen[k] if local[k] else all_seen) for k in range(len(cluster.members))]

    def show_members(self) -> None:
        cluster, result = self.cluster_list.current, self.result
        if cluster is None or result is None:
            return
        items = [result.item(m) for m in cluster.members]
        state = self.project.state
        hidden = self._gold_hidden(cluster)
        cards = []
        for k, (member, item) in enumerate(zip(cluster.members, items)):
            reference = items[1] if k == 0 else items[0]
            local = result.is_local(member)
            cards.append(
                MemberCard(
                    number=k + 1,
                    item=item,
                    source=None if local else member.source,
                    chosen=k == self.chosen,
                    highlights=differences(item, reference),
                    flags=dict(state.flags.get(member.id, {})) if local else {},
                    note=state.notes.get(member.id, "") if local else "",
                    gold_hidden=hidden[k],
                    order=self.session.ballots.order(item) if local else None,
                )
            )
        self.cluster_view.show_cluster(cluster, self.cluster_list.cursor + 1, len(self.clusters), cards)

    def update_header(self) -> None:
        result = self.result
        text = Text(overflow="ellipsis")
        text.append("Duplicates", "bold")
        text.append(
            f"  {terminal_safe(self.project.dataset.name, one_line=True)} · {len(self.project.items):,} items  "
        )
        if self.scanning:
            text.append("scanning…", "italic")
        elif result is not None:
            found = len(result.clusters)
            text.append(f"{len(self.clusters)} open", "bold")
            text.append(f" · {found - len(self.clusters)} resolved")
        done = None if self.scanning else result  # the finished scan, if any
        by = f"{done.model}, {done.short_rule}" if done is not None and done.model and done.request.semantic else ""
        text.append(f"  {self.request.describe(by)}", "dim")
        if done is not None and done.translation_model:
            same = done.translation_model.startswith(done.model or "\0")
            text.append(" · translations: " + ("the same model" if same else done.translation_model), "dim")
        self.query_one("#dup-header", Static).update(text)

    def _watch(self) -> None:
        """Pick up decisions another annotator recorded (the app's poll replays them into the project)."""
        if not self.scanning and len(self.project.state.dedup) != self._decisions:
            self.show_clusters()

    def _refresh_main(self) -> None:
        """Have the item list under this screen redrawn: its ≈ marks and flags follow the clusters."""
        self.app.post_message(MarksChanged())

    # --------------------------------------------------------------- checks

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in RESOLVE_ACTIONS:
            return None if self.scanning or self.cluster_list.current is None else True
        if action in ("toggle_semantic", "against", "rescan"):
            return None if self.scanning else True
        return True

    # --------------------------------------------------------------- moving

    def action_next_cluster(self) -> None:
        self.cluster_list.move(1)
        self._follow_cursor()

    def action_prev_cluster(self) -> None:
        self.cluster_list.move(-1)
        self._follow_cursor()

    def action_next_member(self) -> None:
        self._choose(1)

    def action_prev_member(self) -> None:
        self._choose(-1)

    def _choose(self, step: int) -> None:
        cluster = self.cluster_list.current
        if cluster is not None:
            self.chosen = (self.chosen + step) % len(cluster.members)
            self.show_members()

    def action_scroll_members(self, pages: int) -> None:
        view = self.cluster_view
        view.scroll_to(y=view.scroll_y + pages * max(1, view.size.height - 2), animate=False)

    def action_close(self) -> None:
        if self.scanning:
            self.cancel_scan()
        else:
            self.dismiss(None)

    def action_show_item(self) -> None:
        cluster = self.cluster_list.current
        if cluster is None or self.result is None:
            return
        member = cluster.members[self.chosen]
        if not self.result.is_local(member) or member.id not in self.project.index:
            self.notify(f"{member.id} is in {member.source}, not in this dataset", timeout=4)
            return
        self.dismiss(None)
        self.app.post_message(ShowItem(self.project.index[member.id]))

    # ------------------------------------------------------------ resolving

    def _decide(self, cluster: Cluster, what: str, decide: Callable[[], str], distinct: bool = False) -> None:
        """Record one decision on ``cluster`` through the session's write queue; once it is recorded,
        report it and take the cluster off the list (until then it stays listed, open)."""

        def attempt() -> tuple[str, bool]:
            poll = getattr(self.app, "poll", None)
            if poll is not None:
                poll()  # decide on what others recorded too (a note written meanwhile is merged)
            decisions = len(self.project.state.dedup)
            message = decide()
            return message, len(self.project.state.dedup) != decisions + 1  # others decided meanwhile

        def decided(outcome: tuple[str, bool]) -> None:
            message, others = outcome
            self.notify(message, timeout=4)
            self._resolved(cluster, distinct, others)

        self.session.writes.record(what, attempt, decided)

    def _resolved(self, cluster: Cluster, distinct: bool, others: bool) -> None:
        """``cluster`` is resolved (and, with ``others``, clusters decided elsewhere): list what is still open."""
        if not self.is_attached:  # left meanwhile: only the main screen's ≈ marks follow
            if self.result is not None:
                self.session.marks.duplicates = self.result.duplicate_ids(self.result.open(self.project))
            self._refresh_main()
            return
        if others or not any(c is cluster for c in self.clusters):  # ask about every cluster
            self.show_clusters()
            return
        # Only this decision is new: drop its cluster, and what a "distinct" hides with it.
        members = _member_keys(cluster)
        still_open = [c for c in self.clusters if c is not cluster and not (distinct and _member_keys(c) <= members)]
        self.show_clusters(self.cluster_list.cursor, still_open)

    def action_keep(self) -> None:
        cluster = self.cluster_list.current
        if cluster is None:
            return
        keep = cluster.members[self.chosen]

        def decide() -> str:
            flagged = keep_one(self.project, cluster, keep.id)
            gone = ", ".join(flagged) if flagged else "nothing in this dataset"
            return f"kept {keep.id}; flagged as duplicate: {gone}"

        self._decide(cluster, f"keeping {keep.id} of its cluster", decide)

    def action_distinct(self) -> None:
        cluster = self.cluster_list.current
        if cluster is None:
            return
        ids = ", ".join(m.id for m in cluster.members)

        def chosen(reason: str | None) -> None:
            if reason is None:
                return

            def decide() -> str:
                mark_distinct(self.project, cluster, reason)
                return f"{ids}: marked as distinct items; this cluster is not shown again"

            self._decide(cluster, f"marking {ids} distinct", decide, distinct=True)

        self.app.push_screen(
            TextPrompt("Mark as distinct", f"{ids} are different items. Why? (optional; enter confirms, esc cancels)"),
            chosen,
        )

    def action_merge_notes(self) -> None:
        cluster = self.cluster_list.current
        if cluster is None or self.result is None:
            return
        into = cluster.members[self.chosen]
        if not self.result.is_local(into):
            self.notify(
                f"{into.id} is in {into.source}: choose a member of this dataset to merge the notes into", timeout=5
            )
            return

        def decide() -> str:
            merged = merge_notes(self.project, cluster, into.id)
            return f"notes merged into {into.id}" if merged else f"no notes to merge; cluster resolved with {into.id}"

        self._decide(cluster, f"merging the notes into {into.id}", decide)

    # -------------------------------------------------------------- options

    def action_toggle_semantic(self) -> None:
        self.start_scan(replace(self.request, semantic=not self.request.semantic))

    def action_rescan(self) -> None:
        self.start_scan(self.request)

    def action_against(self) -> None:
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

        self.app.push_screen(
            TextPrompt(
                "Leakage check",
                "Find items of this dataset that duplicate items of another file (e.g. test against train). "
                "Leave empty to look inside this dataset only.",
                str(r.against) if r.against else "",
                check,
            ),
            chosen,
        )
