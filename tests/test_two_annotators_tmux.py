"""Two annotators, two real ``piqa-tui`` processes in tmux, one copy of the Darija sample and its workspace.

Ana and ben open the same field; ben saves first; ana's save shows theirs, mine and the text both started
from, and each resolution (keep theirs, keep mine, merge by hand) is checked in the exported file and in
the workspace's events. Then an undo over ben's later edit is refused with a line naming him, and a vote
of ana's on a text ben edits meanwhile is shown set aside on her screen once her app has refreshed.
Every wait polls the screen for a text, with room for a loaded machine. Skipped when tmux is missing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from piqa_tui.core.workspace.log import Event, Workspace
from piqa_tui.core.workspace.project import Project
from tests.conftest import copy_sample
from tests.test_e2e_tmux import TMUX, Terminal

pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux is not installed")

EXE = shutil.which("piqa-tui") or f"{sys.executable} -m piqa_tui.cli.main"
START = "the prompt both started from"
LONG = 90.0  # seconds: two apps and the tests of seven other people share two cores


@dataclass
class Team:
    """Ana's and ben's terminals on one dataset (and its one workspace)."""

    data: Path
    ana: Terminal
    ben: Terminal
    work: Path

    def export(self) -> dict[str, list[str]]:
        """``piqa-tui export`` of the dataset now, as rows by id (the real CLI, beside the two apps)."""
        out = self.work / f"export-{len(list(self.work.glob('export-*')))}.tsv"
        done = subprocess.run(
            [*EXE.split(), "export", str(self.data), "--to", str(out)], capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr
        lines = out.read_text(encoding="utf-8").splitlines()
        return {row.split("\t")[0]: row.split("\t") for row in lines[1:]}

    def edits(self, item_id: str, field: str) -> list[Event]:
        """The edit events of ``field`` of ``item_id``, oldest first, as the workspace holds them."""
        ws = Workspace(self.data.with_name(self.data.name + ".piqa.sqlite"), read_only=True)
        try:
            return [e for e in ws.events(kinds=["edit"]) if (e.item_id, e.field) == (item_id, field)]
        finally:
            ws.close()


def start(data: Path, who: str, env: dict[str, str], flags: str = "") -> Terminal:
    term = Terminal(f"{EXE} {data} --annotator {who} {flags}", 120, 40, env)
    term.wait_for("dz-001   row 1", "q quit", timeout=LONG)
    return term


@pytest.fixture
def ben_flags() -> str:
    """Ben's options on the command line (a test may make him a reviewer)."""
    return ""


@pytest.fixture
def team(tmp_path: Path, ben_flags: str) -> Iterator[Team]:
    data = copy_sample("darija-algerian.tsv", tmp_path)
    Project.open(data, annotator="setup").edit("dz-001", {"prompt": START})  # a base both can read on screen
    env = {**os.environ, "PIQA_TUI_CONFIG": str(tmp_path / "none.toml"), "TERM": "xterm-256color"}
    ana = start(data, "ana", env)
    try:
        ben = start(data, "ben", env, ben_flags)
    except BaseException:
        ana.close()
        raise
    try:
        yield Team(data, ana, ben, tmp_path)
    finally:
        ana.close()
        ben.close()


def save_prompt(term: Terminal, text: str) -> None:
    """Open the prompt's editor on the current item, replace its text with ``text`` and save."""
    open_prompt(term)
    term.keys("C-u")
    term.type(text)
    term.keys("Enter")


def open_prompt(term: Terminal) -> None:
    term.keys("e")
    term.wait_for("keep+next", timeout=LONG)  # the editor's footer: the editor is open


def ana_saves_over_ben(team: Team) -> str:
    """Both open dz-001's prompt; ben saves first; ana's save brings up the conflict dialog: its screen."""
    open_prompt(team.ana)
    save_prompt(team.ben, "bens prompt")
    team.ben.wait_for("bens prompt", "q quit", timeout=LONG)
    team.ana.keys("C-u")
    team.ana.type("anas prompt")
    team.ana.keys("Enter")
    return team.ana.wait_for("Someone else changed this field", "changed by ben", timeout=LONG)


def three_versions(screen: str) -> tuple[str, str, str]:
    """The texts under Theirs, Mine and Started from, as the dialog shows them."""
    lines = [line.strip(" │┃") for line in screen.splitlines()]

    def under(title: str) -> str:
        at = next(n for n, line in enumerate(lines) if line.startswith(title))
        return lines[at + 1].strip()

    return under("Theirs"), under("Mine"), under("Started from")


def test_keep_theirs_records_nothing_of_ana(team: Team) -> None:
    screen = ana_saves_over_ben(team)
    assert three_versions(screen) == ("bens prompt", "anas prompt", START)
    team.ana.keys("Enter")  # the first choice: keep theirs
    team.ana.wait_for("kept their prompt", timeout=LONG)
    assert team.export()["dz-001"][1] == "bens prompt"
    edits = team.edits("dz-001", "prompt")
    assert [(e.annotator, e.old, e.new) for e in edits[1:]] == [("ben", START, "bens prompt")]


def test_keep_mine_records_ana_over_ben(team: Team) -> None:
    ana_saves_over_ben(team)
    team.ana.keys("Down", "Enter")
    team.ana.wait_for("anas prompt", "q quit", timeout=LONG)
    team.ben.wait_for("anas prompt", timeout=LONG)  # ben's app reads ana's edit when it next looks
    assert team.export()["dz-001"][1] == "anas prompt"
    edits = team.edits("dz-001", "prompt")
    assert [(e.annotator, e.old, e.new) for e in edits[1:]] == [
        ("ben", START, "bens prompt"),
        ("ana", "bens prompt", "anas prompt"),  # recorded on theirs: undo brings ben's back
    ]


def test_merge_by_hand_records_the_merged_text(team: Team) -> None:
    ana_saves_over_ben(team)
    team.ana.keys("Down", "Down", "Enter")
    team.ana.wait_for("keep+next", "anas prompt", timeout=LONG)  # the editor again, with mine in it
    team.ana.keys("End")
    team.ana.type(" and bens")
    team.ana.keys("Enter")
    team.ana.wait_for("anas prompt and bens", "q quit", timeout=LONG)
    assert "Someone else changed" not in team.ana.screen()  # recorded on theirs: no second conflict
    assert team.export()["dz-001"][1] == "anas prompt and bens"
    edits = team.edits("dz-001", "prompt")
    assert [(e.annotator, e.old, e.new) for e in edits[1:]] == [
        ("ben", START, "bens prompt"),
        ("ana", "bens prompt", "anas prompt and bens"),
    ]


def test_undo_over_bens_later_edit_is_refused_naming_him(team: Team) -> None:
    save_prompt(team.ana, "anas prompt")
    team.ana.wait_for("anas prompt", "q quit", timeout=LONG)
    team.ben.wait_for("anas prompt", timeout=LONG)  # ben edits on what ana saved: no conflict for him
    save_prompt(team.ben, "bens prompt")
    team.ana.wait_for("bens prompt", timeout=LONG)
    before = team.edits("dz-001", "prompt")

    team.ana.keys("u")
    screen = " ".join(team.ana.wait_for("cannot undo", timeout=LONG).split())  # the toast may wrap
    assert "changed by ben at" in screen and " UTC" in screen

    assert team.edits("dz-001", "prompt") == before  # nothing undone, nothing recorded
    assert team.export()["dz-001"][1] == "bens prompt"


@pytest.mark.parametrize("ben_flags", ["--reviewer"])  # he sees ana's vote come in before he edits
def test_anas_vote_on_a_text_ben_edits_is_set_aside_on_her_screen(team: Team) -> None:
    team.ana.keys("j")
    team.ana.wait_for("dz-002   row 2", timeout=LONG)
    team.ana.keys("1")  # a vote for solution 1; the cursor moves on
    team.ana.wait_for("dz-003   row 3", timeout=LONG)
    team.ana.keys("k")
    team.ana.wait_for("dz-002   row 2", "you 1", timeout=LONG)

    team.ben.keys("j")
    team.ben.wait_for("dz-002   row 2", "ana 1", timeout=LONG)  # ben's app has read ana's vote
    team.ben.keys("Tab", "e")  # solution 1, the text ana chose
    team.ben.wait_for("keep+next", timeout=LONG)
    team.ben.keys("C-u")
    team.ben.type("bens solution")
    team.ben.keys("Enter")
    team.ben.wait_for("Votes predate this edit", "(ana)", timeout=LONG)
    team.ben.keys("Enter")  # edit, and mark her vote as cast on an earlier version
    team.ben.wait_for("bens solution", "q quit", timeout=LONG)

    # Her vote is set aside: the item is hers to vote again, and blind again until she does (issue 37).
    screen = " ".join(team.ana.wait_for("bens solution", "your vote predates an edit", timeout=LONG).split())
    assert "vote again" in screen and "hidden until you vote" in screen
    assert team.export()["dz-002"][2] == "bens solution"
