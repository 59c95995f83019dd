"""Decisions belong to text, like votes: an adjudication follows the solution text it chose through a swap, and
an edit of that text sets it aside (the item back in its queue, with one line saying why) instead of releasing
a label nobody reviewed. The CLI runs as real processes on a real workspace."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

from piqa_tui.core.votes.decisions import decisions, set_aside
from piqa_tui.core.votes.files import import_votes
from piqa_tui.core.votes.policy import Decision, Status
from piqa_tui.core.workspace.log import Change
from piqa_tui.core.workspace.project import Project
from piqa_tui.core.workspace.vote_targets import STALE
from piqa_tui.tui.state.ballots import Ballots

from .conftest import SAMPLES, copy_sample

SAMPLE_VOTES = SAMPLES / "votes-darija-algerian.tsv"  # dz-007: gold 1 (0-based); amina and sara 0, yacine 1


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "piqa_tui.cli.main", *args], capture_output=True, text=True)
    assert "Traceback" not in done.stderr and done.returncode == 0, done.stderr
    return done


def released(path: Path) -> dict[str, dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return {row["id"]: row for row in csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)}


def split_votes(tmp_path: Path) -> Path:
    """The Darija sample with its votes under unanimity of 3: dz-007's votes are split."""
    path = copy_sample("darija-algerian.tsv", tmp_path)
    cli("votes", "import", str(path), str(SAMPLE_VOTES))
    cli("votes", "policy", str(path), "unanimity:3")
    return path


def test_adjudicate_then_swap_then_edit_then_release(tmp_path: Path) -> None:
    path = split_votes(tmp_path)
    lead = Project.open(path, annotator="lead")
    assert decisions(lead)["dz-007"].status is Status.DISAGREEMENT
    chosen, rejected = lead.item("dz-007").solutions
    lead.adjudicate("dz-007", 0, "the votes are right: the file's label is a typo")
    out = tmp_path / "release.tsv"

    done = cli("export", str(path), "--to", str(out), "--decided")
    assert "dz-007: 2 → 1" in done.stdout
    assert released(out)["dz-007"]["label"] == "0" and released(out)["dz-007"]["solution0"] == chosen

    lead.swap_solutions("dz-007", 0, 1)  # Tab, x in the TUI: the votes, the gold label and the decision move
    assert lead.item("dz-007").solutions == (rejected, chosen) and lead.item("dz-007").label == 0
    agree = json.loads(cli("agree", str(path), "--json").stdout)
    assert {"id": "dz-007", "gold": 0, "decided": 1} in agree["gold_changes"] and agree["set_aside"] == []
    done = cli("export", str(path), "--to", str(out), "--decided", "--force")
    assert "dz-007: 1 → 2" in done.stdout and "0 labels changed" not in done.stdout
    row = released(out)["dz-007"]
    assert row["label"] == "1" and row[f"solution{row['label']}"] == chosen  # the text the reviewer chose
    assert "adjudicated → 2 by lead" in Ballots(Project.open(path)).status_text("dz-007")

    lead.edit("dz-007", {"solution1": chosen + " (edited)"})  # nobody reviewed this text
    reopened = Project.open(path)
    assert reopened.state.adjudications["dz-007"].label == STALE
    assert decisions(reopened)["dz-007"].status is Status.NEEDS_VOTES  # its votes are stale too: back in the queue
    agree = json.loads(cli("agree", str(path), "--json").stdout)
    assert [a["id"] for a in agree["set_aside"]] == ["dz-007"]
    assert agree["set_aside"][0]["text"] == chosen and agree["set_aside"][0]["who"] == "lead"
    assert all(change["id"] != "dz-007" for change in agree["gold_changes"])
    plain = cli("agree", str(path)).stdout
    assert (
        "dz-007: the adjudication by lead" in plain and "is set aside: the solution text it chose was edited" in plain
    )
    status = Ballots(reopened, reviewer=True).status_text("dz-007")
    assert status.startswith("to adjudicate — decision set aside") and "set aside" in status  # back with the lead
    done = cli("export", str(path), "--to", str(out), "--decided", "--force")
    assert "dz-007" not in done.stdout and released(out)["dz-007"]["label"] == "0"  # the file's label, untouched

    lead.undo()  # the text is back, and so is the decision on it
    assert decisions(Project.open(path))["dz-007"] == Decision(Status.ADJUDICATED, 1)


def test_an_old_adjudication_without_its_text_names_the_solution_at_its_position_then(tmp_path: Path) -> None:
    """Workspaces made before adjudications kept their text still load: the text is the one the log had at
    the adjudicated position when the event was recorded."""
    path = split_votes(tmp_path)
    lead = Project.open(path, annotator="lead")
    assert lead.workspace is not None
    first, second = lead.item("dz-007").solutions
    lead.workspace.append("lead", "adjudicate", [Change("dz-007", "label", None, "0")], "old-style")
    lead.swap_solutions("dz-007", 0, 1)
    lead.swap_solutions("dz-003", 0, 1)
    third = lead.item("dz-003").solutions[1]
    lead.workspace.append("lead", "adjudicate", [Change("dz-003", "label", None, "1")], "after a swap")
    reopened = Project.open(path)
    assert reopened.state.adjudications["dz-007"].text == first
    assert decisions(reopened)["dz-007"] == Decision(Status.ADJUDICATED, 1)  # followed the swap
    assert reopened.state.adjudications["dz-003"].text == third
    assert decisions(reopened)["dz-003"] == Decision(Status.ADJUDICATED, 1)
    lead.edit("dz-007", {"solution1": first + "!"})
    assert list(set_aside(Project.open(path))) == ["dz-007"]
    assert second == Project.open(path).item("dz-007").solutions[0]


def test_an_old_adjudication_is_set_aside_by_a_later_edit_even_once_the_file_is_saved(tmp_path: Path) -> None:
    path = split_votes(tmp_path)
    lead = Project.open(path, annotator="lead")
    assert lead.workspace is not None
    chosen = lead.item("dz-007").solutions[0]
    lead.workspace.append("lead", "adjudicate", [Change("dz-007", "label", None, "0")], "old-style")
    lead.edit("dz-007", {"solution0": chosen + " (edited)"})
    lead.save()  # the file now holds the edited text: the log still knows what stood there before
    reopened = Project.open(path)
    assert reopened.state.adjudications["dz-007"].text == chosen
    assert list(set_aside(reopened)) == ["dz-007"]


def test_undoing_an_adjudication_brings_back_the_earlier_one_with_its_text(tmp_path: Path) -> None:
    path = split_votes(tmp_path)
    lead = Project.open(path, annotator="lead")
    lead.adjudicate("dz-007", 0, "first")
    lead.swap_solutions("dz-007", 0, 1)
    lead.adjudicate("dz-007", 0, "second thoughts")
    assert decisions(lead)["dz-007"] == Decision(Status.ADJUDICATED, 0)
    lead.undo()  # the second adjudication
    assert decisions(Project.open(path))["dz-007"] == Decision(Status.ADJUDICATED, 1)
    assert Project.open(path).state.adjudications["dz-007"].reason == "first"


def test_a_later_adjudication_wins_whatever_order_the_log_has_them_in(tmp_path: Path) -> None:
    """Adjudications brought from another machine count by their time, as votes do, so every machine derives
    the same decision whatever order the exchanges came in."""
    path = copy_sample("darija-algerian.tsv", tmp_path)
    project = Project.open(path, annotator="lead")
    import_votes(project, SAMPLE_VOTES)
    assert project.workspace is not None
    text0, text1 = project.item("dz-007").solutions
    project.workspace.insert_adjudications(
        [
            ("dz-007", "lead", "1", "2026-11-22T10:00:00.000000Z", text1, "later"),
            ("dz-007", "other", "0", "2026-11-21T10:00:00.000000Z", text0, "earlier, brought in later"),
        ]
    )
    assert decisions(Project.open(path))["dz-007"] == Decision(Status.ADJUDICATED, 1)
    project.workspace.insert_adjudications([("dz-007", "lead", "", "2026-11-23T10:00:00.000000Z", None, "")])
    assert "dz-007" not in Project.open(path).state.adjudications  # withdrawn last
