"""The TUI's sync key (Y) and timer, through real git repositories: a bare remote on disk and two clones.

Ana votes in clone A and syncs by key; Ben, blind, opens clone B and syncs by key: her vote arrives in his
session (the toast says what came in), yet he sees nothing of it until he has voted himself. The header says
when the last sync was and what waits; a dataset outside any git repository is one line; a timer syncs with no
key pressed (config ``sync_every_minutes``). Ana's ctrl+s commits the dataset file (the toast says so) and her sync
pushes it; a newcomer's fresh clone opens with everyone's work before any sync.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from textual.notifications import Notification

from piqa_tui.core.dataset.reading import file_digest
from piqa_tui.core.sync.exchange import sync
from piqa_tui.core.sync.git import commit_saved
from piqa_tui.core.votes.blind import may_see_answers
from piqa_tui.core.workspace.project import Project
from piqa_tui.core.workspace.vote_targets import STALE
from piqa_tui.tui import app as app_module
from piqa_tui.tui.screens.main.screen import MainScreen
from piqa_tui.tui.widgets.status_header import StatusHeader
from tests.conftest import copy_sample
from tests.test_sync import git, git_identity  # noqa: F401 (git_identity: an autouse fixture, here too)

from .conftest import curate, drawn_lines, main_screen, wait_for
from .test_blind import filter_counts

DATA = "darija-algerian.tsv"


@pytest.fixture
def clones(tmp_path: Path) -> tuple[Path, Path]:
    """A bare remote and two clones of the repository holding the Darija sample, each synced once."""
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "--quiet", "--bare", "-b", "main", str(remote)], check=True)
    first = tmp_path / "a"
    first.mkdir()
    git(first, "init", "--quiet", "-b", "main")
    copy_sample(DATA, first)
    git(first, "add", DATA)
    git(first, "commit", "--quiet", "-m", "the dataset")
    git(first, "remote", "add", "origin", str(remote))
    sync(first / DATA)
    subprocess.run(["git", "clone", "--quiet", str(remote), str(tmp_path / "b")], check=True)
    sync(tmp_path / "b" / DATA)
    return first / DATA, tmp_path / "b" / DATA


def toasts(pilot, word: str = "sync") -> list[Notification]:
    return [n for n in pilot.app._notifications if word in n.message]


async def synced(pilot, before: int = 0) -> str:
    """Press the sync key and wait for its one toast; its text."""
    await pilot.press("Y")
    await wait_for(pilot, lambda: len(toasts(pilot)) > before, timeout=30)
    await pilot.pause()
    found = toasts(pilot)
    assert len(found) == before + 1, [n.message for n in found]
    return found[-1].message


async def test_a_vote_travels_by_key_and_stays_hidden_from_a_blind_annotator_until_he_votes(
    clones: tuple[Path, Path],
) -> None:
    ana_data, ben_data = clones
    async with curate(ana_data, annotator="ana") as pilot:
        await pilot.press("2")  # dz-001: gold is 2
        await wait_for(pilot, lambda: pilot.app.session.project.state.votes.get("dz-001"))
        message = await synced(pilot)
        assert message.startswith("sync: sent 1 events; nothing new came in; pushed to origin"), message
        header = drawn_lines(main_screen(pilot).query_one(StatusHeader))
        assert "synced " in header and "to push" not in header
    async with curate(ben_data, annotator="ben") as pilot:
        session = pilot.app.session
        assert "ana" not in session.project.state.votes.get("dz-001", {})
        message = await synced(pilot)
        assert message.startswith("sync: nothing new to send; received 1 events (1 vote); pushed to origin"), message
        assert "conflicts" not in message
        await wait_for(pilot, lambda: "ana" in session.project.state.votes.get("dz-001", {}))
        assert not may_see_answers(session.project, "dz-001", reviewer=False)
        counts = await filter_counts(pilot)  # blind: her vote is in his session, and counted for no one he sees
        assert counts["agreed"] == "agreed (0)" and counts["needs-votes"] == "needs-votes (0)"
        await pilot.press("2")  # ben votes on dz-001 as she did: now he may see that they agree
        counts = await filter_counts(pilot)
        assert counts["agreed"] == "agreed (1)"
        message = await synced(pilot, before=1)
        assert message.startswith("sync: sent 1 events; nothing new came in; pushed to origin"), message
    ana = Project.open(ana_data, annotator="ana")
    assert "ben" not in ana.state.votes.get("dz-001", {})
    ana.workspace.close()  # type: ignore[union-attr]
    sync(ana_data)
    ana = Project.open(ana_data, annotator="ana")
    assert ana.state.votes["dz-001"]["ben"].choice == "1"
    ana.workspace.close()  # type: ignore[union-attr]


async def test_offline_work_waits_and_the_header_says_how_much(clones: tuple[Path, Path]) -> None:
    ana_data, _ = clones
    git(ana_data.parent, "remote", "set-url", "origin", str(ana_data.parent.parent / "gone.git"))
    async with curate(ana_data, annotator="ana") as pilot:
        await pilot.press("2", "2")
        await wait_for(pilot, lambda: len(pilot.app.session.project.state.votes) == 2)
        message = await synced(pilot)
        assert "sent 2 events" in message and "2 events wait to be pushed" in message, message
        assert "the next sync pushes them" in message
        await pilot.pause()
        assert "2 to push" in drawn_lines(main_screen(pilot).query_one(StatusHeader))


async def test_a_dataset_in_no_git_repository_is_one_line(darija: Path) -> None:
    async with curate(darija, annotator="ana") as pilot:
        message = await synced(pilot)
        assert message.startswith("no sync: ") and "is in no git repository" in message, message
        assert "\n" not in message
        assert pilot.app._notifications and all(n.severity == "error" for n in toasts(pilot))
        assert "synced" not in drawn_lines(main_screen(pilot).query_one(StatusHeader))


async def test_the_timer_syncs_with_no_key_pressed(clones: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    ana_data, ben_data = clones
    ana = Project.open(ana_data, annotator="ana")
    ana.vote("dz-003", "0")
    ana.workspace.close()  # type: ignore[union-attr]
    sync(ana_data)
    monkeypatch.setattr(app_module, "SYNC_MINUTE", 0.2)
    async with curate(ben_data, annotator="ben", sync_every_minutes=1) as pilot:
        session = pilot.app.session
        await wait_for(pilot, lambda: "ana" in session.project.state.votes.get("dz-003", {}), timeout=30)
        await wait_for(pilot, lambda: toasts(pilot, "received 1 events (1 vote)"))
        await pilot.pause(0.6)  # more timed syncs: nothing came in, so they say nothing
        assert len(toasts(pilot)) == 1


async def test_a_field_edited_in_both_clones_reaches_the_conflicts_queue(clones: tuple[Path, Path]) -> None:
    ana_data, ben_data = clones
    ana = Project.open(ana_data, annotator="ana")
    ana.edit("dz-002", {"solution0": "ana's version"})
    ana.workspace.close()  # type: ignore[union-attr]
    sync(ana_data)
    ben = Project.open(ben_data, annotator="ben")
    ben.edit("dz-002", {"solution0": "ben's version"})
    ben.workspace.close()  # type: ignore[union-attr]
    async with curate(ben_data, annotator="ben") as pilot:
        message = await synced(pilot)
        assert "received 1 events (1 edit)" in message and "1 conflicts" in message, message
        assert "pushed to origin" in message
        counts = await filter_counts(pilot)
        assert counts["conflicts"] == "conflicts (1)"


async def test_the_timer_says_a_failure_once(darija: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(app_module, "SYNC_MINUTE", 0.1)
    async with curate(darija, annotator="ana", sync_every_minutes=1) as pilot:
        await wait_for(pilot, lambda: toasts(pilot, "is in no git repository"))
        await pilot.pause(0.8)  # several timed syncs failed the same way meanwhile
        assert len(toasts(pilot, "is in no git repository")) == 1


async def test_a_save_commits_the_dataset_and_a_newcomers_clone_opens_with_everyones_work(
    clones: tuple[Path, Path], tmp_path: Path
) -> None:
    ana_data, _ = clones
    ana = Project.open(ana_data, annotator="ana")
    ana.edit("dz-002", {"solution0": "ana's version"})
    ana.vote("dz-001", "1")
    ana.workspace.close()  # type: ignore[union-attr]
    async with curate(ana_data, annotator="ana") as pilot:
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: toasts(pilot, "saved "), timeout=30)
        message = toasts(pilot, "saved ")[-1].message
        assert f"; committed {DATA} (" in message and "the next piqa-tui sync shares it" in message, message
        message = await synced(pilot, before=len(toasts(pilot)))  # (the save's toast names the sync too)
        assert message.startswith("sync: sent 2 events") and "pushed to origin" in message, message
    assert git(ana_data.parent, "status", "--porcelain") == ""
    newcomer = tmp_path / "c"
    subprocess.run(["git", "clone", "--quiet", str(tmp_path / "remote.git"), str(newcomer)], check=True)
    async with curate(newcomer / DATA, annotator="cem") as pilot:
        await wait_for(pilot, lambda: toasts(pilot, "batches of the team's work already in the repository"))
        project = pilot.app.session.project
        assert "ana" in project.state.votes["dz-001"]
        assert project.items[project.index["dz-002"]].solutions[0] == "ana's version"
        assert "synced" not in drawn_lines(main_screen(pilot).query_one(StatusHeader))  # applied, not synced
    assert git(newcomer, "status", "--porcelain") == ""


async def test_a_sync_that_brings_the_leads_saved_file_reads_it_again_and_keeps_the_stale_vote(
    clones: tuple[Path, Path],
) -> None:
    ana_data, ben_data = clones
    ben = Project.open(ben_data, annotator="ben")
    ben.vote("dz-002", "0")  # on the text ana is about to change
    ben.workspace.close()  # type: ignore[union-attr]
    async with curate(ben_data, annotator="ben") as pilot:
        ana = Project.open(ana_data, annotator="ana")
        ana.edit("dz-002", {"solution0": "ana's version"})
        assert commit_saved(ana.save(), "save")
        ana.workspace.close()  # type: ignore[union-attr]
        sync(ana_data)
        message = await synced(pilot)
        assert "the dataset file is now the version the team committed" in message, message
        await wait_for(pilot, lambda: pilot.app.session.project.dataset.sha256 == file_digest(ben_data)[0], timeout=30)
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, MainScreen), timeout=30)
        project = pilot.app.session.project
        assert project.items[project.index["dz-002"]].solutions[0] == "ana's version"
        assert project.state.votes["dz-002"]["ben"].choice == STALE  # kept, set aside until he votes again
        assert not toasts(pilot, "changed since this workspace last saw it")
