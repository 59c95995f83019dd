"""The vote record (issue 12): votes follow solution texts, in the column-wise read and the replay alike."""

from __future__ import annotations

from pathlib import Path

from piqa_tui.core.votes.decisions import decisions
from piqa_tui.core.votes.policy import Status
from piqa_tui.core.workspace.project import Project
from piqa_tui.core.workspace.vote_targets import STALE

from .conftest import copy_sample


def test_a_vote_records_its_text_and_follows_it(tmp_path: Path) -> None:
    path = copy_sample("darija-algerian.tsv", tmp_path)
    for name in ("amina", "karim"):
        Project.open(path, annotator=name).vote("dz-003", "1")
    lead = Project.open(path, annotator="lead")
    chosen = lead.item("dz-003").solutions[1]
    lead.swap_solutions("dz-003", 0, 1)
    assert decisions(lead)["dz-003"].label == 0
    reopened = Project.open(path)  # the column-wise read resolves the same way
    assert decisions(reopened)["dz-003"].label == 0
    assert reopened.item("dz-003").solutions[0] == chosen
    assert {v.choice for v in reopened.state.votes["dz-003"].values()} == {"0"}
    lead.edit("dz-003", {"solution0": chosen + " (edited)"})
    assert decisions(Project.open(path))["dz-003"].status is Status.NEEDS_VOTES
    assert {v.choice for v in Project.open(path).state.votes["dz-003"].values()} == {STALE}
    lead.undo()  # the text is back: so are the votes
    assert decisions(Project.open(path))["dz-003"] == decisions(reopened)["dz-003"]


def test_votes_without_a_key_name_the_text_at_their_time(tmp_path: Path) -> None:
    """An older workspace: vote events without a solution key are matched to the text of the log at their time."""
    path = copy_sample("darija-algerian.tsv", tmp_path)
    project = Project.open(path, annotator="lead")
    assert project.workspace is not None
    project.workspace.insert_votes([("dz-004", "amina", "0", "2020-01-01T00:00:00.000000Z"),
                                    ("dz-004", "karim", "0", "2020-01-01T00:00:01.000000Z")])
    project.refresh()
    project.swap_solutions("dz-004", 0, 1)
    assert decisions(Project.open(path))["dz-004"].label == 1
    project.edit("dz-004", {"solution1": "changed"})
    assert decisions(Project.open(path))["dz-004"].status is Status.NEEDS_VOTES
    later = "2999-01-01T00:00:00.000000Z"  # cast after the edit: it names the edited text
    project.workspace.insert_votes([("dz-004", "sara", "1", later), ("dz-004", "amina", "1", later)])
    assert decisions(Project.open(path))["dz-004"].label == 1
