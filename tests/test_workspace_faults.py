"""Faults without crashes: a workspace locked by another process, on a read-only disk, on a full disk.

The read-only commands (validate, stats, agree) still work; a write that cannot be made says why in one
line and leaves nothing half-done in the log or in memory. Real processes, real filesystems (a tmpfs
mounted for the test where the machine allows it) and SQLite's own page limit.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from piqa_tui.core.errors import WorkspaceUnwritable
from piqa_tui.core.workspace.project import Project

from .conftest import (
    copy_sample,
    fill_disk,
    remount_read_only,
    small_disk,
    write_lock_held,
)

CLI = [sys.executable, "-m", "piqa_tui.cli.main"]


def cli(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *map(str, args)], capture_output=True, text=True, timeout=120)


def voted_sample(folder: Path) -> Path:
    """The Darija sample with three annotators' votes on the first four items, the workspace closed."""
    path = copy_sample("darija-algerian.tsv", folder)
    for who, choice in (("amina", "0"), ("karim", "1"), ("selma", "1")):
        project = Project.open(path, annotator=who)
        for item in project.items[:4]:
            project.vote(item.id, choice)
        project.workspace.close()
    return path


def read_only_commands_work(path: Path) -> None:
    validate = cli("validate", path, "--json")
    assert validate.returncode in (0, 1), validate.stderr  # 1: the sample's own problems, reported
    assert json.loads(validate.stdout)["items"] == 36
    stats = cli("stats", path, "--json")
    assert stats.returncode == 0, stats.stderr and json.loads(stats.stdout)
    agree = cli("agree", path, "--json")
    assert agree.returncode == 0, agree.stderr
    assert sum(json.loads(agree.stdout)["status"].values()) == 36
    assert json.loads(agree.stdout)["status"]["needs-votes"] == 32  # the votes on the first four were all read
    for done in (validate, stats, agree):
        assert "Traceback" not in done.stderr


@pytest.mark.parametrize("mode", ["immediate", "exclusive"])
def test_read_only_commands_work_while_another_process_holds_the_lock(tmp_path: Path, mode: str) -> None:
    path = voted_sample(tmp_path)
    db = path.with_name(path.name + ".piqa.sqlite")
    with write_lock_held(db, mode):
        read_only_commands_work(path)  # validate, stats and agree exit 0 with every vote read
    assert db.exists()  # and the workspace is still there, untouched by the read-only commands


def test_read_only_commands_work_on_a_read_only_disk_and_writes_say_why(tmp_path: Path) -> None:
    with small_disk(tmp_path / "disk", "4m") as disk:
        path = voted_sample(disk)
        remount_read_only(disk)
        read_only_commands_work(path)
        votes = copy_sample("votes-darija-algerian.tsv", tmp_path)
        done = cli("votes", "import", path, votes)
        assert done.returncode == 2 and "Traceback" not in done.stderr
        assert "cannot be written" in done.stderr and "read-only" in done.stderr


def test_a_full_disk_records_nothing_and_says_so(tmp_path: Path) -> None:
    with small_disk(tmp_path / "disk", "1m") as disk:
        path = copy_sample("darija-algerian.tsv", disk)
        project = Project.open(path, annotator="amina")
        first, second = project.items[0].id, project.items[1].id
        project.vote(first, "1")
        filler = fill_disk(disk)
        with pytest.raises(WorkspaceUnwritable, match="disk is full|disk failed"):
            for n in range(200):  # until the WAL needs a page the disk does not have
                project.edit(second, {"meta:note": f"{n} " + "long text " * 200})
        failed_at = n
        assert project.item(second).meta.get("note", "").startswith(f"{failed_at - 1} ") or failed_at == 0
        filler.unlink()
        project.vote(second, "0")  # space again: recording goes on
        project.workspace.close()
        reopened = Project.open(path, annotator="amina")
        assert (
            reopened.state.votes[first]["amina"].choice == "1" and reopened.state.votes[second]["amina"].choice == "0"
        )
        assert reopened.item(second).meta.get("note", "") == project.item(second).meta.get("note", "")


def test_sqlite_full_from_the_page_limit_leaves_no_half_action(tmp_path: Path) -> None:
    path = copy_sample("darija-algerian.tsv", tmp_path)
    project = Project.open(path, annotator="amina")
    item = project.items[0]
    conn = project.workspace.conn
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count = {pages}")  # SQLite's own SQLITE_FULL, as on a full disk
    with pytest.raises(WorkspaceUnwritable, match="disk is full"):
        project.edit(item.id, {"prompt": "x " * 5000, "solution0": "y " * 5000})
    assert project.item(item.id) == item and item.id not in project.state.edited
    assert project.workspace.conn.execute("SELECT count(*) FROM events").fetchone()[0] == 0
    conn.execute(f"PRAGMA max_page_count = {pages * 100}")
    project.vote(item.id, "1")
    assert project.state.votes[item.id]["amina"].choice == "1"


def test_opening_for_writing_on_a_read_only_disk_is_one_clear_line(tmp_path: Path) -> None:
    with small_disk(tmp_path / "disk", "4m") as disk:
        path = copy_sample("darija-algerian.tsv", disk)
        remount_read_only(disk)
        votes = copy_sample("votes-darija-algerian.tsv", tmp_path)
        done = cli("votes", "import", path, votes, "--workspace", disk / "ws.piqa.sqlite")
        assert done.returncode == 2 and "Traceback" not in done.stderr and "--workspace" in done.stderr


def _leave_free(folder: Path, kib: int) -> Path:
    """Fill the disk under ``folder`` but ``kib`` KiB; returns the filler file."""
    import os

    free = os.statvfs(folder).f_bavail * os.statvfs(folder).f_frsize
    filler = folder / "filler.bin"
    filler.write_bytes(b"\0" * max(0, free - kib * 1024))
    return filler


@pytest.mark.parametrize("suffix", [".parquet", ".jsonl", ".csv"])
def test_an_export_onto_a_full_disk_is_one_line_and_leaves_nothing(tmp_path: Path, suffix: str) -> None:
    """Polars reports a full disk as a corrupt file; the export says the disk is full, keeps no temp file."""
    path = copy_sample("darija-algerian.tsv", tmp_path)
    with small_disk(tmp_path / "disk", "64k") as disk:
        _leave_free(disk, 4)
        out = disk / f"out{suffix}"
        done = cli("export", path, "--to", out)
        assert done.returncode == 2 and "internal error" not in done.stderr, done.stderr
        assert done.stderr.count("\n") == 1 and "the disk is full" in done.stderr
        assert sorted(p.name for p in disk.iterdir()) == ["filler.bin"]


def test_scores_cached_onto_a_full_disk_are_one_line(tmp_path: Path) -> None:
    """``score`` keeps its scores in the workspace: when the disk fills as they are stored, the command
    ends with one line naming the full disk (cli.main's last line of defence), and the votes are intact."""
    import sqlite3

    from piqa_tui.cli.main import environment_fault
    from piqa_tui.core.scoring.backend import ContinuationScore
    from piqa_tui.core.scoring.cache import ScoreCache

    with small_disk(tmp_path / "disk", "512k") as disk:
        path = voted_sample(disk)
        project = Project.open(path, annotator="amina")
        project.vote(project.items[5].id, "1")  # the WAL and SHM exist, as while scoring
        filler = _leave_free(disk, 8)
        rows = [(f"item-{n}", (ContinuationScore(-1.5, 7), ContinuationScore(-2.5, 9))) for n in range(5_000)]
        with pytest.raises(sqlite3.Error) as raised:
            ScoreCache(project.workspace.conn).store("model " * 50, "template " * 50, rows)
        line = environment_fault(raised.value)
        assert line is not None and "\n" not in line and "the disk is full" in line, line
        filler.unlink()
        project.workspace.close()
        votes = Project.open(path, annotator="amina").state.votes
        assert votes[project.items[5].id]["amina"].choice == "1" and len(votes) == 5
