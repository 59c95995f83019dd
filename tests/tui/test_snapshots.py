"""Snapshots of the main screens (SVG under __snapshots__/; refresh with --snapshot-update).

Widths are laid out in ``codepoint`` mode (the conftest), as xterm, VTE and
tmux draw Indic text.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from piqa_tui.tui.screens.main import MainScreen
from tests.conftest import copy_sample

from .conftest import make_app, type_text, wait_for


def opened(*keys: str, text: str = "", then: Iterable[str] = ()):
    """A run_before that waits for the first item, presses ``keys``, types ``text``, presses ``then``."""

    async def run_before(pilot) -> None:
        app = pilot.app
        await wait_for(pilot, lambda: isinstance(app.screen, MainScreen))
        await wait_for(pilot, lambda: app.session.validation.complete)
        await pilot.press(*keys)
        if text:
            await type_text(pilot, text)
            if "slash" in keys:  # wait for the search to run once typing paused
                screen = app.screen
                await wait_for(
                    pilot,
                    lambda: screen.filtering.search_result is not None and screen.filtering.search_result.query == text,
                )
        await pilot.press(*then)
        await pilot.pause(0.1)
        app.clear_notifications()
        await pilot.pause()

    return run_before


def test_darija_80x24(snap_compare, tmp_path: Path) -> None:
    app = make_app(copy_sample("darija-algerian.tsv", tmp_path))
    assert snap_compare(app, terminal_size=(80, 24), run_before=opened("j"))


def test_darija_120x40_translation_beside(snap_compare, tmp_path: Path) -> None:
    app = make_app(copy_sample("darija-algerian.tsv", tmp_path))
    assert snap_compare(app, terminal_size=(120, 40), run_before=opened("G", "k", "k", "k"))  # dz-033: 6 words differ


def test_tamil_120x40(snap_compare, tmp_path: Path) -> None:
    app = make_app(copy_sample("tamil.tsv", tmp_path))
    assert snap_compare(app, terminal_size=(120, 40), run_before=opened("tab"))


def test_bengali_light_theme(snap_compare, tmp_path: Path) -> None:
    app = make_app(copy_sample("bengali.tsv", tmp_path), theme="piqa-light")
    assert snap_compare(app, terminal_size=(100, 30), run_before=opened())


def test_msa_three_options_high_contrast(snap_compare, tmp_path: Path) -> None:
    app = make_app(copy_sample("msa-culture.tsv", tmp_path), theme="piqa-high-contrast")
    assert snap_compare(app, terminal_size=(100, 30), run_before=opened("j"))


def test_editing_a_tamil_solution(snap_compare, tmp_path: Path) -> None:
    app = make_app(copy_sample("tamil.tsv", tmp_path))
    assert snap_compare(app, terminal_size=(100, 30), run_before=opened("tab", "e", "end", "backspace", "backspace"))


def test_filter_dialog(snap_compare, tmp_path: Path) -> None:
    app = make_app(copy_sample("darija-algerian.tsv", tmp_path))
    assert snap_compare(app, terminal_size=(100, 30), run_before=opened("F"))


def test_search_results(snap_compare, tmp_path: Path) -> None:
    app = make_app(copy_sample("darija-algerian.tsv", tmp_path))
    run = opened("slash", text="كيفاش تنحي", then=("enter",))
    assert snap_compare(app, terminal_size=(100, 30), run_before=run)


def test_help_screen(snap_compare, tmp_path: Path) -> None:
    app = make_app(copy_sample("darija-algerian.tsv", tmp_path))
    assert snap_compare(app, terminal_size=(100, 40), run_before=opened("question_mark"))


def test_check_terminal(snap_compare) -> None:
    app = make_app(None, check_terminal=True)

    async def run_before(pilot) -> None:
        await pilot.pause(0.1)
        await pilot.press("2")

    assert snap_compare(app, terminal_size=(100, 30), run_before=run_before)


def test_terminal_too_small(snap_compare, tmp_path: Path) -> None:
    app = make_app(copy_sample("darija-algerian.tsv", tmp_path))
    assert snap_compare(app, terminal_size=(50, 12), run_before=opened())
