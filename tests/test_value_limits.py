"""One value of the log is at most ``MAX_VALUE_BYTES``: every local writer refuses a larger one in one line.

What the user types (a note, an edit, a draft in the new-item form) and what they import (a drafts file, an
answers file) ends in the same write path; a value over the bound records nothing there, and a value at the bound
is recorded as it is. The merge gate holds what arrives from elsewhere to the same constant.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from piqa_tui.core.round.origin import Origin
from piqa_tui.core.round.stages import Draft, add_items, draft
from piqa_tui.core.votes.exchange import import_answers
from piqa_tui.core.workspace.limits import MAX_VALUE_BYTES, ValueTooLarge, check_value
from piqa_tui.core.workspace.project import Project

from .conftest import copy_sample

TAMIL_LETTER = "த"  # three bytes of UTF-8: a text whose characters alone do not say its size
OVER = TAMIL_LETTER * (MAX_VALUE_BYTES // 3 + 1)


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project.open(copy_sample("tamil.tsv", tmp_path), annotator="amina")


def test_the_bound_is_in_bytes_of_utf8_and_inclusive() -> None:
    check_value("a" * MAX_VALUE_BYTES, "the note")
    check_value(TAMIL_LETTER * (MAX_VALUE_BYTES // 3), "the note")
    check_value(None, "the note")
    with pytest.raises(ValueTooLarge) as caught:
        check_value(OVER, "the note on ta-001")
    assert str(caught.value) == (
        f"the note on ta-001 is {len(OVER) * 3:,} bytes, more than the {MAX_VALUE_BYTES:,} one value may hold; "
        "shorten it"
    )


def test_a_typed_note_edit_or_draft_over_the_bound_records_nothing(project: Project) -> None:
    before = project.workspace.last_seq() if project.workspace else 0
    item = project.items[0]
    with pytest.raises(ValueTooLarge, match=f"^the note on {item.id} is "):
        project.set_note(item.id, OVER)
    with pytest.raises(ValueTooLarge, match=f"^the edit 'prompt' on {item.id} is "):
        project.edit(item.id, {"prompt": OVER})
    with pytest.raises(ValueTooLarge, match="^the new-item on new-"):
        add_items(project, [draft(OVER, ["a", "b"], 0)])
    assert project.workspace is not None and project.workspace.last_seq() == before
    project.set_note(item.id, "a" * 1000)  # a real note is recorded as before
    assert project.state.notes[item.id] == "a" * 1000


def test_an_answers_row_over_the_bound_is_rejected_and_the_others_recorded(project: Project, tmp_path: Path) -> None:
    path = tmp_path / "answers.tsv"
    path.write_text(
        "item_id\tannotator\tquestion\tanswer\ttime\n"
        "ta-001\tamina\twhy\tshort\t2026-01-01T00:00:00.000000Z\n"
        f"ta-002\tamina\twhy\t{OVER}\t2026-01-01T00:00:01.000000Z\n",
        encoding="utf-8",
    )
    found = import_answers(project, path, lambda annotator, question, answer: answer)
    assert found.new == 1 and len(found.bad) == 1
    line, reason = found.bad[0]
    assert line == 3 and reason.startswith("the answer is ") and f"{MAX_VALUE_BYTES:,}" in reason


def test_a_drafts_file_with_a_value_over_the_bound_is_one_line(tmp_path: Path) -> None:
    dataset = copy_sample("tamil.tsv", tmp_path)
    drafts = tmp_path / "drafts.tsv"
    drafts.write_text(f"goal\tsol1\tsol2\tlabel\nDrink tea\ta cup\ta fork\t0\n{OVER}\ta\tb\t1\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "piqa_tui.cli.main", "stage", str(dataset), "--import", str(drafts)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    size = len(Draft(OVER, ("a", "b"), 1, origin=Origin("imported")).canonical().encode("utf-8"))
    assert f"drafts.tsv: row 2 (r2), as a draft, is {size:,} bytes" in done.stderr, done.stderr
    project = Project.open(dataset, create=False)
    assert len(project.items) == len(project.dataset.items)  # the good row before it was not recorded either
