"""Vote files as teams keep them: long or wide, with or without times, in TSV, CSV, JSONL and
Parquet; times as real instants; every bad line reported while the good ones are imported; withdrawals that
survive an export and an import. The CLI runs as a real process, so an internal error would show as one."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from piqa_tui.core.votes.exchange import export_votes
from piqa_tui.core.votes.files import import_votes, read_votes
from piqa_tui.core.workspace.project import Project

from .conftest import SAMPLES, copy_sample

SAMPLE_VOTES = SAMPLES / "votes-darija-algerian.tsv"
ANNOTATORS = ("amina", "yacine", "sara")


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "piqa_tui.cli.main", *args], capture_output=True, text=True)
    assert "Traceback" not in done.stderr and done.returncode in (0, 1), done.stderr
    return done


def current(path: Path) -> dict[tuple[str, str], str]:
    """Every current vote of a dataset's workspace: (item, annotator) → choice as stored."""
    project = Project.open(path)
    return {(i, a): v.choice for i, votes in project.state.votes.items() for a, v in votes.items()}


def fresh_copy(folder: Path) -> Path:
    """The Darija sample in a folder of its own (its own workspace)."""
    folder.mkdir()
    return copy_sample("darija-algerian.tsv", folder)


def sample_votes() -> list[dict[str, str]]:
    with SAMPLE_VOTES.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


@pytest.fixture
def expected(tmp_path: Path) -> dict[tuple[str, str], str]:
    """The current votes the sample's long, timed file gives."""
    reference = fresh_copy(tmp_path / "reference")
    import_votes(Project.open(reference), SAMPLE_VOTES)
    return current(reference)


def wide_rows() -> list[dict[str, object]]:
    """The sample's votes as a spreadsheet: one row per item, one column per annotator; amina skips dz-036."""
    rows: dict[str, dict[str, object]] = {}
    for vote in sample_votes():
        rows.setdefault(vote["item_id"], {"id": vote["item_id"], **dict.fromkeys(ANNOTATORS)})[vote["annotator"]] = int(
            vote["choice"]
        )
    return list(rows.values())


def write_wide(path: Path, rows: list[dict[str, object]]) -> None:
    if path.suffix == ".parquet":
        pl.DataFrame(rows, schema={"id": pl.String, **{a: pl.Int64 for a in ANNOTATORS}}).write_parquet(path)
    elif path.suffix == ".jsonl":
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    else:
        delimiter = "," if path.suffix == ".csv" else "\t"
        lines = [delimiter.join(["id", *ANNOTATORS])]
        lines += [
            delimiter.join(
                str(row["id"]) if k == "id" else ("" if row[k] is None else str(row[k])) for k in ("id", *ANNOTATORS)
            )
            for row in rows
        ]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.mark.parametrize("suffix", [".tsv", ".csv", ".jsonl", ".parquet"])
def test_wide_files_give_the_same_votes_as_the_long_one(tmp_path: Path, suffix: str, expected: dict) -> None:
    dataset = copy_sample("darija-algerian.tsv", tmp_path)
    rows = wide_rows()
    rows[-1]["amina"] = None  # an empty cell: no vote
    wide = tmp_path / f"wide{suffix}"
    write_wide(wide, rows)
    done = run_cli("votes", "import", str(dataset), str(wide))
    assert done.returncode == 0, done.stderr
    assert "no time column" in done.stdout and "(wide file)" in done.stdout
    assert "read 107 votes (wide file): 107 new" in done.stdout
    found = current(dataset)
    assert ("dz-036", "amina") not in found
    assert found == {k: v for k, v in expected.items() if k != ("dz-036", "amina")}


@pytest.mark.parametrize("suffix", [".tsv", ".csv"])
def test_long_files_without_times_count_in_file_order(tmp_path: Path, suffix: str, expected: dict) -> None:
    dataset = copy_sample("darija-algerian.tsv", tmp_path)
    delimiter = "," if suffix == ".csv" else "\t"
    lines = [delimiter.join(("item_id", "annotator", "choice"))]
    lines += [delimiter.join((v["item_id"], v["annotator"], v["choice"])) for v in sample_votes()]
    # sara changes her mind on dz-001 twice, further down the file: the last line counts
    lines += [
        delimiter.join(("dz-001", "sara", "0")),
        delimiter.join(("dz-001", "sara", "1")),
        delimiter.join(("dz-001", "sara", "0")),
    ]
    untimed = tmp_path / f"untimed{suffix}"
    untimed.write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = run_cli("votes", "import", str(dataset), str(untimed), "--json")
    result = json.loads(done.stdout)
    assert result["bad"] == [] and result["new"] == 111 and result["shape"] == "long" and result["stamped"]
    assert current(dataset) == {**expected, ("dz-001", "sara"): "0"}
    plain = run_cli("votes", "import", str(dataset), str(untimed))
    assert "no time column: its votes count in file order, stamped with the import time" in plain.stdout


def test_times_are_instants_compared_in_utc_and_impossible_ones_are_reported(tmp_path: Path) -> None:
    dataset = copy_sample("darija-algerian.tsv", tmp_path)
    votes = tmp_path / "times.tsv"
    votes.write_text(
        "item_id\tannotator\tchoice\ttime\n"
        "dz-001\tamina\t0\t2026-11-20T10:30:00+02:00\n"  # 08:30 UTC: earlier, though its text sorts later
        "dz-001\tamina\t1\t2026-11-20T09:00:00Z\n"
        "dz-002\tamina\t1\t2026-11-20T09:00:00\n"  # no offset: UTC
        "dz-002\tamina\t0\t2026-11-20T04:00:00-05:00\n"  # the same instant, written later: it wins the tie
        "dz-003\tamina\t1\t2026-13-45T00:00:00Z\n"
        "dz-003\tamina\t1\t2026-02-30T00:00:00Z\n"
        "dz-003\tamina\t1\t2026-11-20T25:00:00Z\n"
        "dz-003\tamina\t1\t２０２６-１１-２０T09:00:00Z\n"
        "dz-003\tamina\t1\t9999-12-31T23:59:59-05:00\n"
        "dz-003\tamina\t1\t0001-01-01T00:00:00Z\n"
        "dz-004\tamina\t1\t2026-11-20T09:00:00.123456+05:30\n",
        encoding="utf-8",
    )
    done = run_cli("votes", "import", str(dataset), str(votes))
    assert done.returncode == 1
    for line in range(6, 12):
        assert f"line {line}: time '" in done.stderr
    assert "line 9: time '２０２６-１１-２０T09:00:00Z' has characters other than ASCII" in done.stderr
    assert "line 10: time '9999-12-31T23:59:59-05:00': year 9999 is out of range" in done.stderr
    assert "5 new" in done.stdout and "6 rejected" in done.stdout
    project = Project.open(dataset)
    assert project.state.votes["dz-001"]["amina"].choice == "1"
    assert project.state.votes["dz-002"]["amina"].choice == "0"
    assert "dz-003" not in project.state.votes
    assert project.state.votes["dz-004"]["amina"].time == "2026-11-20T03:30:00.123456Z"


def test_bad_lines_are_reported_and_the_good_ones_imported(tmp_path: Path) -> None:
    dataset = copy_sample("darija-algerian.tsv", tmp_path)
    tsv = tmp_path / "mixed.tsv"
    tsv.write_bytes(
        b"item_id\tannotator\tchoice\ttime\n"
        + b"dz-001\tamina\t1\t2026-11-20T09:00:00Z\n"
        + "dz-002\tcaf\xe9\t1\t2026-11-20T09:00:00Z\n".encode("latin-1")  # a latin-1 byte
        + f"dz-003\tamina\t{'7' * 5000}\t2026-11-20T09:00:00Z\n".encode()
        + "dz-004\tamina\t１\t2026-11-20T09:00:00Z\n".encode()  # a full-width digit is no solution number
        + b"dz-005\t\t1\t2026-11-20T09:00:00Z\n"
        + b"dz-006\tamina\t\t2026-11-20T09:00:00Z\n"
        + b"dz-007\tamina\t0\n"
        + b"dz-008\tamina\twithdrawn\t2026-11-20T09:00:00Z\n"
    )
    done = run_cli("votes", "import", str(dataset), str(tsv))
    assert done.returncode == 1
    for line, reason in (
        (3, "not UTF-8 text"),
        (4, "choice '7777"),
        (5, "choice '１' is impossible"),
        (6, "no annotator"),
        (7, "no choice"),
        (8, "no time"),
    ):
        assert f"line {line}: {reason}" in done.stderr, done.stderr
    assert "(5000 characters)" in done.stderr and "7" * 100 not in done.stderr
    assert "2 new" in done.stdout and "6 rejected" in done.stdout
    jsonl = tmp_path / "mixed.jsonl"
    jsonl.write_bytes(
        b'{"item_id": "dz-010", "annotator": "sara", "choice": 1, "time": "2026-11-20T09:00:00Z"}\n'
        b'{"item_id": "dz-011", "annotator": "sara", "choice": null, "time": "2026-11-20T09:00:00Z"}\n'
        b'{"item_id": "dz-012", "annotator": "sara", "choice": 1, "time": null}\n'
        b'{"item_id": "dz-013", "annotator": "sara", "choice": 1, "time": "2026-11-20T09:00:00Z"\n'
        b"[1, 2, 3]\n"
        + b'{"item_id": "dz-014", "annotator": "sara", "choice": '
        + b"9" * 5000
        + b', "time": "2026-11-20T09:00:00Z"}\n'
        + '{"item_id": "dz-015", "annotator": "s\xe9ra", "choice": 1, "time": "2026-11-20T09:00:00Z"}\n'.encode(
            "latin-1"
        )
        + b'{"item_id": "dz-016", "annotator": "sara", "choice": true, "time": "2026-11-20T09:00:00Z"}\n'
        + b'{"item_id": "dz-017", "annotator": "sara", "choice": "unsure", "time": "2026-11-20T09:00:00Z"}\n'
    )
    found = read_votes(Project.open(dataset), jsonl)
    assert [vote[:3] for vote in found.votes] == [("dz-010", "sara", "1"), ("dz-017", "sara", "skip")]
    assert [b.line for b in found.bad] == [2, 3, 4, 5, 6, 7, 8]
    assert "no choice" in found.bad[0].reason and "no time" in found.bad[1].reason
    assert "not valid JSON" in found.bad[2].reason and "not a JSON object" in found.bad[3].reason
    assert "not valid JSON (Exceeds the limit" in found.bad[4].reason  # 5,000 digits: Python refuses such an int
    assert "not UTF-8" in found.bad[5].reason and "choice 'true' is impossible" in found.bad[6].reason
    assert run_cli("votes", "import", str(dataset), str(jsonl)).returncode == 1


def test_a_withdrawal_survives_export_and_import(tmp_path: Path) -> None:
    dataset = fresh_copy(tmp_path / "one")
    import_votes(Project.open(dataset), SAMPLE_VOTES)
    amina = Project.open(dataset, annotator="amina")
    amina.vote("dz-001", "")  # withdrawn after the sample's vote
    amina.vote("dz-002", "skip")
    for suffix, current_only in ((".tsv", False), (".csv", True), (".jsonl", False)):
        exported = tmp_path / f"all{suffix}"
        export_votes(Project.open(dataset), exported, current_only=current_only)
        assert "withdrawn" in exported.read_text(encoding="utf-8")
        other = fresh_copy(tmp_path / suffix[1:])
        import_votes(Project.open(other), SAMPLE_VOTES)  # the old vote is there: the withdrawal must win
        done = run_cli("votes", "import", str(other), str(exported))
        assert done.returncode == 0, done.stderr
        assert current(other) == current(dataset), suffix
        assert current(other)[("dz-001", "amina")] == ""


@pytest.mark.parametrize("suffix", [".tsv", ".csv", ".jsonl"])
@pytest.mark.parametrize("shape", ["long", "wide"])
def test_cr_line_ends_read_as_line_ends(tmp_path: Path, suffix: str, shape: str) -> None:
    """A file saved with CR line ends (old Mac) gives the votes the LF file gives, never "0 votes, 0 rejected"."""
    lf = tmp_path / f"votes{suffix}"
    if shape == "wide":
        write_wide(lf, wide_rows())
    elif suffix == ".jsonl":
        lf.write_text("".join(json.dumps(vote) + "\n" for vote in sample_votes()), encoding="utf-8")
    else:
        lf.write_text(SAMPLE_VOTES.read_text(encoding="utf-8").replace("\t", "," if suffix == ".csv" else "\t"))
    cr = tmp_path / f"old-mac{suffix}"
    cr.write_bytes(lf.read_bytes().replace(b"\n", b"\r"))
    found = {}
    for path in (lf, cr):
        dataset = fresh_copy(tmp_path / path.stem)
        result = import_votes(Project.open(dataset), path)
        assert not result.bad and result.new == result.read == len(sample_votes()), (path.name, result.bad[:3])
        found[path] = current(dataset)
    assert found[cr] == found[lf]


def test_a_cell_under_no_column_or_a_repeated_json_key_is_a_bad_line(tmp_path: Path) -> None:
    """A row with a cell past the header's lost it silently; a JSON key given twice kept its last value."""
    dataset = copy_sample("darija-algerian.tsv", tmp_path)
    for suffix, sep in ((".tsv", "\t"), (".csv", ",")):
        path = tmp_path / f"extra{suffix}"
        path.write_text(
            sep.join(("item_id", "annotator", "choice", "time"))
            + "\n"
            + sep.join(("dz-001", "amina", "1", "2026-11-20T09:00:00Z", "0"))
            + "\n"
            + sep.join(("dz-002", "amina", "1", "2026-11-20T09:00:00Z", ""))
            + "\n"  # a trailing separator: nothing lost
            + sep.join(("dz-003", "amina", "0", "2026-11-20T09:00:00Z"))
            + "\n",
            encoding="utf-8",
        )
        found = read_votes(Project.open(dataset), path)
        assert [vote[0] for vote in found.votes] == ["dz-002", "dz-003"], suffix
        assert [(b.line, b.reason[:40]) for b in found.bad] == [(2, "5 cells where the header has 4: '0' is u")]
    wide = tmp_path / "wide.tsv"
    wide.write_text("item_id\tamina\nsara\ndz-001\t1\t0\ndz-002\t0\n".replace("\nsara\n", "\n"), encoding="utf-8")
    assert [b.line for b in read_votes(Project.open(dataset), wide).bad] == [2]
    jsonl = tmp_path / "twice.jsonl"
    jsonl.write_text(
        '{"item_id": "dz-001", "annotator": "amina", "choice": 0, "choice": 1, "time": "2026-11-20T09:00:00Z"}\n'
        '{"item_id": "dz-002", "annotator": "amina", "choice": 1, "time": "2026-11-20T09:00:00Z"}\n',
        encoding="utf-8",
    )
    found = read_votes(Project.open(dataset), jsonl)
    assert [vote[0] for vote in found.votes] == ["dz-002"]
    assert [(b.line, b.reason) for b in found.bad] == [(1, 'repeats the key "choice"')]
    done = run_cli("votes", "import", str(dataset), str(jsonl))
    assert "1 new" in done.stdout and "1 rejected" in done.stdout and "line 1: repeats the key" in done.stderr
