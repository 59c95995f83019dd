"""A dataset with three option columns holds three solutions per item: a fourth is refused on every path that
adds items (the new-item check, ``stage --import``), and a file write refuses rather than drop one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from piqa_tui.core.errors import ExportError
from piqa_tui.core.round.stages import NEW_ITEM_FIELD, StageError, add_items, check_draft, draft
from piqa_tui.core.workspace.log import Change, Part
from piqa_tui.core.workspace.project import NEW_ITEM_KIND, Project
from tests.conftest import copy_sample
from tests.test_rounds import cli

FOUR = ["يوم الجمعة.", "يوم الاثنين.", "يوم الأربعاء.", "يوم الأحد."]


@pytest.fixture
def culture(tmp_path: Path) -> Path:
    return copy_sample("msa-culture.tsv", tmp_path)


def four_solution_item(project: Project) -> str:
    """An item with four solutions recorded straight into the log, as a workspace written before the check
    (or another copy's merge) may hold one; returns its id."""
    fields = {"prompt": "متى يُطبخ الكسكس؟", "solutions": FOUR, "label": 3, "meta": {}}
    text = json.dumps(fields, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    project.record([Part(NEW_ITEM_KIND, (Change("new-four", NEW_ITEM_FIELD, None, text),))])
    return "new-four"


def test_a_fourth_solution_is_refused_where_the_file_has_three_option_columns(culture: Path) -> None:
    project = Project.open(culture, annotator="amina")
    before = project.workspace.last_seq()
    with pytest.raises(StageError, match=r"3 solution columns \(option_a, option_b, option_c\).*not 4"):
        check_draft(project, draft("متى يُطبخ الكسكس؟", FOUR, 0))
    with pytest.raises(StageError, match="leave solution 4 empty"):
        add_items(project, [draft("متى يُطبخ الكسكس؟", FOUR[:3], 0), draft("متى؟", FOUR, 0)])
    assert project.workspace.last_seq() == before  # nothing of the two recorded
    assert add_items(project, [draft("متى يُطبخ الكسكس؟", [*FOUR[:3], ""], 0)])  # an empty fourth is no solution


def test_stage_import_refuses_a_fourth_option_column_naming_the_file_and_row(culture: Path, tmp_path: Path) -> None:
    drafts = tmp_path / "drafts.tsv"
    drafts.write_text(
        "id\tpremise\toption_a\toption_b\toption_c\toption_d\tanswer\n"
        "d1\tمتى؟\tأ\tب\tج\t\tA\n"  # an empty fourth cell: three solutions, it fits
        f"d2\tمتى يُطبخ الكسكس؟\t{FOUR[0]}\t{FOUR[1]}\t{FOUR[2]}\t{FOUR[3]}\tD\n",
        encoding="utf-8",
    )
    code, out, err = cli("stage", culture, "--import", drafts, "--annotator", "amina")
    assert code != 0 and "Traceback" not in err
    line = err.strip().splitlines()[-1]
    assert "drafts.tsv: row 2 (d2) has 4 solutions" in line and "option_d" in line and "import again" in line
    assert len(Project.open(culture, create=False).items) == 30  # nothing imported


def test_a_write_refuses_to_drop_a_solution_no_column_holds(culture: Path, tmp_path: Path) -> None:
    project = Project.open(culture, annotator="lead")
    item_id = four_solution_item(project)
    with pytest.raises(ExportError, match=rf"drop a solution of {item_id} \(4 solutions\)"):
        project.export(tmp_path / "out.tsv")
    code, out, err = cli("export", culture, "--decided", "--to", tmp_path / "release.tsv", "--annotator", "lead")
    assert code != 0 and "Traceback" not in err and f"{item_id} (4 solutions)" in err
    assert "0 dropped" not in out and not (tmp_path / "release.tsv").exists()
    project.set_flag(item_id, "remove")  # the way out the refusal names
    code, out, err = cli(
        "export", culture, "--decided", "--drop-flagged", "--to", tmp_path / "release.tsv", "--annotator", "lead"
    )
    assert code == 0, err
    assert "1 dropped" in out and "يوم الأحد" not in (tmp_path / "release.tsv").read_text(encoding="utf-8")
