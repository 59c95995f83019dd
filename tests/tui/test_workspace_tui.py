"""The workspace file under the TUI: complete on its own after quitting, written back when deleted while open."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from textual.widgets import Static

from piqa_tui.core.workspace.project import Project
from piqa_tui.tui.dialogs.prompts import ChoiceDialog, TextPrompt
from piqa_tui.tui.screens.main import MainScreen

from .conftest import curate, current_id, main_screen, type_text, wait_for


def workspace_of(path: Path) -> Path:
    return path.with_name(path.name + ".piqa.sqlite")


def votes_in(db: Path) -> dict[str, str]:
    conn = sqlite3.connect(db)
    try:
        return dict(conn.execute("SELECT item_id, new FROM events WHERE kind = 'vote' ORDER BY seq"))
    finally:
        conn.close()


async def vote_on_next(pilot, key: str, count: int) -> list[str]:
    voted = []
    for _ in range(count):
        voted.append(current_id(pilot))
        await pilot.press(key)  # votes and moves on
    return voted


async def test_quit_then_copy_only_the_sqlite_file_and_find_every_vote(darija: Path, tmp_path: Path) -> None:
    async with curate(darija, annotator="amina") as pilot:
        voted = await vote_on_next(pilot, "2", 5)
        await pilot.press("ctrl+q")
    copy = tmp_path / "elsewhere"
    copy.mkdir()
    shutil.copy(workspace_of(darija), copy / "alone.sqlite")  # the .sqlite file only: no -wal beside it
    assert votes_in(copy / "alone.sqlite") == {item_id: "1" for item_id in voted}


async def test_workspace_deleted_while_open_loses_nothing(darija: Path) -> None:
    db = workspace_of(darija)
    async with curate(darija, annotator="amina") as pilot:
        before = await vote_on_next(pilot, "1", 2)
        for name in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
            name.unlink(missing_ok=True)
        after = await vote_on_next(pilot, "2", 1)  # the next action finds the file gone and writes it back first
        app = pilot.app
        await wait_for(pilot, lambda: any("was deleted" in n.message for n in app._notifications))
        assert db.exists()
        screen = main_screen(pilot)
        assert screen.project.state.votes[after[0]]["amina"].choice == "1"
        await pilot.press("ctrl+q")
    reopened = Project.open(darija, annotator="amina")
    assert {i: reopened.state.votes[i]["amina"].choice for i in before + after} == {
        before[0]: "0",
        before[1]: "0",
        after[0]: "1",
    }


async def prompt_export(pilot, target: Path) -> str:
    """Press X, type ``target`` into the export prompt, press enter; returns the prompt's error line ("" if it closed)."""
    await pilot.press("X")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, TextPrompt))
    prompt = pilot.app.screen
    await pilot.press("ctrl+u")
    await type_text(pilot, str(target))
    await pilot.press("enter")
    await pilot.pause()
    if pilot.app.screen is prompt:
        error = str(prompt.query_one(".dialog-error", Static).content)
        await pilot.press("escape")
        return error
    return ""


async def test_tui_export_refuses_the_dataset_and_workspace_and_asks_before_replacing(
    darija: Path, tmp_path: Path
) -> None:
    db = workspace_of(darija)
    existing = tmp_path / "release.tsv"
    existing.write_text("keep me\n", encoding="utf-8")
    async with curate(darija, annotator="amina") as pilot:
        await vote_on_next(pilot, "1", 1)
        assert "dataset itself" in await prompt_export(pilot, darija)
        assert "the workspace" in await prompt_export(pilot, db)
        assert "WAL" in await prompt_export(pilot, Path(f"{db}-wal"))
        assert await prompt_export(pilot, existing) == ""
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, ChoiceDialog))
        await pilot.press("escape")  # no: nothing is written
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, MainScreen))
        assert existing.read_text(encoding="utf-8") == "keep me\n"
        assert await prompt_export(pilot, existing) == ""
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, ChoiceDialog))
        await pilot.press("enter")  # "Replace it" is the first choice
        await wait_for(pilot, lambda: existing.read_text(encoding="utf-8") != "keep me\n")
        assert existing.read_text(encoding="utf-8").startswith("id\t") or "dz-001" in existing.read_text(
            encoding="utf-8"
        )
        fresh = tmp_path / "fresh.tsv"
        assert await prompt_export(pilot, fresh) == ""  # a new file: no question
        await wait_for(pilot, lambda: fresh.exists())
    assert votes_in(db)  # the workspace is still a workspace
