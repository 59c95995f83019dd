"""On a dataset with three option columns: the new-item form has no field for a fourth solution (core refuses
one from every other path: tests/test_layout_capacity.py), and a validator shown three shuffled blocks of an item that has four texts (a log
written before the check) can vote only with the keys on screen."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from piqa_tui.core.workspace.project import Project
from piqa_tui.tui.dialogs.new_item import NewItemDialog
from piqa_tui.tui.widgets.item.field_editor import FieldEditor
from piqa_tui.tui.widgets.item.vote_panel import VotePanel
from tests.test_layout_capacity import FOUR, four_solution_item
from tests.test_rounds import culture_copy, imported
from tests.test_shuffle import SHUFFLED
from tests.tui.test_shuffled_validation import open_item

from .conftest import curate, main_screen, type_text, wait_for


def checks_text(pilot) -> str:
    return str(pilot.app.screen.query_one("#new-item-checks", Static).render())


async def test_the_new_item_form_offers_no_field_for_a_fourth_solution(tmp_path: Path) -> None:
    dataset = culture_copy(tmp_path)
    async with curate(dataset, annotator="amina") as pilot:
        screen = main_screen(pilot)
        await pilot.press("I")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, NewItemDialog))
        fields = [editor.field for editor in pilot.app.screen.query(FieldEditor)]
        assert fields == ["goal", "solution 1", "solution 2", "solution 3", "gold"]  # the dataset's 3 columns
        await type_text(pilot, "متى يُطبخ الكسكس؟")
        for text in FOUR[:3]:
            await pilot.press("tab")
            await type_text(pilot, text)
        await pilot.press("tab")  # past the third solution: the gold, not a fourth text
        await type_text(pilot, "1")
        await wait_for(pilot, lambda: "not an item yet" not in checks_text(pilot))
        await pilot.press("enter")
        await wait_for(pilot, lambda: pilot.app.screen is screen)
        written = screen.project.items[-1]
        assert written.solutions == tuple(FOUR[:3]) and written.label == 0


async def test_a_validator_votes_only_for_the_solutions_on_screen(tmp_path: Path) -> None:
    dataset = imported(culture_copy(tmp_path), SHUFFLED)
    item_id = four_solution_item(Project.open(dataset, annotator="lead"))
    async with curate(dataset, annotator="amina") as pilot:
        screen = main_screen(pilot)
        await open_item(pilot, item_id)
        assert screen.session.ballots.order(screen.current) is not None  # shuffled for her
        assert sum(block.display for block in screen.item_view.solution_blocks) == 3
        panel = str(screen.item_view.query_one(VotePanel).content)
        assert "1/2/3 votes" in panel and "1/2/3/4" not in panel
        await pilot.press("4")
        await wait_for(
            pilot, lambda: any("shows 3 solutions: vote with 1-3" in n.message for n in pilot.app._notifications)
        )
        await pilot.pause()
        assert "amina" not in screen.project.state.votes.get(item_id, {})
