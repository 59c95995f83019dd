"""The small things a reader meets every few minutes: flag notes on the item, checkboxes, n/N without a search."""

from __future__ import annotations

from pathlib import Path

from piqa_tui.core.text.bidi import BidiMode, layout
from piqa_tui.tui.dialogs.flag import FlagDialog, ReasonList
from piqa_tui.tui.screens.main import MainScreen
from piqa_tui.tui.widgets.item.flags_line import FlagsLine

from .conftest import curate, current_id, main_screen, type_text, wait_for

NOTE = "ماشي هكذا فالدزاير"


def lines_of(widget) -> list[str]:
    return [widget.render_line(y).text.rstrip() for y in range(widget.size.height)]


async def test_a_flag_note_is_shown_on_the_item_and_checkboxes_differ_on_and_off(darija: Path) -> None:
    async with curate(darija, size=(100, 40)) as pilot:
        flags = main_screen(pilot).item_view.query_one(FlagsLine)
        assert not flags.display  # no flag: no line
        await pilot.press("f")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, FlagDialog))
        reasons = pilot.app.screen.query_one(ReasonList)
        await pilot.pause()
        assert all("·" in line and "✓" not in line for line in lines_of(reasons))  # every box off
        await pilot.press("2")  # culturally-wrong on
        await pilot.pause()
        marks = ["✓" if "✓" in line else "·" for line in lines_of(reasons)]
        assert marks[1] == "✓" and marks.count("✓") == 1
        await pilot.press("tab")
        await type_text(pilot, NOTE)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, MainScreen))
        await pilot.pause()
        shown = lines_of(flags)
        assert flags.display and "⚑ culturally-wrong — note:" in shown[0]
        drawn = layout(NOTE, 80, BidiMode.APP)[0].text  # shaped and in display order, right-aligned
        assert any(line.endswith(drawn) for line in shown[1:])
        await pilot.press("j", "k")  # leaving and coming back: still there
        assert "culturally-wrong" in lines_of(flags)[0]


async def test_n_and_N_without_a_search_say_so(darija: Path) -> None:
    async with curate(darija) as pilot:
        await pilot.press("n")
        assert current_id(pilot) == "dz-001"  # did not move
        assert any("no search" in n.message for n in pilot.app._notifications)
        pilot.app.clear_notifications()
        await pilot.press("N")
        assert any("no search" in n.message for n in pilot.app._notifications)


async def test_at_80x24_the_list_shows_more_of_each_prompt(darija: Path) -> None:
    async with curate(darija, size=(80, 24)) as pilot:
        screen = main_screen(pilot)
        assert screen.has_class("-narrow")
        item_list = screen.item_list
        row = item_list.render_line(0).text
        words = row.split("dz-001", 1)[1].replace("…", " ").split()
        assert len(words) >= 4, row  # was two or three words before the marks were packed
        assert row.startswith(" ") and len(row.split("dz-001")[0]) <= 3  # the seven mark cells packed into two
