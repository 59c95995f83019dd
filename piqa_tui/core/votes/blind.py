"""Blind voting: what an annotator may see of an item before they have voted on it."""

from __future__ import annotations

from piqa_tui.core.workspace.project import Project


def current_vote(project: Project, item_id: str, annotator: str | None = None) -> str | None:
    """The annotator's current vote on the item as stored (a solution index or 'skip'); None if they have none.

    A withdrawn vote is stored as '' and counts as none. ``annotator`` defaults to the project's.
    """
    vote = project.state.votes.get(item_id, {}).get(annotator or project.annotator)
    return None if vote is None else vote.choice or None


def cast_votes(project: Project, item_id: str) -> dict[str, str]:
    """Every annotator's current vote on the item, by annotator in name order (withdrawn votes left out)."""
    votes = project.state.votes.get(item_id, {})
    return {a: choice for a in sorted(votes) if (choice := current_vote(project, item_id, a)) is not None}


def has_voted(project: Project, item_id: str, annotator: str | None = None) -> bool:
    """Whether the annotator has a current vote (a choice or 'skip') on the item."""
    return current_vote(project, item_id, annotator) is not None


def may_see_answers(project: Project, item_id: str, reviewer: bool) -> bool:
    """Blind mode: gold and others' votes stay hidden until this annotator has voted (reviewers see all)."""
    return reviewer or has_voted(project, item_id)
