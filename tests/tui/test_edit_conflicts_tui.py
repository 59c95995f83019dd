"""Two annotators on one field: the app shows theirs, mine and the text I started from, and records what I
choose; an undo over someone else's later change is refused with one line."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot

from piqa_tui.core.workspace.project import Project
from piqa_tui.tui.dialogs.prompts import ChoiceDialog
from piqa_tui.tui.widgets.item.field_editor import FieldEditor
from tests.test_edit_conflicts import other_process_edits

from .conftest import curate, main_screen, type_text, wait_for


def stored(path: Path) -> Project:
    return Project.open(path, annotator="lead")


async def type_prompt_while_another_saves(pilot: Pilot, path: Path, mine: str) -> ChoiceDialog:
    """Open dz-001's prompt, type ``mine``; meanwhile another process saves "their prompt"; save."""
    await pilot.press("e")
    assert isinstance(pilot.app.focused, FieldEditor)
    await pilot.press("ctrl+u")
    await type_text(pilot, mine)
    other_process_edits(path, "yacine", "dz-001", "prompt", "their prompt")
    await pilot.press("enter")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, ChoiceDialog))
    dialog = pilot.app.screen
    assert isinstance(dialog, ChoiceDialog)
    return dialog


async def test_the_dialog_shows_the_three_versions_and_keep_theirs_records_nothing(darija: Path) -> None:
    base = Project.open(darija, annotator="setup").item("dz-001").prompt
    async with curate(darija, annotator="amina") as pilot:
        dialog = await type_prompt_while_another_saves(pilot, darija, "my prompt")
        assert "yacine" in dialog.message
        assert "their prompt" in dialog.message and "my prompt" in dialog.message and base in dialog.message
        await pilot.press("enter")  # the first choice: keep theirs
        await wait_for(pilot, lambda: not isinstance(pilot.app.screen, ChoiceDialog))
        assert main_screen(pilot).project.item("dz-001").prompt == "their prompt"
    assert stored(darija).item("dz-001").prompt == "their prompt"


async def test_escape_keeps_theirs(darija: Path) -> None:
    async with curate(darija, annotator="amina") as pilot:
        await type_prompt_while_another_saves(pilot, darija, "my prompt")
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(pilot.app.screen, ChoiceDialog))
    assert stored(darija).item("dz-001").prompt == "their prompt"


async def test_keep_mine_records_mine_over_theirs(darija: Path) -> None:
    async with curate(darija, annotator="amina") as pilot:
        await type_prompt_while_another_saves(pilot, darija, "my prompt")
        await pilot.press("down", "enter")
        await wait_for(pilot, lambda: main_screen(pilot).project.item("dz-001").prompt == "my prompt")
    project = stored(darija)
    assert project.item("dz-001").prompt == "my prompt"
    edit = project.workspace.events(kinds=["edit"])[-1]  # type: ignore[union-attr]
    assert (edit.annotator, edit.old, edit.new) == ("amina", "their prompt", "my prompt")


async def test_merge_reopens_the_editor_with_mine_and_records_the_merge(darija: Path) -> None:
    async with curate(darija, annotator="amina") as pilot:
        await type_prompt_while_another_saves(pilot, darija, "my prompt")
        await pilot.press("down", "down", "enter")
        await wait_for(pilot, lambda: isinstance(pilot.app.focused, FieldEditor))
        editor = pilot.app.focused
        assert isinstance(editor, FieldEditor) and editor.value == "my prompt"
        await pilot.press("end")
        await type_text(pilot, " and their prompt")
        await pilot.press("enter")
        await wait_for(pilot, lambda: main_screen(pilot).project.item("dz-001").prompt.endswith("their prompt"))
        assert not isinstance(pilot.app.screen, ChoiceDialog)  # recorded on theirs: no second conflict
    assert stored(darija).item("dz-001").prompt == "my prompt and their prompt"


async def test_a_note_conflict_opens_the_same_dialog(darija: Path) -> None:
    async with curate(darija, annotator="amina") as pilot:
        await pilot.press("c")
        await wait_for(pilot, lambda: isinstance(pilot.app.focused, FieldEditor))
        await type_text(pilot, "my note")
        other_process_edits(darija, "yacine", "dz-001", "note", "their note")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, ChoiceDialog))
        assert "their note" in pilot.app.screen.message  # type: ignore[attr-defined]
        await pilot.press("down", "enter")
        await wait_for(pilot, lambda: main_screen(pilot).project.state.notes.get("dz-001") == "my note")
    assert stored(darija).state.notes["dz-001"] == "my note"


async def test_undo_after_another_edit_shows_the_refusal_and_changes_nothing(darija: Path) -> None:
    async with curate(darija, annotator="amina") as pilot:
        await pilot.press("e", "ctrl+u")
        await type_text(pilot, "my prompt")
        await pilot.press("enter")
        project = main_screen(pilot).project
        assert project.item("dz-001").prompt == "my prompt"
        other_process_edits(darija, "yacine", "dz-001", "prompt", "their prompt")
        await pilot.press("u")
        await wait_for(pilot, lambda: any("changed by yacine" in n.message for n in pilot.app._notifications))
        line = next(n.message for n in pilot.app._notifications if "changed by yacine" in n.message)
        assert line.startswith("cannot undo on dz-001") and "\n" not in line
        assert project.item("dz-001").prompt == "their prompt"
    assert stored(darija).item("dz-001").prompt == "their prompt"
