"""Any file, any byte: the generated hostile corpus through every subcommand.

Each corpus file (``tests/hostile_corpus.py``) is run through every
subcommand in a child process with a time limit, so a hang fails the test
instead of stalling it. Every run must end with exit code 0, 1 or 2, at most
one line on stderr, no "internal error" or traceback, and no ESC or other
control byte in what it printed.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.hostile_corpus import (
    OSC0,
    SEED,
    batches,
    build,
    conflicting_key_tables,
    hostile_configs,
    hostile_votes,
    huge_label_entries,
    id_twins,
    invisible_twins,
    kernel_files,
    label_base_specs,
    undecodable_names,
)
from tests.hostile_generators import dataset_variants, output_aliases, vote_file_variants

ROOT = Path(__file__).resolve().parent.parent
CONTROL_BYTES = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
SECONDS_PER_FILE = 60  # 13-14 commands; a hang (FIFO, /dev/zero) is caught here, not waited out


@pytest.fixture(scope="module")
def corpus_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict[str, object]]]:
    """Every corpus file through every subcommand: file name -> one record per command."""
    folder = tmp_path_factory.mktemp("hostile")
    out = tmp_path_factory.mktemp("exports")
    votes = hostile_votes(tmp_path_factory.mktemp("votes"))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PIQA_TUI_CONFIG": str(folder / "no-config.toml")}
    paths = build(folder)

    def run(batch: list[Path]) -> list[dict[str, object]]:
        argv = [
            sys.executable,
            str(ROOT / "tests" / "hostile_corpus.py"),
            "--run",
            str(out),
            str(votes),
            *map(str, batch),
        ]
        try:
            done = subprocess.run(argv, capture_output=True, timeout=SECONDS_PER_FILE * len(batch), env=env, cwd=ROOT)
        except subprocess.TimeoutExpired as exc:
            records = [json.loads(line) for line in (exc.stdout or b"").decode().splitlines()]
            stuck = records[-1]["file"] if records else batch[0].name
            return [
                *records,
                {"file": stuck, "argv": ["the command after the last one"], "code": "hang", "out": "", "err": ""},
            ]
        records = [json.loads(line) for line in done.stdout.decode().splitlines()]
        if done.returncode != 0:
            records.append(
                {
                    "file": batch[0].name,
                    "argv": ["driver"],
                    "code": done.returncode,
                    "out": "",
                    "err": done.stderr.decode()[-2000:],
                }
            )
        return records

    runs: dict[str, list[dict[str, object]]] = {p.name: [] for p in paths}
    with ThreadPoolExecutor(max_workers=2) as pool:
        for records in pool.map(run, batches(paths)):
            for record in records:
                runs[str(record["file"])].append(record)
    return runs


def _problems(record: dict[str, object]) -> list[str]:
    out, err = str(record["out"]), str(record["err"])
    found = []
    if record["code"] not in (0, 1, 2):
        found.append(f"exit {record['code']}")
    if len(err.strip().splitlines()) > 1:
        found.append("more than one line on stderr")
    if "internal error" in err or "Traceback" in err:
        found.append("internal error")
    if CONTROL_BYTES.search(out) or CONTROL_BYTES.search(err):
        found.append("control characters printed")
    return found


def test_every_command_survives_every_corpus_file(corpus_runs: dict[str, list[dict[str, object]]]) -> None:
    failures = [
        f"{name}: {' '.join(map(str, _argv(record)))}: {', '.join(problems)}: {str(record['err'])[:300]!r}"
        for name, records in corpus_runs.items()
        for record in records
        if (problems := _problems(record))
    ]
    assert not failures, "\n".join(failures)
    assert sum(map(len, corpus_runs.values())) > 300  # every file got every command


def _argv(record: dict[str, object]) -> list[str]:
    argv = record["argv"]
    assert isinstance(argv, list)
    return argv


def _record(runs: dict[str, list[dict[str, object]]], name: str, command: str, *flags: str) -> dict[str, object]:
    for record in runs[name]:
        argv = _argv(record)
        if argv[0] == command and all(f in argv for f in flags) and (flags or "--json" not in argv):
            return record
    raise AssertionError(f"no {command} run for {name}")


def test_escapes_are_shown_visibly_and_markup_literally(corpus_runs: dict[str, list[dict[str, object]]]) -> None:
    dedup = _record(corpus_runs, "escapes.tsv", "dedup")
    assert "a\\x1b]0;pwned\\x07" in str(dedup["out"])  # the id, harmless and visible
    stats = _record(corpus_runs, "escapes.tsv", "stats")
    assert stats["code"] == 0 and "[/]" in str(stats["out"]) and "[bold]x[/bold]" in str(stats["out"])
    validate = _record(corpus_runs, "escapes.tsv", "validate")
    assert "control-characters\tprompt has U+001B" in str(validate["out"])
    assert "U+009B" in str(validate["out"])  # C1 CSI too


def test_hostile_column_names_are_printed_as_text(corpus_runs: dict[str, list[dict[str, object]]]) -> None:
    """Generated column names and values with markup (``[@click=…]``, ``[link=…]``) and escape sequences:
    every table prints the markup as text, and no escape (the corpus-wide check) reaches the terminal."""
    for command in ("score", "stats", "agree"):
        record = _record(corpus_runs, "hostile-columns.tsv", command)
        assert record["code"] == 0, record
        assert "[@click=" in str(record["out"]) and "[link=" in str(record["out"]), command


def test_json_output_stays_exact(corpus_runs: dict[str, list[dict[str, object]]]) -> None:
    data = json.loads(str(_record(corpus_runs, "escapes.tsv", "validate", "--json")["out"]))
    ids = {p["item_id"] for p in data["problems"]}
    assert f"a{OSC0}" in ids
    stats = json.loads(str(_record(corpus_runs, "escapes.tsv", "stats", "--json")["out"]))
    assert stats["categories"]["category"]["[/]"] == 3


@pytest.mark.parametrize(
    ("name", "needle"),
    [
        ("deep.jsonl", "nests JSON"),
        ("long-label.tsv", "label"),
        ("long-id.jsonl", "digits"),
        ("surrogate.jsonl", "surrogate"),
        ("utf16-nobom.tsv", "UTF-16 without a byte-order mark"),
        ("cr-only.tsv", "carriage returns"),
        ("huge-header.tsv", "characters left out"),
        ("arabic-digit-label.tsv", "not ASCII digits"),
        ("fifth-solution.tsv", "solution4"),
        ("fifo.tsv", "not a regular file"),
        ("zero.tsv", "not a regular file"),
        ("folder.tsv", "folder"),
        ("loop.tsv", "symbolic links"),
        ("lst-folder.jsonl", "folder"),
        ("lst-fifo.jsonl", "not a regular file"),
        ("binary.csv", "not valid UTF-8"),
        *((entry.name, "not labels") for entry in huge_label_entries()),
        *((f"kernel-{k}.tsv", "the kernel makes up") for k in range(len(kernel_files()))),
    ],
)
def test_each_bad_file_is_named_in_one_honest_line(
    corpus_runs: dict[str, list[dict[str, object]]], name: str, needle: str
) -> None:
    record = _record(corpus_runs, name, "validate")
    assert record["code"] == 2, record
    assert needle in str(record["err"]), record["err"]
    assert len(str(record["err"])) < 1500


# ------------------------------------------------------------ export targets and workspaces (in process)

HEADER = "id\tprompt\tsolution0\tsolution1\tlabel\tnote\n"


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    from piqa_tui.cli.main import main

    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _one_line(err: str, *needles: str) -> None:
    assert err.count("\n") == 1 and "internal error" not in err, err
    for needle in needles:
        assert needle in err, (needle, err)


def test_export_targets_that_cannot_be_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "d.tsv"
    data.write_text(HEADER + "a\tp\tx\ty\t0\tn\n", encoding="utf-8")
    code, _, err = _run(["export", str(data), "--to", str(tmp_path / "missing" / "out.tsv")], capsys)
    assert code == 2
    _one_line(err, "missing does not exist")
    (tmp_path / "folder.tsv").mkdir()
    code, _, err = _run(["export", str(data), "--to", str(tmp_path / "folder.tsv"), "--force"], capsys)
    assert code == 2
    _one_line(err, "is a folder")
    votes = tmp_path / "v.tsv"
    votes.write_text("item_id\tannotator\tchoice\ttime\na\tamina\t0\t2026-01-01T00:00:00Z\n")
    assert _run(["votes", "import", str(data), str(votes)], capsys)[0] == 0
    code, _, err = _run(["votes", "export", str(data), str(tmp_path / "missing" / "v.tsv")], capsys)
    assert code == 2
    _one_line(err, "does not exist")


def test_parquet_dates_to_jsonl_and_mixed_types_to_parquet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import datetime

    import polars as pl

    source = tmp_path / "dated.parquet"
    pl.DataFrame(
        {"goal": ["g"], "sol1": ["a"], "sol2": ["b"], "label": [0], "when": [datetime.datetime(2024, 5, 1, 12, 30)]}
    ).write_parquet(source)
    code, _, err = _run(["export", str(source), "--to", str(tmp_path / "dated.jsonl")], capsys)
    assert code == 0, err
    assert json.loads((tmp_path / "dated.jsonl").read_text())["when"] == "2024-05-01T12:30:00"
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text(
        '{"goal": "g", "sol1": "a", "sol2": "b", "label": 0, "extra": 1}\n'
        '{"goal": "h", "sol1": "a", "sol2": "b", "label": 1, "extra": "x"}\n'
    )
    code, _, err = _run(["export", str(mixed), "--to", str(tmp_path / "mixed.parquet")], capsys)
    assert code == 2
    _one_line(err, "column 'extra' mixes value types (number, str)", "export to .jsonl")


def test_workspace_failures_are_named_and_only_a_broken_one_is_moved_aside(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import sqlite3

    from piqa_tui.core.workspace.log import Workspace, storage_error

    data = tmp_path / "d.tsv"
    data.write_text(HEADER + "a\tp\tx\ty\t0\tn\n", encoding="utf-8")
    broken = tmp_path / "broken.sqlite"
    broken.write_bytes(b"this is not a database at all" * 100)
    code, _, err = _run(["votes", "import", str(data), str(tmp_path / "v.tsv"), "--workspace", str(broken)], capsys)
    assert code == 2
    _one_line(err, "not a usable workspace database", "move it aside")

    good = tmp_path / "good.sqlite"
    Workspace(good).close()
    holder = sqlite3.connect(good, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another program holds the lock
    try:
        with pytest.raises(sqlite3.OperationalError) as locked:
            sqlite3.connect(good, timeout=0).execute("BEGIN IMMEDIATE")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    with pytest.raises(sqlite3.OperationalError) as readonly:
        sqlite3.connect(f"file:{good}?mode=ro", uri=True).execute("INSERT INTO meta VALUES ('k', 'v')")
    messages = [str(storage_error(good, e, "nothing was recorded")) for e in (locked.value, readonly.value)]
    assert "workspace busy" in messages[0]
    assert "cannot be written (read-only file, folder or disk)" in messages[1]
    assert not any("move it aside" in m for m in messages)


def test_no_place_for_a_workspace_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "d.tsv"
    data.write_text(HEADER + "a\tp\tx\ty\t0\tn\n", encoding="utf-8")
    votes = tmp_path / "v.tsv"
    votes.write_text("item_id\tannotator\tchoice\ttime\na\tamina\t0\t2026-01-01T00:00:00Z\n")
    not_a_folder = tmp_path / "home-is-a-file"
    not_a_folder.write_text("")
    code, _, err = _run(
        ["votes", "import", str(data), str(votes), "--workspace", str(not_a_folder / "w.sqlite")], capsys
    )
    assert code == 2
    _one_line(err, "cannot make the workspace", "--workspace")


# ------------------------------------------------------------------ spreadsheets


def test_formula_cells_are_counted_and_escaped_only_when_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "f.tsv"
    data.write_text(
        HEADER + 'a\t=HYPERLINK("http://evil")\t+cmd\t-1\t0\t@SUM(A1)\nb\tp\tx\ty\t1\t-0.5\n', encoding="utf-8"
    )
    plain, escaped = tmp_path / "plain.csv", tmp_path / "escaped.csv"
    code, out, _ = _run(["export", str(data), "--to", str(plain)], capsys)
    assert code == 0
    assert "3 cells begin with = + - or @" in out and "--escape-formulas" in out
    assert plain.read_text().splitlines()[1] == 'a,"=HYPERLINK(""http://evil"")",+cmd,-1,0,@SUM(A1)'  # exact by default
    code, out, _ = _run(["export", str(data), "--to", str(escaped), "--escape-formulas"], capsys)
    assert code == 0 and "written with a leading '" in out
    lines = escaped.read_text().splitlines()
    assert lines[1] == 'a,"\'=HYPERLINK(""http://evil"")",\'+cmd,-1,0,\'@SUM(A1)'  # plain numbers stay numbers
    assert lines[2] == "b,p,x,y,1,-0.5"
    code, out, _ = _run(["export", str(data), "--to", str(tmp_path / "e.tsv"), "--escape-formulas", "--json"], capsys)
    assert json.loads(out)["formula_cells"] == 3
    assert (tmp_path / "e.tsv").read_text().splitlines()[1].startswith("a\t'=HYPERLINK")


# ------------------------------------------------------------------ the generated classes (in process)


def test_numbers_too_large_to_be_labels_never_reach_the_counts(corpus_runs: dict[str, list[dict[str, object]]]) -> None:
    """Every command on labels past six digits or 64 bits (JSON, TSV, Parquet of every integer and float
    type): one line naming the rows, never an OverflowError in agree or card."""
    for entry in huge_label_entries():
        for record in corpus_runs[entry.name]:
            assert record["code"] == 2 and "not labels" in str(record["err"]), (SEED, entry.name, record)


def test_file_names_that_are_not_utf8_work_everywhere(corpus_runs: dict[str, list[dict[str, object]]]) -> None:
    """A name with bytes that are not UTF-8: every command works on it (exports and votes too) and shows
    the odd bytes as visible escapes."""
    for name in undecodable_names():
        for record in corpus_runs[name]:
            if _argv(record)[:2] == ["votes", "import"]:  # the hostile votes file: refused for its own reason
                assert "repeats column" in str(record["err"]), record
                continue
            assert record["code"] in (0, 1), (SEED, name, record)
        stats = _record(corpus_runs, name, "stats")
        assert "\\udc" in str(stats["out"]), stats


@pytest.mark.parametrize("spec", label_base_specs())
def test_label_base_is_ascii_0_or_1(tmp_path: Path, capsys: pytest.CaptureFixture[str], spec: str) -> None:
    data = tmp_path / "d.tsv"
    data.write_text(HEADER + "a\tp\tx\ty\t1\tn\n", encoding="utf-8")
    mapping = f"prompt=prompt,solutions=solution0|solution1,label=label,label_base={spec}"
    for command in ("validate", "agree", "card"):
        code, _, err = _run([command, str(data), "--map", mapping], capsys)
        assert code == 2, (SEED, spec, err)
        _one_line(err, "label_base must be 0 or 1")


@pytest.mark.parametrize(("name", "text"), hostile_configs(), ids=[name for name, _ in hostile_configs()])
def test_hostile_config_files_are_one_line_or_read_as_meant(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, name: str, text: bytes
) -> None:
    config = tmp_path / "config.toml"
    config.write_bytes(text)
    monkeypatch.setenv("PIQA_TUI_CONFIG", str(config))
    data = tmp_path / "d.tsv"
    data.write_text(HEADER + "a\tp\tx\ty\t1\tn\n", encoding="utf-8")
    code, out, err = _run(["stats", str(data)], capsys)
    if name.startswith("bom"):  # a BOM from a Windows editor is no statement: the settings are read
        assert code == 0 and err == "", err
        from piqa_tui.settings.config import load_config

        assert load_config(config).annotator == "amina"
        return
    assert code == 2, (SEED, name, err)
    _one_line(err, "config")


@pytest.mark.parametrize(("keys", "remapped", "other"), conflicting_key_tables())
def test_a_key_given_to_two_live_actions_is_refused_at_start(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    keys: dict[str, str],
    remapped: str,
    other: str,
) -> None:
    """``[keys] vote_2 = "1"`` would make 1 vote for solution 2: the TUI does not start, and says which
    two actions share the key (through the command line's start path, before any screen opens)."""
    config = tmp_path / "config.toml"
    config.write_text("[keys]\n" + "".join(f'{a} = "{k}"\n' for a, k in keys.items()), encoding="utf-8")
    monkeypatch.setenv("PIQA_TUI_CONFIG", str(config))
    data = tmp_path / "d.tsv"
    data.write_text(HEADER + "a\tp\tx\ty\t1\tn\n", encoding="utf-8")
    code, _, err = _run([str(data)], capsys)
    assert code == 2, (SEED, keys, err)
    from piqa_tui.tui.keymap import key_conflicts

    found = key_conflicts(keys)
    assert other in {c.other for c in found}  # the collision made on purpose is among those found
    _one_line(err, f"[keys] {remapped} ", f" {found[0].other} ", "another key")  # the first one, named


def test_remapping_without_a_clash_still_starts(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Swapping two vote keys, or moving quit to a free key, is no conflict."""
    import argparse

    from piqa_tui.cli.open_tui import settings_from

    config = tmp_path / "config.toml"
    config.write_text('[keys]\nvote_1 = "2"\nvote_2 = "1"\nquit = "ctrl+q,O"\n', encoding="utf-8")
    monkeypatch.setenv("PIQA_TUI_CONFIG", str(config))
    data = tmp_path / "d.tsv"
    data.write_text(HEADER + "a\tp\tx\ty\t1\tn\n", encoding="utf-8")
    args = argparse.Namespace(
        path=str(data), workspace=None, mapping=None, annotator=None, bidi="off", theme=None, reviewer=False
    )
    args.check_terminal = False
    assert settings_from(args).keys["vote_1"] == "2"


@pytest.mark.parametrize("kernel_file", kernel_files(), ids=str)
def test_kernel_files_are_refused_without_reading_them(tmp_path: Path, kernel_file: Path) -> None:
    """/proc and /sys files say "regular, size 0" and may block on read (/proc/kmsg): as a dataset, as a
    votes file and as the config, every command gives one line at once (a child process, time-limited)."""
    data = tmp_path / "d.tsv"
    data.write_text(HEADER + "a\tp\tx\ty\t1\tn\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PIQA_TUI_CONFIG": str(tmp_path / "none.toml")}
    link = tmp_path / "votes.tsv"  # a name with a known suffix, so the file itself is looked at
    link.symlink_to(kernel_file)
    runs = [
        (["validate", str(kernel_file)], env),
        (["validate", str(link)], env),
        (["votes", "import", str(data), str(link)], env),
        (["stats", str(data)], {**env, "PIQA_TUI_CONFIG": str(kernel_file)}),
    ]
    for argv, environment in runs:
        done = subprocess.run(
            [sys.executable, "-m", "piqa_tui.cli.main", *argv],
            capture_output=True,
            text=True,
            timeout=60,
            env=environment,
        )
        assert done.returncode == 2, (argv, done.stderr)
        _one_line(done.stderr, "the kernel makes up")


async def test_the_tui_opens_votes_and_exports_a_file_whose_name_is_not_utf8(tmp_path: Path) -> None:
    """The TUI on a name with bytes that are not UTF-8: it opens, records a vote, and its export prompt
    (the name in an editable field, laid out by the bidi engine) writes beside it."""
    import shutil

    from piqa_tui.tui.screens.main import MainScreen
    from tests.tui.conftest import make_app, wait_for

    path = tmp_path / undecodable_names()[0]
    shutil.copy(ROOT / "samples" / "darija-algerian.tsv", path)
    app = make_app(path)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, MainScreen))
        await pilot.press("1", "a")
        await pilot.pause(0.2)
        await pilot.press("escape", "X")
        await wait_for(pilot, lambda: not isinstance(app.screen, MainScreen))
        await pilot.press("enter")
        await wait_for(
            pilot, lambda: any(p.name.endswith(path.suffix) and ".export" in p.name for p in tmp_path.iterdir())
        )
    assert app.error_message is None


# ------------------------------------------------------------ names that print alike (in process)


def test_validate_names_item_ids_that_print_alike(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from piqa_tui.core.text.terminal_safe import show_invisible

    rows = "".join(f"{item_id}\tp{k}\ta\tb\t0\tn\n" for k, pair in enumerate(id_twins()) for item_id in pair)
    path = tmp_path / "ids.tsv"
    path.write_text(HEADER + rows, encoding="utf-8")
    code, out, err = _run(["validate", str(path)], capsys)
    assert code == 0 and "item ids that print alike" in err
    _one_line(err, *(f"{a} and {show_invisible(b)}" for a, b in id_twins()))


def test_validate_names_a_file_that_prints_like_its_neighbour(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from piqa_tui.core.text.terminal_safe import show_invisible

    ((name, twin),) = invisible_twins(("data",))
    for stem in (name, twin):
        (tmp_path / f"{stem}.tsv").write_text(HEADER + "a\tp\tx\ty\t0\tn\n", encoding="utf-8")
    code, _, err = _run(["validate", str(tmp_path / f"{twin}.tsv")], capsys)
    assert code == 0
    _one_line(err, "file names that print alike", f"{name}.tsv and {show_invisible(twin)}.tsv")
    (tmp_path / f"{name}.tsv").unlink()
    assert _run(["validate", str(tmp_path / f"{twin}.tsv")], capsys)[2] == ""  # alone, it is just a name


def test_votes_import_shows_the_invisible_characters_of_a_rejected_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from piqa_tui.core.text.terminal_safe import show_invisible

    data = tmp_path / "data.tsv"
    data.write_text(HEADER + "a1\tp\tx\ty\t0\tn\n", encoding="utf-8")
    ((_, twin),) = invisible_twins(("a1",))
    (name, other), *_ = invisible_twins()
    votes = tmp_path / "votes.tsv"
    votes.write_text(
        "item_id\tannotator\tchoice\ttime\n"
        f"{twin}\tamina\t1\t2026-01-01T00:00:00Z\n"
        f"a1\t{name}\t0\t2026-01-01T00:00:01Z\na1\t{other}\t1\t2026-01-01T00:00:02Z\n",
        encoding="utf-8",
    )
    code, out, err = _run(["votes", "import", str(data), str(votes)], capsys)
    lines = err.splitlines()
    assert code == 1 and len(lines) == 2 and "2 new" in out, err
    assert show_invisible(twin) in lines[0] and "<U+" in lines[0]  # the bad line, then the held warning
    assert f"{name} and {show_invisible(other)}" in lines[1]
    code, out, err = _run(["votes", "import", str(data), str(votes), "--json"], capsys)
    assert json.loads(out)["bad"] and "print alike" in err and err.count("\n") == 1


# ------------------------------------------------------------ generated variants (in process, fast)

GENERATED_DATASETS = 100  # each through the commands below: a few hundred runs in all
GENERATED_COMMANDS = [["validate"], ["validate", "--json"], ["stats"], ["agree", "--markdown"], ["card"]]


def _generated_problems(record: dict[str, object], faults: tuple[str, ...]) -> list[str]:
    """What is wrong with one in-process run: the exit code, a traceback, raw control bytes, too many lines."""
    err, out = str(record["err"]), str(record["out"])
    found = []
    if record["code"] not in (0, 1, 2):
        found.append(f"exit {record['code']}")
    if "Traceback" in err or "internal error" in err:
        found.append("internal error")
    if CONTROL_BYTES.search(out + err):
        found.append(f"control byte {CONTROL_BYTES.search(out + err)!r}")
    if len(err.splitlines()) > max(1, len(faults)):
        found.append(f"{len(err.splitlines())} lines on stderr for {len(faults)} fault(s)")
    return found


def test_generated_datasets_through_the_commands(tmp_path: Path) -> None:
    from tests.hostile_corpus import run_in_process

    failures = []
    for variant in dataset_variants(GENERATED_DATASETS):
        path = variant.write(tmp_path)
        for command in GENERATED_COMMANDS:
            record = run_in_process([command[0], str(path), *command[1:]])
            if problems := _generated_problems(record, variant.faults):
                failures.append(f"{variant.name} {variant.faults} {command}: {problems}: {str(record['err'])[:300]}")
    assert not failures, f"seed {SEED}:\n" + "\n".join(failures[:20])


def test_generated_vote_files_keep_their_good_lines(tmp_path: Path) -> None:
    from tests.hostile_corpus import run_in_process

    failures = []
    for variant in vote_file_variants(40, [f"q{k}" for k in range(5)]):
        folder = tmp_path / variant.name  # a workspace of its own: warnings are about this file's names alone
        folder.mkdir()
        data = folder / "data.tsv"
        data.write_text(HEADER + "".join(f"q{k}\tp{k}\ta\tb\t0\tn\n" for k in range(5)), encoding="utf-8")
        votes = variant.write(folder)
        record = run_in_process(["votes", "import", str(data), str(votes)])
        bad = len([line for line in str(record["err"]).splitlines() if "warning:" not in line])
        problems = _generated_problems(record, variant.faults)
        if bad > len(variant.faults):
            problems.append(f"{bad} rejected lines for {len(variant.faults)} bad one(s)")
        if _lines(votes) > len(variant.faults) and not _kept(data):  # one fault per bad line
            problems.append("the good lines were lost")
        if problems:
            failures.append(f"{variant.name} {variant.faults}: {problems}: {str(record['err'])[:300]}")
    assert not failures, f"seed {SEED}:\n" + "\n".join(failures[:20])


def test_no_writer_replaces_the_dataset_or_its_workspace_by_any_name(tmp_path: Path) -> None:
    from piqa_tui.core.workspace.project import Project
    from tests.hostile_corpus import run_in_process

    data = tmp_path / "data.tsv"
    data.write_text(HEADER + "q0\tp\ta\tb\t0\tn\nq1\tp\ta\tb\t1\tn\n", encoding="utf-8")
    project = Project.open(data, annotator="amina")
    project.vote("q0", "1")
    assert project.workspace is not None
    workspace = project.workspace.path
    project.workspace.close()
    before = {p: p.read_bytes() for p in (data, workspace)}
    failures = []
    for how, target in output_aliases(data, workspace):
        t = str(target)
        for argv in (
            ["export", str(data), "--to", t, "--force"],
            ["card", str(data), "--to", t, "--force"],
            ["votes", "export", str(data), t, "--force"],
            ["workspace", "backup", str(workspace), t, "--force"],
        ):
            record = run_in_process(argv)
            problems = _generated_problems(record, ("alias",))
            if record["code"] == 0:
                problems.append("accepted")
            if {p: p.read_bytes() for p in before} != before:
                problems.append("CHANGED THE FILE")
            if problems:
                failures.append(f"{how} ({t}) {argv[0]}: {problems}: {str(record['err'])[:200]}")
    assert not failures, f"seed {SEED}:\n" + "\n".join(failures[:20])


def _lines(votes: Path) -> int:
    return len(votes.read_bytes().splitlines()) - 1


def _kept(data: Path) -> bool:
    """Whether the workspace of ``data`` holds any vote (what an import with a good line must leave)."""
    from piqa_tui.core.workspace.project import Project

    project = Project.open(data)
    try:
        return project.workspace is not None and bool(project.workspace.annotator_names())
    finally:
        if project.workspace is not None:
            project.workspace.close()
