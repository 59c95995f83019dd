"""What was done to a dataset in its workspace: edits, duplicate decisions, flags, adjudications.

Read from the event log through the project (``Project.state``, the log's
``events``) and the vote decisions (``core.votes.decisions``), so the card
reports the same facts the TUI and ``export`` act on, never a count of its own.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from piqa_tui.core.votes.decisions import adjudicated_label, gold_changes
from piqa_tui.core.workspace.project import Project


@dataclass
class Curation:
    """The curation steps a workspace records (all counts of items unless named otherwise)."""

    edit_actions: int = 0  # edit actions in the log (one action may set several fields)
    items_touched: int = 0  # items any edit action touched
    items_edited: int = 0  # items whose current text differs from the source file
    editors: list[str] = field(default_factory=list)
    adjudicated: list[str] = field(default_factory=list)  # item ids whose label a reviewer decided
    gold_changed: list[str] = field(default_factory=list)  # item ids whose decided label is not the file's gold
    clusters: dict[str, int] = field(default_factory=dict)  # duplicate decision (keep, distinct, merge) → clusters
    flags: dict[str, int] = field(default_factory=dict)  # flag reason → items flagged
    duplicates: list[str] = field(default_factory=list)  # item ids flagged as a duplicate of another item

    @property
    def any(self) -> bool:
        return bool(self.edit_actions or self.adjudicated or self.clusters or self.flags or self.gold_changed)


def _edits(project: Project, found: Curation) -> None:
    events = project.workspace.events(kinds=["edit"]) if project.workspace else []
    found.edit_actions = len({event.action or event.seq for event in events})
    found.items_touched = len({event.item_id for event in events if event.item_id})
    found.editors = list(dict.fromkeys(event.annotator for event in events))
    found.items_edited = len(project.state.edited)


def curation_record(project: Project) -> Curation:
    """The curation steps recorded in the project's workspace (all zero without one)."""
    found = Curation()
    _edits(project, found)
    found.adjudicated = [
        i for i in project.state.adjudications if i in project.index and adjudicated_label(project, i) is not None
    ]
    found.gold_changed = [change.id for change in gold_changes(project)]
    found.clusters = dict(Counter(decision.partition(":")[0] for decision in project.state.dedup.values()))
    reasons = Counter(
        reason for item_id, flags in project.state.flags.items() if item_id in project.index for reason in flags
    )
    found.flags = dict(sorted(reasons.items()))
    found.duplicates = [item.id for item in project.items if "duplicate" in project.state.flags.get(item.id, {})]
    return found
