"""Metadata set from the command line on many items at once (``piqa-tui edit``): the values land as one
undoable action, an export carries them, they travel with a merge and conflict with another copy's edit of
the same item's column, and a column the file does not have is refused in one line."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

from piqa_tui.core.round.metadata import column_values
from piqa_tui.core.workspace.project import Project
from tests.test_merge import DATA, WS, cli

from .conftest import copy_sample


def test_the_core_records_a_metadata_edit_that_undoes(tmp_path: Path) -> None:
    project = Project.open(copy_sample(DATA, tmp_path), annotator="amina")
    before = project.item("dz-001").meta["category"]
    project.edit("dz-001", {"meta:category": "food"})
    assert project.item("dz-001").meta["category"] == "food"
    assert project.undo() == "dz-001"
    assert project.item("dz-001").meta["category"] == before


def test_set_many_items_export_and_undo(tmp_path: Path) -> None:
    path = copy_sample(DATA, tmp_path)
    ids = [item.id for item in Project.open(path).items if item.meta["category"] == "cooking"]
    assert len(ids) > 1
    dry = cli("edit", str(path), "--where", "category=cooking", "--set", "category=food", "--dry-run")
    assert f"would change {len(ids)} of {len(ids)} items to category=food: {ids[0]}" in dry.stdout
    assert Project.open(path).item(ids[0]).meta["category"] == "cooking"  # a dry run records nothing

    done = cli(
        "edit",
        str(path),
        "--where",
        "category=cooking",
        "--set",
        "category=food",
        "--set",
        "source=typed",
        "--annotator",
        "amina",
    )
    assert f"changed {len(ids)} of {len(ids)} items to category=food, source=typed: {', '.join(ids)}" in done.stdout
    project = Project.open(path, annotator="amina")
    assert all(project.item(i).meta["category"] == "food" for i in ids)
    offered = column_values(project, "category")
    assert "food" in offered and "cooking" not in offered and len(offered) == len(set(offered))

    out = tmp_path / "release.tsv"
    cli("export", str(path), "--to", str(out), "--force")
    with out.open(encoding="utf-8", newline="") as handle:
        rows = {row["id"]: row for row in csv.DictReader(handle, delimiter="\t")}
    assert all(rows[i]["category"] == "food" and rows[i]["source"] == "typed" for i in ids)

    again = json.loads(cli("edit", str(path), ids[0], "--set", "category=food", "--json").stdout)
    assert again == {"set": {"category": "food"}, "selected": 1, "changed": 0, "items": [], "dry_run": False}

    # One action for all the items: one undo takes the whole command back.
    assert project.undo() is not None
    assert all(project.item(i).meta["category"] == "cooking" and project.item(i).meta["source"] != "typed" for i in ids)


def test_typed_values_are_stored_nfc_and_a_long_one_is_cut_on_the_line(tmp_path: Path) -> None:
    path = copy_sample(DATA, tmp_path)
    cli("edit", str(path), "dz-002", "--set", "source=cafe\u0301")
    assert Project.open(path).item("dz-002").meta["source"] == "caf\u00e9"
    said = cli("edit", str(path), "dz-002", "--set", "source=" + "x" * 5000).stdout
    assert "4,940 more characters not shown" in said and len(said) < 400
    assert Project.open(path).item("dz-002").meta["source"] == "x" * 5000


def test_unknown_columns_and_missing_selection_are_refused_in_one_line(tmp_path: Path) -> None:
    path = copy_sample(DATA, tmp_path)
    refused = cli("edit", str(path), "dz-001", "--set", "topic=food", code=2)
    assert refused.stderr.count("\n") == 1 and "--set topic=food" in refused.stderr and "category" in refused.stderr
    assert cli("edit", str(path), "--where", "topic=x", "--set", "category=a", code=2).stderr.count("\n") == 1
    assert "name the items" in cli("edit", str(path), "--set", "category=a", code=2).stderr
    assert cli("edit", str(path), "nope", "--set", "category=a", code=2).stderr.count("\n") == 1
    tab = cli("edit", str(path), "dz-001", "--set", "category=a\tb", code=2).stderr
    assert tab.count("\n") == 1 and "line breaks" in tab
    assert not (tmp_path / WS).exists()  # nothing refused made a workspace


def test_the_same_column_edited_on_two_copies_is_a_conflict_after_a_merge(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    copy_sample(DATA, a)
    shutil.copytree(a, b)
    cli("edit", str(a / DATA), "dz-003", "--set", "category=market", "--annotator", "amina")
    cli("edit", str(b / DATA), "dz-003", "dz-004", "--set", "category=street", "--annotator", "bilal")
    cli("workspace", "merge", str(a / DATA), str(b / WS))
    listed = json.loads(cli("workspace", "conflicts", str(a / DATA), "--json", code=1).stdout)
    assert [(c["item_id"], c["field"]) for c in listed] == [("dz-003", "meta:category")]
    assert {listed[0]["current"], listed[0]["other"]} == {"market", "street"}
    assert Project.open(a / DATA).item("dz-004").meta["category"] == "street"  # the edit nobody contested travels
