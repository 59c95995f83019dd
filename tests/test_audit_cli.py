"""``piqa-tui audit`` on a real workspace (a simulated round imported as a votes file, two stored model runs),
and where the labels in doubt show besides: ``agree --json``, the dataset card, the TUI's "doubt" queue."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from piqa_tui.cli.main import main
from piqa_tui.core.quality.audit import audit_labels
from piqa_tui.tui.state.doubt import labels_in_doubt
from piqa_tui.tui.state.listing import Filters, filtered_positions
from piqa_tui.tui.state.session import OpenRequest, Session
from tests.conftest import copy_sample
from tests.simulated_votes import PLANTED, simulate, write_workspace


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, set[str]]:
    found = simulate(n_items=360, seed=2)
    return write_workspace(tmp_path_factory.mktemp("round"), found), found.wrong_gold


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    assert main([*args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_audit_json_names_the_planted_annotators_and_the_wrong_gold(
    planted: tuple[Path, set[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    data, wrong_gold = planted
    found = _json(capsys, "audit", str(data), "--top", "500")
    rows = {row["annotator"]: row for row in found["annotators"]["rows"]}
    assert {name for name, row in rows.items() if row["flags"]} == set(PLANTED)
    assert rows["shifter"]["accuracy"] < 0.1 and rows["spammer"]["competence"] < 0.3
    assert rows["ann00"]["median_seconds"] > 0 and rows["ann00"]["votes_per_hour"] > 0
    doubt = found["labels_in_doubt"]
    assert len(doubt["models"]) == 2 and doubt["count"] == len(doubt["items"]) and doubt["scored"] == 360
    listed = {item["id"] for item in doubt["items"]}
    assert wrong_gold <= listed  # every planted wrong gold label is in doubt
    scores = [item["score"] for item in doubt["items"]]
    assert scores == sorted(scores) and all(s < doubt["threshold"] for s in scores)
    first = doubt["items"][0]
    assert first["reason"] and 0.5 <= first["dawid_skene"]["sure"] <= 1


def test_audit_text_has_every_section_and_twenty_labels_by_default(
    planted: tuple[Path, set[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["audit", str(planted[0])]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "annotators"
    heading = next(n for n, line in enumerate(lines) if line.startswith("labels in doubt:"))
    artifacts = next(n for n, line in enumerate(lines) if line.startswith("Annotation artifacts over "))
    assert artifacts - heading - 2 == 20  # the twenty labels, then a blank line before the artifacts
    assert any(line.startswith("  shifter: systematically picks another solution") for line in lines)
    assert ", but " in lines[heading + 1]


def test_agree_json_and_the_card_count_the_labels_in_doubt(
    planted: tuple[Path, set[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    data = planted[0]
    doubt = _json(capsys, "agree", str(data), "--top", "all")["doubt"]
    audited = _json(capsys, "audit", str(data), "--top", "0")["labels_in_doubt"]
    assert doubt["count"] == audited["count"] > 0 and len(doubt["items"]) == doubt["listed"] == doubt["count"]
    lowest = _json(capsys, "agree", str(data))["doubt"]  # by default the count and the lowest twenty
    assert lowest["count"] == doubt["count"] and lowest["items"] == doubt["items"][:20]
    assert lowest["listed"] == min(20, doubt["count"])
    counted = _json(capsys, "agree", str(data), "--top", "0")["doubt"]
    assert counted["items"] == [] and counted["listed"] == 0 and counted["count"] == doubt["count"]
    with pytest.raises(SystemExit) as refused:
        main(["agree", str(data), "--json", "--top", "some"])
    assert refused.value.code == 2 and "not a whole number or 'all'" in capsys.readouterr().err
    assert main(["card", str(data)]) == 0
    card = capsys.readouterr().out
    assert f"{doubt['count']} of 360 labels checked against the votes are in doubt" in card


def test_the_doubt_queue_lists_them_lowest_first_and_the_status_gives_the_reason(
    planted: tuple[Path, set[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    data = planted[0]
    items = _json(capsys, "audit", str(data), "--top", "500")["labels_in_doubt"]["items"]
    session = Session.open(OpenRequest(data, annotator="lead"), reviewer=True)
    rows = filtered_positions(session, Filters(queue="doubt"))
    assert [session.project.items[p].id for p in rows] == [item["id"] for item in items]
    status = session.ballots.status_text(items[0]["id"])
    assert status.endswith(f"label in doubt: {items[0]['reason']}")
    session.project.vote(items[0]["id"], "0")  # the log moved: the status no longer shows a stale reason
    assert "label in doubt" not in session.ballots.status_text(items[0]["id"])
    policy = session.ballots.policy
    for change in ("a vote", "an edit"):  # the queue follows both; an edit also unscored the item for the models
        if change == "an edit":
            session.project.edit(items[1]["id"], {"prompt": "How to do it, edited?"})
        fresh = audit_labels(session.project, policy, annotators=False).by_id
        assert {k: d.score for k, d in labels_in_doubt(session.project, policy).items()} == {
            k: d.score for k, d in fresh.items()
        }


def test_without_shared_items_the_audit_says_why(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = copy_sample("bengali.tsv", tmp_path)
    found = _json(capsys, "audit", str(data))
    assert found["annotators"]["rows"] == [] and "two or more votes" in found["labels_in_doubt"]["note"]
    assert main(["audit", str(data)]) == 0
    assert "two or more votes" in capsys.readouterr().out


def test_a_negative_top_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = copy_sample("bengali.tsv", tmp_path)
    assert main(["audit", str(data), "--top", "-1"]) != 0
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "--top" in err


def test_votes_imported_without_times_are_untimed_not_millions_an_hour(tmp_path: Path) -> None:
    """A votes file without a time column is stamped with the import time a microsecond apart: the audit (run as
    a command, on the workspace the CLI imported into) gives those annotators no rate and says "untimed", while an
    annotator whose votes came with times keeps a rate from them."""
    import subprocess
    import sys

    data = write_workspace(tmp_path, simulate(n_items=60, seed=3, planted=False), timed=False)
    timed = tmp_path / "timed.tsv"
    timed.write_text(
        "item_id\tannotator\tchoice\ttime\n"
        + "".join(f"s{n:05d}\tlate\t0\t2026-11-20T09:{n:02d}:30Z\n" for n in range(10)),
        encoding="utf-8",
    )

    def piqa(*args: str) -> str:
        done = subprocess.run([sys.executable, "-m", "piqa_tui.cli.main", *args], capture_output=True, text=True)
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
        return done.stdout

    piqa("votes", "import", str(data), str(timed))
    rows = {row["annotator"]: row for row in json.loads(piqa("audit", str(data), "--json"))["annotators"]["rows"]}
    untimed = [name for name in rows if name != "late"]
    assert untimed and all(rows[name]["untimed"] and rows[name]["votes_per_hour"] is None for name in untimed)
    assert all(rows[name]["median_seconds"] is None for name in untimed)
    assert rows["late"]["untimed"] is False and rows["late"]["votes_per_hour"] == 60.0  # a vote a minute
    assert rows["late"]["median_seconds"] == 60.0
    lines = piqa("audit", str(data)).splitlines()
    table = {line.split()[0]: line for line in lines[2 : 2 + len(rows)]}
    assert all(" untimed " in table[name] for name in untimed) and " untimed " not in table["late"]
    assert " 60 " in table["late"]
    assert any(line.startswith("  untimed: votes imported without times") for line in lines)
