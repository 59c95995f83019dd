"""``export --decided`` says what the release holds: items per status and items that fail validation, and
leaves out what is not decided (``--only-decided``) or invalid (``--drop-invalid``) when asked. Run on a
set with every status, as real processes on a real workspace."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from piqa_tui.core.votes.decisions import decisions, parse_policy, set_project_policy
from piqa_tui.core.votes.policy import Status
from piqa_tui.core.workspace.project import Project

from .conftest import copy_sample

# The Darija sample has 36 items; dz-012's two solutions are identical (validate: an error).
VOTES = {
    "dz-001": {"amina": "1", "yacine": "1"},  # agreed, on the gold label (solution 2)
    "dz-002": {"amina": "1", "yacine": "1"},  # agreed on solution 2, against the gold label (solution 1)
    "dz-003": {"amina": "0", "yacine": "0", "sara": "1", "karim": "1"},  # a tie: disagreement
    "dz-004": {"amina": "0", "yacine": "0", "sara": "1", "karim": "1"},  # a tie, then adjudicated
    "dz-005": {"amina": "0"},  # one vote: needs votes
    "dz-012": {"amina": "0", "yacine": "0"},  # agreed, but invalid
}
STATUSES = {"agreed": 2, "adjudicated": 1, "votes-against-gold": 1, "disagreement": 1, "needs-votes": 31}


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "piqa_tui.cli.main", *args], capture_output=True, text=True)
    assert "Traceback" not in done.stderr and done.returncode == 0, done.stderr
    return done


@pytest.fixture(scope="module")
def every_status(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = copy_sample("darija-algerian.tsv", tmp_path_factory.mktemp("release"))
    for item_id, votes in VOTES.items():
        for name, choice in votes.items():
            Project.open(path, annotator=name).vote(item_id, choice)
    lead = Project.open(path, annotator="lead")
    set_project_policy(lead, parse_policy("majority:2/3"))
    lead.adjudicate("dz-004", 0, "solution 1 is the safe way")
    found = decisions(Project.open(path))
    assert found["dz-002"].status is Status.AGAINST_GOLD and found["dz-003"].status is Status.DISAGREEMENT
    return path


def written_ids(out: Path) -> list[str]:
    return [line.split("\t")[0] for line in out.read_text(encoding="utf-8").splitlines()[1:]]


def test_the_summary_counts_every_status_and_the_invalid_items(every_status: Path, tmp_path: Path) -> None:
    out = tmp_path / "release.tsv"
    done = cli("export", str(every_status), "--to", str(out), "--decided")
    assert "wrote 36 items" in done.stdout
    assert "by status: agreed 2, adjudicated 1, votes against gold 1, disagreement 1, needs votes 31" in done.stdout
    assert "32 items not decided by the votes keep the file's label (--only-decided leaves them out)" in done.stdout
    assert "1 item fails validation" in done.stdout and "--drop-invalid" in done.stdout
    summary = json.loads(cli("export", str(every_status), "--to", str(out), "--decided", "--json", "--force").stdout)
    assert summary["statuses"] == STATUSES and summary["invalid"] == 1 and summary["left_out"] == {}
    assert len(written_ids(out)) == 36


def test_only_decided_and_drop_invalid_leave_those_items_out(every_status: Path, tmp_path: Path) -> None:
    out = tmp_path / "release.tsv"
    done = cli("export", str(every_status), "--to", str(out), "--only-decided")  # implies --decided
    assert written_ids(out) == ["dz-001", "dz-002", "dz-004", "dz-012"]
    assert "by status: agreed 2, adjudicated 1, votes against gold 1, disagreement 0, needs votes 0" in done.stdout
    assert "left out: 32 undecided" in done.stdout and "not decided by the votes" not in done.stdout
    done = cli("export", str(every_status), "--to", str(out), "--only-decided", "--drop-invalid", "--force")
    assert written_ids(out) == ["dz-001", "dz-002", "dz-004"]
    assert "no item written fails validation" in done.stdout and "1 invalid" in done.stdout
    labels = {r.split("\t")[0]: r.split("\t")[4] for r in out.read_text(encoding="utf-8").splitlines()[1:]}
    assert labels == {"dz-001": "1", "dz-002": "1", "dz-004": "0"}  # the decided labels
    summary = json.loads(
        cli("export", str(every_status), "--to", str(out), "--drop-invalid", "--json", "--force").stdout
    )
    assert summary["items"] == 35 and summary["left_out"] == {"invalid": 1} and "statuses" not in summary
