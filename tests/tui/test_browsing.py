"""An annotator moves through a set, searches it and filters it down to a queue or a category."""

from __future__ import annotations

from pathlib import Path

from piqa_tui.tui.dialogs.prompts import ChoiceDialog, TextPrompt
from piqa_tui.tui.screens.main import MainScreen
from piqa_tui.tui.state.listing import Filters

from .conftest import curate, current_id, main_screen, run_from_palette, type_text, wait_for


async def test_moving_with_keys(darija: Path) -> None:
    async with curate(darija, size=(80, 24)) as pilot:
        assert current_id(pilot) == "dz-001"
        await pilot.press("j", "down", "j")
        assert current_id(pilot) == "dz-004"
        await pilot.press("k", "up")
        assert current_id(pilot) == "dz-002"
        await pilot.press("G")
        assert current_id(pilot) == "dz-036"
        await pilot.press("g")
        assert current_id(pilot) == "dz-001"
        await pilot.press("pagedown")
        page = main_screen(pilot).item_list.scrollable_content_region.height - 1
        assert current_id(pilot) == f"dz-{1 + page:03d}"
        await pilot.press("pageup")
        assert current_id(pilot) == "dz-001"


async def test_mouse_click_selects_a_row(darija: Path) -> None:
    async with curate(darija) as pilot:
        await pilot.click("#item-list", offset=(10, 4))
        assert current_id(pilot) == "dz-005"


async def test_jump_to_id(darija: Path) -> None:
    async with curate(darija) as pilot:
        await pilot.press("colon")
        assert isinstance(pilot.app.screen, TextPrompt)
        await type_text(pilot, "dz-404")
        await pilot.press("enter")
        assert isinstance(pilot.app.screen, TextPrompt)  # unknown id: the prompt stays, with an error
        await pilot.press("ctrl+u")
        await type_text(pilot, "dz-027")
        await pilot.press("enter")
        assert isinstance(pilot.app.screen, MainScreen)
        assert current_id(pilot) == "dz-027"


async def test_search_substring_then_fuzzy(darija: Path) -> None:
    async with curate(darija) as pilot:
        screen = main_screen(pilot)
        await pilot.press("slash")
        await type_text(pilot, "الكسكسي")  # the word of dz-001's prompt, typed without harakat
        await wait_for(
            pilot,
            lambda: screen.filtering.search_result is not None and screen.filtering.search_result.query == "الكسكسي",
        )
        result = screen.filtering.search_result
        assert result is not None and result.exact >= 1
        first = screen.project.items[result.positions[0]]
        assert "الكسكسي" in first.prompt + " ".join(first.solutions)
        await pilot.press("enter")  # browse the results
        assert pilot.app.focused is screen.item_list
        assert len(screen.item_list.rows) == len(result.positions)
        await pilot.press("escape")  # clears the search
        assert len(screen.item_list.rows) == 36


async def test_search_is_forgiving_about_harakat(darija: Path) -> None:
    async with curate(darija) as pilot:
        screen = main_screen(pilot)
        target = next(i for i in screen.project.items if "الشَّاي" in i.solutions[0])
        await pilot.press("slash")
        await type_text(pilot, "الشاي")  # typed without the shadda and fatha of الشَّاي
        await wait_for(
            pilot,
            lambda: screen.filtering.search_result is not None and screen.filtering.search_result.query == "الشاي",
        )
        assert (
            screen.project.index[target.id]
            in screen.filtering.search_result.positions[: screen.filtering.search_result.exact]
        )


async def choose(pilot, label_start: str) -> None:
    """Pick the option of the open ChoiceDialog whose text starts with ``label_start``."""
    from textual.widgets import OptionList

    dialog = pilot.app.screen
    assert isinstance(dialog, ChoiceDialog)
    options = dialog.query_one(OptionList)
    for _ in range(options.option_count):
        highlighted = options.get_option_at_index(options.highlighted)
        if str(highlighted.prompt).startswith(label_start):
            await pilot.press("enter")
            return
        await pilot.press("down")
    raise AssertionError(f"no option {label_start!r}")


async def test_filter_by_queue_and_by_column(darija: Path) -> None:
    async with curate(darija) as pilot:
        screen = main_screen(pilot)
        await pilot.press("F")
        await choose(pilot, "invalid")
        invalid = {screen.project.items[p].id for p in screen.item_list.rows}
        assert {"dz-012", "dz-024", "dz-033"} <= invalid  # the planted problems
        assert screen.filtering.filters == Filters(queue="invalid")
        await pilot.press("escape")
        await pilot.press("F")
        await choose(pilot, "repairs")
        shown = [screen.project.items[p] for p in screen.item_list.rows]
        assert shown and all(item.meta["category"] == "repairs" for item in shown)
        await pilot.press("escape")
        assert len(screen.item_list.rows) == 36


async def test_edited_queue_follows_edits(darija: Path) -> None:
    async with curate(darija) as pilot:
        screen = main_screen(pilot)
        await pilot.press("j", "x")  # swap dz-002
        await pilot.press("F")
        await choose(pilot, "edited")
        assert [screen.project.items[p].id for p in screen.item_list.rows] == ["dz-002"]
        await pilot.press("F")
        await choose(pilot, "flagged")
        assert list(screen.item_list.rows) == []
        assert "no items match" in screen.item_list.empty_message
        await pilot.press("u")  # undo shows the item it changed, leaving the empty queue
        assert current_id(pilot) == "dz-002"
        assert not screen.filtering.filters.active
        assert "dz-002" not in screen.project.state.edited


async def test_too_small_terminal_shows_a_message(darija: Path) -> None:
    async with curate(darija, size=(50, 12)) as pilot:
        screen = main_screen(pilot)
        assert screen.has_class("-too-small")
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        assert not screen.has_class("-too-small")


async def test_command_palette_lists_actions(darija: Path) -> None:
    async with curate(darija) as pilot:
        await run_from_palette(pilot, "swap")
        assert "dz-001" in main_screen(pilot).project.state.edited


async def test_keys_are_remapped_from_config(darija: Path) -> None:
    async with curate(darija, keys={"next_item": "ctrl+n", "swap_solutions": "S"}) as pilot:
        await pilot.press("ctrl+n")
        assert current_id(pilot) == "dz-002"
        await pilot.press("j")  # no longer bound
        assert current_id(pilot) == "dz-002"
        await pilot.press("S")
        assert "dz-002" in main_screen(pilot).project.state.edited


async def test_mouse_selects_and_edits_a_field(darija: Path) -> None:
    from piqa_tui.tui.widgets.item.field_editor import FieldEditor

    async with curate(darija) as pilot:
        screen = main_screen(pilot)
        await pilot.click("#field-solution1", offset=(4, 1))
        assert screen.item_view.selected == "solution1"
        await pilot.double_click("#field-solution0", offset=(4, 1))
        editor = pilot.app.focused
        assert isinstance(editor, FieldEditor) and editor.field == "solution0"
        await pilot.press("escape")


async def test_copy_gives_the_stored_text_and_bidi_modes_cycle(darija: Path) -> None:
    async with curate(darija) as pilot:
        screen = main_screen(pilot)
        await pilot.press("y")
        assert pilot.app.clipboard == screen.project.item("dz-001").prompt  # logical, not shaped or reordered
        assert pilot.app.session.bidi_mode == "app"
        await pilot.press("b")
        assert pilot.app.session.bidi_mode == "terminal"
        await pilot.press("b")
        assert pilot.app.session.bidi_mode == "off"
        first_row = screen.item_list.render_line(0).text
        assert "كيفاش" in first_row  # off: logical order, unshaped
