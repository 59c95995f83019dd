"""End to end: the real ``piqa-tui`` in a real terminal (tmux), driven with send-keys, read with capture-pane.

Opens a copy of the Darija sample at 100×30, moves, swaps a pair, writes a
note, searches, saves and quits; then checks what the screen showed and
what the workspace and the saved file hold. Skipped when tmux is missing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from piqa_tui.core.dataset.reading import load_dataset
from piqa_tui.core.workspace.project import Project
from tests.conftest import copy_sample

TMUX = shutil.which("tmux")
pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux is not installed")


class Terminal:
    """One tmux session running one command, on its own server socket."""

    def __init__(self, command: str, width: int, height: int, env: dict[str, str]) -> None:
        self.name = f"piqa-{uuid.uuid4().hex[:8]}"
        self.socket = f"piqa-test-{self.name}"
        self.env = env
        self._tmux("new-session", "-d", "-s", self.name, "-x", str(width), "-y", str(height), command)

    def _tmux(self, *args: str) -> str:
        result = subprocess.run(
            [TMUX, "-L", self.socket, *args], capture_output=True, text=True, env=self.env, timeout=20
        )
        if result.returncode != 0:
            raise RuntimeError(f"tmux {' '.join(args)}: {result.stderr.strip()}")
        return result.stdout

    def keys(self, *keys: str, literal: bool = False) -> None:
        for key in keys:
            self._tmux("send-keys", "-t", self.name, *(["-l"] if literal else []), key)
            time.sleep(0.15)

    def type(self, text: str) -> None:
        self.keys(text, literal=True)

    def burst(self, *keys: str) -> None:
        """``keys`` in one send-keys call, as a slow connection delivers what was typed ahead: tmux key names
        (``Tab``, ``C-u``, ``Enter``) are keys, any other argument is typed as text."""
        self._tmux("send-keys", "-t", self.name, *keys)

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", self.name)

    def wait_for(self, *texts: str, timeout: float = 15.0) -> str:
        """The screen once every one of ``texts`` is on it."""
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if all(text in screen for text in texts):
                return screen
            time.sleep(0.1)
        raise AssertionError(f"{texts!r} never all appeared on screen:\n{screen}")

    def alive(self) -> bool:
        try:
            return self.name in self._tmux("list-sessions", "-F", "#{session_name}")
        except RuntimeError:
            return False

    def close(self) -> None:
        subprocess.run([TMUX, "-L", self.socket, "kill-server"], capture_output=True)


def test_curate_the_darija_sample_in_tmux(tmp_path: Path) -> None:
    data = copy_sample("darija-algerian.tsv", tmp_path)
    exe = shutil.which("piqa-tui") or f"{sys.executable} -m piqa_tui.cli.main"
    env = {**os.environ, "PIQA_TUI_CONFIG": str(tmp_path / "none.toml"), "TERM": "xterm-256color"}
    status = tmp_path / "status"
    term = Terminal(f"{exe} {data} --annotator t; echo $? > {status}", 100, 30, env)
    try:
        # header (dataset, position), the current item with its translation, the footer's keys
        term.wait_for("darija-algerian.tsv", "1/36", "dz-001   row 1", "msa_translation", "q quit")

        term.keys("j", "j")
        term.wait_for("dz-003   row 3")
        term.keys("x")  # swap dz-003's solutions, label with them
        term.wait_for("swapped solutions 1 and 2")

        term.keys("c")  # a note, typed in Arabic script
        term.type("راجع هذا")
        term.keys("Enter")
        term.wait_for("✎1", "q quit")  # the header counts the edited item; the note editor has closed

        term.keys("/")
        term.type("الكسكسي")
        term.wait_for("containing it")
        term.keys("Enter")
        screen = term.wait_for("dz-001   row 1")  # the first hit
        assert "[search “" in screen
        term.keys("Escape")
        term.wait_for("1/36")  # search cleared; still on the hit you were reading

        term.keys("C-s")
        term.wait_for("saved")
        term.keys("q")
        deadline = time.monotonic() + 10
        while not status.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert status.read_text().strip() == "0"
    finally:
        term.close()

    (tmp_path / "orig").mkdir()
    original = load_dataset(copy_sample("darija-algerian.tsv", tmp_path / "orig"))
    saved = load_dataset(data)
    before, after = original.items[2], saved.items[2]
    assert after.solutions == (before.solutions[1], before.solutions[0])
    assert after.label == 1 - before.label
    assert [i.prompt for i in saved.items] == [i.prompt for i in original.items]
    project = Project.open(data, annotator="t")
    assert project.state.notes["dz-003"] == "راجع هذا"
