"""Exports never destroy: not the source dataset, not the workspace or its WAL/SHM, and another existing
file only with --force (each command that writes a file, run as a real process)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from piqa_tui.core.errors import ExistingOutput, OutputRefused
from piqa_tui.core.workspace.project import Project

from .conftest import copy_sample

CLI = [sys.executable, "-m", "piqa_tui.cli.main"]


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *map(str, args)], capture_output=True, text=True, timeout=120)


@pytest.fixture
def voted(tmp_path: Path) -> Path:
    """The Darija sample with a workspace holding a vote and an edit (still open: its WAL exists)."""
    path = copy_sample("darija-algerian.tsv", tmp_path)
    project = Project.open(path, annotator="amina")
    project.vote(project.items[0].id, "1")
    project.edit(project.items[1].id, {"prompt": "بدّلت السؤال"})
    project.workspace.close()
    return path


def unchanged(path: Path, before: bytes) -> bool:
    return path.read_bytes() == before


@pytest.mark.parametrize("suffix", ["", "-wal", "-shm"])
def test_export_onto_the_workspace_is_refused(voted: Path, suffix: str) -> None:
    db = voted.with_name(voted.name + ".piqa.sqlite")
    target = Path(f"{db}{suffix}")
    done = cli("export", voted, "--to", target, "--format", "tsv", "--force")
    assert done.returncode == 2 and "the workspace" in done.stderr and "Traceback" not in done.stderr
    header = voted.read_bytes().split(b"\n")[0]
    assert not target.exists() or header not in target.read_bytes()  # SQLite's file, not the export
    reopened = Project.open(voted, annotator="amina")
    assert reopened.state.votes[reopened.items[0].id]["amina"].choice == "1"  # the work is all still there


def test_export_onto_the_source_is_refused_even_with_force(voted: Path) -> None:
    before = voted.read_bytes()
    for extra in ([], ["--force"]):
        done = cli("export", voted, "--to", voted, *extra)
        assert done.returncode == 2 and "source dataset" in done.stderr
    link = voted.with_name("same-file.tsv")
    link.symlink_to(voted)  # another name for the same file is the same file
    done = cli("export", voted, "--to", link, "--force")
    assert done.returncode == 2 and "source dataset" in done.stderr
    assert unchanged(voted, before)


def test_export_onto_the_labels_file_of_a_piqa_dataset_is_refused(piqa_copy: Path, tmp_path: Path) -> None:
    labels = piqa_copy.with_name("valid-labels.lst")
    before = labels.read_bytes()
    sibling = tmp_path / "valid-labels.jsonl"  # would write valid-labels.jsonl plus valid-labels-labels.lst: fine
    assert cli("export", piqa_copy, "--to", sibling).returncode == 0
    done = cli("export", piqa_copy, "--to", labels, "--format", "tsv", "--force")
    assert done.returncode == 2 and "source dataset" in done.stderr
    assert unchanged(labels, before)


def test_an_existing_file_needs_force(voted: Path, tmp_path: Path) -> None:
    out = tmp_path / "release.tsv"
    out.write_text("keep me\n", encoding="utf-8")
    done = cli("export", voted, "--to", out)
    assert done.returncode == 2 and "already exists" in done.stderr and "--force" in done.stderr
    assert out.read_text(encoding="utf-8") == "keep me\n"
    done = cli("export", voted, "--to", out, "--force")
    assert done.returncode == 0, done.stderr
    assert "بدّلت السؤال" in out.read_text(encoding="utf-8")


def test_votes_export_card_and_backup_follow_the_same_rules(voted: Path, tmp_path: Path) -> None:
    db = voted.with_name(voted.name + ".piqa.sqlite")
    before = db.read_bytes()
    assert cli("votes", "export", voted, db, "--force").returncode == 2
    assert cli("card", voted, "--out", voted, "--force").returncode == 2
    assert unchanged(db, before) and "بدّلت" not in voted.read_text(encoding="utf-8")
    existing = tmp_path / "votes.tsv"
    existing.write_text("old\n", encoding="utf-8")
    refused = cli("votes", "export", voted, existing)
    assert refused.returncode == 2 and existing.read_text(encoding="utf-8") == "old\n"
    assert cli("votes", "export", voted, existing, "--force").returncode == 0
    assert existing.read_text(encoding="utf-8").startswith("item_id")
    card = tmp_path / "CARD.md"
    card.write_text("old\n", encoding="utf-8")
    assert cli("card", voted, "--out", card).returncode == 2 and card.read_text(encoding="utf-8") == "old\n"
    assert cli("card", voted, "--out", card, "--force").returncode == 0 and card.read_text(encoding="utf-8") != "old\n"


def test_project_export_refuses_before_writing_anything(voted: Path, tmp_path: Path) -> None:
    project = Project.open(voted, annotator="amina")
    with pytest.raises(OutputRefused, match="workspace"):
        project.export(project.workspace_path, fmt="tsv", replace=True)
    out = tmp_path / "out.tsv"
    out.write_text("x\n", encoding="utf-8")
    with pytest.raises(ExistingOutput):
        project.export(out)
    assert out.read_text(encoding="utf-8") == "x\n"
    project.save()  # the explicit save of the edits is the one write over the source
    assert "بدّلت السؤال" in voted.read_text(encoding="utf-8")
