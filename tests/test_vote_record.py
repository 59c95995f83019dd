"""The vote record: votes follow solution texts, in the column-wise read and the replay alike."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

from piqa_tui.core.votes.decisions import decisions, parse_policy, set_project_policy
from piqa_tui.core.votes.files import import_votes
from piqa_tui.core.votes.policy import Decision, Status
from piqa_tui.core.workspace.project import Project
from piqa_tui.core.workspace.vote_targets import STALE
from piqa_tui.tui.state.ballots import Ballots

from .conftest import SAMPLES, copy_sample


def test_a_vote_records_its_text_and_follows_it(tmp_path: Path) -> None:
    path = copy_sample("darija-algerian.tsv", tmp_path)
    for name in ("amina", "karim"):
        Project.open(path, annotator=name).vote("dz-003", "1")
    lead = Project.open(path, annotator="lead")
    chosen = lead.item("dz-003").solutions[1]
    lead.swap_solutions("dz-003", 0, 1)
    assert decisions(lead)["dz-003"].label == 0
    reopened = Project.open(path)  # the column-wise read resolves the same way
    assert decisions(reopened)["dz-003"].label == 0
    assert reopened.item("dz-003").solutions[0] == chosen
    assert {v.choice for v in reopened.state.votes["dz-003"].values()} == {"0"}
    lead.edit("dz-003", {"solution0": chosen + " (edited)"})
    assert decisions(Project.open(path))["dz-003"].status is Status.NEEDS_VOTES
    assert {v.choice for v in Project.open(path).state.votes["dz-003"].values()} == {STALE}
    lead.undo()  # the text is back: so are the votes
    assert decisions(Project.open(path))["dz-003"] == decisions(reopened)["dz-003"]


def test_votes_without_a_key_name_the_text_at_their_time(tmp_path: Path) -> None:
    """An older workspace: vote events without a solution key are matched to the text of the log at their time."""
    path = copy_sample("darija-algerian.tsv", tmp_path)
    project = Project.open(path, annotator="lead")
    assert project.workspace is not None
    project.workspace.insert_votes(
        [
            ("dz-004", "amina", "0", "2020-01-01T00:00:00.000000Z", None),
            ("dz-004", "karim", "0", "2020-01-01T00:00:01.000000Z", None),
        ]
    )
    project.refresh()
    project.swap_solutions("dz-004", 0, 1)
    assert decisions(Project.open(path))["dz-004"].label == 1
    project.edit("dz-004", {"solution1": "changed"})
    assert decisions(Project.open(path))["dz-004"].status is Status.NEEDS_VOTES
    later = "2999-01-01T00:00:00.000000Z"  # cast after the edit: it names the edited text
    project.workspace.insert_votes([("dz-004", "sara", "1", later, None), ("dz-004", "amina", "1", later, None)])
    assert decisions(Project.open(path))["dz-004"].label == 1


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "piqa_tui.cli.main", *args], capture_output=True, text=True)


def test_votes_against_gold_are_a_status_under_every_policy_and_every_change_is_reported(tmp_path: Path) -> None:
    path = copy_sample("darija-algerian.tsv", tmp_path)
    project = Project.open(path, annotator="lead")
    import_votes(project, SAMPLES / "votes-darija-algerian.tsv")  # dz-007: gold 2, amina and sara 1, yacine 2
    for name in ("amina", "yacine", "sara"):  # dz-010: all three against its gold (1)
        Project.open(path, annotator=name).vote("dz-010", "1")
    for spec, expected in (
        ("majority:2/3", {"dz-007", "dz-010"}),
        ("unanimity:3", {"dz-010"}),
        ("majority:3/3", {"dz-010"}),
        ("majority:2/3:min=3", {"dz-007", "dz-010"}),
    ):
        set_project_policy(project, parse_policy(spec))
        found = decisions(Project.open(path))
        assert {i for i, d in found.items() if d.status is Status.AGAINST_GOLD} == expected, spec
        assert Ballots(Project.open(path), reviewer=True).queue(Status.AGAINST_GOLD) == sorted(expected)
    set_project_policy(project, parse_policy("majority:2/3"))
    agree = json.loads(_run("agree", str(path), "--json").stdout)
    assert agree["gold_changes"] == [
        {"id": "dz-007", "gold": 1, "decided": 0},
        {"id": "dz-010", "gold": 0, "decided": 1},
    ]
    assert agree["status"]["votes-against-gold"] == 2
    out = tmp_path / "release.tsv"
    done = _run("export", str(path), "--to", str(out), "--decided")
    assert done.returncode == 0
    assert "2 labels changed from the gold column" in done.stdout
    assert "dz-007: 2 → 1" in done.stdout and "dz-010: 1 → 2" in done.stdout
    # The reviewer settles dz-007 for the gold label, like any disagreement: one change left, and said so.
    project.adjudicate("dz-007", 1, "the file is right")
    assert decisions(Project.open(path))["dz-007"] == Decision(Status.ADJUDICATED, 1)
    done = _run("export", str(path), "--to", str(out), "--decided", "--json", "--force")
    assert json.loads(done.stdout)["gold_changes"] == [{"id": "dz-010", "gold": 0, "decided": 1}]
    with out.open(encoding="utf-8", newline="") as handle:
        labels = {row["id"]: row["label"] for row in csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)}
    assert labels["dz-007"] == "1" and labels["dz-010"] == "1"


COLLIDING = (
    "id\tprompt\tsolution0\tsolution1\tlabel\n"
    "x1\tfirst prompt\ta one\tb one\t0\n"
    "x1\tsecond prompt\ta two\tb two\t1\n"
    "x1\tthird prompt\ta three\tb three\t0\n"
    "x1~2\tfourth prompt\ta four\tb four\t1\n"
)


def test_ids_that_collide_after_de_duplication_stay_apart(tmp_path: Path) -> None:
    path = tmp_path / "colliding.tsv"
    path.write_text(COLLIDING, encoding="utf-8")
    project = Project.open(path, annotator="lead")
    ids = [item.id for item in project.items]
    assert ids == ["x1", "x1~3", "x1~4", "x1~2"] and len(set(ids)) == 4
    for item in project.items:  # every id reaches its own row
        project.edit(item.id, {"prompt": item.prompt + " (edited)"})
    project.vote("x1~2", "1")
    reopened = Project.open(path)
    assert [item.prompt for item in reopened.items] == [
        "first prompt (edited)",
        "second prompt (edited)",
        "third prompt (edited)",
        "fourth prompt (edited)",
    ]
    assert reopened.state.votes["x1~2"]["lead"].choice == "1" and "x1~4" not in reopened.state.votes
    out = tmp_path / "out.tsv"
    assert _run("export", str(path), "--to", str(out)).returncode == 0
    rows = [line.split("\t") for line in out.read_text(encoding="utf-8").splitlines()[1:]]
    assert [(r[0], r[1]) for r in rows] == [
        ("x1", "first prompt (edited)"),
        ("x1", "second prompt (edited)"),
        ("x1", "third prompt (edited)"),
        ("x1~2", "fourth prompt (edited)"),
    ]
    done = _run("validate", str(path), "--json")
    assert done.returncode == 1
    problems = [p for p in json.loads(done.stdout)["problems"] if p["rule"] == "duplicate-id"]
    assert [(p["row"], p["item_id"]) for p in problems] == [(1, "x1"), (2, "x1~3"), (3, "x1~4")]
    assert all("id 'x1' is used by 3 items" in p["detail"] for p in problems)


def test_votes_from_another_machine_follow_their_text(tmp_path: Path) -> None:
    """Machine A swapped dz-005's solutions; machine B voted on its unswapped copy. B's exported votes carry
    the key of the text chosen, so in A they count for that text at its new place, and a vote for a text
    A has edited counts for nothing."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    machine_a, machine_b = (
        copy_sample("darija-algerian.tsv", tmp_path / "a"),
        copy_sample("darija-algerian.tsv", tmp_path / "b"),
    )
    lead = Project.open(machine_a, annotator="lead")
    lead.swap_solutions("dz-005", 0, 1)
    lead.edit("dz-006", {"solution0": "نص جديد"})
    for name in ("karim", "selma"):
        voter = Project.open(machine_b, annotator=name)
        voter.vote("dz-005", "0")
        voter.vote("dz-006", "0")
    exported = tmp_path / "b-votes.tsv"
    assert _run("votes", "export", str(machine_b), str(exported)).returncode == 0
    assert "solution" in exported.read_text(encoding="utf-8").splitlines()[0]
    assert _run("votes", "import", str(machine_a), str(exported)).returncode == 0
    merged = Project.open(machine_a)
    assert decisions(merged)["dz-005"] == Decision(Status.AGAINST_GOLD, 1)  # their text is solution 2 in A
    assert {v.choice for v in merged.state.votes["dz-006"].values()} == {STALE}
    assert decisions(merged)["dz-006"].status is Status.NEEDS_VOTES


def test_an_edit_and_a_vote_read_together_by_a_batch_process(tmp_path: Path) -> None:
    """A process that keeps the votes column-wise sees an edit and a later vote in one refresh: the votes for
    the edited text are stale, the new one counts."""
    path = copy_sample("darija-algerian.tsv", tmp_path)
    import_votes(Project.open(path, annotator="lead"), SAMPLES / "votes-darija-algerian.tsv")
    batch = Project.open(path)
    assert batch.state.current_votes is not None  # column-wise
    lead = Project.open(path, annotator="lead")
    lead.edit("dz-002", {"solution0": "نص آخر"})
    lead.vote("dz-003", "0")  # a vote on another item: the edited one has no new vote
    batch.refresh()
    assert decisions(batch)["dz-002"].status is Status.NEEDS_VOTES
    assert {v.choice for v in batch.state.votes["dz-002"].values()} == {STALE}
    assert batch.state.votes["dz-003"]["lead"].choice == "0"
