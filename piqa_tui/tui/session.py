"""What one run of the TUI works on: the project and what the screens derive from it.

Built off the UI thread (opening a 100,000-item file takes seconds), then
handed to the screens. Holds no Textual objects, so tests can build one
directly.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from piqa_tui.core.dataset.checks import CheckConfig
from piqa_tui.core.dataset.layout import parse_mapping
from piqa_tui.core.gcpause import settle
from piqa_tui.core.workspace.project import Project
from piqa_tui.tui.listing import Marks, Validation
from piqa_tui.tui.model_scores import refresh_marks
from piqa_tui.tui.search import SearchIndex

if TYPE_CHECKING:
    from piqa_tui.core.dedup.scan import DuplicateScan


# How long the TUI waits for another process's write lock before the action goes pending (see pending.py):
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


@dataclass
class Session:
    request: OpenRequest
    project: Project
    validation: Validation
    marks: Marks = field(default_factory=Marks)
    search_index: SearchIndex | None = None
    categories: dict[str, list[tuple[str, int]]] | None = None
    disk_stamp: tuple[int, int] | None = None
    duplicate_scan: "DuplicateScan | None" = None  # the duplicates screen's last results

    @classmethod
    def open(cls, request: OpenRequest) -> "Session":
        """Open the dataset and its workspace (slow on big files: call it from a worker thread)."""
        mapping = parse_mapping(request.mapping) if request.mapping else None
        project = Project.open(request.path, mapping=mapping, workspace=request.workspace, annotator=request.annotator,
                               busy_timeout=request.busy_timeout)
        validation = Validation(project, CheckConfig(max_differences=request.max_differences))
        session = cls(request, project, validation)
        session.disk_stamp = session.stat()
        settle()  # 100,000 items out of the collector's full passes: no GC pauses between keys
        return session

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
            from piqa_tui.tui.listing import categorical_values

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

    def items_changed(self, item_ids: list[str]) -> None:
        """Keep derived data in step with edits (ours or another process's)."""
        refresh_marks(self.project, self.marks.model_disagrees, set(item_ids))  # an edited item's score no longer counts
        if self.search_index is not None:
            for item_id in set(item_ids):
                position = self.project.index.get(item_id)
                if position is not None:
                    self.search_index.update(position, self.project.items[position])
