"""Quitting while keys are still arriving: the keys are ignored, the app exits cleanly, nothing hangs.

The keys are posted to the app in one burst, as a terminal delivers ``q`` and
whatever was typed after it: each one that opens a screen or starts an edit
would otherwise mount widgets on screens that are already closing.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

import pytest
from textual import events

from piqa_tui.tui.screens.main import MainScreen
from tests.conftest import ROOT, copy_sample
from tests.tui.conftest import make_app, wait_for

BURSTS = [
    "q a d e ? / 1 2 a e d",
    "q ? a escape d / x enter e",
    "q / e e a d ? 1",
    "q e a",
]
CHARACTERS = {"escape": None, "enter": "\r", "?": "?", "/": "/"}
KEYS = {"?": "question_mark", "/": "slash"}


def burst(keys: str) -> list[events.Key]:
    """The Key events a terminal sends for ``keys`` (space-separated names)."""
    return [events.Key(KEYS.get(key, key), CHARACTERS.get(key, key)) for key in keys.split()]


@pytest.mark.parametrize("attempt", range(30))
async def test_keys_arriving_while_the_app_quits_are_ignored(darija, attempt: int) -> None:
    app = make_app(darija)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, MainScreen))
        for key in burst(BURSTS[attempt % len(BURSTS)]):
            app.post_message(key)
        await wait_for(pilot, lambda: not app.is_running)
    assert app.return_code == 0 and app._exception is None


async def test_quit_while_the_dataset_opens_leaves_nothing_open(darija) -> None:
    app = make_app(darija)
    async with app.run_test(size=(100, 30)) as pilot:
        for key in burst("q a e"):
            app.post_message(key)
        await wait_for(pilot, lambda: not app.is_running)
    assert app.return_code == 0 and app._exception is None


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_a_real_terminal_quits_cleanly_with_keys_typed_after_q(tmp_path: Path) -> None:
    """``q`` and a burst of keys in one tmux send-keys: the program exits 0 and prints no traceback."""
    from tests.test_e2e_tmux import Terminal

    data = copy_sample("darija-algerian.tsv", tmp_path)
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path, "PIQA_TUI_CONFIG": str(tmp_path / "none.toml"), "TERM": "xterm-256color"}
    status = tmp_path / "status"
    # The pane stays open after the program ends, so what it printed last (a traceback) can be read.
    term = Terminal(f"{sys.executable} -m piqa_tui.cli.main {data}; echo $? > {status}; sleep 30", 100, 30, env)
    try:
        term.wait_for("1/36", timeout=30)
        term.burst(*"q a d e ? / 1 2 a e d".split())
        deadline = time.monotonic() + 15
        while not status.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        screen = term.screen()
    finally:
        term.close()
    assert status.read_text().strip() == "0" and "Error" not in screen and "Traceback" not in screen, screen
