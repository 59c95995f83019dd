"""The dataset health screen (H) and the queue "shortcut", driven as a lead does before release."""

from __future__ import annotations

import csv
from pathlib import Path

from rich.console import Console

from piqa_tui.tui.screens.health import HealthScreen
from piqa_tui.tui.screens.help import HelpScreen
from piqa_tui.tui.state.listing import Filters, filtered_positions

from .conftest import curate, main_screen, make_app, wait_for

CUED = {f"c-{i:02d}" for i in range(0, 24, 2)}  # every other item: the word "surely" in its gold solution alone


def planted(folder: Path) -> Path:
    """24 minimal pairs; the even ones carry "surely" in the gold solution only."""
    path = folder / "planted.tsv"
    with path.open("w", encoding="utf-8", newline="") as fh:
        out = csv.writer(fh, delimiter="\t", lineterminator="\n")
        out.writerow(["id", "prompt", "solution0", "solution1", "label"])
        for i in range(24):
            label = i % 3 % 2
            solutions = [f"use the cloth number {i}", f"use the brush number {i}"]
            if f"c-{i:02d}" in CUED:
                solutions[label] += " surely"
            out.writerow([f"c-{i:02d}", f"How do you clean thing {i}?", *solutions, label])
    return path


def health_text(screen: HealthScreen) -> str:
    assert screen.text is not None
    return screen.text


async def test_the_health_screen_opens_shows_the_artifacts_and_closes(tmp_path: Path) -> None:
    async with curate(planted(tmp_path), annotator="lead", reviewer=True) as pilot:
        app = pilot.app
        main = main_screen(pilot)
        await pilot.press("H")
        await wait_for(pilot, lambda: isinstance(app.screen, HealthScreen) and app.screen.text is not None)
        text = health_text(app.screen)
        assert "Measured over all 24 items." in text
        assert "━━ Annotation artifacts ━━" in text
        assert "'surely': gold in 12 of 12 solutions with it" in text
        assert "Items a shortcut answers: 12" in text
        assert "piqa-tui score PATH --solution-only" in text  # no baseline stored: how to get one
        measured = app.screen.measured
        await pilot.press("r")  # measured again, the same
        await wait_for(pilot, lambda: app.screen.measured > measured)
        assert health_text(app.screen) == text
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is main)


async def test_the_queue_shortcut_holds_the_items_a_shortcut_answers(tmp_path: Path) -> None:
    async with curate(planted(tmp_path), annotator="lead", reviewer=True) as pilot:
        session = pilot.app.session
        found = filtered_positions(session, Filters(queue="shortcut"))
        assert {session.project.items[p].id for p in found} == CUED


async def test_blind_mode_measures_only_the_items_voted_on(tmp_path: Path) -> None:
    """Gold stays hidden until you vote: nothing to measure, and the queue stays empty."""
    async with curate(planted(tmp_path), annotator="validator") as pilot:
        app = pilot.app
        await pilot.press("H")
        await wait_for(pilot, lambda: isinstance(app.screen, HealthScreen) and app.screen.text is not None)
        text = health_text(app.screen)
        assert "Blind mode: measured over the 0 of 24 items you voted on" in text
        assert "surely" not in text
        assert filtered_positions(app.session, Filters(queue="shortcut")) == []


async def test_the_key_is_in_the_help(tmp_path: Path) -> None:
    async with curate(planted(tmp_path), annotator="lead", reviewer=True) as pilot:
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, HelpScreen))
        console = Console(width=200, record=True)
        console.print(pilot.app.screen._table())
        shown = console.export_text()
        assert "Dataset health (H)" in shown and "health_recompute" in shown


def test_health_screen(snap_compare, tmp_path: Path) -> None:
    app = make_app(planted(tmp_path), annotator="lead", reviewer=True)

    async def run_before(pilot) -> None:
        await wait_for(pilot, lambda: app.session is not None and app.session.validation.complete)
        await pilot.press("H")
        await wait_for(pilot, lambda: isinstance(app.screen, HealthScreen) and app.screen.text is not None)
        await pilot.pause(0.1)
        app.clear_notifications()
        await pilot.pause()

    assert snap_compare(app, terminal_size=(110, 44), run_before=run_before)
