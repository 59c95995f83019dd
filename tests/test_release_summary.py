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


def cli_fails(*args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "piqa_tui.cli.main", *args], capture_output=True, text=True)
    assert "Traceback" not in done.stderr and done.returncode != 0, done.stderr
    return done.stderr


def stored_defaults(path: Path) -> dict[str, object]:
    workspace = Project.open(path).workspace
    assert workspace is not None
    return json.loads(workspace.get_meta("release_defaults") or "null")


@pytest.fixture
def team_set(every_status: Path, tmp_path: Path) -> Path:
    """A copy of the set with every status, its workspace beside it, for a test that changes the defaults."""
    for source in every_status.parent.iterdir():
        if source.name.startswith(every_status.name):
            (tmp_path / source.name).write_bytes(source.read_bytes())
    return tmp_path / every_status.name


def test_make_default_records_the_options_and_later_releases_apply_them(team_set: Path, tmp_path: Path) -> None:
    out = tmp_path / "release.tsv"
    done = cli("export", str(team_set), "--to", str(out), "--only-decided", "--drop-invalid", "--make-default")
    assert "release defaults are now: only decided, drop invalid" in done.stdout
    assert stored_defaults(team_set) == {"only_decided": True, "drop_invalid": True}
    assert written_ids(out) == ["dz-001", "dz-002", "dz-004"]

    done = cli("export", str(team_set), "--to", str(out), "--decided", "--force")  # the defaults, unasked
    assert written_ids(out) == ["dz-001", "dz-002", "dz-004"]
    assert "project defaults: only decided, drop invalid" in done.stdout
    assert "left out: 32 undecided, 1 invalid" in done.stdout
    summary = json.loads(cli("export", str(team_set), "--to", str(out), "--decided", "--json", "--force").stdout)
    assert summary["project_defaults"] == {"only_decided": True, "drop_invalid": True}
    assert summary["left_out"] == {"undecided": 32, "invalid": 1} and summary["items"] == 3


def test_include_undecided_and_keep_invalid_override_the_defaults_for_one_run(team_set: Path, tmp_path: Path) -> None:
    out = tmp_path / "release.tsv"
    cli("export", str(team_set), "--to", str(out), "--only-decided", "--drop-invalid", "--make-default")
    done = cli("export", str(team_set), "--to", str(out), "--decided", "--include-undecided", "--force")
    assert len(written_ids(out)) == 35 and "dz-012" not in written_ids(out)  # undecided in, the invalid one out
    assert "overridden this run: --include-undecided" in done.stdout
    cli("export", str(team_set), "--to", str(out), "--decided", "--keep-invalid", "--force")
    assert written_ids(out) == ["dz-001", "dz-002", "dz-004", "dz-012"]
    cli("export", str(team_set), "--to", str(out), "--include-undecided", "--keep-invalid", "--force")
    assert len(written_ids(out)) == 36
    assert stored_defaults(team_set) == {"only_decided": True, "drop_invalid": True}  # one run, not the default


def test_make_default_with_neither_option_clears_the_defaults(team_set: Path, tmp_path: Path) -> None:
    out = tmp_path / "release.tsv"
    cli("export", str(team_set), "--to", str(out), "--drop-invalid", "--make-default")
    assert stored_defaults(team_set) == {"drop_invalid": True}
    done = cli("export", str(team_set), "--to", str(out), "--decided", "--force")
    assert "project defaults: drop invalid" in done.stdout and len(written_ids(out)) == 35
    done = cli("export", str(team_set), "--to", str(out), "--make-default", "--force")
    assert "release defaults are cleared" in done.stdout and len(written_ids(out)) == 36
    assert stored_defaults(team_set) == {}
    done = cli("export", str(team_set), "--to", str(out), "--decided", "--force")
    assert "project defaults" not in done.stdout and len(written_ids(out)) == 36


def test_defaults_do_not_touch_an_export_of_the_working_dataset(team_set: Path, tmp_path: Path) -> None:
    out = tmp_path / "release.tsv"
    cli("export", str(team_set), "--to", str(out), "--only-decided", "--drop-invalid", "--make-default")
    done = cli("export", str(team_set), "--to", str(out), "--force")  # not a release: every item, as edited
    assert len(written_ids(out)) == 36 and "project defaults" not in done.stdout


def test_an_option_and_its_override_together_are_refused(team_set: Path, tmp_path: Path) -> None:
    out = str(tmp_path / "release.tsv")
    assert "not allowed with" in cli_fails(
        "export", str(team_set), "--to", out, "--only-decided", "--include-undecided"
    )
    assert "not allowed with" in cli_fails("export", str(team_set), "--to", out, "--drop-invalid", "--keep-invalid")


def test_unreadable_defaults_are_one_line_and_make_default_resets_them(team_set: Path, tmp_path: Path) -> None:
    workspace = Project.open(team_set).workspace
    assert workspace is not None
    workspace.set_meta({"release_defaults": '{"only_decided": "yes"}'})  # written by no version of piqa-tui
    workspace.close()
    out = tmp_path / "release.tsv"
    error = cli_fails("export", str(team_set), "--to", str(out), "--decided")
    assert "release defaults are unreadable" in error and "--make-default" in error and error.count("\n") == 1
    assert not out.exists()
    cli("export", str(team_set), "--to", str(out), "--only-decided", "--make-default")
    assert stored_defaults(team_set) == {"only_decided": True}
