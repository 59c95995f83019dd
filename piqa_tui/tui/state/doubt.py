"""The labels in doubt as the TUI shows them: the label audit's, worked out again only once the workspace log moved.

Scoring every label costs a fraction of a second on 100,000 items once the stored model runs are read,
so the "doubt" queue asks for it (``labels_in_doubt``) and the item view only reads what the queue last
worked out, if it still holds (``known_doubt``): voting never waits for the audit. The runs' probabilities
(a second or more to read for two runs of 100,000 items) are kept until the runs or the items' texts change.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from operator import is_
from typing import TYPE_CHECKING

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.errors import PiqaError
from piqa_tui.core.votes.decisions import policy_spec
from piqa_tui.core.votes.policy import Policy
from piqa_tui.core.workspace.project import Project

if TYPE_CHECKING:  # the audit is imported when the queue first asks for it, not before the first screen
    from piqa_tui.core.quality.crowdlab import ModelProbabilities
    from piqa_tui.core.quality.doubt import Doubt
    from piqa_tui.core.scoring.templates import Template


@dataclass(frozen=True)
class _ModelsRead:
    """The stored runs' probabilities, and the items (by identity) they were read for."""

    items: list[Item]
    models: list[ModelProbabilities]


def _known_templates() -> Mapping[str, Template] | None:
    from piqa_tui.settings.template_catalog import available_templates

    try:
        return available_templates()
    except PiqaError:  # a bad user template file: the shipped templates still read their scores
        return None


def _models(project: Project) -> list[ModelProbabilities]:
    """The stored runs' probabilities for every item, read again when a run was stored or an item's text changed
    (an edit replaces the item object)."""
    from piqa_tui.core.quality.evidence import every_item_models
    from piqa_tui.core.scoring.stored import runs_stamp

    stamp = runs_stamp(project.workspace.conn) if project.workspace is not None else None
    items = project.items
    kept = project.memo.peek(_models, stamp, follow_log=False)
    if isinstance(kept, _ModelsRead) and len(kept.items) == len(items) and all(map(is_, kept.items, items)):
        return kept.models
    read = _ModelsRead(list(items), every_item_models(project, _known_templates()))
    project.memo.get(_models, lambda: read, stamp, follow_log=False)
    return read.models


def labels_in_doubt(project: Project, policy: Policy) -> dict[str, Doubt]:
    """The labels in doubt by item id, lowest score first (worked out again when the log has moved)."""
    from piqa_tui.core.quality.audit import audit_labels

    def work_out() -> dict[str, Doubt]:
        return audit_labels(project, policy, annotators=False, models=_models(project)).by_id

    return project.memo.get(labels_in_doubt, work_out, policy_spec(policy))


def known_doubt(project: Project, policy: Policy, item_id: str) -> Doubt | None:
    """The item's doubt as last worked out, if that still holds; never works it out."""
    found = project.memo.peek(labels_in_doubt, policy_spec(policy))
    return found.get(item_id) if isinstance(found, dict) else None
