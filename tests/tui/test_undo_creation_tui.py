"""A writer presses u after a reviewer, in another program, worked on the item they wrote: the item stays, and
one line says who and when."""

from __future__ import annotations

from pathlib import Path

from piqa_tui.core.workspace.project import Project

from .conftest import curate, current_id, main_screen, wait_for, write_item


async def test_undo_of_a_new_item_another_annotator_edited_is_refused_in_one_line(darija: Path) -> None:
    async with curate(darija, annotator="amina") as pilot:
        project = main_screen(pilot).project
        before = len(project.items)
        await write_item(pilot, "How to keep bread fresh?", "In a cloth bag", "In the sun")
        await wait_for(pilot, lambda: len(project.items) == before + 1)
        new = project.items[-1].id
        await wait_for(pilot, lambda: current_id(pilot) == new)

        Project.open(darija, annotator="yacine").edit(new, {"solution1": "On a sunny shelf"})
        await pilot.press("u")

        def refusal() -> str | None:
            return next((n.message for n in pilot.app._notifications if "cannot undo" in n.message), None)

        await wait_for(pilot, refusal)
        line = refusal()
        assert line is not None and "\n" not in line
        assert line.startswith(f"cannot undo on {new}: solution1 was changed by yacine at ")
        assert line.endswith("since; nothing was undone")
        assert new in project.index and project.item(new).solutions[1] == "On a sunny shelf"
    assert Project.open(darija, annotator="lead").item(new).prompt == "How to keep bread fresh?"
