"""Undoing an item's creation takes the item away, so it never takes someone else's work on the item with it:
two annotators on one workspace file, each with a Project of their own."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from piqa_tui.core.dedup.clusters import Cluster, Member
from piqa_tui.core.dedup.resolution import keep_one
from piqa_tui.core.errors import UndoRefused
from piqa_tui.core.round.stages import NEW_ITEM_FIELD, add_items, draft, set_stage, stage_of
from piqa_tui.core.sync.merge import merge_workspace
from piqa_tui.core.workspace.log import Change, Part
from piqa_tui.core.workspace.project import NEW_ITEM_KIND, Project

from .conftest import copy_sample

DATA = "darija-algerian.tsv"
WHEN = r"at \d{4}-\d\d-\d\d \d\d:\d\d UTC"


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    path = copy_sample(DATA, tmp_path)
    Project.open(path, annotator="setup")  # the workspace exists before anyone writes
    return path


def written_by(path: Path, who: str = "amina") -> tuple[Project, str]:
    """``who``'s project on ``path`` and the id of the item they just wrote."""
    author = Project.open(path, annotator=who)
    (item_id,) = add_items(author, [draft("How to keep bread fresh?", ["In a cloth bag", "In the sun"], 0)])
    return author, item_id


def last_seq(project: Project) -> int:
    assert project.workspace is not None
    return project.workspace.last_seq()


def still_there(path: Path, item_id: str) -> bool:
    return item_id in Project.open(path, annotator="lead").index


def cluster(*ids: str) -> Cluster:
    return Cluster(tuple(Member(item_id, k) for k, item_id in enumerate(ids)), 1.0, "exact")


WORK: dict[str, tuple[Callable[[Project, str], object], str]] = {
    "edit": (lambda p, i: p.edit(i, {"prompt": "How to keep bread soft?"}), "prompt was changed"),
    "vote": (lambda p, i: p.vote(i, "0"), "it was voted on"),
    "note": (lambda p, i: p.set_note(i, "check the second solution"), "note was changed"),
    "flag": (lambda p, i: p.set_flag(i, "typo"), "its flags were changed"),
    "stage": (lambda p, i: set_stage(p, [i], "review"), "its stage was moved"),
    "adjudication": (lambda p, i: p.adjudicate(i, 0, "the cloth keeps it"), "it was adjudicated"),
    "duplicate decision": (lambda p, i: keep_one(p, cluster("dz-001", i), "dz-001"), "its flags were changed"),
}


@pytest.mark.parametrize("work", list(WORK))
def test_an_undo_of_a_creation_after_someone_elses_work_on_it_is_refused_naming_them(dataset: Path, work: str) -> None:
    author, item_id = written_by(dataset)
    reviewer = Project.open(dataset, annotator="yacine")
    record, what = WORK[work]
    record(reviewer, item_id)
    before = last_seq(author)

    with pytest.raises(
        UndoRefused, match=rf"^cannot undo on {item_id}: {what} by yacine {WHEN} since; nothing was undone$"
    ):
        author.undo()

    assert last_seq(author) == before
    assert item_id in author.index and still_there(dataset, item_id)


def test_the_authors_own_later_changes_are_undone_first_then_the_item_goes(dataset: Path) -> None:
    author, item_id = written_by(dataset)
    author.edit(item_id, {"prompt": "How to keep bread soft?"})
    author.vote(item_id, "0")
    author.set_note(item_id, "mine")
    set_stage(author, [item_id], "review")
    for _ in range(4):
        assert author.undo() == item_id
    assert stage_of(author, item_id) == "draft" and author.item(item_id).prompt == "How to keep bread fresh?"
    assert author.undo() == item_id  # the creation: nothing of anyone else's stands on the item
    assert not still_there(dataset, item_id)


def test_work_its_author_undid_no_longer_holds_the_creation(dataset: Path) -> None:
    author, item_id = written_by(dataset)
    reviewer = Project.open(dataset, annotator="yacine")
    reviewer.vote(item_id, "1")
    reviewer.set_flag(item_id, "typo")
    assert reviewer.undo() == item_id and reviewer.undo() == item_id
    assert author.undo() == item_id
    assert not still_there(dataset, item_id)


def test_a_withdrawn_vote_still_counts_and_the_latest_work_is_named(dataset: Path) -> None:
    author, item_id = written_by(dataset)
    Project.open(dataset, annotator="yacine").vote(item_id, "0")
    Project.open(dataset, annotator="bilal").vote(item_id, "1")
    Project.open(dataset, annotator="yacine").vote(item_id, "")  # a withdrawal is recorded work too
    with pytest.raises(UndoRefused, match=rf"it was voted on by yacine {WHEN}"):
        author.undo()


def test_the_check_runs_under_the_write_lock_over_a_write_made_after_the_authors_refresh(dataset: Path) -> None:
    author, item_id = written_by(dataset)
    reviewer = Project.open(dataset, annotator="yacine")
    author.refresh()  # the author's state is up to date here ...
    reviewer.vote(item_id, "0")  # ... and the reviewer writes before the author presses u
    assert "yacine" not in author.state.votes.get(item_id, {})
    with pytest.raises(UndoRefused, match="yacine"):
        author.undo()
    assert still_there(dataset, item_id)


def test_a_redo_brings_back_the_item_with_work_recorded_on_its_id_while_it_was_gone(tmp_path: Path) -> None:
    """A vote made on a laptop copy before the undo, merged after it: the redo brings the item back with it,
    and the next undo is refused, as the vote stands on the item."""
    here = copy_sample(DATA, tmp_path)
    author, item_id = written_by(here)
    laptop = tmp_path / "laptop"
    laptop.mkdir()
    shutil.copy(here, laptop / DATA)
    assert author.workspace is not None
    with sqlite3.connect(laptop / (DATA + ".piqa.sqlite")) as copy:
        author.workspace.conn.backup(copy)  # the copy a laptop takes, the WAL included
    on_laptop = Project.open(laptop / DATA, annotator="yacine")
    on_laptop.vote(item_id, "1")
    assert on_laptop.workspace is not None
    on_laptop.workspace.close()

    assert author.undo() == item_id
    merge_workspace(author.workspace, laptop / (DATA + ".piqa.sqlite"))
    author.refresh()
    assert item_id not in author.index

    assert author.redo() == item_id
    assert author.state.votes[item_id]["yacine"].choice == "1"
    with pytest.raises(UndoRefused, match=rf"it was voted on by yacine {WHEN}"):
        author.undo()


def test_a_redo_is_refused_when_another_item_with_its_id_was_added_since(dataset: Path) -> None:
    author, item_id = written_by(dataset)
    assert author.undo() == item_id
    other = Project.open(dataset, annotator="yacine")
    fields = '{"label":null,"meta":{},"prompt":"Another goal","solutions":["one","two"]}'
    other.record([Part(NEW_ITEM_KIND, (Change(item_id, NEW_ITEM_FIELD, None, fields),))])
    before = last_seq(author)

    pattern = rf"^cannot redo on {item_id}: an item with this id was added by yacine {WHEN} since; nothing was redone$"
    with pytest.raises(UndoRefused, match=pattern):
        author.redo()

    assert last_seq(author) == before
    assert Project.open(dataset, annotator="lead").item(item_id).prompt == "Another goal"


def test_an_undone_and_redone_creation_is_undone_again_when_nobody_else_touched_it(dataset: Path) -> None:
    author, item_id = written_by(dataset)
    Project.open(dataset, annotator="yacine").vote("dz-001", "0")  # work elsewhere does not count
    assert author.undo() == item_id and author.redo() == item_id
    assert still_there(dataset, item_id)
    assert author.undo() == item_id
    assert not still_there(dataset, item_id)


def test_an_import_of_drafts_is_one_undo_refused_when_one_of_its_items_was_worked_on(dataset: Path) -> None:
    lead = Project.open(dataset, annotator="lead")
    ids = add_items(lead, [draft(f"goal {k}", [f"one {k}", f"two {k}"], None) for k in range(30)])
    Project.open(dataset, annotator="yacine").vote(ids[17], "1")
    with pytest.raises(UndoRefused, match=rf"^cannot undo on {ids[17]}: it was voted on by yacine"):
        lead.undo()
    assert all(item_id in lead.index for item_id in ids)
