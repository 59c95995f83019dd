"""Long right-to-left lines wrap before they are reordered: the first line holds the START of the sentence.

In ``--bidi app`` the app puts Arabic in display order itself. A line longer than its widget must be wrapped in
logical order first and each piece reordered on its own (UAX #9 reorders per line, after line breaking); were
the reordered string wrapped by Textual, the reader would find the END of the sentence on the first line. The
tests open the F filter dialog (a column whose value is a long Arabic sentence) and a toast at 60 and 80
columns, and read what the screen draws: the shaped first words on the first line, the last words on the last;
and the real ``piqa-tui --bidi app`` in tmux at 80x40 (skipped without tmux), read back with ``capture-pane``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from arabic_reshaper import ArabicReshaper
from bidi import get_display
from textual.pilot import Pilot
from textual.widgets import OptionList

from piqa_tui.core.text.bidi import BidiMode
from piqa_tui.tui.dialogs.prompts import ChoiceDialog
from tests.conftest import ROOT, copy_sample
from tests.test_e2e_tmux import TMUX, Terminal

from .conftest import curate, drawn_lines, type_text, wait_for

# Darija, with lam-alef ligatures (ولا, بلا, لازم): shaping makes them one cell, so lines are measured shaped.
ARABIC = (
    "هاذي جملة طويلة بزاف باش نشوفو كيفاش التطبيق يقسمها على زوج سطور ولا اكثر وكل سطر لازم يتقرا "
    "من اليمين لليسار بلا ما تتخلط الكلمات بين البداية والنهاية تاع الجملة"
)
MIXED = (
    "شريت 5 كيلو تاع Semoule fine من عند الحانوت اللي قدام الجامع باش نطيبو الكسكسي نهار الجمعة "
    "مع العايلة كاملة وجاو 12 ضيف من Oran"
)
_RESHAPER = ArabicReshaper(configuration={"delete_harakat": False})


def drawn(words: str) -> str:
    """``words`` (logical Arabic) as a terminal shows them: shaped, right to left (python-bidi, not the app)."""
    return str(get_display(_RESHAPER.reshape(words)))


def with_column_values(folder: Path, **values: str) -> Path:
    """The Algerian sample with every row's ``column`` set to ``value``: a one-value column the filter offers."""
    path = copy_sample("darija-algerian.tsv", folder)
    header, *rows = path.read_text(encoding="utf-8").splitlines()
    names = header.split("\t")
    new_rows = []
    for row in rows:
        cells = row.split("\t")
        for column, value in values.items():
            cells[names.index(column)] = value
        new_rows.append("\t".join(cells))
    path.write_text("\n".join([header, *new_rows]) + "\n", encoding="utf-8")
    return path


def line_of(lines: list[str], text: str) -> int:
    """The index of the one line that shows ``text``."""
    found = [n for n, line in enumerate(lines) if text in line]
    assert len(found) == 1, (text, lines)
    return found[0]


async def filter_option_lines(pilot: Pilot, typed: str) -> list[str]:
    """Open the F filter dialog, type the start of a value (type-ahead scrolls to it) and read the options."""
    await pilot.press("F")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, ChoiceDialog))
    await type_text(pilot, typed)
    await pilot.pause()
    return drawn_lines(pilot.app.screen.query_one(OptionList)).split("\n")


async def test_a_long_arabic_choice_reads_from_its_first_line_down(tmp_path: Path) -> None:
    words = ARABIC.split()
    async with curate(with_column_values(tmp_path, category=ARABIC), size=(60, 24)) as pilot:
        lines = await filter_option_lines(pilot, words[0])
        first = line_of(lines, drawn(" ".join(words[:3])))
        middle = line_of(lines, drawn(" ".join(words[12:14])))
        last = line_of(lines, drawn(" ".join(words[-3:])))
        assert first < middle < last, lines  # three lines or more, in reading order
        assert drawn(" ".join(words[:2])) in lines[first].rstrip()[-30:]  # the start: at the right of line 1


async def test_arabic_with_latin_and_digits_wraps_in_reading_order(tmp_path: Path) -> None:
    async with curate(with_column_values(tmp_path, source=MIXED), size=(80, 24)) as pilot:
        lines = await filter_option_lines(pilot, "شريت")
        order = [
            line_of(lines, drawn("شريت")),
            line_of(lines, "Semoule fine"),  # Latin keeps its own left-to-right order inside the line
            line_of(lines, drawn("نهار الجمعة")),
            line_of(lines, drawn("العايلة كاملة")),
            line_of(lines, "Oran"),
        ]
        assert order == sorted(order) and order[0] < order[-1], lines
        # the digits stay beside their words, on their words' lines
        assert f"{drawn('كيلو')} 5 {drawn('شريت')}" in lines[order[0]]
        assert f"{drawn('ضيف')} 12 {drawn('وجاو')}" in lines[line_of(lines, drawn("ضيف"))], lines


async def test_a_long_arabic_toast_reads_from_its_first_line_down(tmp_path: Path) -> None:
    words = ARABIC.split()
    async with curate(copy_sample("darija-algerian.tsv", tmp_path), size=(80, 24), toasts=True) as pilot:
        pilot.app.notify(ARABIC, timeout=30)
        await wait_for(pilot, lambda: bool(pilot.app.screen.query("Toast")))
        await pilot.pause()
        lines = drawn_lines(pilot.app.screen.query_one("Toast")).split("\n")
        first = line_of(lines, drawn(" ".join(words[:3])))
        last = line_of(lines, drawn(" ".join(words[-3:])))
        assert last - first >= 2, lines  # three lines, in reading order


async def test_the_terminal_mode_leaves_long_lines_logical(tmp_path: Path) -> None:
    """With ``--bidi terminal`` the terminal reorders each row: the app wraps the stored text and shapes nothing."""
    words = ARABIC.split()
    path = with_column_values(tmp_path, category=ARABIC)
    async with curate(path, size=(60, 24), bidi_mode=BidiMode.TERMINAL) as pilot:
        lines = await filter_option_lines(pilot, words[0])
        assert line_of(lines, " ".join(words[:3])) < line_of(lines, " ".join(words[-3:])), lines


@pytest.mark.skipif(TMUX is None, reason="tmux is not installed")
def test_in_a_real_terminal_the_filter_dialog_reads_from_the_top(tmp_path: Path) -> None:
    words = ARABIC.split()
    data = with_column_values(tmp_path, category=ARABIC)
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path, "PIQA_TUI_CONFIG": str(tmp_path / "none.toml"), "TERM": "xterm-256color"}
    term = Terminal(f"{sys.executable} -m piqa_tui.cli.main {data} --annotator t --bidi app", 80, 40, env)
    try:
        term.wait_for("dz-001   row 1", "q quit", timeout=90)
        term.keys("F")
        term.wait_for("Filter", timeout=30)
        term.type(words[0])
        screen = term.wait_for(drawn(" ".join(words[-3:])), timeout=30).splitlines()
        term.keys("Escape", "q")
    finally:
        term.close()
    top = next(n for n, line in enumerate(screen) if "Filter" in line and "╭" in line)
    lines = screen[top : next(n for n in range(top, len(screen)) if "╰" in screen[n])]  # the dialog's rows alone
    assert line_of(lines, drawn(" ".join(words[:3]))) < line_of(lines, drawn(" ".join(words[-3:]))), lines
