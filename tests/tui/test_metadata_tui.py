"""Metadata edited in the item view: ``tab`` goes on from the note through the item's columns, ``e`` opens
the column's dialog offering the values it already holds (typing narrows them), and what is chosen or typed
(stored NFC) is recorded as an edit a new process sees."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import OptionList

from piqa_tui.core.workspace.project import Project
from piqa_tui.tui.dialogs.metadata import MetadataDialog
from piqa_tui.tui.widgets.item.field_editor import FieldEditor

from .conftest import curate, current_id, main_screen, type_text


async def test_tab_reaches_a_column_whose_values_are_offered_and_chosen(darija: Path) -> None:
    async with curate(darija) as pilot:
        screen = main_screen(pilot)
        assert current_id(pilot) == "dz-001"
        await pilot.press(*["tab"] * 5)  # prompt, two solutions, label, note: then the metadata rows
        assert screen.item_view.selected == "meta:dialect"
        await pilot.press("tab")
        assert screen.item_view.selected == "meta:category"
        await pilot.press("e")
        await pilot.pause()
        dialog = pilot.app.screen
        assert isinstance(dialog, MetadataDialog)
        assert {"cooking", "cleaning", "clothing"} <= set(dialog.shown)
        assert dialog.shown[0] == "cooking"  # the most used first
        await pilot.press("ctrl+u")
        await type_text(pilot, "CLO")
        await pilot.pause()
        assert dialog.shown == ["clothing"]  # typing narrows, case aside
        await pilot.press("tab")
        assert isinstance(pilot.app.focused, OptionList)
        await pilot.press("enter")
        await pilot.pause()
        assert not isinstance(pilot.app.screen, MetadataDialog)
        assert screen.project.item("dz-001").meta["category"] == "clothing"
        await pilot.press("ctrl+z")  # one undo takes it back
        await pilot.pause()
        assert screen.project.item("dz-001").meta["category"] == "cooking"
        await pilot.press("e")
        await pilot.pause()
        await pilot.press("escape")  # cancelled: nothing recorded
        await pilot.pause()
        assert screen.project.item("dz-001").meta["category"] == "cooking"
    assert Project.open(darija, annotator="tester").item("dz-001").meta["category"] == "cooking"


async def test_a_typed_value_is_stored_nfc_and_a_new_process_sees_it(darija: Path) -> None:
    async with curate(darija) as pilot:
        screen = main_screen(pilot)
        await pilot.press(*["tab"] * 7)
        assert screen.item_view.selected == "meta:source"
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(pilot.app.focused, FieldEditor)
        await pilot.press("ctrl+u")
        await type_text(pilot, "cafe\u0301 notes")
        await pilot.press("enter")
        await pilot.pause()
        assert screen.project.item("dz-001").meta["source"] == "caf\u00e9 notes"
        await pilot.press("tab")  # past the last row, back to the prompt
        assert screen.item_view.selected == "prompt"
    assert Project.open(darija, annotator="tester").item("dz-001").meta["source"] == "caf\u00e9 notes"
