"""What one run of the TUI works on: the project, its per-project services and what the screens derive from it.

Built off the UI thread (opening a 100,000-item file takes seconds), then
handed to the screens. The session owns the services every screen shares: the
votes as this user may see them (``Ballots``), the model's scores
(``ModelScores``, with the low-margin threshold from the settings) and the
scoring engine, made on first use. It is also the one place for the state
every screen reads: reviewer mode, the bidi mode, unsaved edits, the
file-changed-on-disk warning, what the main screen is busy with, and whether
an item's answers may be shown. Holds no Textual objects, so tests can build
one directly.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from dataclasses import InitVar, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from piqa_tui.core.dataset.checks import CheckConfig, labels_look_one_based
from piqa_tui.core.dataset.item import Item
from piqa_tui.core.dataset.layout import parse_mapping
from piqa_tui.core.dataset.reading import read_head
from piqa_tui.core.errors import PiqaError, WorkspaceError
from piqa_tui.core.gcpause import settle
from piqa_tui.core.round.stages import writer_of
from piqa_tui.core.sync.exchange import catch_up
from piqa_tui.core.text.bidi import BidiMode
from piqa_tui.core.text.bidi_mode import set_screen_mode
from piqa_tui.core.text.direction import Direction, Directions
from piqa_tui.core.workspace.log import Workspace, default_location
from piqa_tui.core.workspace.preferences import (
    resume_position,
    store_mapping,
    stored_directions,
    stored_mapping,
)
from piqa_tui.core.workspace.project import Project, default_annotator
from piqa_tui.tui.state.ballots import Ballots
from piqa_tui.tui.state.listing import Marks, Validation
from piqa_tui.tui.state.model_scores import LOW_MARGIN, ModelScores
from piqa_tui.tui.state.search import SearchIndex
from piqa_tui.tui.state.writes import Writes

if TYPE_CHECKING:
    from piqa_tui.core.dedup.scan import DuplicateScan
    from piqa_tui.core.scoring.engine import ScoringEngine
    from piqa_tui.core.sync.exchange import LastSync


BIDI_CYCLE = (BidiMode.APP, BidiMode.TERMINAL, BidiMode.OFF)
DISK_CHANGED = "file changed on disk"

# How long the TUI waits for another process's write lock before the action goes pending (see state/writes.py):
# short, because the screen waits with it.
TUI_BUSY_TIMEOUT = 2.0


@dataclass
class OpenRequest:
    """Everything needed to (re)open the dataset."""

    path: Path
    mapping: str | None = None
    workspace: str | None = None
    annotator: str | None = None
    max_differences: int = 2
    busy_timeout: float = TUI_BUSY_TIMEOUT
    directions: Directions = field(default_factory=Directions)  # what the config file sets for this dataset
    keep_mapping: bool = False  # the mapping was chosen in the TUI: keep it in the workspace once it opens


@dataclass
class Session:
    request: OpenRequest
    project: Project
    validation: Validation
    reviewer: bool = False  # reviewer mode: no blind mode for this user
    low_margin: InitVar[float] = LOW_MARGIN  # nats: the low-margin queue's threshold
    bidi_mode: BidiMode = BidiMode.APP  # how right-to-left text is drawn (cycled with a key)
    marks: Marks = field(default_factory=Marks)
    search_index: SearchIndex | None = None
    categories: dict[str, list[tuple[str, int]]] | None = None
    disk_stamp: tuple[int, int] | None = None
    duplicate_scan: DuplicateScan | None = None  # the duplicates screen's last results
    directions: Directions = field(default_factory=Directions)  # the config's, with the workspace's on top
    notice: str = ""  # something the user should read once the dataset is on screen
    unsaved: bool = False  # edits recorded in the workspace since the file was last written
    saved_version: int = -1  # the project's version the file was last written at (-1: not written this session)
    disk_warning: str = ""  # the header's warning: the dataset file changed on disk since it was read
    disk_notified: bool = False  # the user was told about the change on disk (once per open)
    busy: str = ""  # what the main screen is doing that keeps edits off (saving, exporting, searching)
    loading: str = ""  # a preview of the file's first rows: what is still being read (only moving works)
    last_sync: LastSync | None = None  # the workspace's last sync with the team (tui/controllers/sync.py)
    syncing: bool = False  # a sync runs now
    arrived: list[str] = field(default_factory=list)  # the team's work in the repository applied on opening, said once
    start_id: str | None = None  # a preview's first item on screen: where the annotator left off
    painted: threading.Event = field(default_factory=threading.Event, repr=False)  # a preview is on screen
    ballots: Ballots = field(init=False)
    scores: ModelScores = field(init=False)
    writes: Writes = field(init=False)  # the one route of every write (tui/state/writes.py)
    _engine: ScoringEngine | None = field(default=None, init=False, repr=False)
    _engine_lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def __post_init__(self, low_margin: float) -> None:
        self.ballots = Ballots(self.project, self.reviewer)
        self.scores = ModelScores(low_margin=low_margin)
        self.unsaved = bool(self.project.state.edited)
        self.writes = Writes(self.project.workspace)

    @property
    def writes_waiting(self) -> bool:
        """Whether actions wait in the write queue for a busy workspace (a timed sync then waits its turn)."""
        return bool(self.writes.queue)

    @classmethod
    def open(
        cls,
        request: OpenRequest,
        reviewer: bool = False,
        low_margin: float = LOW_MARGIN,
        bidi_mode: BidiMode = BidiMode.APP,
    ) -> Session:
        """Open the dataset and its workspace (slow on big files: call it from a worker thread)."""
        mapping = parse_mapping(request.mapping) if request.mapping else None
        arrived = catch_up(Path(request.path), Path(request.workspace) if request.workspace else None)
        project = Project.open(
            request.path,
            mapping=mapping,
            workspace=request.workspace,
            annotator=request.annotator,
            busy_timeout=request.busy_timeout,
        )
        validation = Validation(project, CheckConfig(max_differences=request.max_differences))
        session = cls(request, project, validation, reviewer, low_margin, bidi_mode)
        session.arrived = arrived
        session.directions = stored_directions(project.workspace, request.directions)
        if request.keep_mapping and mapping is not None:
            try:
                store_mapping(project.workspace, mapping)
            except WorkspaceError as exc:  # the mapping applies now; only the next open will ask again
                session.notice = f"the column mapping is used now but not kept: {exc}"
        session.disk_stamp = project.dataset.stamp  # as the file was when read: a change since is noticed
        settle()  # 100,000 items out of the collector's full passes: no GC pauses between keys
        return session

    @classmethod
    def preview(
        cls,
        request: OpenRequest,
        reviewer: bool = False,
        low_margin: float = LOW_MARGIN,
        bidi_mode: BidiMode = BidiMode.APP,
    ) -> Session | None:
        """The first rows of a large file, shown read-only while ``open`` reads the whole of it; None when the file
        is small or when the rows shown could differ from what the whole file and the workspace will show
        (recorded events, ids made by the workspace, labels that may be 1-based, a head that does not parse)."""
        mapping = parse_mapping(request.mapping) if request.mapping else None
        ws_path = Path(request.workspace) if request.workspace else default_location(request.path)
        annotator = request.annotator or default_annotator()
        start_id, directions = None, request.directions
        try:
            if ws_path.is_file():
                ws = Workspace(ws_path, read_only=True)
                try:
                    if ws.last_seq():  # votes, edits, flags: they change rows and marks, so wait for them
                        return None
                    start_id = resume_position(ws, annotator)
                    directions = stored_directions(ws, request.directions)
                finally:
                    ws.close()
                mapping = mapping or stored_mapping(ws_path)
            dataset = read_head(request.path, mapping)
        except PiqaError:
            return None
        if dataset is None or (dataset.layout.id is None and ws_path.exists()):
            return None
        if not dataset.layout.explicit and labels_look_one_based(dataset.items):
            return None
        project = Project(dataset, None, annotator)
        if start_id is not None and start_id not in project.index:
            return None  # the annotator left off further down: a preview would open elsewhere
        validation = Validation(project, CheckConfig(max_differences=request.max_differences))
        session = cls(request, project, validation, reviewer, low_margin, bidi_mode)
        session.directions, session.start_id = directions, start_id
        session.loading = f"reading {dataset.name} ({dataset.stamp[1] / 1e6:,.0f} MB)" if dataset.stamp else "reading"
        return session

    # ------------------------------------------------------- what screens show

    def gold_hidden(self, item: Item) -> bool:
        """Whether the gold label stays hidden for this item: blind mode until you voted on it (not for reviewers),
        except on an item you wrote in the workspace (its gold is what you typed; the round never gives you
        your own items to validate)."""
        if self.ballots.visible(item.id):
            return False
        return writer_of(self.project, item.id) != self.project.annotator

    def cycle_bidi(self) -> BidiMode:
        """Switch to the next bidi mode (app, terminal, off) and return it."""
        index = BIDI_CYCLE.index(self.bidi_mode) if self.bidi_mode in BIDI_CYCLE else -1
        self.bidi_mode = BIDI_CYCLE[(index + 1) % len(BIDI_CYCLE)]
        set_screen_mode(self.bidi_mode)  # the app's lines that hold data follow at once
        return self.bidi_mode

    def disk_changed(self) -> bool:
        """Note that the dataset file changed on disk; True the first time (when the user should be told)."""
        self.disk_warning = DISK_CHANGED
        first, self.disk_notified = not self.disk_notified, True
        return first

    def written(self, version: int) -> None:
        """The file now holds every edit recorded up to the project's ``version``: nothing unsaved, no warning
        about the disk. Changes reported later that the save already held (a write made just before it, reported
        by the next poll) do not mark the file unsaved again."""
        self.unsaved = self.project.version != version
        self.saved_version = version
        self.disk_warning = ""

    def set_direction(self, column: str | None, direction: Direction) -> None:
        """Set the paragraph direction of ``column`` (``None``: the whole dataset) for this session; a controller
        submits ``store_direction`` to keep it for the next (the write queue commits it)."""
        if column is None:
            self.directions = Directions(direction, self.directions.columns)
        else:
            self.directions = self.directions.with_column(column, direction)

    def stat(self) -> tuple[int, int] | None:
        """(mtime, size) of the dataset file, a cheap first test for changes on disk."""
        try:
            st = os.stat(self.project.dataset.path)
        except OSError:
            return None
        return st.st_mtime_ns, st.st_size

    def categorical_columns(self) -> dict[str, list[tuple[str, int]]]:
        """Metadata columns that behave like categories, with their values (cached)."""
        if self.categories is None:
            from piqa_tui.core.report.stats import categorical_columns
            from piqa_tui.tui.state.listing import categorical_values

            items = self.project.items
            columns = categorical_columns(items, self.project.dataset.meta_columns)
            self.categories = {c: categorical_values(items, c) for c in columns}
        return self.categories

    def ensure_search_index(self, pause: Callable[[], None] | None = None) -> SearchIndex:
        if self.search_index is None:
            index = SearchIndex(self.project.items, pause)
            if self.search_index is None:  # another thread may have finished first
                self.search_index = index
        return self.search_index

    # ------------------------------------------------------------- the model

    def engine(self) -> ScoringEngine:
        """The project's scoring engine, made on first use with the model ``choose_model`` finds; ModelError when none."""
        with self._engine_lock:  # worker threads ask for it concurrently: one engine, one model in memory
            if self._engine is None:
                from piqa_tui.core.scoring.engine import ScoringEngine
                from piqa_tui.settings.model_choice import choose_model

                self._engine = ScoringEngine(self.project, choose_model())
            return self._engine

    def close_engine(self) -> None:
        """Free the model (waits for the chunk in flight); the next ``engine()`` makes a new one."""
        with self._engine_lock:
            engine, self._engine = self._engine, None
        if engine is not None:
            engine.close()

    def refresh_model_marks(self, item_ids: Iterable[str] | None = None) -> None:
        """Bring the list's ✗ marks of ``item_ids`` (all items when None) in step with the scores and the items."""
        marks, scores, project = self.marks.model_disagrees, self.scores, self.project
        if item_ids is None:
            marks.clear()
            marks.update(scores.disagreeing_ids(project.items))
            return
        for item_id in item_ids:
            position = project.index.get(item_id)
            if position is not None and scores.disagrees(project.items[position]):
                marks.add(item_id)
            else:
                marks.discard(item_id)

    # ----------------------------------------------------------------- edits

    def items_changed(self, item_ids: list[str]) -> None:
        """Keep derived data in step with edits (ours or another process's)."""
        if self.project.version != self.saved_version:  # not already in the file the last save wrote
            self.unsaved = True
        self.refresh_model_marks(set(item_ids))  # an edited item's score no longer counts
        if self.search_index is not None and len(self.search_index.texts) != len(self.project.items):
            self.search_index = None  # an item was written or withdrawn: the next search reads them all again
        if self.search_index is not None:
            for item_id in set(item_ids):
                position = self.project.index.get(item_id)
                if position is not None:
                    self.search_index.update(position, self.project.items[position])
