"""The TUI under workspace faults: a lock held by another process, a full disk, a disk turned read-only.

No crash, no loss, and the screen never shows an action that was not committed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from textual.pilot import Pilot

from piqa_tui.core.text.bidi import BidiMode
from piqa_tui.core.workspace.project import Project
from piqa_tui.tui import pending as pending_module
from piqa_tui.tui.app import AppSettings, PiqaApp
from piqa_tui.tui.screens.main import MainScreen
from piqa_tui.tui.state.session import OpenRequest
from tests.conftest import (
    copy_sample,
    fill_disk,
    remount_read_only,
    small_disk,
    write_lock_held,
)

from .conftest import current_id, main_screen, wait_for

BUSY_TIMEOUT = 0.2  # seconds: the lock below is held far longer than this


@asynccontextmanager
async def annotate(path: Path, annotator: str = "amina") -> AsyncIterator[Pilot]:
    app = PiqaApp(
        AppSettings(OpenRequest(path, annotator=annotator, busy_timeout=BUSY_TIMEOUT), bidi_mode=BidiMode.APP)
    )
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, MainScreen))
        await pilot.pause()
        yield pilot


def notified(pilot: Pilot, text: str) -> bool:
    return any(text in n.message for n in pilot.app._notifications)


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
            assert len(pilot.app.pending.queue) == 2
        await wait_for(pilot, lambda: not pilot.app.pending.queue)  # the lock is gone: both are recorded
        assert my_vote(pilot, first) == "1" and my_vote(pilot, second) == "0"
        assert notified(pilot, "recorded after waiting")
        await pilot.press("ctrl+q")
    reopened = Project.open(darija, annotator="amina")
    assert reopened.state.votes[first]["amina"].choice == "1" and reopened.state.votes[second]["amina"].choice == "0"


async def test_a_lock_never_released_tells_the_user_what_was_not_recorded(
    darija: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pending_module, "GIVE_UP_SECONDS", 0.5)
    Project.open(darija, annotator="setup").workspace.close()
    db = darija.with_name(darija.name + ".piqa.sqlite")
    async with annotate(darija) as pilot:
        with write_lock_held(db):
            first = current_id(pilot)
            await pilot.press("2")
            await wait_for(pilot, lambda: notified(pilot, "not recorded: your vote on " + first))
            assert my_vote(pilot, first) is None and not pilot.app.pending.queue
        await pilot.press("up", "2")  # the lock is gone: voting again works
        await wait_for(pilot, lambda: my_vote(pilot, first) == "1")


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
