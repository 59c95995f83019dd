"""Hostile data in the TUI: escape sequences and markup display harmlessly, a 10 MB field opens.

The dataset comes from the generated corpus (``tests/hostile_corpus.py``): an
item id carrying OSC 0 (which would retitle the terminal), prompts with
``ESC[2J``, OSC 52, OSC 8 and C1 CSI, and categories ``[/]`` and
``[bold]x[/bold]`` (Rich markup). What the screen draws is read back from
Textual's compositor, the lines it sends to the terminal.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from piqa_tui.core.workspace.project import Project
from piqa_tui.tui.dialogs.prompts import TextPrompt
from piqa_tui.tui.screens.agreement import AgreementScreen
from piqa_tui.tui.screens.duplicates import DuplicatesScreen
from piqa_tui.tui.screens.main import MainScreen
from tests.hostile_corpus import OSC0, entries

from .conftest import curate, main_screen, type_text, wait_for

CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def corpus_file(name: str, folder: Path) -> Path:
    entry = next(e for e in entries() if e.name == name)
    path = folder / name
    path.write_bytes(entry.data)
    return path


def drawn(pilot) -> str:
    """Every line the current screen draws, as text."""
    return "\n".join(strip.text for strip in pilot.app.screen._compositor.render_strips())


def vote_everything(path: Path) -> None:
    """Two annotators vote on every item (one of them named in markup), so agreement has groups to show."""
    for annotator, choice in (("amina", "0"), ("k[/]rim", "1")):
        project = Project.open(path, annotator=annotator)
        for item in project.items:
            project.vote(item.id, choice)
        project.workspace.close()


async def test_osc_id_and_markup_category_display_harmlessly(tmp_path: Path) -> None:
    path = corpus_file("escapes.tsv", tmp_path)
    vote_everything(path)
    # 48 rows: the agreement screen shows its tables down to the groups
    async with curate(path, size=(120, 48), annotator="lead\x1b]0;owned\x07", reviewer=True) as pilot:
        text = drawn(pilot)
        assert not CONTROL.search(text), repr(CONTROL.findall(text))
        assert "a\\x1b]0;pwned\\x07   row 1" in text  # the id, escaped, in the item title (and cut in the list)
        assert "lead\\x1b]0;owned\\x07" in text  # the annotator, in the header
        assert "clear ␛[2J now" in text  # the prompt: the ESC drawn as its control picture
        assert main_screen(pilot).current is not None and main_screen(pilot).current.id == f"a{OSC0}"

        await pilot.press("a")
        await wait_for(
            pilot, lambda: isinstance(pilot.app.screen, AgreementScreen) and pilot.app.screen.snapshot is not None
        )
        await pilot.pause()
        text = drawn(pilot)
        assert not CONTROL.search(text)
        assert "[/]" in text and "[bold]x[/bold]" in text and "k[/]rim" in text  # literal, never parsed
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, MainScreen))

        await pilot.press("D")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, DuplicatesScreen))
        screen = pilot.app.screen
        await wait_for(pilot, lambda: screen.result is not None and not screen.scanning, timeout=60)
        await pilot.pause()
        text = drawn(pilot)
        assert not CONTROL.search(text)
        assert "a\\x1b]0;pwned" in text  # the exact duplicate pair a / f
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, MainScreen))

        out = tmp_path / "exported.jsonl"
        await pilot.press("X")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, TextPrompt))
        await pilot.press("end", "ctrl+u")  # clear the suggested name
        await type_text(pilot, str(out))
        await pilot.press("enter")
        await wait_for(pilot, lambda: out.exists())
        await pilot.pause()
        assert not CONTROL.search(drawn(pilot))
    exported = Project.open(out, create=False)
    assert exported.items[0].id == f"a{OSC0}"  # the export keeps the values exactly
    assert exported.items[0].meta["category"] == "[/]"


async def test_a_10_mb_field_opens_truncated_with_a_marker(tmp_path: Path) -> None:
    path = corpus_file("big-field.tsv", tmp_path)
    async with curate(path, size=(100, 30)) as pilot:
        assert "word word word" in drawn(pilot)
        prompt = main_screen(pilot).query("FieldText").first()
        last = prompt.render_line(prompt.virtual_size.height - 1).text  # the field's last line, scrolled to or not
        assert "more characters not shown" in last
        assert prompt.virtual_size.height < 200  # laid out up to the limit, not 10 MB of lines
        assert main_screen(pilot).current.prompt == "word " * 2_000_000  # stored whole, only drawn short


@pytest.mark.usefixtures("headless")
def test_a_fifo_as_the_dataset_ends_the_tui_with_one_line(tmp_path: Path, capsys) -> None:
    """The TUI used to hang on a FIFO (and ignore q): now the dataset is refused before anything opens it."""
    import os

    from piqa_tui.cli.main import main

    fifo = tmp_path / "pipe.tsv"
    os.mkfifo(fifo)
    assert main([str(fifo)]) == 2
    err = capsys.readouterr().err
    assert "a FIFO (named pipe), not a regular file" in err and err.count("\n") == 1
