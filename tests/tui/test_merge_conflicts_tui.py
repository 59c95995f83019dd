"""A field changed on two machines before a merge: the item says so, C shows both versions with who made each,
and whichever the user keeps (the one shown, the other, or a merge by hand) is recorded and clears the conflict."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from textual.pilot import Pilot

from piqa_tui.core.sync.merge import merge_workspace
from piqa_tui.core.workspace.project import Project
from piqa_tui.tui.dialogs.prompts import ChoiceDialog
from piqa_tui.tui.widgets.item.field_editor import FieldEditor

from .conftest import curate, main_screen, type_text, wait_for

WS = ".piqa.sqlite"


def edited_on_two_machines(darija: Path) -> tuple[str, str, str]:
    """dz-001's prompt edited by amina here and by yacine on a copy, then the copy merged in.
    Returns (the text both started from, amina's, yacine's)."""
    here = Project.open(darija, annotator="setup")
    base = here.item("dz-001").prompt
    here.workspace.close()  # type: ignore[union-attr]
    laptop = darija.parent / "laptop"
    laptop.mkdir()
    for path in darija.parent.glob(darija.name + "*"):
        if path.is_file():
            shutil.copy(path, laptop / path.name)
    for folder, who in ((darija.parent, "amina"), (laptop, "yacine")):
        project = Project.open(folder / darija.name, annotator=who)
        project.edit("dz-001", {"prompt": f"{base} ({who})"})
        project.workspace.close()  # type: ignore[union-attr]
    target = Project.open(darija, annotator="setup")
    merge_workspace(target.workspace, laptop / (darija.name + WS))  # type: ignore[arg-type]
    target.workspace.close()  # type: ignore[union-attr]
    return base, f"{base} (amina)", f"{base} (yacine)"


async def open_dialog(pilot: Pilot) -> ChoiceDialog:
    await pilot.press("C")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, ChoiceDialog))
    dialog = pilot.app.screen
    assert isinstance(dialog, ChoiceDialog)
    return dialog


def settled(path: Path) -> Project:
    project = Project.open(path, annotator="check")
    assert project.conflicts() == []
    return project


@pytest.mark.parametrize("keep", ["shown", "other"])
async def test_keeping_one_version_records_it_and_clears_the_conflict(darija: Path, keep: str) -> None:
    base, amina, yacine = edited_on_two_machines(darija)
    conflict = Project.open(darija, annotator="check").conflicts()[0]
    shown, other = conflict.current, conflict.other
    assert {shown, other} == {amina, yacine}
    async with curate(darija, annotator="lead") as pilot:
        screen = main_screen(pilot)
        assert "two machines" in screen.host.session.ballots.status_text("dz-001")
        dialog = await open_dialog(pilot)
        for text in (base, amina, yacine, "amina", "yacine"):
            assert text in dialog.message
        await pilot.press(*(["enter"] if keep == "shown" else ["down", "enter"]))
        await wait_for(pilot, lambda: not screen.project.conflicts())
        assert "two machines" not in screen.host.session.ballots.status_text("dz-001")
    project = settled(darija)
    assert project.item("dz-001").prompt == (shown if keep == "shown" else other)
    last = project.workspace.events(kinds=["edit"])[-1]  # type: ignore[union-attr]
    assert last.annotator == "lead" and last.old == shown


async def merge_by_hand(pilot: Pilot) -> str:
    """Choose "Merge by hand" for dz-001's conflict; returns the version shown, which the editor opens with."""
    shown = main_screen(pilot).project.conflicts()[0].current
    await open_dialog(pilot)
    await pilot.press("down", "down", "enter")
    await wait_for(pilot, lambda: isinstance(pilot.app.focused, FieldEditor))
    editor = pilot.app.focused
    assert isinstance(editor, FieldEditor) and editor.value == shown
    return shown


async def test_merge_by_hand_records_the_edited_text_as_the_resolution(darija: Path) -> None:
    edited_on_two_machines(darija)
    async with curate(darija, annotator="lead") as pilot:
        screen = main_screen(pilot)
        shown = await merge_by_hand(pilot)
        await pilot.press("end")
        await type_text(pilot, " +")
        await pilot.press("enter")
        await wait_for(pilot, lambda: not screen.project.conflicts())
    assert settled(darija).item("dz-001").prompt == shown + " +"


async def test_saving_the_merge_unchanged_keeps_the_one_shown(darija: Path) -> None:
    edited_on_two_machines(darija)
    async with curate(darija, annotator="lead") as pilot:
        screen = main_screen(pilot)
        shown = await merge_by_hand(pilot)
        await pilot.press("enter")
        await wait_for(pilot, lambda: not screen.project.conflicts())
    assert settled(darija).item("dz-001").prompt == shown


async def test_c_on_an_item_without_a_conflict_says_so_and_records_nothing(darija: Path) -> None:
    async with curate(darija, annotator="lead") as pilot:
        before = main_screen(pilot).project.workspace.last_seq()  # type: ignore[union-attr]
        await pilot.press("C")
        await pilot.pause()
        assert not isinstance(pilot.app.screen, ChoiceDialog)
        assert main_screen(pilot).project.workspace.last_seq() == before  # type: ignore[union-attr]
