"""The voting controller as a plain object: real session, project and workspace; only the screen is a stand-in.

What the annotator's keys do (vote and move on, unsure, withdraw, flag, the
policy, review) is checked in the workspace the controller wrote to, and in
what it asked the screen to do.
"""

from __future__ import annotations

from pathlib import Path

from piqa_tui.core.votes.decisions import policy_spec
from piqa_tui.core.votes.policy import SKIP, Status
from piqa_tui.core.workspace.project import Project
from piqa_tui.tui.controllers.voting import VotingController
from piqa_tui.tui.dialogs.flag import FlagChoice, FlagDialog
from piqa_tui.tui.dialogs.prompts import ChoiceDialog
from piqa_tui.tui.state.session import OpenRequest, Session

from .standin import ScreenStandIn


def voting(path: Path, annotator: str = "amina", reviewer: bool = False) -> tuple[VotingController, ScreenStandIn]:
    session = Session.open(OpenRequest(path, annotator=annotator), reviewer=reviewer)
    screen = ScreenStandIn(session)
    return VotingController(session, screen), screen


def recorded(path: Path, annotator: str) -> Project:
    """The workspace as another process reads it: what was recorded, not what the controller holds."""
    return Project.open(path, annotator=annotator)


def test_a_vote_is_recorded_and_the_cursor_moves_on(darija: Path) -> None:
    controller, screen = voting(darija)
    controller.vote(1)
    assert screen.position == 1 and screen.changed == [["dz-001"]]
    assert recorded(darija, "other").state.votes["dz-001"]["amina"].choice == "1"
    assert controller.ballots.my_vote("dz-001") == "1"
    assert controller.ballots.summary(controller.project.item("dz-001")).mine == "2"  # annotators count from 1

    controller.vote_unsure()
    assert screen.position == 2
    assert recorded(darija, "other").state.votes["dz-002"]["amina"].choice == SKIP


def test_a_vote_beyond_the_items_solutions_is_refused(darija: Path) -> None:
    controller, screen = voting(darija)
    controller.vote(2)  # the darija items have two solutions
    assert screen.position == 0 and screen.changed == []
    assert screen.said("warning") == ["dz-001 has 2 solutions: vote with 1-2, or 0 for unsure"]
    assert "dz-001" not in recorded(darija, "other").state.votes


def test_withdrawing_a_vote(darija: Path) -> None:
    controller, screen = voting(darija)
    controller.withdraw()
    assert screen.said() == ["you have no vote on dz-001 to withdraw"]
    controller.vote(0)
    screen.position = 0
    controller.withdraw()
    assert controller.ballots.my_vote("dz-001") is None
    assert screen.said()[-1] == "withdrew your vote (1) on dz-001"
    vote = recorded(darija, "other").state.votes["dz-001"]["amina"]
    assert vote.choice == ""  # withdrawn: recorded, not erased


def test_flags_follow_the_dialogs_answer(darija: Path) -> None:
    controller, screen = voting(darija)
    controller.flag()
    dialog, _ = screen.pushed[-1]
    assert isinstance(dialog, FlagDialog) and dialog.item_id == "dz-001" and dialog.current == {}
    screen.answer(FlagChoice(frozenset({"ungrammatical", "both-correct"}), "الكلمة الثانية"))
    assert recorded(darija, "other").state.flags["dz-001"] == {
        "ungrammatical": "الكلمة الثانية",
        "both-correct": "الكلمة الثانية",
    }
    assert screen.said()[-1] == "dz-001: both-correct, ungrammatical"

    controller.flag()  # the dialog starts from the flags the item has; unticking one takes it off
    dialog, _ = screen.pushed[-1]
    assert set(dialog.current) == {"ungrammatical", "both-correct"}
    screen.answer(FlagChoice(frozenset({"both-correct"}), ""))
    assert set(recorded(darija, "other").state.flags["dz-001"]) == {"both-correct"}

    controller.flag()
    screen.answer(None)  # esc: nothing changes
    assert set(recorded(darija, "other").state.flags["dz-001"]) == {"both-correct"}


def test_the_policy_decides_the_status(darija: Path) -> None:
    first, _ = voting(darija, "amina")
    gold = first.project.item("dz-001").label
    assert gold is not None
    first.vote(gold)
    second, screen = voting(darija, "karim")
    second.vote(gold)
    assert second.ballots.status("dz-001") is Status.AGREED  # the default policy: 2 of 3 agree (with gold)

    second.set_policy()
    dialog, _ = screen.pushed[-1]
    assert isinstance(dialog, ChoiceDialog)
    screen.answer("unanimity:3")
    assert policy_spec(second.ballots.policy) == "unanimity:3"
    assert screen.changed[-1] == []  # every item's decision may have changed: redraw all
    assert second.ballots.status("dz-001") is Status.NEEDS_VOTES
    first.ballots.reload_policy()  # the policy is the dataset's, in the workspace: every annotator's follows
    assert first.ballots.status("dz-001") is Status.NEEDS_VOTES


def test_review_screens_are_for_reviewers(darija: Path) -> None:
    controller, screen = voting(darija)
    controller.agreement()  # κ and the status counts show how everyone voted: closed in blind mode
    controller.adjudicate()  # every vote and the gold label: closed too
    assert screen.pushed == [] and screen.opened == []
    assert all("start piqa-tui with --reviewer" in text for text in screen.said("warning"))
    assert len(screen.said("warning")) == 2

    reviewer, screen = voting(darija, "lead", reviewer=True)
    reviewer.agreement()
    reviewer.adjudicate()
    assert screen.opened == ["agreement", "adjudication"]
