"""Votes as files: merging without loss, idempotent re-import, bad lines reported; decisions; agree/export CLI."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from piqa_tui.cli.main import main
from piqa_tui.core.votes.agreement import fleiss_kappa
from piqa_tui.core.votes.blind import cast_votes, current_vote, has_voted
from piqa_tui.core.votes.decisions import decide, decisions, parse_policy, project_policy, set_project_policy
from piqa_tui.core.votes.exchange import export_votes
from piqa_tui.core.votes.files import import_votes
from piqa_tui.core.votes.policy import Decision, Status
from piqa_tui.core.workspace.project import Project

from .conftest import SAMPLES, copy_sample

SAMPLE_VOTES = SAMPLES / "votes-darija-algerian.tsv"


def _split_by_annotator(tmp_path: Path) -> list[Path]:
    """The sample votes as three annotators' own files, each in a different format."""
    lines = SAMPLE_VOTES.read_text(encoding="utf-8").splitlines()
    header, rows = lines[0].split("\t"), [line.split("\t") for line in lines[1:]]
    files = []
    for who, suffix in (("amina", ".tsv"), ("yacine", ".csv"), ("sara", ".jsonl")):
        mine = [r for r in rows if r[1] == who]
        path = tmp_path / f"{who}{suffix}"
        if suffix == ".jsonl":
            path.write_text("".join(json.dumps(dict(zip(header, r))) + "\n" for r in mine), encoding="utf-8")
        else:
            sep = "," if suffix == ".csv" else "\t"
            path.write_text("\n".join(sep.join(r) for r in [header, *mine]) + "\n", encoding="utf-8")
        files.append(path)
    return files


def test_files_from_three_machines_merge_without_loss_and_reimport_changes_nothing(tmp_path: Path) -> None:
    dataset = copy_sample("darija-algerian.tsv", tmp_path)
    project = Project.open(dataset, annotator="lead")
    files = _split_by_annotator(tmp_path)
    results = [import_votes(project, f) for f in files]
    assert [r.new for r in results] == [36, 36, 36] and not any(r.bad for r in results)
    assert [import_votes(project, f).new for f in files] == [0, 0, 0]
    expected = {(r[0], r[1]): r[2] for r in (l.split("\t") for l in SAMPLE_VOTES.read_text().splitlines()[1:])}
    got = {(i, a): v.choice for i, by in project.state.votes.items() for a, v in by.items()}
    assert got == expected
    # round trip: export, import into a fresh workspace, same votes
    export_votes(project, tmp_path / "all.jsonl")
    other = Project.open(dataset, workspace=tmp_path / "other.sqlite", annotator="lead")
    assert import_votes(other, tmp_path / "all.jsonl").new == 108
    assert {(i, a): v.choice for i, by in other.state.votes.items() for a, v in by.items()} == expected


def test_latest_vote_wins_across_files(tmp_path: Path) -> None:
    project = Project.open(copy_sample("darija-algerian.tsv", tmp_path), annotator="lead")
    (tmp_path / "early.tsv").write_text("item_id\tannotator\tchoice\ttime\ndz-001\tamina\t0\t2026-11-20T09:00:00Z\n")
    (tmp_path / "late.tsv").write_text(
        "item_id\tannotator\tchoice\ttime\ndz-001\tamina\t1\t2026-11-20T10:00:00+00:00\n"
    )
    import_votes(project, tmp_path / "late.tsv")
    import_votes(project, tmp_path / "early.tsv")
    assert project.state.votes["dz-001"]["amina"].choice == "1"


def test_bad_lines_are_reported_with_their_line_number(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dataset = copy_sample("darija-algerian.tsv", tmp_path)
    votes = tmp_path / "v.tsv"
    votes.write_text(
        "item_id\tannotator\tchoice\ttime\n"
        "dz-001\tamina\t1\t2026-11-20T09:00:00Z\n"
        "dz-999\tamina\t1\t2026-11-20T09:00:00Z\n"
        "dz-002\tamina\t3\t2026-11-20T09:00:00Z\n"
        "dz-003\tamina\tskip\tyesterday\n"
    )
    assert main(["votes", "import", str(dataset), str(votes)]) == 1
    captured = capsys.readouterr()
    assert "line 3: unknown item id 'dz-999'" in captured.err
    assert "line 4: choice '3' is impossible" in captured.err
    assert "line 5: time 'yesterday'" in captured.err
    assert "1 new" in captured.out
    assert Project.open(dataset).state.votes["dz-001"]["amina"].choice == "1"


def test_policies_and_adjudication(tmp_path: Path) -> None:
    project = Project.open(copy_sample("darija-algerian.tsv", tmp_path), annotator="lead")
    import_votes(project, SAMPLE_VOTES)
    found = decisions(project)
    # 2 of 3 agree on solution 1 against the gold label (2): not silently "agreed", a queue of its own
    assert found["dz-007"].status is Status.AGAINST_GOLD and found["dz-007"].label != project.item("dz-007").label
    set_project_policy(project, parse_policy("unanimity:3"))
    found = decisions(project)
    disagreements = [i for i, d in found.items() if d.status is Status.DISAGREEMENT]
    assert "dz-007" in disagreements and len(disagreements) == 7
    project.adjudicate("dz-007", 0, "the gold label is right: pure water")
    assert decisions(project)["dz-007"].status is Status.ADJUDICATED and decisions(project)["dz-007"].label == 0


def test_one_decision_for_every_face(tmp_path: Path) -> None:
    """The TUI's Ballots, core's decide (one item) and decisions (all items at once) give the same answer."""
    from piqa_tui.tui.state.ballots import Ballots

    project = Project.open(copy_sample("darija-algerian.tsv", tmp_path), annotator="lead")
    import_votes(project, SAMPLE_VOTES)
    project.adjudicate("dz-007", 0, "the gold label is right")
    for spec in ("majority:2/3", "unanimity:3"):
        set_project_policy(project, parse_policy(spec))
        ballots = Ballots(project)
        every = decisions(project)
        for item in project.items:
            one = decide(project, item.id, project_policy(project))
            assert one == every[item.id] == ballots.decision(item.id)
        assert every["dz-007"].status is Status.ADJUDICATED


def test_whether_an_annotator_voted(tmp_path: Path) -> None:
    project = Project.open(copy_sample("darija-algerian.tsv", tmp_path), annotator="amina")
    import_votes(project, SAMPLE_VOTES)
    first = project.items[0].id
    assert has_voted(project, first) and current_vote(project, first) == current_vote(project, first, "amina")
    assert set(cast_votes(project, first)) == {"amina", "sara", "yacine"}
    project.vote(first, "")  # withdrawn: stored as '', counted as no vote
    assert not has_voted(project, first) and current_vote(project, first) is None
    assert list(cast_votes(project, first)) == ["sara", "yacine"]


def test_agree_json_matches_the_agreement_module(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dataset = copy_sample("darija-algerian.tsv", tmp_path)
    assert main(["votes", "import", str(dataset), str(SAMPLE_VOTES)]) == 0
    capsys.readouterr()
    assert main(["agree", str(dataset), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    rows = [l.split("\t") for l in SAMPLE_VOTES.read_text().splitlines()[1:]]
    expected = fleiss_kappa([(r[0], r[1], int(r[2])) for r in rows], 2).value
    assert data["fleiss_kappa"] == pytest.approx(expected)
    assert set(data["cohen_kappa"]) == {"amina", "sara", "yacine"} and data["percent_unanimous"] == pytest.approx(
        100 * 29 / 36
    )
    assert "category" in data["by"]
    assert data["gold_changes"] == [{"id": "dz-007", "gold": 1, "decided": 0}]
    assert data["status"]["votes-against-gold"] == 1


def test_agree_json_is_one_line_for_a_pipe_and_indented_on_a_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    dataset = copy_sample("darija-algerian.tsv", tmp_path)
    assert main(["votes", "import", str(dataset), str(SAMPLE_VOTES)]) == 0
    capsys.readouterr()
    assert main(["agree", str(dataset), "--json"]) == 0
    piped = capsys.readouterr().out
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)  # what a terminal answers
    assert main(["agree", str(dataset), "--json"]) == 0
    shown = capsys.readouterr().out
    assert piped.count("\n") == 1 and shown.count("\n") > 50 and '\n  "fleiss_kappa": ' in shown
    assert json.loads(piped) == json.loads(shown)


def test_export_with_decided_labels_and_vote_columns(tmp_path: Path) -> None:
    dataset = copy_sample("darija-algerian.tsv", tmp_path)
    main(["votes", "import", str(dataset), str(SAMPLE_VOTES)])
    out = tmp_path / "decided.tsv"
    assert main(["export", str(dataset), "--to", str(out), "--decided", "--vote-columns"]) == 0
    rows = {r.split("\t")[0]: r.split("\t") for r in out.read_text(encoding="utf-8").splitlines()}
    header = rows.pop("id")
    assert header[-3:] == ["votes_1", "votes_2", "status"]  # solutions numbered as people number them
    gold = {i.id: i.label for i in Project.open(dataset).items}
    dz7 = rows["dz-007"]
    assert dz7[header.index("label")] == str(1 - gold["dz-007"]) and dz7[-1] == "votes-against-gold"


def test_an_adjudication_is_undone_and_redone_like_any_action(tmp_path: Path) -> None:
    """A mistaken adjudication must not stick: undo brings back what stood before (the earlier adjudication, or
    the votes' own decision), even after a restart, and the released label follows."""
    path = copy_sample("darija-algerian.tsv", tmp_path)
    project = Project.open(path, annotator="lead")
    import_votes(project, SAMPLE_VOTES)
    set_project_policy(project, parse_policy("unanimity:3"))
    assert decisions(project)["dz-007"].status is Status.DISAGREEMENT
    project.adjudicate("dz-007", 0, "the gold label is right")
    project.adjudicate("dz-007", 1, "misclicked reason")
    assert decisions(project)["dz-007"].label == 1
    assert project.undo() == "dz-007"  # the second one: the first stands again, with its reason
    assert decisions(project)["dz-007"] == Decision(Status.ADJUDICATED, 0)
    assert project.state.adjudications["dz-007"][:2] == ("0", "the gold label is right")
    project.workspace.close()
    reopened = Project.open(path, annotator="lead")
    assert reopened.state.adjudications["dz-007"][0] == "0"
    assert reopened.undo() == "dz-007"  # the first: the votes decide again
    assert "dz-007" not in reopened.state.adjudications
    assert decisions(reopened)["dz-007"].status is Status.DISAGREEMENT
    assert reopened.redo() == "dz-007" and decisions(reopened)["dz-007"] == Decision(Status.ADJUDICATED, 0)
