"""Blind voting: what an annotator may see of an item before they have voted on it."""

from __future__ import annotations

from piqa_tui.core.workspace.project import Project


def has_voted(project: Project, item_id: str, annotator: str | None = None) -> bool:
    """Whether the annotator has a current vote (a choice or 'skip') on the item."""
    vote = project.state.votes.get(item_id, {}).get(annotator or project.annotator)
    return vote is not None and vote.choice != ""


def may_see_answers(project: Project, item_id: str, reviewer: bool) -> bool:
    """Blind mode: gold and others' votes stay hidden until this annotator has voted (reviewers see all)."""
    return reviewer or has_voted(project, item_id)
