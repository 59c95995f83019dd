"""An annotator edits items in place: the workspace and the saved file must say what the screen said."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from piqa_tui.core.dataset.reading import load_dataset
from piqa_tui.core.workspace.project import Project
from piqa_tui.tui.dialogs.prompts import ChoiceDialog
from piqa_tui.tui.widgets.item.field_editor import FieldEditor

from .conftest import curate, current_id, drawn_lines, main_screen, type_text, wait_for

TA_001_SOL0 = "மாவை இரவு முழுவதும் குளிர்சாதனப் பெட்டியில் மூடி வைக்கவும்."


def reopen(path: Path, annotator: str = "tester") -> Project:
    return Project.open(path, annotator=annotator)


async def test_tamil_backspace_takes_the_pulli_first_and_the_edit_is_recorded(tamil: Path) -> None:
    async with curate(tamil) as pilot:
        screen = main_screen(pilot)
        assert current_id(pilot) == "ta-001"
        await pilot.press("tab")  # prompt -> solution 1
        assert screen.item_view.selected == "solution0"
        await pilot.press("e")
        editor = pilot.app.focused
        assert isinstance(editor, FieldEditor) and editor.value == TA_001_SOL0
        await pilot.press("end", "backspace", "backspace")
        # "." then the pulli of "ம்", as a Tamil keyboard's backspace does: "ம" stays.
        assert editor.value == TA_001_SOL0[:-2]
        assert editor.value.endswith("வைக்கவும")
        await pilot.press("home", "right")
        assert editor.cursor == len("மா")  # one step over consonant + vowel sign
        await pilot.press("end")
        await type_text(pilot, "்!")
        await pilot.press("enter")
        assert not isinstance(pilot.app.focused, FieldEditor)
        project = screen.project
        assert project.item("ta-001").solutions[0] == TA_001_SOL0[:-1] + "!"
        assert "ta-001" in project.state.edited
    # Recorded in the workspace: a new process sees it.
    assert reopen(tamil).item("ta-001").solutions[0] == TA_001_SOL0[:-1] + "!"


async def test_live_validation_while_typing(tamil: Path) -> None:
    async with curate(tamil) as pilot:
        screen = main_screen(pilot)
        await pilot.press("tab", "e", "ctrl+u")
        await type_text(pilot, "முற்றிலும் வேறு ஒரு வாக்கியம்")
        await pilot.pause()
        assert "differ by" in drawn_lines(screen.item_view.query_one("#problems"))
        await pilot.press("escape")
        assert screen.project.item("ta-001").solutions[0] == TA_001_SOL0  # cancelled: nothing recorded
        await pilot.pause()
        assert "no problems" in drawn_lines(screen.item_view.query_one("#problems"))


async def test_swap_solutions_moves_the_label(darija: Path) -> None:
    async with curate(darija) as pilot:
        screen = main_screen(pilot)
        await pilot.press("j")
        assert current_id(pilot) == "dz-002"
        before = screen.project.item("dz-002")
        assert before.label == 0
        await pilot.press("x")
        after = screen.project.item("dz-002")
        assert after.solutions == (before.solutions[1], before.solutions[0])
        assert after.label == 1


async def test_label_and_note_are_edited_in_place(darija: Path) -> None:
    async with curate(darija, reviewer=True) as pilot:  # blind mode hides the gold label from annotators
        screen = main_screen(pilot)
        await pilot.press("l", "2")  # choose solution 2 as gold
        assert screen.project.item("dz-001").label == 1  # was 1 already: nothing to record
        await pilot.press("l", "1")
        assert screen.project.item("dz-001").label == 0
        await pilot.press("c")
        await type_text(pilot, "check with Yacine")
        await pilot.press("enter")
        assert screen.project.state.notes["dz-001"] == "check with Yacine"


async def test_undo_survives_a_restart(darija: Path) -> None:
    async with curate(darija) as pilot:
        await pilot.press("j", "j", "x")  # swap dz-003
        swapped = main_screen(pilot).project.item("dz-003")
        await pilot.press("q")
    original = load_dataset(darija).items[2]
    assert swapped.solutions != original.solutions
    async with curate(darija) as pilot:
        screen = main_screen(pilot)
        assert screen.project.item("dz-003").solutions == swapped.solutions
        await pilot.press("u")
        assert current_id(pilot) == "dz-003"  # undo takes you to the item it changed
        assert screen.project.item("dz-003").solutions == original.solutions
        assert screen.project.item("dz-003").label == original.label
        await pilot.press("U")
        assert screen.project.item("dz-003").solutions == swapped.solutions


async def test_save_writes_the_file(tamil: Path) -> None:
    async with curate(tamil) as pilot:
        await pilot.press("tab", "e", "end", "backspace")
        await type_text(pilot, "!")
        await pilot.press("enter", "ctrl+s")
        await wait_for(pilot, lambda: not main_screen(pilot).busy)
        assert not pilot.app.session.unsaved
    saved = load_dataset(tamil)
    assert saved.items[0].solutions[0] == TA_001_SOL0[:-1] + "!"
    assert saved.items[1] == load_dataset(tamil).items[1]
    assert tamil.read_text(encoding="utf-8").count("\n") == 33  # header + 32 rows, nothing lost


async def test_external_editor(darija: Path, tmp_path: Path, monkeypatch) -> None:
    script = tmp_path / "fake-editor.sh"
    script.write_text("#!/bin/sh\nprintf 'نص جديد من المحرر\\n' > \"$1\"\n", encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("VISUAL", str(script))
    async with curate(darija) as pilot:
        screen = main_screen(pilot)
        await pilot.press("E")  # the prompt is selected
        await wait_for(pilot, lambda: screen.project.item("dz-001").prompt == "نص جديد من المحرر")
        assert screen.project.item("dz-001").prompt == "نص جديد من المحرر"  # the editor's final newline is dropped


async def test_disk_change_is_detected_and_nothing_is_overwritten(darija: Path) -> None:
    async with curate(darija) as pilot:
        await pilot.press("x")
        text = darija.read_text(encoding="utf-8")
        other = text.replace("dz-036", "dz-036b")
        darija.write_text(other, encoding="utf-8")
        os.utime(darija, None)
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, ChoiceDialog))
        assert darija.read_text(encoding="utf-8") == other  # untouched
        await pilot.press("escape")
        assert "changed on disk" in pilot.app.session.disk_warning
