"""The workspace is one file: checkpointed on exit, checked, backed up while others write, and never lost
when it is deleted or replaced under an open session."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from piqa_tui.core.errors import WorkspaceError
from piqa_tui.core.round.stages import add_items, draft
from piqa_tui.core.workspace.project import Project

from .conftest import copy_sample

CLI = [sys.executable, "-m", "piqa_tui.cli.main"]

VOTER = textwrap.dedent(
    """
    import sys
    from piqa_tui.core.workspace.project import Project
    project = Project.open(sys.argv[1], annotator=sys.argv[2])
    for n, item in enumerate(project.items[: int(sys.argv[3])]):
        project.vote(item.id, str(n % 2))
        print(item.id, flush=True)
    """
)


def workspace_of(path: Path) -> Path:
    return path.with_name(path.name + ".piqa.sqlite")


def votes_in_file_alone(db: Path, scratch: Path) -> list[tuple[str, str, str]]:
    """The votes a copy of only the ``.sqlite`` file holds (no -wal, no -shm beside it)."""
    scratch.mkdir(exist_ok=True)
    alone = scratch / db.name
    shutil.copy(db, alone)
    assert not Path(f"{alone}-wal").exists()
    conn = sqlite3.connect(alone)
    try:
        return conn.execute("SELECT item_id, annotator, new FROM events WHERE kind = 'vote' ORDER BY seq").fetchall()
    finally:
        conn.close()


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, cwd=cwd, timeout=120)


def test_after_a_process_exits_the_sqlite_file_alone_holds_every_vote(tmp_path: Path) -> None:
    path = copy_sample("darija-algerian.tsv", tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", VOTER, str(path), "amina", "12"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    voted = done.stdout.split()
    found = votes_in_file_alone(workspace_of(path), tmp_path / "copy")
    assert [item_id for item_id, _, _ in found] == voted and len(voted) == 12
    assert not Path(f"{workspace_of(path)}-wal").exists() or Path(f"{workspace_of(path)}-wal").stat().st_size == 0


def test_votes_import_leaves_a_complete_file(tmp_path: Path) -> None:
    path = copy_sample("darija-algerian.tsv", tmp_path)
    votes = copy_sample("votes-darija-algerian.tsv", tmp_path)
    done = cli("votes", "import", str(path), str(votes))
    assert done.returncode == 0, done.stderr
    expected = len(votes.read_text(encoding="utf-8").splitlines()) - 1
    assert len(votes_in_file_alone(workspace_of(path), tmp_path / "copy")) == expected


def test_check_reports_what_the_workspace_holds(tmp_path: Path) -> None:
    path = copy_sample("darija-algerian.tsv", tmp_path)
    project = Project.open(path, annotator="amina")
    for item in project.items[:3]:
        project.vote(item.id, "0")
    Project.open(path, annotator="karim").vote(project.items[0].id, "1")
    project.set_flag(project.items[1].id, "typo")
    done = cli("workspace", "check", str(workspace_of(path)), "--json")  # while the project is still open
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["ok"] and report["workspace_id"]
    assert report["counts"] == {"events": 5, "votes": 4, "annotators": 2, "items": 3, "scores": 0}
    text = cli("workspace", "check", str(workspace_of(path)))
    assert "ok (5 events, 4 votes, 2 annotators, 3 items, 0 scores)" in text.stdout


def test_check_counts_no_undone_draft_as_an_item(tmp_path: Path) -> None:
    path = copy_sample("darija-algerian.tsv", tmp_path)
    project = Project.open(path, annotator="amina")
    project.vote(project.items[0].id, "0")
    kept, undone = (
        add_items(project, [draft("Goal", ["a", "b"], 0)]),
        add_items(project, [draft("Other", ["c", "d"], 1)]),
    )
    project.vote(undone[0], "1")
    project.undo()  # the vote on the second draft
    project.undo()  # the second draft itself: the log holds it no more
    assert kept[0] in project.index and undone[0] not in project.index
    report = json.loads(cli("workspace", "check", str(workspace_of(path)), "--json").stdout)
    assert report["counts"]["items"] == 2  # the voted file item and the draft still there
    project.redo()  # the draft is back: an item again
    assert json.loads(cli("workspace", "check", str(workspace_of(path)), "--json").stdout)["counts"]["items"] == 3


def test_check_finds_a_damaged_file_and_exits_1(tmp_path: Path) -> None:
    path = copy_sample("darija-algerian.tsv", tmp_path)
    project = Project.open(path, annotator="amina")
    for item in project.items:
        project.edit(item.id, {"meta:note": "x" * 300})  # enough pages that the damage lands inside the tables
    project.workspace.close()
    db = workspace_of(path)
    data = bytearray(db.read_bytes())
    page = 4096
    for start in range(2 * page, len(data) - page, 3 * page):  # scribble over b-tree pages, keep the header
        data[start : start + 64] = b"\xff" * 64
    db.write_bytes(bytes(data))
    done = cli("workspace", "check", str(db))
    assert done.returncode == 1
    assert "damaged" in done.stdout and "Traceback" not in done.stderr
    not_sqlite = tmp_path / "notes.sqlite"
    not_sqlite.write_text("just text\n" * 500)
    done = cli("workspace", "check", str(not_sqlite))
    assert done.returncode == 1 and "damaged" in done.stdout


def test_backup_taken_while_another_process_writes_is_consistent(tmp_path: Path) -> None:
    path = copy_sample("darija-algerian.tsv", tmp_path)
    Project.open(path, annotator="setup").workspace.close()
    writer = subprocess.Popen(
        [sys.executable, "-c", VOTER, str(path), "amina", "60"], stdout=subprocess.PIPE, text=True
    )
    assert writer.stdout is not None
    for _ in range(10):
        writer.stdout.readline()  # the writer is in the middle of its votes
    out = tmp_path / "backup.sqlite"
    done = cli("workspace", "backup", str(workspace_of(path)), str(out), "--json")
    rest = writer.communicate(timeout=120)[0].split()
    assert done.returncode == 0, done.stderr
    copied = json.loads(done.stdout)
    assert copied["ok"] and copied["counts"]["votes"] >= 10
    assert not Path(f"{out}-wal").exists()  # one self-contained file
    conn = sqlite3.connect(out)
    votes = conn.execute("SELECT count(*) FROM events WHERE kind = 'vote'").fetchone()[0]
    conn.close()
    assert votes == copied["counts"]["votes"]
    again = cli("workspace", "backup", str(workspace_of(path)), str(out))
    assert again.returncode == 2 and "--force" in again.stderr
    forced = cli("workspace", "backup", str(workspace_of(path)), str(out), "--force")
    assert forced.returncode == 0 and f"{10 + len(rest)} votes" in forced.stdout
    onto_itself = cli("workspace", "backup", str(workspace_of(path)), f"{workspace_of(path)}-wal", "--force")
    assert onto_itself.returncode == 2 and "WAL" in onto_itself.stderr


def test_a_workspace_deleted_while_open_is_written_back_before_the_next_vote(tmp_path: Path) -> None:
    path = copy_sample("darija-algerian.tsv", tmp_path)
    project = Project.open(path, annotator="amina")
    ids = [item.id for item in project.items[:3]]
    project.vote(ids[0], "0")
    project.vote(ids[1], "1")
    db = workspace_of(path)
    for name in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
        name.unlink(missing_ok=True)
    project.vote(ids[2], "0")
    notices = project.workspace.take_notices()
    assert len(notices) == 1 and "deleted" in notices[0] and "nothing was lost" in notices[0]
    project.workspace.close()
    reopened = Project.open(path, annotator="amina")
    assert {i: reopened.state.votes[i]["amina"].choice for i in ids} == {ids[0]: "0", ids[1]: "1", ids[2]: "0"}


def test_a_workspace_replaced_while_open_is_left_alone_and_this_session_is_kept_beside_it(tmp_path: Path) -> None:
    path = copy_sample("darija-algerian.tsv", tmp_path)
    project = Project.open(path, annotator="amina")
    first = project.items[0].id
    project.vote(first, "1")
    db = workspace_of(path)
    stranger = tmp_path / "other.sqlite"
    Project.open(copy_sample("tamil.tsv", tmp_path), workspace=stranger, annotator="x").workspace.close()
    os.replace(stranger, db)
    with pytest.raises(WorkspaceError, match="replaced by another file"):
        project.vote(project.items[1].id, "0")
    with pytest.raises(WorkspaceError, match="replaced by another file"):  # and every later action says so too
        project.vote(project.items[2].id, "0")
    copies = list(tmp_path.glob(f"{db.name}.recovered-*"))
    assert len(copies) == 1
    conn = sqlite3.connect(copies[0])
    assert conn.execute("SELECT item_id, new FROM events WHERE kind = 'vote'").fetchall() == [(first, "1")]
    conn.close()
    assert project.state.votes[first]["amina"].choice == "1" and project.items[1].id not in project.state.votes


def test_the_periodic_checkpoint_never_makes_a_deleted_workspace_again(tmp_path: Path) -> None:
    from piqa_tui.core.workspace.log import checkpoint_file

    path = copy_sample("darija-algerian.tsv", tmp_path)
    project = Project.open(path, annotator="amina")
    project.vote(project.items[0].id, "1")
    db = workspace_of(path)
    assert checkpoint_file(db) and len(votes_in_file_alone(db, tmp_path / "copy")) == 1  # the TUI's minute checkpoint
    db.unlink()
    assert not checkpoint_file(db) and not db.exists()
    project.vote(project.items[1].id, "0")  # written back, then recorded
    assert "written back" in project.workspace.take_notices()[0]
    project.workspace.close()
    assert len(votes_in_file_alone(db, tmp_path / "copy3")) == 2
