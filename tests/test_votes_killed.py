"""A ``votes import`` killed mid-way (SIGKILL) leaves the workspace with all of the file's votes or none, on the bulk
path (more votes than the log holds: indexes dropped and built again) and on its second try (a repeated line makes
rebuilding the unique index fail, and the insert is done again without it): the workspace checks ok and holds the
event count of before or of after."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from piqa_tui.core.workspace.project import Project

from .conftest import copy_sample
from .test_merge import DATA, cli
from .test_merge_killed import events, killed_at_points

VOTES = 60_000


def workspace_with_one_vote(folder: Path) -> list[str]:
    """The sample dataset in ``folder`` with a workspace holding one vote; its item ids."""
    folder.mkdir()
    copy_sample(DATA, folder)
    project = Project.open(folder / DATA, annotator="amina")
    project.vote(project.items[0].id, "0")
    ids = [item.id for item in project.items]
    project.workspace.close()  # type: ignore[union-attr]
    return ids


def votes_file(path: Path, ids: list[str], repeat_one: bool) -> None:
    """``VOTES`` votes on the sample's items by many annotators, each at its own time (one line twice if asked)."""
    lines = [
        f"{ids[k % len(ids)]}\tannotator {k // len(ids)}\t{k % 2}\t2026-11-01T10:{k // 60000:02d}:{k // 1000 % 60:02d}."
        f"{k % 1000:03d}000Z"
        for k in range(VOTES)
    ]
    if repeat_one:
        lines.append(lines[VOTES // 2])
    path.write_text("item_id\tannotator\tchoice\ttime\n" + "\n".join(lines) + "\n", encoding="utf-8")


@pytest.mark.parametrize("repeat_one", [False, True], ids=["bulk", "bulk-again-without-a-repeat"])
def test_a_votes_import_killed_at_any_point_leaves_all_of_the_file_or_none(tmp_path: Path, repeat_one: bool) -> None:
    folder = tmp_path / "machine"
    ids = workspace_with_one_vote(folder)
    shutil.copytree(folder, tmp_path / "pristine")
    votes = tmp_path / "votes.tsv"
    votes_file(votes, ids, repeat_one)
    before = events(folder)

    def reset() -> None:
        shutil.rmtree(folder)
        shutil.copytree(tmp_path / "pristine", folder)

    killed_at_points(folder, ["votes", "import", str(folder / DATA), str(votes)], before, before + VOTES, reset)
    cli("votes", "import", str(folder / DATA), str(votes))
    assert events(folder) == before + VOTES
