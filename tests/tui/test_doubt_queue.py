"""The "doubt" queue in the real app: a reviewer filters to it (F), gets the labels in doubt lowest score first,
and the item view's status line gives the reason — what ``piqa-tui audit`` says, on the same workspace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from piqa_tui.cli.main import main
from piqa_tui.tui.dialogs.prompts import ChoiceDialog
from piqa_tui.tui.screens.main import MainScreen
from piqa_tui.tui.widgets.item.vote_panel import VotePanel
from tests.simulated_votes import simulate, write_workspace

from .conftest import curate, main_screen, wait_for


async def test_a_reviewer_walks_the_doubt_queue_with_its_reasons(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_workspace(tmp_path, simulate(n_items=120, seed=3))
    assert main(["audit", str(data), "--json", "--top", "200"]) == 0
    expected = json.loads(capsys.readouterr().out)["labels_in_doubt"]["items"]
    assert expected

    async with curate(data, size=(140, 40), annotator="lead", reviewer=True) as pilot:
        screen = main_screen(pilot)
        await pilot.press("F")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, ChoiceDialog))
        options = pilot.app.screen.query_one("OptionList")
        assert "doubt (" in str(options.get_option("queue:doubt").prompt)
        options.highlighted = options.get_option_index("queue:doubt")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, MainScreen))
        assert [screen.project.items[p].id for p in screen.item_list.rows] == [item["id"] for item in expected]

        panel = screen.item_view.query_one(VotePanel)
        # The panel draws the status cut to its width; the whole line is the summary it shows.
        await wait_for(pilot, lambda: panel.summary is not None and expected[0]["reason"] in panel.summary.status)
        assert "label in doubt: " in panel.summary.status and str(panel.content).endswith("…")
