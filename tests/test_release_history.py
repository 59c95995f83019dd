"""The history of releases: every ``export --release`` recorded in the workspace (travelling with a merge), made
again byte for byte after later work (``release rebuild``), compared (``release diff``) with the votes behind each
label change, and the new release's card carrying a changelog. Real workspaces, the real CLI, the real files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from piqa_tui.core.release.manifest import file_sha256
from piqa_tui.core.round.stages import Draft, add_items, set_stage
from piqa_tui.core.workspace.event_rules import check_event
from piqa_tui.core.workspace.project import Project
from tests.conftest import SAMPLES, copy_sample
from tests.test_release_folder import snapshot, with_splits
from tests.test_rounds import cli
from tests.test_sync import git_identity, sync_json, team

__all__ = ["git_identity"]  # the fixture test_sync's clones need: who commits


def hashes(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): file_sha256(p) for p in folder.rglob("*") if p.is_file()}


def release(dataset: Path, folder: Path, *options: object) -> None:
    code, _, err = cli("export", dataset, "--release", folder, "--annotator", "lead", *options)
    assert code == 0, err


def one_line(*args: object) -> str:
    code, _, err = cli(*args)
    assert code != 0 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    return err


def test_an_old_release_is_rebuilt_byte_for_byte_after_later_work(tmp_path: Path) -> None:
    dataset = with_splits(tmp_path)
    assert cli("votes", "import", dataset, SAMPLES / "votes-darija-algerian.tsv")[0] == 0
    v1 = tmp_path / "v1"
    release(dataset, v1, "--global-piqa-tsv", "--vote-columns", "--name", "Darija", "--license", "cc-by-4.0")
    project = Project.open(dataset, annotator="omar")
    project.vote("dz-003", "1")
    project.edit("dz-004", {"prompt": "a corrected prompt"})
    (new,) = add_items(project, [Draft("Keep bread soft", ("in a cloth", "in the sun"), 0, (("split", "test"),))])
    set_stage(project, [new], "validation")
    project.workspace.close()  # type: ignore[union-attr]
    v2 = tmp_path / "v2"
    release(dataset, v2, "--drop-columns", "source", "--make-default", "--pseudonyms", "--readable-ids")
    project = Project.open(dataset, annotator="omar")
    project.vote("dz-005", "0")
    project.set_flag("dz-006", "typo")
    (later,) = add_items(project, [Draft("Dry herbs", ("in the shade", "in the oven"), 0, (("split", "test"),))])
    set_stage(project, [later], "validation")
    project.workspace.close()  # type: ignore[union-attr]
    release(dataset, tmp_path / "v3", "--readable-ids")  # renames the later item, and records v3
    code, out, _ = cli("release", "list", dataset, "--json")
    listed = json.loads(out)
    assert [r["name"] for r in listed] == ["v1", "v2", "v3"] and listed[0]["by"] == "lead"
    assert listed[0]["files"] == hashes(v1) and listed[1]["options"]["drop_columns"] == "source"
    for name, original in (("v1", v1), ("v2", v2)):
        code, out, err = cli("release", "rebuild", dataset, name, "--to", tmp_path / f"again-{name}")
        assert code == 0, err
        assert "byte for byte" in out
        assert hashes(tmp_path / f"again-{name}") == hashes(original)  # every file, the manifest's time included
    manifest = json.loads((tmp_path / "again-v1" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["made"]["time"] == listed[0]["time"] and manifest["name"] == "v1"
    assert "a corrected prompt" not in (tmp_path / "again-v1" / "data" / "test.tsv").read_text(encoding="utf-8")
    made_by = json.loads((v2 / "manifest.json").read_text(encoding="utf-8"))["made"]["by"]
    test_rows = (v2 / "data" / "test.tsv").read_text(encoding="utf-8")
    assert made_by.startswith("withheld") and "Keep bread soft" in test_rows and "new-" not in test_rows
    card = (v2 / "README.md").read_text(encoding="utf-8")
    assert "Changes since the previous release, `v1`" in card and "release diff v1 v2" in card


def test_release_diff_names_every_kind_of_change(tmp_path: Path) -> None:
    dataset = copy_sample("darija-algerian.tsv", tmp_path)
    v1 = tmp_path / "v1"
    release(dataset, v1, "--drop-flagged", "--license", "cc-by-4.0")
    project = Project.open(dataset, annotator="lead")
    (new,) = add_items(project, [Draft("Keep bread soft", ("in a cloth", "in the sun"), 0)])
    set_stage(project, [new], "validation")
    project.set_flag("dz-002", "remove")
    label = project.item("dz-003").label
    flipped = "0" if label == 1 else "1"
    for who in ("amina", "karim", "sofia"):
        Project.open(dataset, annotator=who).vote("dz-003", flipped)
    project.adjudicate("dz-003", int(flipped), "three votes agree")
    project.edit("dz-004", {"solution1": "a corrected solution"})
    project.edit("dz-005", {"meta:category": "kitchen"})
    project.workspace.close()  # type: ignore[union-attr]
    v2 = tmp_path / "v2"
    release(dataset, v2, "--drop-flagged", "--license", "mit")
    code, out, err = cli("release", "diff", "v1", "v2", "--dataset", dataset, "--json")
    assert code == 0, err
    found = json.loads(out)
    assert found["added"] == [new] and found["removed"] == ["dz-002"]
    (changed,) = found["labels"]
    assert changed["item"] == "dz-003" and changed["new"] == flipped
    assert [line.split(":")[0] for line in changed["why"]] == [
        "vote by amina",
        "vote by karim",
        "vote by sofia",
        "adjudicate by lead",
    ]
    assert [(c["item"], c["field"], c["new"]) for c in found["texts"]] == [
        ("dz-004", "solution1", "a corrected solution")
    ]
    assert [(c["item"], c["field"], c["new"]) for c in found["metadata"]] == [("dz-005", "category", "kitchen")]
    assert ("card license", "cc-by-4.0", "mit") in [(c["field"], c["old"], c["new"]) for c in found["release"]]
    code, out, err = cli("release", "diff", v1, v2, "--json")  # two folders, no workspace: the same changes
    folders = json.loads(out)
    assert code == 0 and folders["labels"][0]["item"] == "dz-003" and "why" not in folders["labels"][0]
    assert {k: folders[k] for k in ("added", "removed", "texts", "metadata")} == {
        k: found[k] for k in ("added", "removed", "texts", "metadata")
    }
    code, out, _ = cli("release", "diff", v1, v2, "--dataset", dataset)
    assert "1 item added, 1 item removed, 1 label changed" in out and "vote by karim" in out
    card = (v2 / "README.md").read_text(encoding="utf-8")
    assert "1 item added, 1 item removed, 1 label changed, 1 item's text corrected, 1 item's metadata changed" in card


def test_releases_travel_with_a_merge_and_rebuild_on_the_other_copy(tmp_path: Path) -> None:
    lead, laptop = tmp_path / "lead", tmp_path / "laptop"
    lead.mkdir()
    dataset = copy_sample("darija-algerian.tsv", lead)
    assert cli("votes", "import", dataset, SAMPLES / "votes-darija-algerian.tsv")[0] == 0
    shutil.copytree(lead, laptop)
    release(dataset, tmp_path / "v1", "--vote-columns")
    other = laptop / dataset.name
    code, _, err = cli("workspace", "merge", other, Path(f"{dataset}.piqa.sqlite"))
    assert code == 0, err
    code, out, _ = cli("release", "list", other)
    assert out.startswith("v1  made ") and "by lead" in out
    code, out, err = cli("release", "rebuild", other, "v1", "--to", tmp_path / "from-laptop")
    assert code == 0, err
    assert hashes(tmp_path / "from-laptop") == hashes(tmp_path / "v1")


def test_the_gate_refuses_a_release_event_without_its_record() -> None:
    time = "2026-11-20T09:14:03.000000Z"
    good = {
        "options": {},
        "dataset": {"file": "d.tsv"},
        "files": {"README.md": "0" * 64},
        "log": {"events": 3, "last_clock": 3, "events_sha256": "0" * 64},
        "defaults": None,
    }
    check_event(("release", time, "lead", None, "v1", None, json.dumps(good), None))
    for bad, why in (
        ({**good, "files": {"README.md": "not a hash"}}, "SHA-256"),
        ({**good, "log": {"events": 3}}, "log state"),
        ({**good, "options": None}, "options"),
    ):
        with pytest.raises(ValueError, match=why):
            check_event(("release", time, "lead", None, "v1", None, json.dumps(bad), None))
    with pytest.raises(ValueError, match="names an item"):
        check_event(("release", time, "lead", "dz-001", "v1", None, json.dumps(good), None))


def test_bad_input_is_one_line_and_overwrites_nothing(tmp_path: Path) -> None:
    dataset = copy_sample("darija-algerian.tsv", tmp_path)
    release(dataset, tmp_path / "v1")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert "already recorded" in one_line("export", dataset, "--release", elsewhere / "v1")
    assert not (elsewhere / "v1").exists()
    tamil = copy_sample("tamil.tsv", tmp_path)
    release(tamil, tmp_path / "t1")
    assert "two releases of one dataset" in one_line("release", "diff", tmp_path / "v1", tmp_path / "t1")
    assert "no release named 'v9'" in one_line("release", "rebuild", dataset, "v9", "--to", tmp_path / "x")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "note.txt").write_text("mine\n", encoding="utf-8")
    assert "is not a piqa-tui release" in one_line("release", "rebuild", dataset, "v1", "--to", tmp_path / "full")
    assert snapshot(tmp_path / "full") == {"note.txt": b"mine\n"}
    assert "is no release folder" in one_line("release", "diff", "v1", tmp_path / "v1")
    dataset.write_text(dataset.read_text(encoding="utf-8").replace("dz-001\t", "dz-001b\t"), encoding="utf-8")
    assert "no longer the file" in one_line("release", "rebuild", dataset, "v1", "--to", tmp_path / "y")
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()


@pytest.mark.usefixtures("git_identity")
def test_a_release_travels_through_sync_and_rebuilds_on_a_clone(tmp_path: Path) -> None:
    _, machines = team(tmp_path)
    release(machines["a"], tmp_path / "r1", "--vote-columns")
    assert sync_json(machines["a"])["pushed"]
    assert sync_json(machines["b"])["received"].get("release") == 1
    code, out, _ = cli("release", "list", machines["b"])
    assert out.startswith("r1  made ") and "by lead" in out
    code, out, err = cli("release", "rebuild", machines["b"], "r1", "--to", tmp_path / "on-b")
    assert code == 0, out + err
    assert hashes(tmp_path / "on-b") == hashes(tmp_path / "r1")


def test_a_release_whose_log_a_later_merge_changed_is_refused_in_one_line(tmp_path: Path) -> None:
    lead, laptop = tmp_path / "lead", tmp_path / "laptop"
    lead.mkdir()
    dataset = copy_sample("darija-algerian.tsv", lead)
    Project.open(dataset, annotator="lead").vote("dz-001", "0")
    shutil.copytree(lead, laptop)  # the laptop's next clock is low: the lead records many votes before releasing
    assert cli("votes", "import", dataset, SAMPLES / "votes-darija-algerian.tsv")[0] == 0
    release(dataset, tmp_path / "v1")
    Project.open(laptop / dataset.name, annotator="omar").vote("dz-002", "1")  # before the release's last clock
    code, _, err = cli("workspace", "merge", dataset, laptop / f"{dataset.name}.piqa.sqlite")
    assert code == 0, err
    assert "came in by a merge" in one_line("release", "rebuild", dataset, "v1", "--to", tmp_path / "again")
    assert not (tmp_path / "again").exists()
