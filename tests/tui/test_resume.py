"""A session picks up where you left off: each annotator reopens at their item, and v finds the next unvoted one."""

from __future__ import annotations

from pathlib import Path

from piqa_tui.core.workspace.log import Workspace, default_location

from .conftest import curate, current_id, main_screen, type_text, wait_for


async def go_to(pilot, item_id: str) -> None:
    await pilot.press("colon")
    await type_text(pilot, item_id)
    await pilot.press("enter")
    assert current_id(pilot) == item_id


async def test_reopening_starts_at_the_item_you_were_on(darija: Path) -> None:
    async with curate(darija, annotator="amina") as pilot:
        await go_to(pilot, "dz-010")
        await pilot.press("j", "j")  # quit at once: the move is remembered even before the cursor rests
    async with curate(darija, annotator="bilal") as pilot:
        assert current_id(pilot) == "dz-001"  # per annotator: bilal has not been anywhere yet
        await go_to(pilot, "dz-030")
    ws = Workspace(default_location(darija))
    assert ws.get_meta("position:amina") == "dz-012" and ws.get_meta("position:bilal") == "dz-030"
    ws.close()
    async with curate(darija, annotator="amina") as pilot:
        await wait_for(pilot, lambda: current_id(pilot) == "dz-012")
        assert main_screen(pilot).item_view.item.id == "dz-012"  # the item view shows it too, not just the list
    async with curate(darija, annotator="bilal") as pilot:
        await wait_for(pilot, lambda: current_id(pilot) == "dz-030")


async def test_a_resting_cursor_is_written_down_before_you_quit(darija: Path) -> None:
    async with curate(darija, annotator="amina") as pilot:
        await pilot.press("j", "j", "j")
        ws = Workspace(default_location(darija))  # another connection: what a crash would leave behind
        await wait_for(pilot, lambda: ws.get_meta("position:amina") == "dz-004")
        assert ws.get_meta("position:amina") == "dz-004"  # committed while the app still runs
        ws.close()


async def test_v_jumps_to_the_next_item_you_have_not_voted_on(darija: Path) -> None:
    async with curate(darija, annotator="amina") as pilot:
        await pilot.press("1", "2", "1")  # votes on dz-001..dz-003, each moving on
        await pilot.press("j", "1")  # skips dz-004, votes on dz-005
        await pilot.press("g", "v")
        assert current_id(pilot) == "dz-004"
        await pilot.press("v")
        assert current_id(pilot) == "dz-006"
        await pilot.press("G", "1")  # votes on the last item, dz-036
        await pilot.press("v")
        assert current_id(pilot) == "dz-004"  # wrapped round to the top
    async with curate(darija, annotator="amina") as pilot:  # after a restart: back at dz-004, and v goes on from there
        await wait_for(pilot, lambda: current_id(pilot) == "dz-004")
        await pilot.press("v")
        assert current_id(pilot) == "dz-006"
