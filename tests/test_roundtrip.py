"""Export of an unmodified dataset reproduces it, in every format, on real data and the samples."""

from __future__ import annotations

import builtins
import csv
import hashlib
import json
import os
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from piqa_tui.core.dataset.reading import load_dataset
from piqa_tui.core.dataset.writing import write_dataset
from piqa_tui.core.workspace.project import Project

from .conftest import PIQA_VALID, SAMPLES, XCOPA_TA_TEST

SAMPLE_FILES = sorted(p.name for p in SAMPLES.glob("*.tsv") if not p.name.startswith("votes"))


def _values(path: Path) -> tuple[list[str], list[list[str]]]:
    """Columns and rows of a file as the program reads them (raw values as text)."""
    ds = load_dataset(path)
    return ds.columns, [[json.dumps(row.get(c), ensure_ascii=False) for c in ds.columns] for row in ds.rows]


def test_piqa_pair_round_trip_is_byte_identical(tmp_path: Path) -> None:
    ds = load_dataset(PIQA_VALID)
    assert ds.format == "piqa" and len(ds.items) == 1838
    written = write_dataset(ds, ds.items, tmp_path / "out.jsonl")
    assert (tmp_path / "out.jsonl").read_bytes() == PIQA_VALID.read_bytes()
    assert (tmp_path / "out-labels.lst").read_bytes() == PIQA_VALID.with_name("valid-labels.lst").read_bytes()
    assert len(written) == 2


def test_xcopa_tamil_round_trip_keeps_types_and_bytes(tmp_path: Path) -> None:
    ds = load_dataset(XCOPA_TA_TEST)
    assert ds.layout.name == "copa" and ds.layout.question == "question"
    write_dataset(ds, ds.items, tmp_path / "out.jsonl")
    assert (tmp_path / "out.jsonl").read_bytes() == XCOPA_TA_TEST.read_bytes()
    first = json.loads((tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert isinstance(first["label"], int) and isinstance(first["changed"], bool)


@pytest.mark.parametrize("name", SAMPLE_FILES)
def test_sample_tsv_round_trip_is_byte_identical(name: str, tmp_path: Path) -> None:
    ds = load_dataset(SAMPLES / name)
    write_dataset(ds, ds.items, tmp_path / name)
    assert (tmp_path / name).read_bytes() == (SAMPLES / name).read_bytes()


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet", "tsv"])
def test_every_format_round_trips_its_own_output(fmt: str, tmp_path: Path) -> None:
    """TSV → FORMAT, then FORMAT → FORMAT again: the second file has the same columns and values."""
    source = load_dataset(XCOPA_TA_TEST)
    first = tmp_path / f"first.{fmt}"
    write_dataset(source, source.items, first)
    again = load_dataset(first)
    assert again.columns == source.columns
    assert [i.prompt for i in again.items] == [i.prompt for i in source.items]
    assert [i.label for i in again.items] == [i.label for i in source.items]
    second = tmp_path / f"second.{fmt}"
    write_dataset(again, again.items, second)
    assert _values(second) == _values(first)
    if fmt != "parquet":
        assert second.read_bytes() == first.read_bytes()


def test_parquet_keeps_column_types(tmp_path: Path) -> None:
    frame = pl.DataFrame(
        {
            "idx": [7, 8],
            "prompt": ["كاس ماء", "தண்ணீர்"],
            "solution0": ["a b", "c d"],
            "solution1": ["a c", "c e"],
            "label": [1, 0],
        }
    )
    frame.write_parquet(tmp_path / "in.parquet")
    ds = load_dataset(tmp_path / "in.parquet")
    assert [i.id for i in ds.items] == ["7", "8"] and [i.label for i in ds.items] == [1, 0]
    write_dataset(ds, ds.items, tmp_path / "out.parquet")
    assert pl.read_parquet(tmp_path / "out.parquet").equals(frame)
    assert pl.read_parquet(tmp_path / "out.parquet").schema == frame.schema


def test_tsv_quotes_stay_literal_and_csv_quoting_is_understood(tmp_path: Path) -> None:
    tsv = tmp_path / "q.tsv"
    tsv.write_text(
        'id\tprompt\tsolution0\tsolution1\tlabel\n1\tsay "hi"\tuse a "cup"\tuse a "pot"\t0\n2\t"x\ty\tz\t1\n',
        encoding="utf-8",
    )
    ds = load_dataset(tsv)
    assert ds.items[0].prompt == 'say "hi"' and ds.items[1].prompt == '"x'
    write_dataset(ds, ds.items, tmp_path / "out.tsv")
    assert (tmp_path / "out.tsv").read_bytes() == tsv.read_bytes()
    write_dataset(ds, ds.items, tmp_path / "out.csv")
    with open(tmp_path / "out.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert rows[1][1] == 'say "hi"' and rows[2][1] == '"x'
    assert [i.prompt for i in load_dataset(tmp_path / "out.csv").items] == ['say "hi"', '"x']


def test_crlf_and_missing_final_newline_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "crlf.csv"
    path.write_bytes(
        b"goal,sol1,sol2,label\r\nopen a jar,twist the lid,twist the jar,0\r\nboil water,use a pot,use a sock,0"
    )
    ds = load_dataset(path)
    write_dataset(ds, ds.items, tmp_path / "out.csv")
    assert (tmp_path / "out.csv").read_bytes() == path.read_bytes()


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("mixed.tsv", b"goal\tsol1\tsol2\tlabel\r\nopen a jar\ttwist\tpull\t0\nboil water\tpot\tsock\t0\n"),
        ("mixed.csv", b"goal,sol1,sol2,label\r\nopen a jar,twist,pull,0\nboil water,pot,sock,0\n"),
        ("mixed.tsv", b"goal\tsol1\tsol2\tlabel\nopen a jar\ttwist\tpull\t0\r\nboil water\tpot\tsock\t0\r\n"),
        ("mixed.csv", b'goal,sol1,sol2,label\r\n"open\na jar",twist,pull,0\nboil water,pot,sock,0'),
        (
            "mixed.jsonl",
            b'{"goal": "a", "sol1": "b", "sol2": "c", "label": 0}\r\n{"goal": "d", "sol1": "e", "sol2": "f", "label": 1}\n',
        ),
    ],
)
def test_a_header_line_ending_unlike_the_rows_is_kept(name: str, data: bytes, tmp_path: Path) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    ds = load_dataset(path)
    out = tmp_path / ("out" + path.suffix)
    write_dataset(ds, ds.items, out)
    assert out.read_bytes() == data
    write_dataset(ds, ds.items, tmp_path / "other.jsonl" if path.suffix != ".jsonl" else tmp_path / "other.tsv")


def test_edits_reach_the_export_and_nothing_else_changes(piqa_copy: Path, tmp_path: Path) -> None:
    project = Project.open(piqa_copy, annotator="amina")
    project.edit("r5", {"solution1": "Use a spoon.", "label": "0"})
    project.export(tmp_path / "edited.jsonl")
    before = PIQA_VALID.read_text(encoding="utf-8").splitlines()
    after = (tmp_path / "edited.jsonl").read_text(encoding="utf-8").splitlines()
    changed = [i for i, (a, b) in enumerate(zip(before, after)) if a != b]
    assert changed == [4] and json.loads(after[4])["sol2"] == "Use a spoon."
    labels = (tmp_path / "edited-labels.lst").read_text().split()
    assert labels[4] == "0" and labels[:4] == PIQA_VALID.with_name("valid-labels.lst").read_text().split()[:4]


def test_save_rewrites_the_source_atomically_and_rebinds(tmp_path: Path) -> None:
    path = tmp_path / "t.tsv"
    path.write_text("id\tprompt\tsolution0\tsolution1\tlabel\na\tp\tx y\tx z\t0\n", encoding="utf-8")
    project = Project.open(path, annotator="t")
    project.edit("a", {"prompt": "كاس"})
    project.save()
    assert path.read_text(encoding="utf-8").splitlines()[1] == "a\tكاس\tx y\tx z\t0"
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    reopened = Project.open(path, annotator="t")
    assert reopened.file_changed is None and reopened.item("a").prompt == "كاس"
    assert reopened.undo() == "a" and reopened.item("a").prompt == "p"


def _count_touches(monkeypatch: pytest.MonkeyPatch, path: Path) -> dict[str, int]:
    """Count the opens and the stats of ``path`` while the real ``open`` and ``os.stat`` do the work."""
    counts = {"open": 0, "stat": 0}
    real_open, real_stat = builtins.open, os.stat

    def is_path(file: object) -> bool:
        return isinstance(file, (str, os.PathLike)) and os.path.abspath(file) == str(path)

    def counting_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        counts["open"] += is_path(file)
        return real_open(file, *args, **kwargs)

    def counting_stat(file: Any, *args: Any, **kwargs: Any) -> Any:
        counts["stat"] += is_path(file)
        return real_stat(file, *args, **kwargs)

    real_os_open = os.open

    def counting_os_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        counts["open"] += is_path(file)
        return real_os_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", counting_open)
    monkeypatch.setattr(os, "open", counting_os_open)
    monkeypatch.setattr(os, "stat", counting_stat)
    return counts


def test_opening_checks_and_reads_the_file_once_and_binds_the_hash_of_those_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ids derived from a workspace are re-assigned to re-sorted rows without reading the file again."""
    path = tmp_path / "no-ids.tsv"
    rows = ["goal\tsol1\tsol2\tlabel", "boil an egg\tin water\tin sand\t0", "dry a towel\tin the sun\tin a bag\t0"]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    first = Project.open(path, annotator="amina")  # derives r1, r2 and keeps them in the workspace
    assert first.workspace.binding()[2] == hashlib.sha256(path.read_bytes()).hexdigest()
    first.workspace.close()
    path.write_text("\n".join([rows[0], rows[2], rows[1]]) + "\n", encoding="utf-8")  # someone re-sorted it
    counts = _count_touches(monkeypatch, path)
    # The workspace named, so that finding its default place (which resolves the path) is not counted.
    project = Project.open(path, annotator="amina", workspace=path.with_name(path.name + ".piqa.sqlite"))
    monkeypatch.undo()
    assert counts == {"open": 1, "stat": 1}
    assert [item.id for item in project.items] == ["r2", "r1"]  # the ids follow the rows' content
    assert project.dataset.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert project.file_changed  # the workspace's fingerprint was compared with the hash of the bytes read
    project.workspace.close()


# ------------------------------------------------------------ what one writer writes, every reader reads back


def _cli(*args: object) -> tuple[int, str, str]:
    import contextlib
    import io

    from piqa_tui.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()


def test_a_lone_cr_in_a_csv_value_is_quoted_and_the_export_validates_and_exports_the_same(tmp_path: Path) -> None:
    """Python's minimal quoting quotes only the line terminator's characters: with LF line ends a lone CR went
    out bare, and the export's own validate said "ragged rows"."""
    source = tmp_path / "cr.csv"
    source.write_bytes(b'id,prompt,solution0,solution1,label\nq1,"cool\rsoup",blow,"boil\r",0\nq2,dry,sun,bag,1\n')
    first, second = tmp_path / "first.csv", tmp_path / "second.csv"
    code, _, err = _cli("export", source, "--to", first)
    assert code == 0, err
    assert b'"cool\rsoup"' in first.read_bytes() and b'"boil\r"' in first.read_bytes()
    code, out, err = _cli("validate", first)
    assert code == 0 and "0 errors" in out, err
    assert [(i.prompt, i.solutions) for i in load_dataset(first).items] == [
        ("cool\rsoup", ("blow", "boil\r")),
        ("dry", ("sun", "bag")),
    ]
    code, _, err = _cli("export", first, "--to", second)
    assert code == 0, err
    assert second.read_bytes() == first.read_bytes() == source.read_bytes()


def _read_back(path: Path) -> list[tuple[object, ...]]:
    return [(i.id, i.prompt, i.solutions, i.label, tuple(sorted(i.meta.items()))) for i in load_dataset(path).items]


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_awkward_values_come_back_unchanged_through_every_format(suffix: str, tmp_path: Path) -> None:
    """Generated values holding CR, LF, CRLF, quotes, separators, backslashes, U+2028, a BOM: written as a
    file, read, exported to each format and read again, every value is the same, and exporting the export
    gives the same bytes (TSV, which cannot hold a tab or a line break, refuses such a value in one line)."""
    from piqa_tui.core.errors import ExportError
    from tests.hostile_generators import awkward_dataset, rng_for

    rng = rng_for(f"round trip {suffix}")
    for k in range(12):
        source = tmp_path / f"awkward{k}{suffix}"
        source.write_bytes(awkward_dataset(rng, suffix).data())
        expected = _read_back(source)
        for fmt in ("csv", "jsonl", "parquet", "tsv"):
            first, second = tmp_path / f"first{k}.{fmt}", tmp_path / f"second{k}.{fmt}"
            dataset = load_dataset(source)
            try:
                write_dataset(dataset, dataset.items, first)
            except ExportError as exc:
                assert fmt == "tsv" and "TSV cannot store" in str(exc) and "\n" not in str(exc)
                continue
            assert _read_back(first) == expected, (source.read_bytes(), fmt)
            again = load_dataset(first)
            write_dataset(again, again.items, second)
            if fmt != "parquet":
                assert second.read_bytes() == first.read_bytes(), fmt


def test_parquet_nan_goes_to_json_lines_as_null_and_the_export_says_so(tmp_path: Path) -> None:
    source = tmp_path / "scores.parquet"
    pl.DataFrame(
        {
            "goal": ["open a jar", "cool soup", "dry a phone"],
            "sol1": ["twist", "blow", "rice"],
            "sol2": ["hit", "boil", "oven"],
            "label": [0, 1, 0],
            "score": [float("nan"), 0.5, float("inf")],
            "spans": [[1.0, float("nan")], [2.0], []],
        }
    ).write_parquet(source)
    out = tmp_path / "scores.jsonl"
    code, said, err = _cli("export", source, "--to", out)
    assert code == 0, err
    assert "wrote 3 NaN or infinite numbers as null" in said
    rows = [json.loads(line, parse_constant=lambda name: pytest.fail(f"{name} written")) for line in open(out)]
    assert [r["score"] for r in rows] == [None, 0.5, None] and rows[0]["spans"] == [1.0, None]
    code, _, err = _cli("validate", out)
    assert code == 0, err
    code, said, err = _cli("export", source, "--to", tmp_path / "again.jsonl", "--json")
    assert code == 0 and json.loads(said)["nan_as_null"] == 3, err


def test_a_missing_parquet_value_stays_missing_in_every_text_format_and_a_typed_nan_stays_nan(tmp_path: Path) -> None:
    """A Parquet null (text or number) and a float NaN (pandas' missing number) are an empty cell in CSV and TSV
    and null in JSON Lines, never the text "nan"; the string "nan" in the file, and "nan" typed by a curator
    over a missing value, stay "nan" through the export and the file read back."""
    from tests.test_merge import cli

    source = tmp_path / "gaps.parquet"
    pl.DataFrame(
        {
            "id": ["a", "b", "c", "d"],
            "goal": ["open a jar", None, "dry a phone", "cool soup"],
            "sol1": ["twist", "blow", "rice", "fan"],
            "sol2": ["hit", "boil", "oven", "ice"],
            "label": [0, 1, 0, 1],
            "note": [None, "nan", "x", None],
            "score": [float("nan"), 0.5, None, float("nan")],
        }
    ).write_parquet(source)
    shown = {item.id: item for item in load_dataset(source).items}
    assert shown["a"].meta == {"note": "", "score": ""} and shown["b"].prompt == "" and shown["b"].meta["note"] == "nan"
    cli("edit", str(source), "d", "--set", "note=nan", "--set", "score=nan")  # typed over missing values

    texts = {}
    for suffix in (".csv", ".tsv"):
        out = tmp_path / f"gaps{suffix}"
        cli("export", str(source), "--to", str(out))
        with out.open(encoding="utf-8", newline="") as handle:
            rows = list(csv.DictReader(handle, delimiter="\t" if suffix == ".tsv" else ","))
        texts[suffix] = [(r["goal"], r["note"], r["score"]) for r in rows]
        read_back = {item.id: (item.prompt, item.meta) for item in load_dataset(out).items}
        assert read_back["a"] == ("open a jar", {"note": "", "score": ""}), suffix
        assert read_back["d"] == ("cool soup", {"note": "nan", "score": "nan"}), suffix
    expected = [("open a jar", "", ""), ("", "nan", "0.5"), ("dry a phone", "x", ""), ("cool soup", "nan", "nan")]
    assert texts == {".csv": expected, ".tsv": expected}

    out = tmp_path / "gaps.jsonl"
    cli("export", str(source), "--to", str(out))
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [(r["goal"], r["note"], r["score"]) for r in rows] == [
        ("open a jar", None, None),
        (None, "nan", 0.5),
        ("dry a phone", "x", None),
        ("cool soup", "nan", "nan"),
    ]


def test_strict_json_reads_no_repeated_key_or_nan_and_writes_null_for_nan() -> None:
    from piqa_tui.core import strict_json

    assert strict_json.loads('{"a": [1, {"b": 2}]}') == {"a": [1, {"b": 2}]}
    for text, says in [
        ('{"a": 1, "a": 2}', 'repeats the key "a"'),
        ('{"a": {"b": 1, "b": 1}}', 'repeats the key "b"'),
        ('{"a": NaN}', "holds NaN"),
        ('{"a": -Infinity}', "holds -Infinity"),
    ]:
        with pytest.raises(strict_json.JsonRuleError, match=says):
            strict_json.loads(text)
    assert strict_json.dumps({"a": 1.5}) == ('{"a": 1.5}', 0)
    assert strict_json.dumps({"a": float("nan"), "b": [float("-inf"), 2.0]}) == ('{"a": null, "b": [null, 2.0]}', 2)


# json.dumps calls that cannot meet a NaN (what they write is text, ids or whole numbers) or never leave the
# program: module -> functions, each with why. Every other JSON written goes through core/strict_json.py.
JSON_WITHOUT_NUMBERS = {
    "piqa_tui/core/release/tasks.py": {"": "task names, template texts and file names quoted in YAML: texts only"},
    "piqa_tui/core/workspace/log.py": {"legacy_uid": "hashes an event's text fields"},
    "piqa_tui/core/workspace/undo.py": {"": "item ids for a SQLite query"},
    "piqa_tui/core/workspace/event_rules.py": {"check_new_item": "quotes a label in a message"},
    "piqa_tui/core/round/stages.py": {"canonical": "a draft's texts and its integer label"},
    "piqa_tui/core/round/declaration.py": {"canonical": "a round: texts, whole numbers, flags"},
    "piqa_tui/core/round/questions.py": {"question_columns": "answers, which are texts"},
    "piqa_tui/core/round/order.py": {"": "a hash key of texts and whole numbers"},
    "piqa_tui/core/scoring/templates/template.py": {"": "a template's texts, as a cache key"},
    "piqa_tui/core/scoring/served.py": {"": "the request to a model server: prompts"},
    "piqa_tui/core/scoring/cache.py": {"": "the score cache, which the program alone reads back"},
    "piqa_tui/core/votes/files.py": {"as_text": "a cell shown in a reason"},
    "piqa_tui/core/votes/release_defaults.py": {"to_json": "two flags"},
    "piqa_tui/core/votes/exchange.py": {"json_line": "rows of texts"},
    "piqa_tui/core/dataset/reading.py": {"_has_surrogate": "reads, writes nothing"},
    "piqa_tui/core/strict_json.py": {"": "the writer every other goes through"},
}


def test_every_json_writer_writes_no_nan() -> None:
    """A ``json.dumps`` that could meet a float either forbids NaN or is ``strict_json.dumps`` (null for NaN)."""
    import ast

    from .conftest import ROOT

    unreviewed = []
    for path in sorted((ROOT / "piqa_tui").rglob("*.py")):
        name = path.relative_to(ROOT).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        functions = [node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
        for call in ast.walk(tree):
            if not (
                isinstance(call, ast.Call)
                and isinstance(call.func, ast.Attribute)
                and call.func.attr in ("dumps", "dump")
                and isinstance(call.func.value, ast.Name)
                and call.func.value.id == "json"
            ):
                continue
            if any(k.arg == "allow_nan" and getattr(k.value, "value", True) is False for k in call.keywords):
                continue
            inside = [f.name for f in functions if f.lineno <= call.lineno <= (f.end_lineno or f.lineno)]
            reviewed = JSON_WITHOUT_NUMBERS.get(name, {})
            if "" not in reviewed and not set(inside) & set(reviewed):
                unreviewed.append(f"{name}:{call.lineno} in {inside[-1] if inside else 'the module'}")
    assert not unreviewed, "json.dumps that may write NaN; use core/strict_json.dumps:\n" + "\n".join(unreviewed)
