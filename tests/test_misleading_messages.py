"""Inputs whose first error message pointed the wrong way now get one line that names the real problem."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from piqa_tui.cli.main import main
from piqa_tui.core.dataset.reading import load_dataset
from piqa_tui.core.votes.files import canonical_time
from piqa_tui.core.workspace.log import write_refusal
from piqa_tui.core.workspace.project import Project

from .conftest import copy_sample


def test_a_time_whose_utc_value_leaves_the_year_range_is_one_bad_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset = copy_sample("darija-algerian.tsv", tmp_path)
    votes = tmp_path / "times.tsv"
    votes.write_text(
        "item_id\tannotator\tchoice\ttime\n"
        "dz-001\tamina\t1\t2999-12-31T23:59:59-05:00\n"
        "dz-002\tamina\t0\t1900-01-01T00:30:00+01:00\n"
        "dz-003\tamina\t1\t2999-12-31T23:59:59+05:00\n",
        encoding="utf-8",
    )
    code = main(["votes", "import", str(dataset), str(votes)])
    err = capsys.readouterr().err
    assert code == 1
    assert "line 2: time '2999-12-31T23:59:59-05:00' is 3000 in UTC, out of range (1900-2999)" in err
    assert "line 3: time '1900-01-01T00:30:00+01:00' is 1899 in UTC" in err
    # in range in UTC, but far in the future: it would outrank every later vote (the log's rule, event_rules)
    assert "line 4: time '2999-12-31T23:59:59+05:00' is in the future (more than a day ahead" in err
    assert Project.open(dataset).state.votes == {}
    with pytest.raises(ValueError, match="out of range"):
        canonical_time("2999-12-31T23:59:59-00:01")


@pytest.mark.parametrize("encoding", ["utf-32", "utf-32-le", "utf-32-be"])
def test_a_utf32_file_is_named_as_utf32_not_ragged_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], encoding: str
) -> None:
    path = tmp_path / "wide.tsv"
    path.write_bytes("id\tprompt\tsolution0\tsolution1\tlabel\na\tp\tx\ty\t0\n".encode(encoding))
    code = main(["validate", str(path)])
    lines = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(lines) == 1 and lines[0].endswith(f"{path}: UTF-32 is not supported; save it as UTF-8")


def test_utf16_files_are_still_read(tmp_path: Path) -> None:
    path = tmp_path / "narrow.tsv"
    path.write_bytes("id\tprompt\tsolution0\tsolution1\tlabel\na\tp\tx\ty\t0\n".encode("utf-16"))
    assert [item.prompt for item in load_dataset(path).items] == ["p"]


def _immutable(path: Path) -> bool:
    """Mark ``path`` immutable with chattr; False where the file system or the user cannot."""
    done = subprocess.run(["chattr", "+i", str(path)], capture_output=True, check=False)
    return done.returncode == 0


def test_an_immutable_workspace_is_reported_as_unwritable_and_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset = copy_sample("darija-algerian.tsv", tmp_path)
    votes = tmp_path / "v.tsv"
    votes.write_text("item_id\tannotator\tchoice\ttime\ndz-001\tamina\t1\t2026-11-20T09:00:00Z\n", encoding="utf-8")
    assert main(["votes", "import", str(dataset), str(votes)]) == 0
    workspace = dataset.with_name(dataset.name + ".piqa.sqlite")
    if shutil.which("chattr") is None or not _immutable(workspace):
        pytest.skip("chattr +i is not available here")
    try:
        capsys.readouterr()
        votes.write_text("item_id\tannotator\tchoice\ttime\ndz-002\tamina\t1\t2026-11-20T09:00:00Z\n", encoding="utf-8")
        code = main(["votes", "import", str(dataset), str(votes)])
        lines = capsys.readouterr().err.strip().splitlines()
        assert write_refusal(workspace) is not None
    finally:
        subprocess.run(["chattr", "-i", str(workspace)], check=True)
    assert code == 2 and len(lines) == 1, lines
    assert "cannot be written (the file is immutable or append-only" in lines[0]
    assert "disk I/O" not in lines[0] and "nothing was recorded" in lines[0]
    assert write_refusal(workspace) is None


def test_a_failing_command_prints_its_error_alone_and_a_finishing_one_its_warnings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset = copy_sample("darija-algerian.tsv", tmp_path)
    votes = tmp_path / "v.tsv"
    votes.write_text("item_id\tannotator\tchoice\ttime\ndz-001\tamina\t1\t2026-11-20T09:00:00Z\n", encoding="utf-8")
    assert main(["votes", "import", str(dataset), str(votes)]) == 0
    text = dataset.read_text(encoding="utf-8")
    dataset.write_text(text.replace("\t", "\t ", 1), encoding="utf-8")  # changed since the workspace was bound
    capsys.readouterr()
    assert main(["votes", "import", str(dataset), str(tmp_path / "missing.tsv")]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "error:" in lines[0] and "missing.tsv" in lines[0], lines
    assert main(["stats", str(dataset)]) == 0
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "warning:" in lines[0], lines


def _wide(tmp_path: Path, extra: int) -> Path:
    """A 3-row dataset with ``extra`` categorical columns beside the PIQA ones."""
    names = [f"c{k}" for k in range(extra)]
    lines = ["\t".join(["id", "prompt", "solution0", "solution1", "label", *names])]
    for row in range(3):
        lines.append("\t".join([f"r{row}", f"p{row}", "a", "b", "0", *(["x"] * extra)]))
    path = tmp_path / "wide.tsv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("command", ["stats", "agree"])
def test_many_columns_print_twenty_breakdowns_and_one_line_for_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    path = _wide(tmp_path, 300)
    assert main([command, str(path)]) == 0
    out = capsys.readouterr().out
    assert "280 more columns: use --json or --by COLUMN" in out
    assert "c19" in out and "c20" not in out
    assert main([command, str(path), "--by", "c250"]) == 0
    out = capsys.readouterr().out
    assert "c250" in out and "more columns" not in out
    assert main([command, str(path), "--json"]) == 0
    assert "c299" in capsys.readouterr().out


def test_agree_markdown_prints_twenty_column_tables_and_one_line_for_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _wide(tmp_path, 300)
    assert main(["agree", str(path), "--markdown"]) == 0
    out = capsys.readouterr().out
    assert out.count("### By ") == 20 and "### By c19" in out and "c20" not in out
    assert out.rstrip().endswith("280 more columns: use --json or --by COLUMN")
    assert main(["agree", str(path), "--markdown", "--by", "c250"]) == 0
    out = capsys.readouterr().out
    assert "### By c250" in out and "more columns" not in out


def test_the_card_of_a_very_wide_file_describes_its_first_columns_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _wide(tmp_path, 3000)
    assert main(["card", str(path)]) == 0
    card = capsys.readouterr().out
    assert card.count("#### Items per") == 20 and "2,980 more categorical columns" in card
    assert "The file has 3,005 columns; the example shows the first 100" in card
    assert "The file has 3,005 columns; the table lists the first 100" in card
    assert "`c94`" in card and "c95" not in card  # id, prompt, two solutions and label come first
    assert len(card) < 40_000


def test_stats_by_names_any_metadata_column_and_refuses_an_unknown_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset = copy_sample("darija-algerian.tsv", tmp_path)
    assert main(["stats", str(dataset), "--by", "msa_translation"]) == 0
    assert "msa_translation" in capsys.readouterr().out
    assert main(["stats", str(dataset), "--by", "nope"]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "--by nope: no such metadata column" in lines[0]


@pytest.mark.parametrize(
    "head, rows",
    [("\r", "\n"), ("\n", "\r")],
    ids=["header-ends-in-CR-rows-in-LF", "header-in-LF-rows-in-CR"],
)
def test_mixed_line_endings_are_named_not_called_ragged_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], head: str, rows: str
) -> None:
    path = tmp_path / "mixed.tsv"
    path.write_bytes(f"id\tprompt\tsolution0\tsolution1\tlabel{head}a\tp\ts0\ts1\t0{rows}b\tq\tt0\tt1\t1\n".encode())
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "mixes line endings" in err and "ragged" not in err
