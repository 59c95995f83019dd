"""Keys typed ahead in a real terminal: the real ``piqa-tui`` in tmux gets a whole session's keys in one
``tmux send-keys`` call, as an annotator's typing reaches the app over a slow SSH link, and every text lands in
the field it was typed for, in order. Read back from the workspace the app wrote, not from the screen.

The burst edits the first item's prompt (Arabic typed with a combining hamza and harakat, stored NFC in
logical order) and its first solution across a Tab, writes a new item with ``I`` (goal, Tab, each solution,
the gold one), goes to an id with ``:``, flags that item with a reason and a note (tab to the note in the flag
dialog), and quits with ``q``. Skipped when tmux is missing.
"""

from __future__ import annotations

import os
import sys
import time
import unicodedata
from pathlib import Path

import pytest

from piqa_tui.core.workspace.project import Project
from tests.conftest import ROOT, copy_sample
from tests.test_e2e_tmux import TMUX, Terminal

pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux is not installed")

LONG = 90.0  # seconds: the machine is shared with other people's tests
PROMPT = "سا\u0654ل الو\u064eلد\u064f عن الطريق"  # alef + combining hamza above: NFC أ
SOLUTION = "ا\u0653خذ الخريطة معه"  # alef + combining madda: NFC آ


def test_one_burst_across_fields_and_dialogs_lands_where_it_was_typed(tmp_path: Path) -> None:
    data = copy_sample("darija-algerian.tsv", tmp_path)
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path, "PIQA_TUI_CONFIG": str(tmp_path / "none.toml"), "TERM": "xterm-256color"}
    status = tmp_path / "status"
    term = Terminal(
        f"{sys.executable} -m piqa_tui.cli.main {data} --annotator t; echo $? > {status}; sleep 30", 100, 30, env
    )
    try:
        term.wait_for("dz-001   row 1", "q quit", timeout=LONG)
        term.burst(
            *("e", "C-u", PROMPT, "Tab", "C-u", SOLUTION, "Enter"),  # the item editor, across a tab
            *("I", "how to keep bread soft", "Tab", "wrap it in a cloth", "Tab", "leave it in the sun"),
            *("Tab", "1", "Enter"),  # the gold (two solution columns, two solution fields); enter saves
            *(":", "dz-010", "Enter"),  # a dialog opened and typed into
            *("f", "2", "Tab", "why not", "Enter"),  # the flag dialog: a reason, then the note
            "q",
        )
        deadline = time.monotonic() + LONG
        while not status.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        screen = term.screen()
    finally:
        term.close()
    assert status.exists() and status.read_text().strip() == "0", screen

    project = Project.open(data, annotator="t", create=False)
    first = project.item("dz-001")
    assert first.prompt == unicodedata.normalize("NFC", PROMPT) == "سأل الوَلدُ عن الطريق"
    assert first.solutions[0] == unicodedata.normalize("NFC", SOLUTION) == "آخذ الخريطة معه"
    new = [item for item in project.items if item.id.startswith("new-")]
    assert [(i.prompt, i.solutions, i.label) for i in new] == [
        ("how to keep bread soft", ("wrap it in a cloth", "leave it in the sun"), 0)
    ]
    assert dict(project.state.flags) == {"dz-010": {"culturally-wrong": "why not"}}
