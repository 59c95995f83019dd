"""The editing, filtering and files controllers as plain objects: real session, project, workspace and files.

Only the screen is a stand-in (``standin.py``); what each controller did is
checked in the workspace or the file it wrote, in the rows it asked the list
to show, and in what it said.
"""

from __future__ import annotations

import os
from pathlib import Path

from piqa_tui.core.dataset.reading import load_dataset
from piqa_tui.core.workspace.project import Project
from piqa_tui.tui.controllers.editing import EditingController
from piqa_tui.tui.controllers.files import FilesController
from piqa_tui.tui.controllers.filtering import FilteringController
from piqa_tui.tui.dialogs.prompts import ChoiceDialog, TextPrompt
from piqa_tui.tui.state.listing import Filters
from piqa_tui.tui.state.session import OpenRequest, Session

from .standin import ScreenStandIn


def opened(path: Path, annotator: str = "amina", reviewer: bool = False) -> tuple[Session, ScreenStandIn]:
    session = Session.open(OpenRequest(path, annotator=annotator), reviewer=reviewer)
    return session, ScreenStandIn(session)


def recorded(path: Path) -> Project:
    """The workspace as another process reads it."""
    return Project.open(path, annotator="other")


# ------------------------------------------------------------------ editing


def test_an_edit_and_a_note_are_recorded_and_undone(darija: Path) -> None:
    session, screen = opened(darija)
    editing = EditingController(session, screen)
    item = session.project.item("dz-002")
    editing.save_field(item, "prompt", "نص جديد")
    editing.save_field(item, "note", "to check")
    assert recorded(darija).item("dz-002").prompt == "نص جديد"
    assert recorded(darija).state.notes["dz-002"] == "to check"
    assert screen.changed == [["dz-002"], ["dz-002"]] and session.unsaved

    editing.undo()  # the note first, then the edit: last in, first out
    assert recorded(darija).state.notes.get("dz-002", "") == ""
    editing.undo()
    assert recorded(darija).item("dz-002").prompt == item.prompt
    assert screen.current is not None and screen.current.id == "dz-002"  # undo shows the item it changed
    assert screen.said()[-1] == "undo on dz-002"


def test_an_edit_of_a_voted_solution_asks_first(darija: Path) -> None:
    session, screen = opened(darija, reviewer=True)
    session.project.vote("dz-001", "0")
    editing = EditingController(session, screen)
    editing.save_field(session.project.item("dz-001"), "solution0", "حل آخر")
    dialog, _ = screen.pushed[-1]
    assert isinstance(dialog, ChoiceDialog)
    screen.answer("cancel")
    assert recorded(darija).item("dz-001").solutions[0] != "حل آخر"
    editing.save_field(session.project.item("dz-001"), "solution0", "حل آخر")
    screen.answer("edit")
    assert recorded(darija).item("dz-001").solutions[0] == "حل آخر"


def test_blind_mode_keeps_the_label_hidden(darija: Path) -> None:
    session, screen = opened(darija)
    editing = EditingController(session, screen)
    item = session.project.item("dz-001")
    assert editing.label_hidden(item) and editing.copied_text(item, "label") is None
    assert editing.copied_text(item, "prompt") == item.prompt  # the stored text, as typed


# ---------------------------------------------------------------- filtering


def test_a_queue_filter_shows_its_rows_and_going_to_a_hidden_item_clears_it(darija: Path) -> None:
    session, screen = opened(darija)
    session.project.vote("dz-001", "0")
    filtering = FilteringController(session, screen)
    filtering.set_filters(Filters(queue="unvoted"))
    assert 0 not in screen.rows and len(screen.rows) == len(session.project.items) - 1

    filtering.go_to_position(0)
    assert not filtering.filters.active and screen.position == 0
    assert screen.said() == ["cleared the filters (queue unvoted) to show that item"]


def test_next_unvoted_skips_voted_items_and_wraps(darija: Path) -> None:
    session, screen = opened(darija)
    for item in session.project.items[1:]:
        session.project.vote(item.id, "0")
    filtering = FilteringController(session, screen)
    screen.position = 5
    filtering.next_unvoted()
    assert screen.position == 0 and screen.said() == ["wrapped round to the top"]


def test_search_runs_in_the_background_and_shows_the_matches(darija: Path) -> None:
    session, screen = opened(darija)
    filtering = FilteringController(session, screen)
    filtering.search("الشاي")
    assert screen.busy == "searching"
    screen.settle()
    assert screen.busy == "" and filtering.searched("الشاي")
    assert filtering.search_result is not None
    assert list(screen.rows) == filtering.search_result.positions

    filtering.clear(search_open=True)
    assert filtering.search_result is None and len(screen.rows) == len(session.project.items)


def test_jump_to_an_id(darija: Path) -> None:
    session, screen = opened(darija)
    filtering = FilteringController(session, screen)
    filtering.jump_to_id()
    prompt, _ = screen.pushed[-1]
    assert isinstance(prompt, TextPrompt)
    screen.answer("dz-010")
    assert screen.current is not None and screen.current.id == "dz-010"


# -------------------------------------------------------------------- files


def test_save_writes_the_file_and_clears_unsaved(darija: Path) -> None:
    session, screen = opened(darija)
    EditingController(session, screen).save_field(session.project.item("dz-003"), "prompt", "محفوظ")
    files = FilesController(session, screen)
    files.save()
    assert screen.busy == "saving"
    screen.settle()
    assert screen.busy == "" and not session.unsaved
    assert load_dataset(darija).items[2].prompt == "محفوظ"


def test_a_file_changed_on_disk_is_not_overwritten(darija: Path) -> None:
    session, screen = opened(darija)
    files = FilesController(session, screen)
    other = darija.read_text(encoding="utf-8").replace("dz-036", "dz-036b")
    darija.write_text(other, encoding="utf-8")
    os.utime(darija, None)

    files.watch()  # the app's poll
    screen.settle()
    assert session.disk_warning and screen.headers == 1
    assert len(screen.said("warning")) == 1

    files.save()
    screen.settle()
    dialog, _ = screen.pushed[-1]
    assert isinstance(dialog, ChoiceDialog) and darija.read_text(encoding="utf-8") == other
    screen.answer("reload")
    assert screen.reopened == ["dz-001"]
