"""The bidi display adapter: wrap-then-reorder, mixed Darija lines, harakat, pass-through, highlights."""

from __future__ import annotations

import unicodedata

import pytest
from bidi import get_display
from rich.console import Console
from rich.style import Style

from piqa_tui.core.text.bidi import (
    BidiMode,
    BidiText,
    DisplayLine,
    layout,
    needs_layout,
    resolve_mode,
    rich_text,
)
from piqa_tui.core.text.bidi_mode import detect_mode
from piqa_tui.core.text.direction import Direction, Directions, detect_direction, is_rtl
from piqa_tui.core.text.graphemes import WidthPolicy, cell_width
from piqa_tui.core.text.reference_strings import REFERENCE_STRINGS, calibration_lines

DARIJA = "حط 2 ملاعق سكر في l'eau"
PARAGRAPH = "حط جوج ملاعق سكر في كاس ديال الما السخون و حركهم مزيان حتى يذوبو قبل ما تزيد الحليب"
HARAKAT = "\u064b\u064c\u064d\u064e\u064f\u0650\u0651\u0652"


def visual_logical(source: str, line: DisplayLine) -> str:
    """The line's logical characters in the order the units are drawn (shaping undone)."""
    return "".join(source[u.start : u.end] for u in line.units)


def test_rtl_paragraph_is_wrapped_before_it_is_reordered() -> None:
    lines = layout(PARAGRAPH, 20, BidiMode.APP)
    assert len(lines) > 2
    assert " ".join(line.logical for line in lines) == PARAGRAPH  # reading order, top to bottom
    assert lines[0].logical.startswith("حط جوج")
    assert lines[-1].logical.endswith("الحليب")
    for line in lines:
        assert line.align == "right" and line.rtl
        assert line.width <= 20
        assert {i for u in line.units for i in range(u.start, u.end)} == set(range(line.start, line.end))
        # each line is reordered on its own: its first logical word is drawn at the right end
        first_word = line.logical.split()[0]
        assert visual_logical(PARAGRAPH, line).endswith(first_word[::-1])


@pytest.mark.parametrize(
    "text",
    [
        "حط 2 معالق سكر في l'eau",
        "سكر 12.5% و 3 كيسان",
        "hello عالم world",
        "من 10 حتى 20 دقيقة",
        "abc",
        "ok دير 2 كاس",
        "ديرها f (l'eau chaude)",  # bracket pairs (UAX #9 N0): needs the unicode-bidi levels
        "سخن (hello) ok",
        "add the (سكر) now",
        "\u2067سكر\u2069 and milk",  # isolates
    ],
)
def test_reordering_matches_python_bidi(text: str) -> None:
    # python-bidi's own get_display does not mirror, and the helper undoes
    # mirroring too; no lam-alef here: a ligature unit holds two letters.
    (line,) = layout(text, 200, BidiMode.APP)
    assert visual_logical(text, line) == get_display(text, base_dir="R" if is_rtl(text) else "L")


def test_mixed_darija_line_keeps_digits_and_latin_left_to_right() -> None:
    (line,) = layout(DARIJA, 80, BidiMode.APP)
    assert line.rtl and line.align == "right"
    assert line.text.startswith("l'eau ")  # the last logical word, Latin, drawn leftmost and unreversed
    assert " 2 " in line.text
    (line,) = layout("زيد 12 دقيقة", 80, BidiMode.APP)
    assert " 12 " in line.text


def test_arabic_is_shaped_and_keeps_its_harakat() -> None:
    (line,) = layout("شَاي", 10, BidiMode.APP)
    assert line.text == "\ufef1\ufe8e\ufeb7\u064e"  # ي isolated, ا final, شَ initial + fatha after it
    word = "مُحَمَّد"
    (line,) = layout(word, 10, BidiMode.APP)
    assert sorted(c for c in line.text if c in HARAKAT) == sorted(c for c in word if c in HARAKAT)
    for i, ch in enumerate(line.text):
        if ch in HARAKAT:  # a haraka follows its letter (or another haraka), never leads a cluster
            assert i > 0 and unicodedata.category(line.text[i - 1]) in ("Lo", "Mn")


def test_lam_alef_ligature_is_one_unit_covering_both_letters() -> None:
    (line,) = layout("لا", 10, BidiMode.APP)
    assert line.text == "\ufefb"
    assert [(u.start, u.end) for u in line.units] == [(0, 2)]
    (line,) = layout("لَا", 10, BidiMode.APP)
    assert line.text == "\ufefb\u064e"


def test_brackets_are_mirrored_in_rtl_runs() -> None:
    (line,) = layout("(مزيان)", 20, BidiMode.APP)
    assert line.text[0] == "(" and line.text[-1] == ")"
    (line,) = layout("ديرها f (l'eau chaude)", 40, BidiMode.APP)
    assert line.text.startswith("f (l'eau chaude) ")
    (line,) = layout("سخن (hello) ok", 40, BidiMode.APP)
    assert line.text.startswith("ok (hello) ")


@pytest.mark.parametrize("mode", [BidiMode.TERMINAL, BidiMode.OFF])
def test_terminal_and_off_pass_logical_text_through(mode: BidiMode) -> None:
    for text in [DARIJA, "شَاي", "لا", "हिन्दी"]:
        (line,) = layout(text, 80, mode)
        assert line.text == text == line.logical
    (line,) = layout(DARIJA, 80, mode)
    assert line.align == ("right" if mode is BidiMode.TERMINAL else "left")
    lines = layout(PARAGRAPH, 20, mode)
    assert " ".join(line.text for line in lines) == PARAGRAPH


def test_indic_and_latin_text_is_not_reordered_in_app_mode() -> None:
    text = "हिन्दी তামিল தமிழ் text"
    (line,) = layout(text, 80, BidiMode.APP)
    assert line.text == text and line.align == "left" and not line.rtl


def test_logical_text_is_never_modified() -> None:
    source = "شَاي بالنعناع\nحط 2 ملاعق سكر في l'eau (سخونة)"
    copy = "".join(source)
    lines = layout(source, 12, BidiMode.APP)
    rich_text(source, 12, BidiMode.APP, highlights=[(0, 4, "bold")])
    renderable = BidiText(source, BidiMode.APP)
    assert source == copy and renderable.logical == source
    for line in lines:
        assert line.logical == source[line.start : line.end]
    assert "".join(line.logical for line in lines).replace(" ", "") == source.replace(" ", "").replace("\n", "")


def test_highlights_of_logical_spans_survive_reordering() -> None:
    start = DARIJA.index("ملاعق")
    end = start + len("ملاعق")
    text = rich_text(DARIJA, 40, BidiMode.APP, highlights=[(start, end, "bold")])
    (line,) = layout(DARIJA, 40, BidiMode.APP)
    pad = 40 - line.width
    offset, expected = pad, set()
    for unit in line.units:
        if unit.start < end and start < unit.end:
            expected |= set(range(offset, offset + len(unit.text)))
        offset += len(unit.text)
    bold = {i for span in text.spans if Style.parse(str(span.style)).bold for i in range(span.start, span.end)}
    assert bold == expected
    assert text.plain.strip() == line.text
    # the highlighted characters are exactly the shaped, reversed word
    assert "".join(text.plain[i] for i in sorted(bold)) == "".join(layout("ملاعق", 40, BidiMode.APP)[0].text)


def test_max_lines_puts_the_ellipsis_at_the_end_of_reading() -> None:
    (rtl,) = layout(PARAGRAPH, 20, BidiMode.APP, max_lines=1)
    assert rtl.text.startswith("…") and rtl.width <= 20
    (ltr,) = layout("one two three four five six", 10, BidiMode.APP, max_lines=1)
    assert ltr.text.endswith("…") and ltr.width <= 10
    assert len(layout(PARAGRAPH, 20, BidiMode.APP, max_lines=2)) == 2


DZ_017 = "l'ampoule تاع الصالة تحرقت، كيفاش تبدلها؟"


def test_paragraph_direction_comes_from_most_strong_characters() -> None:
    assert is_rtl("2 ملاعق") and is_rtl(DZ_017) and is_rtl("ok دير 2 كاس") and is_rtl("«سلام» hello")
    assert not is_rtl("hello سلام") and not is_rtl("123") and not is_rtl("")
    # the first strong character decides while its side has 30% of the letters (UAX #9 P2/P3)...
    assert is_rtl("ديرها f (l'eau chaude)") and is_rtl("سخن (hello) ok") and not is_rtl("ab سل") and is_rtl("سل ab")
    # ...and the majority below that
    assert not is_rtl("سلام means hello in Arabic") and not is_rtl("ok hello سلام")
    assert detect_direction("Je mets 2 كاسات d'eau") is Direction.LTR
    lines = layout("سلام\nhello", 20, BidiMode.APP)
    assert [line.align for line in lines] == ["right", "left"]


def test_a_darija_line_opening_with_a_french_word_reads_right_to_left() -> None:
    (line,) = layout(DZ_017, 60, BidiMode.APP)
    assert line.rtl and line.align == "right"
    # the French word comes first in reading order, so it is drawn at the right end
    assert line.text.endswith("l'ampoule")
    (cut,) = layout(DZ_017, 20, BidiMode.APP, max_lines=1)
    assert cut.text.startswith("…") and cut.text.endswith("l'ampoule")  # the ellipsis where reading ends


def test_a_set_direction_wins_over_detection() -> None:
    (ltr,) = layout(DZ_017, 20, BidiMode.APP, max_lines=1, direction="ltr")
    assert ltr.align == "left" and ltr.text.startswith("l'ampoule") and ltr.text.endswith("…")
    (rtl,) = layout("one two three four five six", 10, BidiMode.APP, max_lines=1, direction=Direction.RTL)
    assert rtl.align == "right" and rtl.text.startswith("…")
    for mode in (BidiMode.TERMINAL, BidiMode.OFF):  # no reordering: stays logical, aligned by the direction
        (line,) = layout(DZ_017, 60, mode)
        assert line.text == DZ_017 and line.align == ("right" if mode is BidiMode.TERMINAL else "left")


def test_the_differing_word_highlight_follows_the_direction() -> None:
    start = DZ_017.index("الصالة")
    marks = [(start, start + len("الصالة"), "bold")]
    for direction in ("auto", "rtl", "ltr"):
        text = rich_text(DZ_017, 60, BidiMode.APP, highlights=marks, direction=direction)
        bold = [span for span in text.spans if span.style and Style.parse(str(span.style)).bold]
        lit = "".join(text.plain[span.start : span.end] for span in bold)
        assert lit == layout("الصالة", 40, BidiMode.APP)[0].text  # the same word, shaped, wherever it went
    auto = rich_text(DZ_017, 60, BidiMode.APP).plain
    assert (
        auto
        == rich_text(DZ_017, 60, BidiMode.APP, direction="rtl").plain
        != rich_text(DZ_017, 60, BidiMode.APP, direction="ltr").plain
    )


def test_directions_per_dataset_and_column() -> None:
    directions = Directions(Direction.RTL).with_column("english_translation", "ltr").with_column("solution1", "auto")
    assert directions.of("prompt") is Direction.RTL
    assert directions.of("meta:english_translation") is Direction.LTR
    assert directions.of("solution0") is Direction.AUTO and directions.of("solutions") is Direction.AUTO
    assert directions.with_column("solutions", "rtl").of("solution3") is Direction.RTL


def test_auto_mode_leaves_bidi_to_terminals_that_do_it() -> None:
    assert detect_mode({}) is BidiMode.APP
    assert detect_mode({"VTE_VERSION": "7600"}) is BidiMode.TERMINAL
    assert detect_mode({"VTE_VERSION": "5200"}) is BidiMode.APP  # before VTE 0.58, no bidi
    assert detect_mode({"KONSOLE_VERSION": "230805"}) is BidiMode.TERMINAL
    assert detect_mode({"TERM": "mlterm"}) is BidiMode.TERMINAL
    assert detect_mode({"KONSOLE_VERSION": "1", "PIQA_TUI_BIDI": "off"}) is BidiMode.OFF
    assert resolve_mode("app", {"KONSOLE_VERSION": "1"}) is BidiMode.APP
    assert resolve_mode("auto", {"TERM": "mlterm"}) is BidiMode.TERMINAL


def test_bidi_text_renders_at_the_width_it_is_given() -> None:
    console = Console(width=24, color_system=None, file=None, record=True)
    console.print(BidiText(PARAGRAPH, BidiMode.APP))
    out = console.export_text().splitlines()
    assert len(out) == len(layout(PARAGRAPH, 24, BidiMode.APP))
    assert all(cell_width(row) <= 24 for row in out)


def test_calibration_lines_put_every_bar_in_one_column() -> None:
    for mode in ("wcwidth", "codepoint", "cluster1", "cluster2"):
        policy = WidthPolicy(mode)  # type: ignore[arg-type]
        rows = calibration_lines(policy, BidiMode.APP)[1:]
        assert len(rows) == len(REFERENCE_STRINGS) + 1
        columns = {cell_width(row[: row.rindex("|")], policy) for row in rows}
        assert len(columns) == 1


def test_needs_layout_is_asked_of_right_to_left_text_controls_and_breaks_only() -> None:
    """The list and the model results screen skip the adapter for text this says no to; layout would change nothing there."""
    for text in ("حط الما", "שלום", "a\u200fb", "a\u2067b\u2069", "tab\there", "two\nlines", "x\u2028y"):
        assert needs_layout(text), text
    for text in ("plain English", "தமிழ் உரை", "বাংলা", "漢字", ""):
        assert not needs_layout(text), text
        assert layout(text, 80, BidiMode.APP)[0].text == text
