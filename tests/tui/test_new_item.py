"""A writer adds an item in the TUI: the form shows validate's checks as they type, enter records a draft
the list moves to, T moves it on through the stages, u takes each step back, and save writes it to the file."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from piqa_tui.core.round.stages import stage_of
from piqa_tui.core.workspace.project import Project
from piqa_tui.tui.dialogs.new_item import NewItemDialog

from .conftest import curate, current_id, main_screen, type_text, wait_for, write_item


def checks_text(pilot) -> str:
    return str(pilot.app.screen.query_one("#new-item-checks", Static).render())


async def test_a_new_item_is_written_checked_live_staged_undone_and_saved(tamil: Path) -> None:
    async with curate(tamil) as pilot:
        screen = main_screen(pilot)
        before = len(screen.project.items)
        await pilot.press("I")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, NewItemDialog))
        assert "write the goal first" in checks_text(pilot)
        await type_text(pilot, "How to keep rice from sticking?")
        await pilot.press("tab")
        await type_text(pilot, "Rinse the rice")
        await pilot.press("tab")
        await type_text(pilot, "Rinse the rice")  # identical solutions: the minimal-pair check says so, live
        await wait_for(pilot, lambda: "identical" in checks_text(pilot) or "same" in checks_text(pilot))
        for _ in range(len("rice")):
            await pilot.press("backspace")
        await type_text(pilot, "pot")
        await pilot.press("tab")  # the gold next: the dataset has two solution columns, the form two solution fields
        await type_text(pilot, "1")
        await pilot.press("enter")
        await wait_for(pilot, lambda: len(screen.project.items) == before + 1)
        new = screen.project.items[-1]
        assert new.id.startswith("new-") and new.solutions == ("Rinse the rice", "Rinse the pot") and new.label == 0
        await wait_for(pilot, lambda: current_id(pilot) == new.id)
        assert stage_of(screen.project, new.id) == "draft"
        assert "stage draft" in str(screen.item_view.title_line.render())

        await pilot.press("T")
        await wait_for(pilot, lambda: stage_of(screen.project, new.id) == "review")
        await pilot.press("u")
        await wait_for(pilot, lambda: stage_of(screen.project, new.id) == "draft")
        await pilot.press("u")  # the item itself goes
        await wait_for(pilot, lambda: len(screen.project.items) == before)
        await pilot.press("U")  # and comes back
        await wait_for(pilot, lambda: len(screen.project.items) == before + 1)
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: not screen.session.unsaved)
    saved = Project.open(tamil, create=False)
    assert saved.items[-1].id == new.id and saved.items[-1].prompt == "How to keep rice from sticking?"
    assert len(saved.dataset.items) == before + 1  # in the file itself, not only in the workspace


async def test_escape_leaves_the_form_and_records_nothing(tamil: Path) -> None:
    async with curate(tamil) as pilot:
        screen = main_screen(pilot)
        before = screen.project.workspace.last_seq()
        await pilot.press("I")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, NewItemDialog))
        await type_text(pilot, "half a goal")
        await pilot.press("enter")  # not an item yet: the form stays and says why
        assert isinstance(pilot.app.screen, NewItemDialog)
        assert "cannot save yet" in checks_text(pilot)
        await pilot.press("escape")
        await wait_for(pilot, lambda: pilot.app.screen is screen)
        assert screen.project.workspace.last_seq() == before


async def test_a_writer_of_the_round_writes_an_item_of_their_country(tmp_path: Path) -> None:
    from tests.test_rounds import ARAB, culture_copy, doc_round, imported

    dataset = imported(culture_copy(tmp_path), doc_round(ARAB))
    async with curate(dataset, annotator="karim") as pilot:
        screen = main_screen(pilot)
        await write_item(pilot, "goal", "one", "two")
        await wait_for(pilot, lambda: screen.project.items[-1].id.startswith("new-"))
        new = screen.project.items[-1]
        assert (new.meta["author"], new.meta["country"]) == ("karim", "Algeria")
        await wait_for(pilot, lambda: current_id(pilot) == new.id)  # shown, though the assigned queue was open
