"""The guidelines screen (W), driven as an annotator and a lead do: read, ask about an item, answer."""

from __future__ import annotations

import unicodedata
from pathlib import Path

from rich.console import Console
from textual.widgets import Static

from piqa_tui.core.round.guidelines import guideline_questions, guidelines_part
from piqa_tui.core.text.bidi import BidiText
from piqa_tui.core.workspace.project import Project
from piqa_tui.tui.screens.guidelines import GuidelinesScreen, markdown_blocks
from piqa_tui.tui.screens.help import HelpScreen
from piqa_tui.tui.state.listing import Filters, filtered_positions
from tests.conftest import copy_sample

from .conftest import curate, main_screen, make_app, settled_after, type_text, wait_for

ARABIC = "اختر الحل الذي يختاره شخص من بلد السؤال."
TAMIL = "கேள்வியின் நாட்டைச் சேர்ந்த ஒருவர் தேர்ந்தெடுக்கும் தீர்வைத் தேர்வு செய்யுங்கள்."
GUIDE = f"""# Validation guidelines

Vote for the solution a person from the item's **country** would choose.

{ARABIC}

{TAMIL}

- Press `1` or `2`.
- Never guess: vote *unsure*.

[@click=app.quit] and [quit](app.quit) and \x1b]52;c;aGk=\x07 stay text.
"""


def recorded(path: Path, text: str = GUIDE) -> Path:
    project = Project.open(path, annotator="lead", create=True)
    assert project.workspace is not None
    part = guidelines_part(text, project.workspace)
    assert part is not None
    project.record([part])
    return path


def drawn(renderable: object, width: int = 80) -> tuple[str, list]:
    """What a block draws at ``width`` cells: its text and its segments."""
    console = Console(width=width, record=True, color_system=None, legacy_windows=False)
    segments = list(console.render(renderable, console.options.update_width(width)))
    return "".join(s.text for s in segments), segments


async def open_guidelines(pilot) -> GuidelinesScreen:
    await pilot.press("W")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, GuidelinesScreen))
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, GuidelinesScreen)
    return screen


def questions_of(screen: GuidelinesScreen) -> str:
    return drawn(screen.query_one("#guidelines-questions", Static).content, width=200)[0]


def blocks_of(screen: GuidelinesScreen) -> list[BidiText]:
    return [text for text, _ in screen.shown]


async def test_w_opens_the_version_in_force_and_closes(tmp_path: Path) -> None:
    data = recorded(copy_sample("tamil.tsv", tmp_path))
    async with curate(data, annotator="kavi") as pilot:
        main = main_screen(pilot)
        screen = await open_guidelines(pilot)
        title = str(screen.query_one("#guidelines-title", Static).render())
        assert "version 1 (sha256 " in title
        texts = [drawn(b)[0] for b in blocks_of(screen)]
        assert any("Validation guidelines" in t for t in texts)
        assert any(t.startswith("• Press 1 or 2.") for t in texts)
        await pilot.press("escape")
        await wait_for(pilot, lambda: pilot.app.screen is main)


async def test_arabic_is_shaped_and_right_aligned_tamil_kept_whole(tmp_path: Path) -> None:
    data = recorded(copy_sample("tamil.tsv", tmp_path))
    async with curate(data, annotator="kavi") as pilot:
        screen = await open_guidelines(pilot)
        arabic = next(b for b in blocks_of(screen) if ARABIC in b.logical)
        tamil = next(b for b in blocks_of(screen) if TAMIL in b.logical)
        body = screen.query_one("#guidelines-text", Static)
        lines = [strip.text for strip in body.render_lines(body.region.reset_offset)]
        on_screen = next(line for line in lines if "ﺮﺘﺧﺍ" in line)  # اختر, shaped
        assert len(on_screen) == body.size.width and on_screen.rstrip() == on_screen  # flush right in the app
        assert on_screen.startswith(" " * 20)
        shown, _ = drawn(arabic)
        assert shown.startswith(" ") and shown.rstrip().endswith(shown.strip())  # padded to the right edge
        forms = [ch for ch in shown.strip() if "ARABIC" in unicodedata.name(ch, "")]
        assert all("FORM" in unicodedata.name(ch) for ch in forms if ch != " ")  # shaped: presentation forms
        assert unicodedata.name(shown.strip()[-1]).startswith("ARABIC LETTER ALEF")  # اختر reads from the right
        shown, _ = drawn(tamil, width=200)
        assert shown.strip() == TAMIL  # left to right, every cluster as typed


async def test_markup_links_and_escapes_in_the_file_stay_text(tmp_path: Path) -> None:
    data = recorded(copy_sample("tamil.tsv", tmp_path))
    async with curate(data, annotator="kavi") as pilot:
        screen = await open_guidelines(pilot)
        hostile = next(b for b in blocks_of(screen) if "stay text" in b.logical)
        shown, segments = drawn(hostile, width=200)
        assert "[@click=app.quit]" in shown and "quit <app.quit>" in shown
        assert "\x1b" not in shown and "\x07" not in shown and "␛]52;c;aGk=␇" in shown
        assert all(not (s.style and (s.style.meta or s.style.link)) for s in segments)  # nothing to click
        body = screen.query_one("#guidelines-text", Static)
        lines = [strip.text for strip in body.render_lines(body.region.reset_offset)]
        row = next(n for n, line in enumerate(lines) if "[@click=app.quit]" in line)
        for column in range(0, len(lines[row].rstrip()), 2):  # on the markup, the link and the escape
            await pilot.click(body, offset=(column, row))
        await pilot.pause()
        assert pilot.app.is_running and pilot.app.screen is screen


def test_the_markdown_blocks_of_a_list_a_quote_and_code() -> None:
    blocks = markdown_blocks("1. one\n2. **two**\n\n> quoted\n\n```\ncode [x]\n```\n")
    assert [b.text for b in blocks] == ["1. one", "2. two", "quoted", "code [x]"]
    assert (3, 6, "bold") in blocks[1].spans and blocks[2].style == "italic"
    assert isinstance(BidiText(blocks[3].text), BidiText)


async def test_an_annotator_asks_and_the_lead_answers_from_the_queue(tmp_path: Path) -> None:
    data = recorded(copy_sample("tamil.tsv", tmp_path))
    async with curate(data, annotator="kavi") as pilot:
        first = main_screen(pilot).current.id
        screen = await open_guidelines(pilot)
        await pilot.press("a")
        await wait_for(pilot, lambda: pilot.app.screen is not screen)
        await type_text(pilot, "Is a festival dish specific to one country?")
        await pilot.press("enter")
        await wait_for(pilot, lambda: guideline_questions(pilot.app.session.project.workspace))
        await wait_for(pilot, lambda: "festival dish" in questions_of(screen))
        (question,) = guideline_questions(pilot.app.session.project.workspace)
        assert (question.item_id, question.asked_by, question.open) == (first, "kavi", True)
    async with curate(data, annotator="lead", reviewer=True) as pilot:
        session = pilot.app.session
        found = filtered_positions(session, Filters(queue="asked"))
        assert [session.project.items[p].id for p in found] == [first]
        screen = await open_guidelines(pilot)
        assert "kavi: Is a festival dish" in questions_of(screen)
        await pilot.press("r")
        await wait_for(pilot, lambda: pilot.app.screen is not screen)
        await type_text(pilot, "Yes when only one country cooks it.")
        await pilot.press("enter")
        await wait_for(pilot, lambda: not guideline_questions(session.project.workspace)[0].open)
        assert guideline_questions(session.project.workspace)[0].reply == "Yes when only one country cooks it."
        await pilot.press("escape")
        await wait_for(pilot, lambda: filtered_positions(session, Filters(queue="asked")) == [])


async def test_without_guidelines_the_screen_says_how_to_record_them(tmp_path: Path) -> None:
    async with curate(copy_sample("tamil.tsv", tmp_path), annotator="kavi") as pilot:
        screen = await open_guidelines(pilot)
        assert "none recorded" in str(screen.query_one("#guidelines-title", Static).render())
        await pilot.press("r")  # not a reviewer: the key is off, nothing recorded
        assert guideline_questions(pilot.app.session.project.workspace) == []


async def test_the_keys_are_in_the_help(tmp_path: Path) -> None:
    async with curate(copy_sample("tamil.tsv", tmp_path), annotator="kavi") as pilot:
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, HelpScreen))
        console = Console(width=200, record=True)
        console.print(pilot.app.screen._table())
        shown = console.export_text()
        assert "Guidelines (W)" in shown and "guide_ask" in shown and "Progress (P)" in shown


def test_guidelines_screen(snap_compare, tmp_path: Path) -> None:
    app = make_app(recorded(copy_sample("tamil.tsv", tmp_path)), annotator="kavi")
    assert snap_compare(app, terminal_size=(100, 34), run_before=settled_after(open_guidelines))


async def test_a_new_version_recorded_elsewhere_replaces_the_one_on_screen(tmp_path: Path) -> None:
    data = recorded(copy_sample("tamil.tsv", tmp_path))
    async with curate(data, annotator="kavi") as pilot:
        screen = await open_guidelines(pilot)
        recorded(data, GUIDE + "\n## Added\n\nA new rule.\n")  # the lead, in another process
        pilot.app.poll()
        await wait_for(pilot, lambda: "version 2" in str(pilot.app.screen.query_one("#guidelines-title").render()))
        await pilot.pause()
        assert any(text.logical == "A new rule." for text in blocks_of(pilot.app.screen))
        assert pilot.app.screen is screen
