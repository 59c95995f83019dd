"""A validator of the Arab-culture round opens the app on their own assigned items and works through them."""

from __future__ import annotations

from pathlib import Path

from piqa_tui.core.round.recorded import assignment_in_force
from piqa_tui.core.workspace.project import Project
from piqa_tui.tui.state.listing import Filters
from tests.test_rounds import ARAB, culture_copy, doc_round, imported

from .conftest import curate, current_id, main_screen, wait_for


async def test_a_validator_opens_on_their_assigned_items_and_v_goes_to_the_next(tmp_path: Path) -> None:
    dataset = imported(culture_copy(tmp_path), doc_round(ARAB))
    mine = assignment_in_force(Project.open(dataset, create=False).workspace).of("karim")
    assert len(mine) >= 3
    async with curate(dataset, annotator="karim") as pilot:
        screen = main_screen(pilot)
        await wait_for(pilot, lambda: screen.filtering.filters.queue == "assigned")
        shown = [screen.project.items[pos].id for pos in screen.host.rows]
        assert sorted(shown) == mine  # only his, none voted yet
        assert current_id(pilot) == shown[0]
        await pilot.press("1")  # a vote: the item leaves his queue
        await wait_for(pilot, lambda: len(screen.host.rows) == len(mine) - 1)
        assert shown[0] not in [screen.project.items[pos].id for pos in screen.host.rows]
        before = current_id(pilot)
        await pilot.press("v")
        await pilot.pause()
        assert current_id(pilot) != before and current_id(pilot) in mine
        await pilot.press("escape")  # the rest stays reachable
        await wait_for(pilot, lambda: screen.filtering.filters == Filters())
        assert len(screen.host.rows) == len(screen.project.items)


async def test_without_assigned_items_the_app_opens_on_every_item(tmp_path: Path) -> None:
    dataset = imported(culture_copy(tmp_path), doc_round(ARAB))
    async with curate(dataset, annotator="hala") as pilot:  # the lead: no items to validate
        screen = main_screen(pilot)
        await pilot.pause()
        assert screen.filtering.filters.queue == "all"
        assert len(screen.host.rows) == len(screen.project.items)


async def test_a_finished_assigned_queue_says_so(tmp_path: Path) -> None:
    dataset = imported(culture_copy(tmp_path), doc_round(ARAB))
    mine = assignment_in_force(Project.open(dataset, create=False).workspace).of("karim")
    async with curate(dataset, annotator="karim") as pilot:
        screen = main_screen(pilot)
        await wait_for(pilot, lambda: screen.filtering.filters.queue == "assigned")
        for left in range(len(mine), 0, -1):
            await wait_for(pilot, lambda left=left: len(screen.host.rows) == left)
            await pilot.press("1")
        await wait_for(pilot, lambda: not screen.host.rows)
        message = screen.item_list.empty_message
        assert message.startswith("queue assigned finished: every item assigned to you at validation has your vote")
        assert "no items match" not in message
        await pilot.press("escape")
        await wait_for(pilot, lambda: len(screen.host.rows) == len(screen.project.items))


async def test_a_filter_that_matches_nothing_still_says_so(tmp_path: Path) -> None:
    dataset = imported(culture_copy(tmp_path), doc_round(ARAB))
    async with curate(dataset, annotator="hala") as pilot:  # nothing assigned to the lead
        screen = main_screen(pilot)
        await pilot.pause()
        screen.filtering.set_filters(Filters(queue="assigned"))
        assert screen.item_list.empty_message == "nothing is assigned to you in this round — esc shows every item"
        screen.filtering.set_filters(Filters(queue="flagged"))
        assert screen.item_list.empty_message == "no items match queue flagged — esc clears"
