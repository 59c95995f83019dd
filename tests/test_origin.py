"""Where items began, kept through edits, undo, merges, saves and exports; corrections reported per origin."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

from piqa_tui.core.round.origin import Origin, correction_by_origin, origin_of
from piqa_tui.core.round.stages import Draft, add_items, correction_rates, draft, read_drafts, stage_line
from piqa_tui.core.sync.merge import merge_workspace
from piqa_tui.core.workspace.event_rules import check_new_item
from piqa_tui.core.workspace.project import Project
from piqa_tui.render.card import dataset_card

from .conftest import copy_sample

TAMIL = "tamil.tsv"


def machine_draft(goal: str, solutions: list[str], kind: str = "drafted", key: str = "0") -> Draft:
    made = draft(goal, solutions, None)
    source = (("id", "en-1"), ("prompt", "Boil rice"), ("solution0", "use a pot"), ("solution1", "use a cup"))
    origin = Origin(kind, "SmolLM2-135M", "draft", "draft-1234", key, source if kind == "translated" else ())
    return Draft(made.prompt, made.solutions, made.label, made.meta, origin)


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "piqa_tui.cli.main", *args], capture_output=True, text=True)
    assert "Traceback" not in done.stderr and done.returncode == 0, done.stderr + done.stdout
    return done


def test_an_items_origin_survives_edits_undo_and_reopening(tmp_path: Path) -> None:
    path = copy_sample(TAMIL, tmp_path)
    project = Project.open(path, annotator="writer")
    written, drafted = add_items(project, [draft("typed", ["a b", "a c"], 0), machine_draft("மாவு", ["x y", "x z"])])
    assert origin_of(project, project.items[0].id) == Origin("file")
    assert origin_of(project, written).kind == "written"
    project.edit(drafted, {"solution1": "x w"})
    project.undo()
    project.edit(drafted, {"prompt": "மாவு நன்றாக"})
    again = Project.open(path, annotator="lead")
    found = origin_of(again, drafted)
    assert (found.kind, found.model, found.run, found.describe()) == (
        "drafted",
        "SmolLM2-135M",
        "draft-1234",
        "drafted by SmolLM2-135M",
    )
    assert again.item(drafted).prompt == "மாவு நன்றாக"
    assert stage_line(again, drafted).startswith("stage draft, drafted by SmolLM2-135M, corrected ")
    assert stage_line(again, written) == "stage draft"


def test_imported_items_say_so(tmp_path: Path) -> None:
    path = copy_sample(TAMIL, tmp_path)
    drafts = tmp_path / "drafts.tsv"
    drafts.write_text("goal\tsol1\tsol2\tlabel\nOpen a jar\ttwist\thit\t0\n", encoding="utf-8")
    project = Project.open(path, annotator="writer")
    (item_id,) = add_items(project, read_drafts(project, drafts).drafts)
    assert origin_of(project, item_id).kind == "imported"


def test_origin_travels_through_a_merge(tmp_path: Path) -> None:
    start = tmp_path / "start"
    start.mkdir()
    path = copy_sample(TAMIL, start)
    Project.open(path, annotator="lead").workspace.close()  # type: ignore[union-attr]
    shutil.copytree(start, tmp_path / "other")
    theirs = Project.open(tmp_path / "other" / TAMIL, annotator="bala")
    (item_id,) = add_items(theirs, [machine_draft("goal", ["one two", "one three"], "translated")])
    theirs.workspace.close()  # type: ignore[union-attr]
    ours = Project.open(path, annotator="lead")
    merge_workspace(ours.workspace, tmp_path / "other" / f"{TAMIL}.piqa.sqlite")  # type: ignore[arg-type]
    ours.refresh()
    found = origin_of(ours, item_id)
    assert found.kind == "translated" and dict(found.source)["prompt"] == "Boil rice"


def test_correction_per_origin_and_the_card_and_the_export_columns(tmp_path: Path) -> None:
    path = copy_sample(TAMIL, tmp_path)
    project = Project.open(path, annotator="writer")
    ids = add_items(
        project,
        [
            machine_draft("goal one", ["put it in", "put it on"], "translated", "0"),
            machine_draft("goal two", ["left", "right"], "drafted", "1"),
            draft("goal three", ["up", "down"], 0),
        ],
    )
    project.edit(ids[0], {"prompt": "goal number one"})
    rates = correction_rates(project)
    rows = {row.origin: row for row in correction_by_origin(project, rates)}
    assert set(rows) == {"translated by SmolLM2-135M", "drafted by SmolLM2-135M", "written"}
    assert rows["translated by SmolLM2-135M"].corrected == 1 and rows["drafted by SmolLM2-135M"].corrected == 0
    card = dataset_card(project, items=project.items)
    assert "2 of the 3 began as a model's drafts or translations" in card
    assert "| translated by SmolLM2-135M | 1 | 1/1 |" in card
    project.workspace.close()  # type: ignore[union-attr]
    out = tmp_path / "release.tsv"
    cli("export", str(path), "--to", str(out), "--origin-columns")
    rows_out = {r["id"]: r for r in csv.DictReader(out.open(encoding="utf-8"), delimiter="\t")}
    assert rows_out[ids[0]]["origin"] == "translated" and rows_out[ids[0]]["source_goal"] == "Boil rice"
    assert rows_out[ids[0]]["source_sol2"] == "use a cup" and rows_out[ids[1]]["origin_model"] == "SmolLM2-135M"
    assert rows_out["ta-001"]["origin"] == "file" and rows_out[ids[2]]["origin"] == "written"
    shown = json.loads(cli("stage", str(path), "--json").stdout)["correction_by_origin"]
    assert {row["origin"] for row in shown} == set(rows)


def test_an_origin_of_an_unknown_kind_is_refused_by_the_log_rules() -> None:
    item = {"prompt": "p", "solutions": ["a", "b"], "label": None, "meta": {}}
    check_new_item(json.dumps(item | {"origin": {"kind": "drafted", "model": "m"}}))
    for bad in ({"kind": "gold"}, {"kind": "drafted", "model": 3}, "drafted"):
        try:
            check_new_item(json.dumps(item | {"origin": bad}))
        except ValueError as exc:
            assert "origin" in str(exc)
        else:
            raise AssertionError(f"{bad} was accepted")
