"""``export --readable-ids``: items written in the workspace (``new-<hex>``) are released under the dataset's
own id scheme, the mapping written next to the release and kept in the workspace, so the next release gives
each item the same id and never gives a number twice."""

from __future__ import annotations

import json
from pathlib import Path

from piqa_tui.core.round.stages import Draft, add_items, set_stage
from piqa_tui.core.workspace.project import Project
from tests.conftest import copy_sample
from tests.test_rounds import cli


def written_ids(path: Path) -> list[str]:
    return [line.split("\t")[0] for line in path.read_text(encoding="utf-8").splitlines()[1:]]


def release(dataset: Path, out: Path) -> dict[str, object]:
    code, text, err = cli("export", dataset, "--to", out, "--readable-ids", "--json", "--force")
    assert code == 0, err
    return json.loads(text)


def test_new_items_take_the_datasets_scheme_and_keep_it_in_every_release(tmp_path: Path) -> None:
    dataset = copy_sample("tamil.tsv", tmp_path)
    project = Project.open(dataset, annotator="meena")
    last = project.items[-1].id  # ta-NNN
    first, second = add_items(
        project, [Draft("Boil rice", ("a pot", "a sieve"), 0), Draft("Dry chilli", ("sun", "rain"), 0)]
    )
    set_stage(project, [first, second], "validation")
    project.workspace.close()
    out = tmp_path / "release.tsv"
    found = release(dataset, out)
    number = int(last.split("-")[1])
    assert found["release_ids"] == {first: f"ta-{number + 1:03d}", second: f"ta-{number + 2:03d}"}
    assert written_ids(out)[-2:] == [f"ta-{number + 1:03d}", f"ta-{number + 2:03d}"]
    assert all(not i.startswith("new-") for i in written_ids(out))
    mapping = (tmp_path / "release-ids.tsv").read_text(encoding="utf-8").splitlines()
    assert mapping == ["id\trelease_id", f"{first}\tta-{number + 1:03d}", f"{second}\tta-{number + 2:03d}"]
    project = Project.open(dataset, annotator="meena")  # the first new item is withdrawn, a third is written
    (third,) = add_items(project, [Draft("Grind spices", ("a stone", "a spoon"), 0)])
    set_stage(project, [first], "draft")
    project.workspace.close()
    found = release(dataset, out)
    renamed = found["release_ids"]
    assert renamed[second] == f"ta-{number + 2:03d}"  # the same as before, whatever came after
    assert renamed[third] == f"ta-{number + 3:03d}"  # a number given once is not given again
    assert renamed[first] == f"ta-{number + 1:03d}"


def test_an_existing_mapping_file_needs_force(tmp_path: Path) -> None:
    dataset = copy_sample("tamil.tsv", tmp_path)
    (tmp_path / "release-ids.tsv").write_text("mine\n", encoding="utf-8")
    code, _, err = cli("export", dataset, "--to", tmp_path / "release.tsv", "--readable-ids")
    assert code != 0 and "release-ids.tsv" in err and len(err.strip().splitlines()) == 1
    assert (tmp_path / "release-ids.tsv").read_text(encoding="utf-8") == "mine\n"
