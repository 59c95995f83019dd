"""The duplicates screen: find near-duplicate clusters (and leakage against another file), resolve each.

The scan runs in a thread worker with a progress strip and items/s, and stops
on escape; the screen answers keys meanwhile. The clusters still open are
listed at the top; the selected one's members stand side by side below with
the words that differ lit. The scan and every decision are the duplicates
controller's (``tui/controllers/duplicates.py``): a decision goes through
``core.resolution`` as one action, submitted by the controller, and a cluster
leaves the list once its decision is committed. The last scan is kept on the
session, so coming back shows it again until an item changes.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer, Static
from textual.worker import get_current_worker

from piqa_tui.core.dedup.clusters import Cluster, Member
from piqa_tui.core.dedup.resolution import cluster_key
from piqa_tui.core.dedup.scan import DuplicateScan, ScanRequest, default_choice, differences
from piqa_tui.render.safe_text import shown
from piqa_tui.tui.controllers.duplicates import DuplicatesController
from piqa_tui.tui.keymap import DUPLICATE_ACTIONS, bindings, unlisted
from piqa_tui.tui.messages import MarksChanged, ShowItem
from piqa_tui.tui.screens.host import ScreenHost
from piqa_tui.tui.state.session import Session
from piqa_tui.tui.widgets.duplicates.cluster_list import ClusterList
from piqa_tui.tui.widgets.duplicates.cluster_view import ClusterView, MemberCard
from piqa_tui.tui.widgets.progress_strip import ProgressStrip

WATCH_SECONDS = 2.0  # how often decisions recorded by other annotators are looked for

# Actions that need a finished scan and a cluster under the cursor.
RESOLVE_ACTIONS = {"keep", "distinct", "merge_notes", "next_member", "prev_member", "show_item"}


def _member_keys(cluster: Cluster) -> set[str]:
    """The members as the workspace names them in decisions (``resolution.cluster_key``)."""
    return set(cluster_key(cluster).split("|"))


class DuplicatesHost(ScreenHost["DuplicatesScreen"]):
    """What the duplicates controller asks of the screen."""

    @property
    def strip(self) -> ProgressStrip:
        return self.screen.query_one(ProgressStrip)

    @property
    def selected(self) -> tuple[Cluster, Member] | None:
        cluster = self.screen.cluster_list.current
        return None if cluster is None else (cluster, cluster.members[self.screen.chosen])

    def worker_cancelled(self) -> Callable[[], bool]:
        worker = get_current_worker()
        return lambda: worker.is_cancelled

    def scan_started(self, items: int, request: ScanRequest) -> None:
        screen = self.screen
        screen.cluster_list.show_clusters([], screen.prompt_of, screen.label_of, empty_message="scanning…")
        screen.cluster_view.show_message(
            f"Looking for duplicates among {items:,} items ({request.describe()})… esc cancels."
        )
        screen.refresh_bindings()
        screen.update_header()

    def scan_stopped(self) -> None:
        self.screen.show_clusters()

    def catch_up(self) -> None:
        poll = getattr(self.screen.app, "poll", None)  # the app's poll replays other processes' events
        if poll is not None:
            poll()

    def resolved(self, cluster: Cluster, distinct: bool, others: bool) -> None:
        self.screen.resolved(cluster, distinct, others)


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
        self.clusters: list[Cluster] = []  # the open ones, as listed
        self.chosen = 0  # the member keep and merge act on
        self._shown: Cluster | None = None  # the cluster whose members are on screen
        self._decisions = -1  # len(project.state.dedup) when the list was last built
        self.duplicates = DuplicatesController(session, DuplicatesHost(self, session))

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
            self.duplicates.rescan()

    # ------------------------------------------------------------- scanning

    @property
    def result(self) -> DuplicateScan | None:
        """The scan on screen (the last one finished, kept on the session)."""
        return self.duplicates.result

    @property
    def scanning(self) -> bool:
        return self.duplicates.scanning

    def on_unmount(self) -> None:
        self.duplicates.runs.drop()

    # -------------------------------------------------------------- showing

    def prompt_of(self, member: Member) -> str:
        return self.result.item(member).prompt if self.result else ""

    def label_of(self, member: Member) -> str:
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
        self.cluster_list.show_clusters(self.clusters, self.prompt_of, self.label_of, keep, empty)
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
        text.append(f"  {shown(self.project.dataset.name, one_line=True)} · {len(self.project.items):,} items  ")
        if self.scanning:
            text.append("scanning…", "italic")
        elif result is not None:
            found = len(result.clusters)
            text.append(f"{len(self.clusters)} open", "bold")
            text.append(f" · {found - len(self.clusters)} resolved")
        done = None if self.scanning else result  # the finished scan, if any
        by = f"{done.model}, {done.short_rule}" if done is not None and done.model and done.request.semantic else ""
        text.append(f"  {self.duplicates.request.describe(by)}", "dim")
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
            self.duplicates.cancel_scan()
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

    def resolved(self, cluster: Cluster, distinct: bool, others: bool) -> None:
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
        self.duplicates.keep()

    def action_distinct(self) -> None:
        self.duplicates.distinct()

    def action_merge_notes(self) -> None:
        self.duplicates.merge_notes()

    # -------------------------------------------------------------- options

    def action_toggle_semantic(self) -> None:
        self.duplicates.toggle_semantic()

    def action_rescan(self) -> None:
        self.duplicates.rescan()

    def action_against(self) -> None:
        self.duplicates.against()
