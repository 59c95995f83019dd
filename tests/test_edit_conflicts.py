"""Two people on one field: a save over a change made since the editor opened, or an undo over someone
else's later edit, records nothing and says who changed it and when."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from piqa_tui.core.errors import EditConflict, UndoRefused, VotesArrived
from piqa_tui.core.workspace.log import Workspace
from piqa_tui.core.workspace.project import Project

from .conftest import copy_sample

OTHER_EDIT = textwrap.dedent(
    """
    import sys
    from piqa_tui.core.workspace.project import Project
    path, who, item_id, field, value = sys.argv[1:6]
    project = Project.open(path, annotator=who)
    if field == "note":
        project.set_note(item_id, value)
    else:
        project.edit(item_id, {field: value})
    """
)


def other_process_edits(path: Path, who: str, item_id: str, field: str, value: str) -> None:
    """Another annotator's process records ``field`` of ``item_id`` = ``value`` and exits."""
    subprocess.run([sys.executable, "-c", OTHER_EDIT, str(path), who, item_id, field, value], check=True)


def event_count(path: Path) -> int:
    ws = Workspace(path.with_name(path.name + ".piqa.sqlite"))
    try:
        return ws.last_seq()
    finally:
        ws.close()


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    path = copy_sample("darija-algerian.tsv", tmp_path)
    Project.open(path, annotator="setup")  # the workspace exists before anyone edits
    return path


def test_a_save_over_another_process_edit_raises_with_the_three_versions(dataset: Path) -> None:
    mine = Project.open(dataset, annotator="amina")
    item_id = mine.items[0].id
    base = mine.item(item_id).prompt
    other_process_edits(dataset, "yacine", item_id, "prompt", "their prompt")
    before = event_count(dataset)

    with pytest.raises(EditConflict) as caught:
        mine.edit(item_id, {"prompt": "my prompt"}, base={"prompt": base})

    conflict = caught.value
    assert (conflict.theirs, conflict.mine, conflict.base) == ("their prompt", "my prompt", base)
    assert conflict.by == "yacine" and conflict.when
    assert "yacine" in str(conflict)
    assert event_count(dataset) == before  # nothing recorded
    assert mine.item(item_id).prompt == "their prompt"  # the project now shows theirs
    assert Project.open(dataset, annotator="lead").item(item_id).prompt == "their prompt"


def test_two_projects_in_one_process_conflict_the_same_way(dataset: Path) -> None:
    first = Project.open(dataset, annotator="amina")
    second = Project.open(dataset, annotator="yacine")
    item_id = first.items[1].id
    base = first.item(item_id).solutions[0]
    second.edit(item_id, {"solution0": "theirs"}, base={"solution0": base})
    with pytest.raises(EditConflict) as caught:
        first.edit(item_id, {"solution0": "mine"}, base={"solution0": base})
    assert (caught.value.theirs, caught.value.mine, caught.value.base, caught.value.by) == (
        "theirs",
        "mine",
        base,
        "yacine",
    )
    # Keep mine: recorded on theirs, it goes through.
    first.edit(item_id, {"solution0": "mine"}, base={"solution0": caught.value.theirs})
    assert Project.open(dataset, annotator="lead").item(item_id).solutions[0] == "mine"


def test_the_same_text_typed_by_both_is_no_conflict(dataset: Path) -> None:
    mine = Project.open(dataset, annotator="amina")
    item_id = mine.items[0].id
    base = mine.item(item_id).prompt
    other_process_edits(dataset, "yacine", item_id, "prompt", "same words")
    before = event_count(dataset)
    assert mine.edit(item_id, {"prompt": "same words"}, base={"prompt": base}).prompt == "same words"
    assert event_count(dataset) == before


def test_without_a_base_the_later_save_wins_as_before(dataset: Path) -> None:
    mine = Project.open(dataset, annotator="amina")
    item_id = mine.items[0].id
    other_process_edits(dataset, "yacine", item_id, "prompt", "their prompt")
    mine.edit(item_id, {"prompt": "my prompt"})
    assert Project.open(dataset, annotator="lead").item(item_id).prompt == "my prompt"
    event = Workspace(dataset.with_name(dataset.name + ".piqa.sqlite")).events(kinds=["edit"])[-1]
    assert event.old == "their prompt"  # recorded on what the field held, so undo brings theirs back


def test_a_gold_label_conflicts_too(dataset: Path) -> None:
    mine = Project.open(dataset, annotator="amina")
    item = mine.items[0]
    base = "" if item.label is None else str(item.label)
    theirs, wanted = ("1" if base != "1" else "0"), ""  # mine: no gold label
    other_process_edits(dataset, "yacine", item.id, "label", theirs)
    with pytest.raises(EditConflict) as caught:
        mine.edit(item.id, {"label": wanted}, base={"label": base})
    assert (caught.value.field, caught.value.theirs, caught.value.mine) == ("label", theirs, wanted)
    assert mine.item(item.id).label == int(theirs)
    mine.edit(item.id, {"label": wanted}, base={"label": theirs})  # keep mine, on theirs
    assert Project.open(dataset, annotator="lead").item(item.id).label is None


def test_a_note_conflicts_too(dataset: Path) -> None:
    mine = Project.open(dataset, annotator="amina")
    item_id = mine.items[0].id
    other_process_edits(dataset, "yacine", item_id, "note", "their note")
    before = event_count(dataset)
    with pytest.raises(EditConflict) as caught:
        mine.set_note(item_id, "my note", base="")
    assert (caught.value.theirs, caught.value.mine, caught.value.base, caught.value.by) == (
        "their note",
        "my note",
        "",
        "yacine",
    )
    assert event_count(dataset) == before
    mine.set_note(item_id, "my note", base="their note")
    assert Project.open(dataset, annotator="lead").state.notes[item_id] == "my note"


def test_undo_after_another_edit_of_the_field_refuses_naming_who(dataset: Path) -> None:
    mine = Project.open(dataset, annotator="amina")
    item_id = mine.items[0].id
    original = mine.item(item_id).prompt
    mine.edit(item_id, {"prompt": "my prompt"}, base={"prompt": original})
    other_process_edits(dataset, "yacine", item_id, "prompt", "their prompt")
    before = event_count(dataset)

    with pytest.raises(UndoRefused, match=r"changed by yacine at \d{4}-\d\d-\d\d \d\d:\d\d UTC"):
        mine.undo()

    assert event_count(dataset) == before
    assert Project.open(dataset, annotator="lead").item(item_id).prompt == "their prompt"


def test_redo_after_another_edit_of_the_field_refuses(dataset: Path) -> None:
    mine = Project.open(dataset, annotator="amina")
    item_id = mine.items[0].id
    mine.edit(item_id, {"prompt": "my prompt"})
    mine.undo()
    other_process_edits(dataset, "yacine", item_id, "prompt", "their prompt")
    with pytest.raises(UndoRefused, match="yacine"):
        mine.redo()
    assert mine.item(item_id).prompt == "their prompt"


def test_undo_of_a_note_after_another_note_refuses(dataset: Path) -> None:
    mine = Project.open(dataset, annotator="amina")
    item_id = mine.items[0].id
    mine.set_note(item_id, "my note", base="")
    other_process_edits(dataset, "yacine", item_id, "note", "their note")
    with pytest.raises(UndoRefused, match="note was changed by yacine"):
        mine.undo()
    assert mine.state.notes[item_id] == "their note"


def test_undo_of_an_untouched_field_still_works(dataset: Path) -> None:
    mine = Project.open(dataset, annotator="amina")
    first, second = mine.items[0].id, mine.items[1].id
    original = mine.item(first).prompt
    mine.edit(first, {"prompt": "my prompt"})
    other_process_edits(dataset, "yacine", second, "prompt", "elsewhere")
    assert mine.undo() == first
    assert mine.item(first).prompt == original


OTHER_VOTE = textwrap.dedent(
    """
    import sys
    from piqa_tui.core.workspace.project import Project
    path, who, item_id, choice = sys.argv[1:5]
    Project.open(path, annotator=who).vote(item_id, choice)
    """
)


def test_a_vote_cast_since_the_question_stops_an_edit_that_would_set_it_aside(dataset: Path) -> None:
    """amina was asked about the votes on the text she changes (none then); karim's process votes for that
    text before she saves. Her edit records nothing and names him, so she is asked again; agreeing to set his
    vote aside (or not asking at all, the old call) records it."""
    mine = Project.open(dataset, annotator="amina")
    item_id = mine.items[6].id
    changed = {"solution0": mine.item(item_id).solutions[0] + "!"}
    assert mine.votes_invalidated(item_id, changed) == []  # what she was asked about: nothing
    subprocess.run([sys.executable, "-c", OTHER_VOTE, str(dataset), "karim", item_id, "0"], check=True)
    before = event_count(dataset)
    with pytest.raises(VotesArrived) as caught:
        mine.edit(item_id, changed, stale_ok=[])
    assert caught.value.annotators == ["karim"] and "karim" in str(caught.value)
    assert event_count(dataset) == before  # nothing recorded
    assert mine.votes_invalidated(item_id, changed) == ["karim"]  # the question, asked again, names him
    mine.edit(item_id, changed, stale_ok=["karim"])
    assert event_count(dataset) == before + 1
    assert mine.state.votes[item_id]["karim"].choice != "0"  # his vote predates the text now (set aside)


def test_a_vote_for_another_solution_does_not_stop_the_edit(dataset: Path) -> None:
    mine = Project.open(dataset, annotator="amina")
    item_id = mine.items[6].id
    subprocess.run([sys.executable, "-c", OTHER_VOTE, str(dataset), "karim", item_id, "1"], check=True)
    mine.edit(item_id, {"solution0": mine.item(item_id).solutions[0] + "!"}, stale_ok=[])
    assert mine.item(item_id).solutions[0].endswith("!")
