"""A large file's first rows are on screen while the rest is read: moving works, every other key waits for the
whole file, and what the annotator moved to is where the whole file opens. A bad row far down is still reported."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from piqa_tui.core.workspace.log import Workspace
from piqa_tui.tui.app import PiqaApp
from piqa_tui.tui.screens.main import MainScreen
from piqa_tui.tui.state.session import Session
from piqa_tui.tui.widgets.status_header import StatusHeader

from .conftest import current_id, main_screen, make_app, wait_for

ITEMS = 5000  # about 1.3 MB: large enough to be previewed (more than four times the head read first)


def write_large(path: Path, bad_row: int | None = None) -> Path:
    """A Global-PIQA-layout TSV of ``ITEMS`` Darija items; ``bad_row`` (1-based) lacks its last columns."""
    lines = ["id\tprompt\tsolution0\tsolution1\tlabel\tcategory"]
    for n in range(1, ITEMS + 1):
        prompt = f"كيفاش نحضر الكسكسي رقم {n} بلا ما يلصق فالكسكاس وبلا ما يولي عجينة"
        row = [f"it-{n:05d}", prompt, f"تحط شوية الزيت قبل البخار رقم {n}.", f"تحط شوية الما قبل البخار رقم {n}."]
        lines.append("\t".join(row[:2] if n == bad_row else [*row, str(n % 2), "cooking"]))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """Hold the read of the whole file until the test sets the event (the preview stays on screen meanwhile)."""
    release = threading.Event()
    whole = Session.open.__func__  # type: ignore[attr-defined]

    def open_when_released(cls: type[Session], *args: object, **kwargs: object) -> Session:
        release.wait(30)
        return whole(cls, *args, **kwargs)

    monkeypatch.setattr(Session, "open", classmethod(open_when_released))
    yield release
    release.set()


def header_text(app: PiqaApp) -> str:
    return str(app.screen.query_one(StatusHeader).render())


def previewing(app: PiqaApp) -> bool:
    screen = app.screen
    return isinstance(screen, MainScreen) and bool(screen.session.loading) and screen.session.painted.is_set()


async def test_first_rows_show_before_the_file_is_read_and_moves_carry_over(
    tmp_path: Path, held: threading.Event
) -> None:
    path = write_large(tmp_path / "large.tsv")
    app = make_app(path)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: previewing(app))
        assert app.session is None  # the whole file is not read yet
        preview = main_screen(pilot)
        assert "1/…" in header_text(app) and "reading large.tsv" in header_text(app)
        assert current_id(pilot) == "it-00001"
        assert len(preview.project.items) < ITEMS
        await pilot.press("j", "j", "down")
        assert current_id(pilot) == "it-00004"
        await pilot.press("1", "e", "slash")  # a vote, an edit, a search: refused with a message, not kept
        assert any("works once every item is read" in n.message for n in app._notifications)
        assert not preview.query_one("SearchBar").is_open
        held.set()
        await wait_for(pilot, lambda: app.session is not None and main_screen(pilot).session is app.session)
        await pilot.pause()
        assert current_id(pilot) == "it-00004"
        assert f"4/{ITEMS}" in header_text(app)
        assert not app.session.project.state.votes  # the vote pressed on the preview was not recorded
        await pilot.press("1")  # now it is: on the item the annotator moved to
        await wait_for(pilot, lambda: bool(app.session and app.session.project.state.votes))
        assert list(app.session.project.state.votes) == ["it-00004"]


async def test_a_bad_row_far_down_is_reported_after_the_preview(tmp_path: Path, held: threading.Event) -> None:
    path = write_large(tmp_path / "ragged.tsv", bad_row=ITEMS - 500)
    app = make_app(path)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: previewing(app))
        held.set()
        await wait_for(pilot, lambda: app._exit)
    assert app.return_code == 2
    assert app.error_message is not None and "ragged rows" in app.error_message


def test_no_preview_where_the_workspace_holds_events(tmp_path: Path) -> None:
    """Votes or edits change the rows and marks: the screen waits for the whole file and the workspace."""
    path = write_large(tmp_path / "large.tsv")
    request = make_app(path).settings.request
    assert request is not None
    preview = Session.preview(request)
    assert preview is not None and preview.loading and preview.project.workspace is None
    session = Session.open(request)
    session.project.vote("it-00002", "0")
    assert session.project.workspace is not None
    session.project.workspace.close()
    assert Session.preview(request) is None


def test_no_preview_of_a_small_file(darija: Path) -> None:
    request = make_app(darija).settings.request
    assert request is not None
    assert Session.preview(request) is None


def test_the_preview_opens_where_the_annotator_left_off(tmp_path: Path) -> None:
    path = write_large(tmp_path / "large.tsv")
    request = make_app(path).settings.request
    assert request is not None
    from piqa_tui.core.workspace.log import default_location
    from piqa_tui.core.workspace.preferences import store_position

    ws = Workspace(default_location(path))
    store_position(ws, "tester", "it-00007")
    ws.close()
    preview = Session.preview(request)
    assert preview is not None and preview.start_id == "it-00007"
    ws = Workspace(default_location(path))
    store_position(ws, "tester", f"it-{ITEMS:05d}")  # beyond the first rows: no preview, the whole file opens there
    ws.close()
    assert Session.preview(request) is None
