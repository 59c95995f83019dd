"""Bad input gets one clear line on stderr and exit code 2, never a traceback or a dropped row."""

from __future__ import annotations

import codecs
import subprocess
import sys
from pathlib import Path

import pytest

from piqa_tui.cli.main import main
from piqa_tui.core.dataset.reading import load_dataset

HEADER = "id\tprompt\tsolution0\tsolution1\tlabel\n"


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(args)
    err = capsys.readouterr().err
    return code, err


def assert_one_line(err: str, *needles: str) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


def test_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run_cli(["validate", str(tmp_path / "nope.tsv")], capsys)
    assert code == 2
    assert_one_line(err, "nope.tsv", "no such file")


def test_empty_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "e.tsv").write_text("")
    (tmp_path / "blank.jsonl").write_text("\n\n")
    for name in ("e.tsv", "blank.jsonl"):
        code, err = run_cli(["stats", str(tmp_path / name)], capsys)
        assert code == 2
        assert_one_line(err, name, "empty")


def test_unknown_layout_names_the_columns_and_the_mapping(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "odd.csv"
    path.write_text("text,first,second,gold\nopen a jar,twist,pull,0\n", encoding="utf-8")
    code, err = run_cli(["validate", str(path)], capsys)
    assert code == 2
    assert_one_line(err, "unknown layout", "text, first, second, gold", "--map")
    code = main(["stats", str(path), "--map", "prompt=text,solutions=first|second,label=gold", "--json"])
    assert code == 0


KEPT_MAPPING = "prompt=question_text,solutions=first|second,id=uid"
MAPPED = "uid\tquestion_text\tfirst\tsecond\nq1\tHow to boil an egg?\tin water\tin sand\n"


def kept_mapping_of_a_renamed_column(folder: Path) -> Path:
    """A file mapped once (the mapping the TUI's dialog keeps in the workspace) whose prompt column was renamed
    since: the kept mapping names a column the file no longer has."""
    from piqa_tui.core.dataset.layout import parse_mapping
    from piqa_tui.core.workspace.preferences import store_mapping
    from piqa_tui.core.workspace.project import Project

    path = folder / "mapped.tsv"
    path.write_text(MAPPED, encoding="utf-8")
    project = Project.open(path, mapping=parse_mapping(KEPT_MAPPING))
    store_mapping(project.workspace, parse_mapping(KEPT_MAPPING))
    assert project.workspace is not None
    project.workspace.close()
    path.write_text(MAPPED.replace("question_text", "query"), encoding="utf-8")
    return path


def test_a_kept_mapping_naming_a_column_the_file_lost_is_one_line(tmp_path: Path) -> None:
    """What (the column), where (the file and its workspace) and what to do, exit 2, for every command that
    reads the dataset; a --map given on the command line reads the file as it is now."""
    path = kept_mapping_of_a_renamed_column(tmp_path)
    for command in ("validate", "stats", "agree", "export"):
        extra = ["--to", str(tmp_path / "out.tsv")] if command == "export" else []
        done = subprocess.run(
            [sys.executable, "-m", "piqa_tui.cli.main", command, str(path), *extra], capture_output=True, text=True
        )
        assert done.returncode == 2, (command, done.stdout)
        assert_one_line(
            done.stderr,
            "mapped.tsv",
            "column mapping kept in its workspace",
            "mapped.tsv.piqa.sqlite",
            "'question_text'",
            "no longer has",
            "uid, query, first, second",
            "--map",
        )
    remapped = subprocess.run(
        [sys.executable, "-m", "piqa_tui.cli.main", "stats", str(path), "--map", "prompt=query,solutions=first|second"],
        capture_output=True,
        text=True,
    )
    assert remapped.returncode == 0 and "no longer has" not in remapped.stderr, remapped.stderr
    assert "Traceback" not in remapped.stderr


def test_ragged_rows_name_the_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "r.tsv"
    path.write_text(HEADER + "a\tp\tx\ty\t0\nb\tp\tx\t1\nc\tp\tx\ty\t0\textra\n", encoding="utf-8")
    code, err = run_cli(["validate", str(path)], capsys)
    assert code == 2
    assert_one_line(err, "ragged", "line 3 has 4", "line 4 has 6")


def test_not_utf8_names_the_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "latin1.tsv"
    path.write_bytes((HEADER + "a\tcafé\tx\ty\t0\n").encode("latin-1"))
    code, err = run_cli(["validate", str(path)], capsys)
    assert code == 2
    assert_one_line(err, "not valid UTF-8", "line 2", "UTF-8")


@pytest.mark.parametrize("bom,encoding", [(codecs.BOM_UTF8, "utf-8"), (b"", "utf-16")])
def test_bom_files_are_read(tmp_path: Path, bom: bytes, encoding: str) -> None:
    path = tmp_path / "bom.tsv"
    path.write_bytes(bom + (HEADER + "a\tكاس ماء\tx\ty\t1\n").encode(encoding))
    ds = load_dataset(path)
    assert ds.columns[0] == "id" and ds.items[0].prompt == "كاس ماء" and ds.items[0].label == 1


def test_label_values_that_are_not_labels(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "l.tsv"
    path.write_text(HEADER + "a\tp\tx\ty\tyes\nb\tp\tx\ty\t1\n", encoding="utf-8")
    code, err = run_cli(["validate", str(path)], capsys)
    assert code == 2
    assert_one_line(err, "not labels", "row 1 ('yes')")


def test_lst_length_mismatch(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "d.jsonl").write_text('{"goal": "g", "sol1": "a", "sol2": "b"}\n' * 3, encoding="utf-8")
    (tmp_path / "d-labels.lst").write_text("0\n1\n", encoding="utf-8")
    code, err = run_cli(["stats", str(tmp_path / "d.jsonl")], capsys)
    assert code == 2
    assert_one_line(err, "d-labels.lst", "2 labels", "3 items")


def test_bad_json_line_and_bad_usage(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "b.jsonl").write_text(
        '{"goal": "g", "sol1": "a", "sol2": "b", "label": 0}\n{"goal": \n', encoding="utf-8"
    )
    code, err = run_cli(["validate", str(tmp_path / "b.jsonl")], capsys)
    assert code == 2
    assert_one_line(err, "line 2", "not valid JSON")
    with pytest.raises(SystemExit) as exc:
        main(["validate"])
    assert exc.value.code == 2
    assert_one_line(capsys.readouterr().err, "PATH")


def test_the_installed_command_prints_no_traceback(tmp_path: Path) -> None:
    """The real console entry point, as a user runs it."""
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "piqa_tui.cli.main",
            "export",
            str(tmp_path / "missing.csv"),
            "--to",
            str(tmp_path / "o.csv"),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert_one_line(proc.stderr, "missing.csv")


@pytest.mark.parametrize("label", [99999999999999999999, 1e300, 2**64 - 1, -(2**63), 1_000_000, float("nan")])
def test_a_number_past_any_solution_number_is_refused_not_overflowed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], label: object
) -> None:
    """A JSON label past six digits or 64 bits is named with its row; agree and card never overflow on it. NaN is
    not JSON at all: the line that holds it is named before any label is read."""
    import json

    data = tmp_path / "big.jsonl"
    rows = [
        {"goal": "g", "sol1": "a", "sol2": "b", "label": 0},
        {"goal": "h", "sol1": "a", "sol2": "b", "label": label},
    ]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    for command in ("agree", "card", "validate"):
        code, err = run_cli([command, str(data)], capsys)
        assert code == 2
        assert_one_line(err, *(("line 2", "holds NaN") if label != label else ("row 2", "not labels")))


def test_a_server_url_that_does_not_parse_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "d.tsv"
    data.write_text(HEADER + "a\tp\tx\ty\t0\n", encoding="utf-8")
    code, err = run_cli(["score", str(data), "--server", "http://[::1", "--limit", "1"], capsys)
    assert code == 2
    assert_one_line(err, "not a valid URL")


def test_a_saved_label_base_other_than_0_or_1_is_refused(tmp_path: Path) -> None:
    """However the base arrives (a mapping kept in a workspace, an API caller), the codec refuses it."""
    from piqa_tui.core.dataset.labels import detect_codec
    from piqa_tui.core.errors import InputError

    for base in (2, -1, 10**30):
        with pytest.raises(InputError, match="label_base must be 0 or 1"):
            detect_codec(["1", "2"], base, "d.tsv")


def test_a_tsv_value_too_long_is_refused_with_its_line_and_a_long_line_of_short_values_is_not(tmp_path: Path) -> None:
    from piqa_tui.core.dataset.input_file import MAX_FIELD_CHARS
    from piqa_tui.core.errors import InputError

    header = "id\tprompt\tsolution0\tsolution1\tlabel\n"
    half = "a" * (MAX_FIELD_CHARS // 2 + 1)  # two of them make a line longer than one value may be
    fine = tmp_path / "long-line.tsv"
    fine.write_text(f"{header}x1\tp\t{half}\t{half}\t0\n", encoding="utf-8")
    assert load_dataset(fine).items[0].solutions == (half, half)
    too_long = tmp_path / "long-value.tsv"
    too_long.write_text(f"{header}x1\tp\ts\tt\t0\nx2\tp\t{'b' * (MAX_FIELD_CHARS + 1)}\tt\t1\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"line 3, column 'solution0': .* characters is more than"):
        load_dataset(too_long)


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ('{"goal": "g", "sol1": "a", "sol2": "b", "label": 0, "goal": "other"}', 'repeats the key "goal"'),
        ('{"goal": "g", "sol1": "a", "sol2": "b", "label": 0, "meta": {"x": 1, "x": 2}}', 'repeats the key "x"'),
        ('{"goal": "g", "sol1": "a", "sol2": "b", "label": 0, "score": NaN}', "holds NaN"),
        ('{"goal": "g", "sol1": "a", "sol2": "b", "label": 0, "score": Infinity}', "holds Infinity"),
    ],
)
def test_a_json_line_with_a_repeated_key_or_nan_is_refused_with_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], line: str, says: str
) -> None:
    """Python reads both and keeps the last key; the file (and an export's verbatim copy of the row) keeps both."""
    data = tmp_path / "twice.jsonl"
    data.write_text('{"goal": "h", "sol1": "a", "sol2": "b", "label": 1}\n' + line + "\n", encoding="utf-8")
    for command in ("validate", "stats"):
        code, err = run_cli([command, str(data)], capsys)
        assert code == 2
        assert_one_line(err, "twice.jsonl", "line 2", says)


@pytest.mark.parametrize(
    "data", [b"id\tprompt\tsolution0\tsolution1\tlabel\rq1\tp\ta\tb\t0", b"goal,sol1,sol2\rg,a,b\r"]
)
def test_cr_line_ends_are_refused_never_read_as_no_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], data: bytes
) -> None:
    """One CR alone between the header and a row: the file used to read as a header with no items."""
    path = tmp_path / ("old-mac.tsv" if b"\t" in data else "old-mac.csv")
    path.write_bytes(data)
    code, err = run_cli(["validate", str(path)], capsys)
    assert code == 2
    assert_one_line(err, "old-mac", "carriage returns only")
