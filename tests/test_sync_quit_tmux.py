"""Quitting the real ``piqa-tui`` while its sync waits on a remote that never answers: the app closes at once.

The clone's remote is an ``ssh://`` address reached through a ProxyCommand that only sleeps (a black hole: no
connection, no refusal, no time-out before git's own of minutes). The sync key starts a sync, the header says
``syncing``, ``q`` quits: the process ends well before git's time limit (the fetch and the ssh under it are ended,
``core/sync/git.py``), what the sync committed stays, and the next sync with a remote that answers pushes it.
Skipped when tmux is missing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from piqa_tui.core.sync.exchange import sync
from piqa_tui.core.sync.git import NETWORK_SECONDS
from piqa_tui.core.workspace.project import Project
from tests.conftest import copy_sample
from tests.test_e2e_tmux import TMUX, Terminal
from tests.test_sync import git, git_identity  # noqa: F401 (git_identity: an autouse fixture, here too)

pytestmark = pytest.mark.skipif(TMUX is None or shutil.which("ssh") is None, reason="tmux or ssh is not installed")

EXE = shutil.which("piqa-tui") or f"{sys.executable} -m piqa_tui.cli.main"
DATA = "darija-algerian.tsv"
LONG = 90.0  # seconds to open on a loaded machine; still under git's NETWORK_SECONDS


def test_quit_while_a_sync_waits_on_a_black_hole_does_not_wait_for_git(tmp_path: Path) -> None:
    assert LONG < NETWORK_SECONDS
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "--quiet", "--bare", "-b", "main", str(remote)], check=True)
    clone = tmp_path / "a"
    clone.mkdir()
    git(clone, "init", "--quiet", "-b", "main")
    data = copy_sample(DATA, clone)
    git(clone, "add", DATA)
    git(clone, "commit", "--quiet", "-m", "the dataset")
    git(clone, "remote", "add", "origin", str(remote))
    sync(data)
    project = Project.open(data, annotator="ana")
    project.vote("dz-001", "1")
    project.workspace.close()  # type: ignore[union-attr]
    git(clone, "remote", "set-url", "origin", "ssh://git@192.0.2.1/team.git")
    env = {
        **os.environ,
        "PIQA_TUI_CONFIG": str(tmp_path / "none.toml"),
        "TERM": "xterm-256color",
        "GIT_SSH_COMMAND": "ssh -o ProxyCommand='sleep 1000' -o BatchMode=yes",
    }
    term = Terminal(f"{EXE} {data} --annotator ana", 120, 40, env)
    try:
        term.wait_for("dz-001   row 1", "q quit", timeout=LONG)
        term.keys("Y")
        term.wait_for("syncing", timeout=LONG)
        time.sleep(1.0)  # git is in its fetch, ssh in its ProxyCommand
        term.keys("q")
        deadline = time.monotonic() + LONG
        while term.alive() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not term.alive(), f"still running after q:\n{term.screen()}"
    finally:
        term.close()
    assert git(clone, "status", "--porcelain", "--", ".piqa") == ""  # the batch: committed before the fetch
    git(clone, "remote", "set-url", "origin", str(remote))
    assert sync(data).pushed
    assert git(remote, "ls-tree", "-r", "--name-only", "main", "--", ".piqa")  # ana's vote reached the team
