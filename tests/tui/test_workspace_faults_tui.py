"""The TUI under workspace faults: a lock held by another process, a full disk, a disk turned read-only.

No crash, no loss, and the screen never shows an action that was not committed: votes, adjudications and
duplicate-cluster decisions all go through the session's write queue.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from textual.pilot import Pilot

from piqa_tui.core.text.bidi import BidiMode
from piqa_tui.core.text.direction import Direction
from piqa_tui.core.workspace.project import Project
from piqa_tui.tui.app import AppSettings, PiqaApp
from piqa_tui.tui.messages import Reopen
from piqa_tui.tui.screens.adjudication import AdjudicationScreen
from piqa_tui.tui.screens.duplicates import DuplicatesScreen
from piqa_tui.tui.screens.main import MainScreen
from piqa_tui.tui.state import writes as writes_module
from piqa_tui.tui.state.session import OpenRequest
from tests.conftest import (
    copy_sample,
    fill_disk,
    remount_read_only,
    small_disk,
    write_lock_held,
)

from .conftest import current_id, main_screen, type_text, wait_for

BUSY_TIMEOUT = 0.2  # seconds: the lock below is held far longer than this


@asynccontextmanager
async def annotate(path: Path, annotator: str = "amina", reviewer: bool = False) -> AsyncIterator[Pilot]:
    request = OpenRequest(path, annotator=annotator, busy_timeout=BUSY_TIMEOUT)
    app = PiqaApp(AppSettings(request, bidi_mode=BidiMode.APP, reviewer=reviewer))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, MainScreen))
        await pilot.pause()
        yield pilot


def notified(pilot: Pilot, text: str) -> bool:
    return any(text in n.message for n in pilot.app._notifications)


def waiting(pilot: Pilot) -> int:
    """How many actions wait in the session's write queue."""
    return len(pilot.app.session.writes.queue)


def my_vote(pilot: Pilot, item_id: str) -> str | None:
    vote = main_screen(pilot).project.state.votes.get(item_id, {}).get("amina")
    return None if vote is None else vote.choice


async def test_a_lock_held_past_the_busy_timeout_keeps_votes_pending_until_recorded(darija: Path) -> None:
    Project.open(darija, annotator="setup").workspace.close()
    db = darija.with_name(darija.name + ".piqa.sqlite")
    async with annotate(darija) as pilot:
        with write_lock_held(db):
            first = current_id(pilot)
            await pilot.press("2")
            await wait_for(pilot, lambda: notified(pilot, "workspace busy, retrying"))
            second = current_id(pilot)
            await pilot.press("1")  # queued behind the first, in order
            assert my_vote(pilot, first) is None and my_vote(pilot, second) is None  # nothing shown as done
            assert "not voted yet" in str(main_screen(pilot).item_view.query_one("VotePanel").content)
            assert waiting(pilot) == 2
        await wait_for(pilot, lambda: not waiting(pilot))  # the lock is gone: both are recorded
        assert my_vote(pilot, first) == "1" and my_vote(pilot, second) == "0"
        await wait_for(pilot, lambda: notified(pilot, "recorded after waiting"))
        await pilot.press("ctrl+q")
    reopened = Project.open(darija, annotator="amina")
    assert reopened.state.votes[first]["amina"].choice == "1" and reopened.state.votes[second]["amina"].choice == "0"


async def test_a_lock_never_released_tells_the_user_what_was_not_recorded(
    darija: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(writes_module, "GIVE_UP_SECONDS", 0.5)
    Project.open(darija, annotator="setup").workspace.close()
    db = darija.with_name(darija.name + ".piqa.sqlite")
    async with annotate(darija) as pilot:
        with write_lock_held(db):
            first = current_id(pilot)
            await pilot.press("2")
            await wait_for(pilot, lambda: notified(pilot, "not recorded: your vote on " + first))
            assert my_vote(pilot, first) is None and not waiting(pilot)
        await pilot.press("up", "2")  # the lock is gone: voting again works
        await wait_for(pilot, lambda: my_vote(pilot, first) == "1")


async def test_reopening_while_votes_wait_says_which_were_not_recorded(darija: Path) -> None:
    Project.open(darija, annotator="setup").workspace.close()
    db = darija.with_name(darija.name + ".piqa.sqlite")
    async with annotate(darija) as pilot:
        old = pilot.app.session
        with write_lock_held(db):
            first = current_id(pilot)
            await pilot.press("2")
            await wait_for(pilot, lambda: waiting(pilot) == 1)
            pilot.app.post_message(Reopen(first))  # the waiting vote belongs to the session being closed
            await wait_for(pilot, lambda: notified(pilot, f"not recorded: your vote on {first}"))
            assert pilot.app.session is not old and not old.writes.queue
        assert my_vote(pilot, first) is None  # the reopened project: never recorded, never shown
        await pilot.press("ctrl+q")
    assert "amina" not in Project.open(darija, annotator="x").state.votes.get(first, {})


def preferences(db: Path) -> dict[str, str]:
    """The workspace's preferences (directions, where each annotator is), as another process reads them."""
    conn = sqlite3.connect(db)
    try:
        return dict(conn.execute("SELECT key, value FROM meta WHERE key LIKE 'direction%' OR key LIKE 'position:%'"))
    finally:
        conn.close()


async def test_directions_and_where_you_are_wait_in_the_write_queue_while_another_process_holds_the_lock(
    darija: Path,
) -> None:
    """A direction (d) and the place the cursor rests on are written through the write queue like every action:
    while another process holds the lock they wait (the direction says so, the place silently, behind the
    actions and never counted among them) and are kept once it lets go, not lost for the next session."""
    Project.open(darija, annotator="setup").workspace.close()
    db = darija.with_name(darija.name + ".piqa.sqlite")
    async with annotate(darija) as pilot:
        with write_lock_held(db):
            await pilot.press("d")  # the prompt column: auto -> rtl, at once on screen
            assert main_screen(pilot).session.directions.of("prompt") is Direction.RTL
            await wait_for(pilot, lambda: notified(pilot, "workspace busy, retrying: the direction of prompt"))
            await pilot.press("j", "j")
            rested = current_id(pilot)
            await wait_for(pilot, lambda: "where you are" in pilot.app.session.writes.preferences)
            assert waiting(pilot) == 1 and not notified(pilot, "where you are")  # a preference, not an action
            held = preferences(db)  # (the place the app opened at may have been kept before the lock)
            assert "direction:prompt" not in held and held.get("position:amina") != rested
        await wait_for(pilot, lambda: not waiting(pilot) and not pilot.app.session.writes.preferences)
        assert preferences(db) == {"direction:prompt": "rtl", "position:amina": rested}
        await pilot.press("ctrl+q")
    async with annotate(darija) as pilot:  # the next session: the same direction, the same place
        assert main_screen(pilot).session.directions.of("prompt") is Direction.RTL
        await wait_for(pilot, lambda: current_id(pilot) == rested)


def split_vote(path: Path, item_id: str) -> None:
    """Two annotators choose one solution and two the other: a disagreement for the reviewer."""
    for who, choice in (("amina", "0"), ("karim", "1"), ("selma", "0"), ("yacine", "1")):
        project = Project.open(path, annotator=who)
        project.vote(item_id, choice)
        project.workspace.close()


async def test_an_adjudication_made_while_another_process_holds_the_lock_shows_once_recorded(darija: Path) -> None:
    split_vote(darija, "dz-001")
    db = darija.with_name(darija.name + ".piqa.sqlite")
    async with annotate(darija, annotator="lead", reviewer=True) as pilot:
        await pilot.press("A")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, AdjudicationScreen))
        screen = pilot.app.screen
        assert screen.ids == ["dz-001"]
        with write_lock_held(db):
            await pilot.press("2")
            await wait_for(pilot, lambda: pilot.app.screen is not screen)  # asked why
            await type_text(pilot, "the second is what people do")
            await pilot.press("enter")
            await wait_for(pilot, lambda: pilot.app.screen is screen and waiting(pilot) == 1)
            await wait_for(pilot, lambda: notified(pilot, "workspace busy, retrying: the final label of dz-001"))
            assert screen.ids == ["dz-001"] and "dz-001" not in screen.project.state.adjudications  # not shown as done
            assert not notified(pilot, "dz-001: final label")
        await wait_for(pilot, lambda: not waiting(pilot))  # the lock is gone: recorded, then shown
        assert screen.ids == [] and screen.project.state.adjudications["dz-001"][0] == "1"
        await wait_for(pilot, lambda: notified(pilot, "dz-001: final label 2") and notified(pilot, "recorded after"))
        await pilot.press("ctrl+q")
    assert Project.open(darija, annotator="x").state.adjudications["dz-001"][:2] == (
        "1",
        "the second is what people do",
    )


async def open_duplicates(pilot: Pilot) -> DuplicatesScreen:
    await pilot.press("D")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, DuplicatesScreen))
    screen = pilot.app.screen
    await wait_for(pilot, lambda: screen.result is not None and not screen.scanning, timeout=60)
    return screen


def listed(screen: DuplicatesScreen) -> list[list[str]]:
    return [[m.id for m in c.members] for c in screen.cluster_list.clusters]


def resolution_events(path: Path) -> list:
    return Project.open(path, annotator="x").workspace.events(["flag", "dedup"])


async def test_a_cluster_resolved_while_another_process_holds_the_lock_stays_open_until_recorded(darija: Path) -> None:
    Project.open(darija, annotator="setup").workspace.close()
    db = darija.with_name(darija.name + ".piqa.sqlite")
    async with annotate(darija) as pilot:
        screen = await open_duplicates(pilot)
        assert listed(screen) == [["dz-006", "dz-019"], ["dz-008", "dz-029"]]
        with write_lock_held(db):
            await pilot.press("j", "enter")  # keep dz-008
            await wait_for(pilot, lambda: notified(pilot, "workspace busy, retrying: keeping dz-008"))
            assert listed(screen) == [["dz-006", "dz-019"], ["dz-008", "dz-029"]]  # still open: nothing recorded
            assert "dz-029" not in screen.project.state.flags and not screen.project.state.dedup
            assert waiting(pilot) == 1 and not resolution_events(darija)
        await wait_for(pilot, lambda: not waiting(pilot))
        assert listed(screen) == [["dz-006", "dz-019"]]
        assert "duplicate" in screen.project.state.flags["dz-029"]
        await wait_for(pilot, lambda: notified(pilot, "kept dz-008"))
        await pilot.press("ctrl+q")
    events = resolution_events(darija)  # the flag and the decision: one action
    assert [e.kind for e in events] == ["flag", "dedup"] and {e.action for e in events} == {events[0].seq}


async def test_leaving_the_duplicates_screen_before_a_waiting_decision_is_recorded(darija: Path) -> None:
    Project.open(darija, annotator="setup").workspace.close()
    db = darija.with_name(darija.name + ".piqa.sqlite")
    async with annotate(darija) as pilot:
        screen = await open_duplicates(pilot)
        with write_lock_held(db):
            await pilot.press("j", "enter")
            await wait_for(pilot, lambda: waiting(pilot) == 1)
            assert "dz-008" in screen.session.marks.duplicates  # the list under it still marks the open cluster
            await pilot.press("escape")
            await wait_for(pilot, lambda: isinstance(pilot.app.screen, MainScreen))
        await wait_for(pilot, lambda: not waiting(pilot))
        assert "duplicate" in main_screen(pilot).project.state.flags["dz-029"]
        assert "dz-008" not in screen.session.marks.duplicates and "dz-006" in screen.session.marks.duplicates
        await pilot.press("ctrl+q")
    assert Project.open(darija, annotator="x").state.dedup == {"dz-008|dz-029": "keep:dz-008"}


@asynccontextmanager
async def on_small_disk(tmp_path: Path) -> AsyncIterator[tuple[Path, Path]]:
    with small_disk(tmp_path / "disk", "1m") as disk:
        yield disk, copy_sample("darija-algerian.tsv", disk)


async def test_a_full_disk_says_so_and_shows_nothing_unrecorded(tmp_path: Path) -> None:
    async with on_small_disk(tmp_path) as (disk, path):
        async with annotate(path) as pilot:
            first = current_id(pilot)
            await pilot.press("1")
            assert my_vote(pilot, first) == "0"
            filler = fill_disk(disk)
            screen = main_screen(pilot)
            for _ in range(60):  # until the WAL needs a page the disk does not have
                item_id = current_id(pilot)
                await pilot.press("2")
                if notified(pilot, "was not recorded"):
                    break
            assert notified(pilot, "disk is full") or notified(pilot, "disk failed")
            assert my_vote(pilot, item_id) is None and isinstance(pilot.app.screen, MainScreen)
            filler.unlink()
            screen.filtering.go_to_position(screen.project.index[item_id])
            await pilot.press("2")
            await wait_for(pilot, lambda: my_vote(pilot, item_id) == "1")
            await pilot.press("ctrl+q")
        assert Project.open(path, annotator="amina").state.votes[item_id]["amina"].choice == "1"


async def test_a_workspace_on_a_read_only_disk_is_one_clear_line(tmp_path: Path) -> None:
    async with on_small_disk(tmp_path) as (disk, path):
        project = Project.open(path, annotator="amina")
        project.vote(project.items[0].id, "1")
        project.workspace.close()
        remount_read_only(disk)  # (a mounted disk cannot turn read-only while files on it are open for writing)
        app = PiqaApp(
            AppSettings(OpenRequest(path, annotator="amina", busy_timeout=BUSY_TIMEOUT), bidi_mode=BidiMode.APP)
        )
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_for(pilot, lambda: app.error_message is not None)
        assert "cannot be written" in app.error_message and "--workspace" in app.error_message


async def test_a_damaged_workspace_is_one_line_saying_what_to_do(tmp_path: Path) -> None:
    """A workspace whose pages are damaged (SQLITE_CORRUPT) ends the opening with one line naming it and the
    commands that check and restore it, never a traceback screen."""
    path = copy_sample("darija-algerian.tsv", tmp_path)
    Project.open(path, annotator="amina").workspace.close()  # type: ignore[union-attr]
    workspace = path.with_name(path.name + ".piqa.sqlite")
    damaged = bytearray(workspace.read_bytes())
    damaged[4096 : 4096 * 3] = b"Z" * len(damaged[4096 : 4096 * 3])  # the pages after the header
    workspace.write_bytes(bytes(damaged))
    app = PiqaApp(AppSettings(OpenRequest(path, annotator="amina"), bidi_mode=BidiMode.APP))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.error_message is not None)
    assert app.return_code == 2 and "\n" not in app.error_message
    assert "workspace check" in app.error_message and "workspace backup" in app.error_message
