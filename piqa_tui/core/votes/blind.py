"""Blind voting: what an annotator may see of an item before they have voted on it."""

from __future__ import annotations

from piqa_tui.core.workspace.project import Project
from piqa_tui.core.workspace.vote_targets import STALE


def current_vote(project: Project, item_id: str, annotator: str | None = None) -> str | None:
    """The annotator's current vote on the item as stored (a solution index or 'skip'); None if they have none.

    A withdrawn vote is stored as '' and counts as none; a vote cast on a solution text edited since is
    ``STALE``. ``annotator`` defaults to the project's.
    """
    vote = project.state.votes.get(item_id, {}).get(annotator or project.annotator)
    return None if vote is None else vote.choice or None


def cast_votes(project: Project, item_id: str) -> dict[str, str]:
    """Every annotator's current vote on the item, by annotator in name order (withdrawn votes left out)."""
    votes = project.state.votes.get(item_id, {})
    return {a: choice for a in sorted(votes) if (choice := current_vote(project, item_id, a)) is not None}


def has_voted(project: Project, item_id: str, annotator: str | None = None) -> bool:
    """Whether the annotator has a current vote (a choice or 'skip') on the item's current text.

    A stale vote (its solution was edited since) does not count: the item is back in the annotator's
    unvoted queue until they confirm it.
    """
    return current_vote(project, item_id, annotator) not in (None, STALE)


def may_see_answers(project: Project, item_id: str, reviewer: bool) -> bool:
    """Blind mode: gold, others' votes and the decision stay hidden until this annotator has voted (reviewers
    see all).

    A stale vote (its solution was edited since) counts as no vote here too: the item is back in the annotator's
    queue, and the vote that counts is the next one, cast blind as the first was. What they saw before the edit
    was of another text; showing the gold label, the others' votes or an adjudication now would lead the re-vote.
    """
    return reviewer or has_voted(project, item_id)
