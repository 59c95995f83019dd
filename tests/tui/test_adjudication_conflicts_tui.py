"""An item adjudicated differently on two machines before a merge: C shows both decisions (text, who, why),
a reviewer keeps one, and the choice is recorded as a new adjudication made on the one in force."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from piqa_tui.core.sync.merge import merge_workspace
from piqa_tui.core.workspace.project import ADJUDICATION, Project
from piqa_tui.tui.dialogs.prompts import ChoiceDialog

from .conftest import curate, main_screen, wait_for
from .test_merge_conflicts_tui import WS, open_dialog, settled


def adjudicated_on_two_machines(darija: Path) -> tuple[str, str]:
    """dz-001 adjudicated to solution 1 by amina here and to solution 2 by yacine on a copy, then the copy
    merged in. Returns (amina's text, yacine's text)."""
    laptop = darija.parent / "laptop"
    laptop.mkdir()
    for path in darija.parent.glob(darija.name + "*"):
        if path.is_file():
            shutil.copy(path, laptop / path.name)
    for folder, who, label in ((darija.parent, "amina", 0), (laptop, "yacine", 1)):
        project = Project.open(folder / darija.name, annotator=who)
        project.adjudicate("dz-001", label, f"{who}'s reason")
        project.workspace.close()  # type: ignore[union-attr]
    target = Project.open(darija, annotator="setup")
    merge_workspace(target.workspace, laptop / (darija.name + WS))  # type: ignore[arg-type]
    target.workspace.close()  # type: ignore[union-attr]
    return tuple(Project.open(darija).item("dz-001").solutions[:2])  # type: ignore[return-value]


@pytest.mark.parametrize("keep", ["shown", "other"])
async def test_a_reviewer_keeps_one_decision_and_the_conflict_clears(darija: Path, keep: str) -> None:
    amina, yacine = adjudicated_on_two_machines(darija)
    (conflict,) = Project.open(darija, annotator="check").conflicts()
    assert conflict.field == ADJUDICATION and (conflict.current, conflict.other) == (yacine, amina)
    async with curate(darija, annotator="lead", reviewer=True) as pilot:
        screen = main_screen(pilot)
        assert "two machines" in screen.host.session.ballots.status_text("dz-001")
        dialog = await open_dialog(pilot)
        for text in (amina, yacine, "amina's reason", "yacine's reason", "(no adjudication)"):
            assert text in dialog.message
        await pilot.press(*(["enter"] if keep == "shown" else ["down", "enter"]))
        await wait_for(pilot, lambda: not screen.project.conflicts())
    project = settled(darija)
    decision = project.state.adjudications["dz-001"]
    assert (decision.who, decision.text) == ("lead", yacine if keep == "shown" else amina)
    assert decision.reason == ("yacine's reason" if keep == "shown" else "amina's reason")


async def test_without_reviewer_mode_c_names_the_conflict_and_shows_no_decision(darija: Path) -> None:
    adjudicated_on_two_machines(darija)
    async with curate(darija, annotator="annotator") as pilot:
        before = main_screen(pilot).project.workspace.last_seq()  # type: ignore[union-attr]
        await pilot.press("C")
        await pilot.pause()
        assert not isinstance(pilot.app.screen, ChoiceDialog)
        assert main_screen(pilot).project.workspace.last_seq() == before  # type: ignore[union-attr]
