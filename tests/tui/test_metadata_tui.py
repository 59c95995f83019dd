"""Metadata edited in the item view: ``tab`` goes on from the note through the item's columns, ``e`` opens
the column's dialog offering the values it already holds (typing narrows them), and what is chosen or typed
(stored NFC) is recorded as an edit a new process sees; a column changed on two copies is merged by hand there."""

from __future__ import annotations

import shutil
from pathlib import Path

from textual.widgets import OptionList

from piqa_tui.core.sync.merge import merge_workspace
from piqa_tui.core.workspace.project import Project
from piqa_tui.tui.dialogs.metadata import MetadataDialog
from piqa_tui.tui.dialogs.prompts import ChoiceDialog
from piqa_tui.tui.widgets.item.field_editor import FieldEditor

from .conftest import curate, current_id, main_screen, type_text, wait_for


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
        await pilot.press("tab", "tab")  # the translation beside the prompt, then round to the prompt
        assert screen.item_view.selected == "prompt"
    assert Project.open(darija, annotator="tester").item("dz-001").meta["source"] == "caf\u00e9 notes"


async def test_a_column_changed_on_two_copies_is_merged_by_hand_in_its_dialog(darija: Path) -> None:
    Project.open(darija, annotator="setup").workspace.close()  # type: ignore[union-attr]
    laptop = darija.parent / "laptop"
    shutil.copytree(darija.parent, laptop)  # the dataset and its workspace, as another machine has them
    for folder, who in ((darija.parent, "amina"), (laptop, "yacine")):
        project = Project.open(folder / darija.name, annotator=who)
        project.edit("dz-001", {"meta:category": f"food ({who})"})
        project.workspace.close()  # type: ignore[union-attr]
    target = Project.open(darija, annotator="setup")
    merge_workspace(target.workspace, laptop / (darija.name + ".piqa.sqlite"))  # type: ignore[arg-type]
    target.refresh()
    (conflict,) = target.conflicts()
    assert conflict.field == "meta:category"
    target.workspace.close()  # type: ignore[union-attr]
    async with curate(darija, annotator="lead") as pilot:
        screen = main_screen(pilot)
        await pilot.press("C")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, ChoiceDialog))
        await pilot.press("down", "down", "enter")  # merge by hand
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, MetadataDialog))
        assert pilot.app.focused is not None and getattr(pilot.app.focused, "value", None) == conflict.current
        await pilot.press("ctrl+u")
        await type_text(pilot, "food")
        await pilot.press("enter")
        await wait_for(pilot, lambda: not screen.project.conflicts())
    assert Project.open(darija, annotator="check").item("dz-001").meta["category"] == "food"


async def test_tab_reaches_a_translation_column_after_the_table(darija: Path) -> None:
    async with curate(darija) as pilot:
        screen = main_screen(pilot)
        await pilot.press(*["tab"] * 8)  # past dialect, category and source
        assert screen.item_view.selected == "meta:msa_translation"
        assert screen.item_view.block("prompt").has_class("-selected")  # shown beside the prompt
        await pilot.press("e")
        await pilot.pause()
        dialog = pilot.app.screen
        assert isinstance(dialog, MetadataDialog) and dialog.column == "msa_translation"
        assert dialog.shown == []  # a translation is the item's own: no other item's is offered
        await pilot.press("end")
        await type_text(pilot, " ؟")
        await pilot.press("enter")
        await pilot.pause()
        assert screen.project.item("dz-001").meta["msa_translation"].endswith(" ؟")
