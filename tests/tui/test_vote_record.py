"""Votes belong to solution texts: a swap moves them, an edit makes them predate the text, and the
released labels (``export --decided``) count only votes for the text that is released."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

from piqa_tui.core.votes.decisions import decisions
from piqa_tui.core.votes.files import import_votes
from piqa_tui.core.votes.policy import Status
from piqa_tui.core.workspace.project import Project
from piqa_tui.tui.dialogs.flag import FlagDialog
from piqa_tui.tui.dialogs.prompts import ChoiceDialog
from tests.conftest import SAMPLES, copy_sample

from .conftest import curate, current_id, main_screen, type_text, wait_for


def voted_darija(tmp_path: Path) -> Path:
    path = copy_sample("darija-algerian.tsv", tmp_path)
    import_votes(Project.open(path, annotator="lead"), SAMPLES / "votes-darija-algerian.tsv")
    return path


def export_decided(path: Path, out: Path) -> dict[str, dict[str, str]]:
    done = subprocess.run(
        [sys.executable, "-m", "piqa_tui.cli.main", "export", str(path), "--to", str(out), "--decided"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "wrote 36 items" in done.stdout
    with out.open(encoding="utf-8", newline="") as handle:
        return {row["id"]: row for row in csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)}


async def test_swap_moves_votes_and_an_edit_makes_them_predate_the_text(tmp_path: Path) -> None:
    path = voted_darija(tmp_path)
    original = {item.id: item for item in Project.open(path).items}
    edited_text = original["dz-007"].solutions[0] + "!"
    async with curate(path, annotator="lead", reviewer=True) as pilot:
        screen = main_screen(pilot)
        project = screen.project
        assert current_id(pilot) == "dz-001"
        await pilot.press("x")  # all three voted for solution 2; it is solution 1 now, and so are their votes
        assert {v.choice for v in project.state.votes["dz-001"].values()} == {"0"}
        assert decisions(project)["dz-001"].label == 0
        await pilot.press(*["j"] * 6)
        assert current_id(pilot) == "dz-007"  # gold 2, amina and sara voted 1, yacine 2
        await pilot.press("tab", "e", "end")
        await type_text(pilot, "!")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, ChoiceDialog))
        assert "2 vote(s) on dz-007 (amina, sara)" in pilot.app.screen.message
        await pilot.press("enter")  # "Edit and mark those votes as cast on an earlier version"
        await wait_for(pilot, lambda: project.item("dz-007").solutions[0] == edited_text)
        assert decisions(project)["dz-007"].status is Status.NEEDS_VOTES
        assert "2 predate an edit" in screen.session.ballots.status_text("dz-007")
        assert screen.session.ballots.summary(project.item("dz-007")).votes.count("a text since edited") == 2
        await pilot.press("q")
    released = export_decided(path, tmp_path / "release.tsv")
    first = original["dz-001"]
    assert (released["dz-001"]["solution0"], released["dz-001"]["solution1"]) == (
        first.solutions[1],
        first.solutions[0],
    )
    assert released["dz-001"]["label"] == "0"  # the text all three chose, at its new place
    # dz-007: the two votes for solution 1 are for a text that changed: they count for nothing, the gold (1) stays.
    assert released["dz-007"]["solution0"] == edited_text
    assert released["dz-007"]["label"] == "1"


async def test_cancelling_the_question_records_no_edit(tmp_path: Path) -> None:
    path = voted_darija(tmp_path)
    async with curate(path, annotator="lead", reviewer=True) as pilot:
        project = main_screen(pilot).project
        before = project.item("dz-001")
        await pilot.press("tab", "tab", "e", "end")  # solution 2, the one all three voted for
        await type_text(pilot, "?")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, ChoiceDialog))
        await pilot.press("escape")
        assert project.item("dz-001") == before
        assert decisions(project)["dz-001"].status is Status.AGREED
    assert Project.open(path).item("dz-001") == before


async def test_one_undo_for_every_action_even_after_a_restart(tmp_path: Path) -> None:
    path = copy_sample("darija-algerian.tsv", tmp_path)
    async with curate(path, annotator="amina") as pilot:
        screen = main_screen(pilot)
        state = screen.project.state
        await pilot.press("2")  # vote 2 on dz-001, on to dz-002
        await pilot.press("1", "k")  # vote 1 on dz-002, back to it
        await pilot.press("2")  # change it to 2
        await pilot.press("k", "backspace")  # withdraw it
        assert state.votes["dz-002"]["amina"].choice == ""
        await pilot.press("u")  # the withdrawal undone: 2 again
        assert state.votes["dz-002"]["amina"].choice == "1" and current_id(pilot) == "dz-002"
        await pilot.press("u")  # the change undone: 1 again
        assert state.votes["dz-002"]["amina"].choice == "0"
        await pilot.press("U")  # redone: 2
        assert state.votes["dz-002"]["amina"].choice == "1"
        await pilot.press("f")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, FlagDialog))
        await pilot.press("1", "3", "enter")  # two reasons in one dialog: one action
        await wait_for(pilot, lambda: len(state.flags.get("dz-002", {})) == 2)
        await pilot.press("c")
        await type_text(pilot, "ماشي واضح")
        await pilot.press("enter")
        await wait_for(pilot, lambda: state.notes.get("dz-002") == "ماشي واضح")
        await pilot.press("u")  # the note
        assert state.notes.get("dz-002", "") == ""
        await pilot.press("u")  # both flags at once
        assert not state.flags.get("dz-002")
        await pilot.press("U")
        assert len(state.flags["dz-002"]) == 2
        await pilot.press("q")
    async with curate(path, annotator="amina") as pilot:  # after a restart, the stack is the same
        state = main_screen(pilot).project.state
        assert len(state.flags["dz-002"]) == 2 and state.votes["dz-002"]["amina"].choice == "1"
        await pilot.press("u", "u")  # the flags, then the vote of 2 on dz-002
        assert not state.flags.get("dz-002") and state.votes["dz-002"]["amina"].choice == "0"
        await pilot.press("u", "u")  # the vote of 1 on dz-002, then the vote on dz-001: no votes left
        assert state.votes["dz-002"]["amina"].choice == "" and state.votes["dz-001"]["amina"].choice == ""
        assert current_id(pilot) == "dz-001"
        await pilot.press("u")
        assert "nothing to undo" in str([n.message for n in pilot.app._notifications])
    reopened = Project.open(path, annotator="amina")
    assert decisions(reopened)["dz-001"].status is Status.NEEDS_VOTES and not reopened.state.flags.get("dz-002")


async def test_blind_annotator_is_asked_without_learning_who_voted_what(tmp_path: Path) -> None:
    path = voted_darija(tmp_path)
    async with curate(path, annotator="karim") as pilot:  # karim has not voted: blind on dz-001
        project = main_screen(pilot).project
        await pilot.press("tab", "e", "end")  # solution 1, which nobody chose
        await type_text(pilot, "!")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, ChoiceDialog))
        message = pilot.app.screen.message
        assert message.startswith("Votes on this item may have chosen")
        assert not any(name in message for name in ("amina", "yacine", "sara"))
        await pilot.press("enter")
        await wait_for(pilot, lambda: project.item("dz-001").solutions[0].endswith("!"))
        assert decisions(project)["dz-001"].status is Status.AGREED  # their text was not the one changed


async def test_a_vote_cast_by_another_process_just_before_an_edit_is_asked_about(tmp_path: Path) -> None:
    """The screen has not yet seen karim's vote (his process cast it a moment ago, before the next look at the
    log) when the lead saves an edit of the text he voted for: nothing is recorded unasked; the question comes,
    naming him, and the edit is recorded once answered."""
    path = copy_sample("darija-algerian.tsv", tmp_path)
    Project.open(path, annotator="lead")  # the workspace exists before both start
    vote = "from piqa_tui.core.workspace.project import Project; import sys; Project.open(sys.argv[1], annotator='karim').vote('dz-007', '0')"
    async with curate(path, annotator="lead", reviewer=True) as pilot:
        screen = main_screen(pilot)
        project = screen.project
        item = project.item("dz-007")
        edited = item.solutions[0] + "!"
        subprocess.run([sys.executable, "-c", vote, str(path)], check=True)
        assert "karim" not in project.state.votes.get("dz-007", {})  # not seen yet: the question would name nobody
        screen.edits.apply_edit(item, {"solution0": edited})  # what saving the field editor calls
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, ChoiceDialog))
        assert "1 vote(s) on dz-007 (karim)" in pilot.app.screen.message
        assert project.item("dz-007").solutions[0] == item.solutions[0]  # nothing recorded before the answer
        await pilot.press("enter")  # "Edit and mark those votes as cast on an earlier version"
        await wait_for(pilot, lambda: project.item("dz-007").solutions[0] == edited)
        assert "1 predate an edit" in screen.session.ballots.status_text("dz-007")
        await pilot.press("q")


async def test_the_edit_dialog_says_the_leads_own_adjudication_will_be_set_aside(tmp_path: Path) -> None:
    """The lead adjudicated dz-007 on solution 2; editing that text asks first and names her own decision, which
    is then set aside (the item is back to the votes, or to A); editing another solution asks nothing of it."""
    path = voted_darija(tmp_path)
    lead = Project.open(path, annotator="lead")
    lead.adjudicate("dz-007", 1, "gold stands")
    lead.workspace.close()  # type: ignore[union-attr]
    async with curate(path, annotator="lead", reviewer=True) as pilot:
        screen = main_screen(pilot)
        project = screen.project
        await pilot.press(*["j"] * 6)
        assert current_id(pilot) == "dz-007"
        await pilot.press("tab", "tab", "e", "end")  # solution 2: the text the adjudication chose (yacine's vote)
        await type_text(pilot, "!")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, ChoiceDialog))
        message = pilot.app.screen.message
        assert "Your adjudication (final label 2) chose that text: it will be set aside" in message
        assert "1 vote(s) on dz-007 (yacine)" in message
        await pilot.press("enter")
        await wait_for(pilot, lambda: project.item("dz-007").solutions[1].endswith("!"))
        assert "set aside" in screen.session.ballots.status_text("dz-007")
        await pilot.press("q")
