"""The adjudication screen (A) lists what core says needs the lead, with why: a 1–1 split with nobody left to
vote (two validators per item under majority 2 of 3) is there beside the policy's disagreements, and the lead
settles it without voting."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable

from piqa_tui.tui.dialogs.prompts import TextPrompt
from piqa_tui.tui.screens.adjudication import AdjudicationScreen
from tests.conftest import copy_sample
from tests.test_adjudication_queue import PAIRS, vote, with_round

from .conftest import curate, type_text, wait_for


async def test_a_split_nobody_can_break_is_listed_with_why_and_settled_by_the_lead(tmp_path: Path) -> None:
    dataset = copy_sample("tamil.tsv", tmp_path)
    with_round(dataset, PAIRS)
    vote(dataset, "anbu", "ta-001", "0")
    vote(dataset, "devi", "ta-001", "1")
    async with curate(dataset, annotator="meena", reviewer=True) as pilot:
        app = pilot.app
        await pilot.press("A")
        await wait_for(pilot, lambda: isinstance(app.screen, AdjudicationScreen))
        screen = app.screen
        assert screen.ids == ["ta-001"]
        row = [str(cell) for cell in screen.query_one(DataTable).get_row("ta-001")]
        assert row[-3] == "split"  # why, then flags and note
        status = str(screen.query_one("#vote-panel").content)
        assert "to adjudicate — split: split 1–1, no validator left to vote under majority:2/3" in status
        title = str(screen.query_one("#adjudication-title").content)
        assert "0 disagreements" in title and "1 the votes left cannot decide (split 1)" in title
        await pilot.press("2")
        await wait_for(pilot, lambda: isinstance(app.screen, TextPrompt))
        await type_text(pilot, "devi reads it as a cook would")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.screen is screen and screen.ids == [])
        assert "meena" not in screen.project.state.votes.get("ta-001", {})  # she decided, she did not vote
