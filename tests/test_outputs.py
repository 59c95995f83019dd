"""Exports never destroy: not the source dataset, not the workspace or its WAL/SHM, and another existing
file only with --force (each command that writes a file, run as a real process)."""

from __future__ import annotations

import argparse
import ast
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from piqa_tui.core.errors import ExistingOutput, OutputRefused
from piqa_tui.core.workspace.project import Project

from .conftest import copy_sample

CLI = [sys.executable, "-m", "piqa_tui.cli.main"]


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *map(str, args)], capture_output=True, text=True, timeout=120)


@pytest.fixture
def voted(tmp_path: Path) -> Path:
    """The Darija sample with a workspace holding a vote and an edit (still open: its WAL exists)."""
    path = copy_sample("darija-algerian.tsv", tmp_path)
    project = Project.open(path, annotator="amina")
    project.vote(project.items[0].id, "1")
    project.edit(project.items[1].id, {"prompt": "بدّلت السؤال"})
    project.workspace.close()
    return path


def unchanged(path: Path, before: bytes) -> bool:
    return path.read_bytes() == before


@pytest.mark.parametrize("suffix", ["", "-wal", "-shm"])
def test_export_onto_the_workspace_is_refused(voted: Path, suffix: str) -> None:
    db = voted.with_name(voted.name + ".piqa.sqlite")
    target = Path(f"{db}{suffix}")
    done = cli("export", voted, "--to", target, "--format", "tsv", "--force")
    assert done.returncode == 2 and "the workspace" in done.stderr and "Traceback" not in done.stderr
    header = voted.read_bytes().split(b"\n")[0]
    assert not target.exists() or header not in target.read_bytes()  # SQLite's file, not the export
    reopened = Project.open(voted, annotator="amina")
    assert reopened.state.votes[reopened.items[0].id]["amina"].choice == "1"  # the work is all still there


def test_export_onto_the_source_is_refused_even_with_force(voted: Path) -> None:
    before = voted.read_bytes()
    for extra in ([], ["--force"]):
        done = cli("export", voted, "--to", voted, *extra)
        assert done.returncode == 2 and "source dataset" in done.stderr
    link = voted.with_name("same-file.tsv")
    link.symlink_to(voted)  # another name for the same file is the same file
    done = cli("export", voted, "--to", link, "--force")
    assert done.returncode == 2 and "source dataset" in done.stderr
    assert unchanged(voted, before)


def test_export_onto_the_labels_file_of_a_piqa_dataset_is_refused(piqa_copy: Path, tmp_path: Path) -> None:
    labels = piqa_copy.with_name("valid-labels.lst")
    before = labels.read_bytes()
    sibling = tmp_path / "valid-labels.jsonl"  # would write valid-labels.jsonl plus valid-labels-labels.lst: fine
    assert cli("export", piqa_copy, "--to", sibling).returncode == 0
    done = cli("export", piqa_copy, "--to", labels, "--format", "tsv", "--force")
    assert done.returncode == 2 and "source dataset" in done.stderr
    assert unchanged(labels, before)


def test_an_existing_file_needs_force(voted: Path, tmp_path: Path) -> None:
    out = tmp_path / "release.tsv"
    out.write_text("keep me\n", encoding="utf-8")
    done = cli("export", voted, "--to", out)
    assert done.returncode == 2 and "already exists" in done.stderr and "--force" in done.stderr
    assert out.read_text(encoding="utf-8") == "keep me\n"
    done = cli("export", voted, "--to", out, "--force")
    assert done.returncode == 0, done.stderr
    assert "بدّلت السؤال" in out.read_text(encoding="utf-8")


def test_votes_export_card_and_backup_follow_the_same_rules(voted: Path, tmp_path: Path) -> None:
    db = voted.with_name(voted.name + ".piqa.sqlite")
    before = db.read_bytes()
    assert cli("votes", "export", voted, db, "--force").returncode == 2
    assert cli("card", voted, "--out", voted, "--force").returncode == 2
    assert unchanged(db, before) and "بدّلت" not in voted.read_text(encoding="utf-8")
    existing = tmp_path / "votes.tsv"
    existing.write_text("old\n", encoding="utf-8")
    refused = cli("votes", "export", voted, existing)
    assert refused.returncode == 2 and existing.read_text(encoding="utf-8") == "old\n"
    assert cli("votes", "export", voted, existing, "--force").returncode == 0
    assert existing.read_text(encoding="utf-8").startswith("item_id")
    card = tmp_path / "CARD.md"
    card.write_text("old\n", encoding="utf-8")
    assert cli("card", voted, "--out", card).returncode == 2 and card.read_text(encoding="utf-8") == "old\n"
    assert cli("card", voted, "--out", card, "--force").returncode == 0 and card.read_text(encoding="utf-8") != "old\n"


def test_project_export_refuses_before_writing_anything(voted: Path, tmp_path: Path) -> None:
    project = Project.open(voted, annotator="amina")
    with pytest.raises(OutputRefused, match="workspace"):
        project.export(project.workspace_path, fmt="tsv", replace=True)
    out = tmp_path / "out.tsv"
    out.write_text("x\n", encoding="utf-8")
    with pytest.raises(ExistingOutput):
        project.export(out)
    assert out.read_text(encoding="utf-8") == "x\n"
    project.save()  # the explicit save of the edits is the one write over the source
    assert "بدّلت السؤال" in voted.read_text(encoding="utf-8")


# ----------------------------------------------------------------------------------------------
# One guard for every writer: the command registry and the code, walked


def run_main(*args: object) -> tuple[int, str]:
    """``piqa-tui ARGS`` in this process: the exit code and what went to stderr."""
    import contextlib
    import io

    from piqa_tui.cli.main import main

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main([str(a) for a in args])
    return code, err.getvalue()


# How each command that writes a file is told where: (command, the option's dest) -> the arguments, OUT last
# filled in. A new output option fails test_every_output_option_is_known until it is added here.
OUTPUT_COMMANDS = {
    ("export", "to"): lambda ds, ws, out: ["export", ds, "--workspace", ws, "--to", out, "--format", "tsv"],
    ("export", "release"): lambda ds, ws, out: ["export", ds, "--workspace", ws, "--release", out],
    ("votes", "file"): lambda ds, ws, out: ["votes", "export", ds, out, "--workspace", ws],
    ("card", "to"): lambda ds, ws, out: ["card", ds, "--workspace", ws, "--to", out],
    ("score", "output"): lambda ds, ws, out: [
        *("score", ds, "--workspace", ws, "--server", "http://127.0.0.1:9", "--output", out),
    ],
    ("workspace", "out"): lambda ds, ws, out: ["workspace", "backup", ws, out],
    ("release", "to"): lambda ds, ws, out: ["release", "rebuild", ds, "v1", "--workspace", ws, "--to", out],
}
OUTPUT_DESTS = {"to", "out", "output", "file", "outfile", "target", "dest", "destination", "release"}


def test_every_output_option_is_known() -> None:
    """Walk the command registry: every option that names a file to write is in OUTPUT_COMMANDS."""
    from piqa_tui.cli.commands import COMMANDS
    from piqa_tui.cli.main import command_parser

    def actions(parser: argparse.ArgumentParser) -> Iterator[argparse.Action]:
        for action in parser._actions:
            yield action
            if isinstance(action, argparse._SubParsersAction):  # `workspace backup OUT`: a subcommand's own options
                for sub in dict.fromkeys(action.choices.values()):
                    yield from actions(sub)

    found = {(name, a.dest) for name in COMMANDS for a in actions(command_parser(name)) if a.dest in OUTPUT_DESTS}
    assert found == set(OUTPUT_COMMANDS)


def _work_files(voted: Path) -> dict[str, Path]:
    """The files no output may replace, some through other names: a symlink, a hard link, a relative path."""
    default_ws = voted.with_name(voted.name + ".piqa.sqlite")
    link = voted.with_name("link-to-dataset.tsv")
    link.symlink_to(voted)
    ws_link = voted.with_name("link-to-workspace")
    ws_link.symlink_to(default_ws)
    hard = voted.with_name("hard-link.tsv")
    os.link(voted, hard)
    return {
        "dataset": voted,
        "dataset symlink": link,
        "dataset hard link": hard,
        "default workspace": default_ws,
        "default workspace symlink": ws_link,
        "default workspace WAL": Path(f"{default_ws}-wal"),
        "default workspace SHM": Path(f"{default_ws}-shm"),
    }


@pytest.mark.parametrize("command", sorted(OUTPUT_COMMANDS), ids="-".join)
def test_no_command_writes_over_the_work_even_with_force(
    voted: Path, tmp_path: Path, command: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every writer, with --force, refuses the dataset and the dataset's own workspace even when
    --workspace names another one, and the workspace it was given: one line, exit 2, every byte kept."""
    other = tmp_path / "other.piqa.sqlite"
    assert run_main("workspace", "backup", voted.with_name(voted.name + ".piqa.sqlite"), other)[0] == 0
    monkeypatch.chdir(tmp_path)
    targets = _work_files(voted)
    targets.update({"given workspace": other, "given workspace relative": Path("other.piqa.sqlite")})
    dataset = voted.read_bytes()
    workspace = other if command != ("workspace", "out") else voted.with_name(voted.name + ".piqa.sqlite")
    for what, target in targets.items():
        if command == ("workspace", "out") and what.startswith("given"):
            continue
        code, err = run_main(*OUTPUT_COMMANDS[command](voted, workspace, target), "--force")
        assert code == 2, (what, err)
        assert "destroy" in err and err.count("\n") == 1, (what, err)
    assert voted.read_bytes() == dataset
    for ws in (other, voted.with_name(voted.name + ".piqa.sqlite")):  # both workspaces whole, the vote in each
        assert Project.open(voted, workspace=ws, annotator="amina").state.votes, ws


def test_a_backup_never_replaces_the_dataset_its_workspace_belongs_to(voted: Path, tmp_path: Path) -> None:
    """``workspace backup WS data.tsv --force``: refused by the name (data.tsv.piqa.sqlite) and by the
    binding stored in the workspace, also when WS is reached through a symlink or copied elsewhere."""
    ws = voted.with_name(voted.name + ".piqa.sqlite")
    before = voted.read_bytes()
    link = tmp_path / "elsewhere.sqlite"
    link.symlink_to(ws)
    moved = tmp_path / "copy-with-another-name.sqlite"
    assert run_main("workspace", "backup", ws, moved)[0] == 0
    for source in (ws, link, moved):
        code, err = run_main("workspace", "backup", source, voted, "--force")
        assert code == 2 and "dataset" in err and "destroy" in err, err
    assert voted.read_bytes() == before


# Calls that create or replace a file. A function holding one is a writer; so is every function that
# calls a writer without checking its output with the guard (check_outputs) itself.
RAW_WRITE_CALLS = {  # unambiguous by name, whatever they are called on
    "write_text",
    "write_bytes",
    "write_parquet",
    "write_csv",
    "write_ndjson",
    "write_json",
    "write_ipc",
    "sink_parquet",
    "mkstemp",
    "NamedTemporaryFile",
    "symlink_to",
    "hardlink_to",
    "backup",  # sqlite3.Connection.backup
}
MODULE_WRITE_CALLS = {  # ambiguous names (str.replace), counted on these modules only
    "os": {"replace", "rename", "renames", "link", "symlink", "truncate"},
    "shutil": {"copy", "copy2", "copyfile", "copytree", "move"},
}
GUARD_CALLS = {"check_outputs"}
# Writers that write no output a user names, each with why the guard is not theirs.
NOT_OUTPUTS = {
    "piqa_tui.core.workspace.log:write_refusal": "opens the workspace read-write and closes it, writing nothing: why SQLite could not",
    "piqa_tui.core.workspace.project:Project.save": "the one write over the source: saving the edits (ctrl+s)",
    "piqa_tui.core.workspace.log:Workspace._restore_deleted": "the workspace written back to its own path",
    "piqa_tui.core.workspace.log:Workspace._set_aside": "this session's copy beside a replaced workspace",
    "piqa_tui.tui.screens.main.fields:FieldEditors.edit_externally": "a temporary file for $EDITOR, in the temp folder",
    "piqa_tui.tui.screens.check_terminal:write_width_policy": "the user's own config file (the width mode setting)",
    "piqa_tui.tui.terminal.probe:measure": "the terminal (/dev/tty), asked how wide it draws text",
    "piqa_tui.core.scoring.process:ProcessBackend._start": "the model process's stderr log, in the temp folder",
    "piqa_tui.core.sync.batch:write_batch": "a sync batch, new, in the repository folder only this machine writes",
    "piqa_tui.core.sync.git:Repository.ensure_rules": "the repository's .gitignore and .gitattributes rules, appended",
}


def _opens_for_writing(call: ast.Call) -> bool:
    """``open(path, "w")``, ``path.open("rb+")``, ``os.open(path, os.O_WRONLY | ...)``."""
    func = call.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
    if name != "open":
        return False
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "os":
        flags = ast.unparse(call.args[1]) if len(call.args) > 1 else ""
        return any(flag in flags for flag in ("O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND"))
    position = 0 if isinstance(func, ast.Attribute) and not (isinstance(func.value, ast.Name)) else 1
    modes = [kw.value for kw in call.keywords if kw.arg == "mode"] + call.args[position : position + 1]
    return any(isinstance(m, ast.Constant) and isinstance(m.value, str) and set(m.value) & set("wax+") for m in modes)


def _called_name(call: ast.Call) -> str | None:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def _writes(call: ast.Call) -> bool:
    """Whether ``call`` creates or replaces a file."""
    func = call.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        if func.attr in MODULE_WRITE_CALLS.get(func.value.id, ()):
            return True
    return _opens_for_writing(call) or _called_name(call) in RAW_WRITE_CALLS


def _package_sources() -> dict[str, str]:
    """Every module of the package by dotted name, as text."""
    import piqa_tui

    package = Path(piqa_tui.__file__).parent
    return {
        ".".join(path.relative_to(package.parent).with_suffix("").parts).removesuffix(".__init__"): path.read_text(
            encoding="utf-8"
        )
        for path in sorted(package.rglob("*.py"))
    }


def _functions(sources: dict[str, str]) -> dict[str, tuple[str, set[str], bool]]:
    """Every outermost function and method: its simple name, the names it calls (nested functions
    included), and whether it writes a file itself."""
    found = {}
    for module, text in sources.items():
        units: list[tuple[str, ast.AST]] = []
        for node in ast.parse(text).body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                units.append((node.name, node))
            elif isinstance(node, ast.ClassDef):
                units.extend(
                    (f"{node.name}.{item.name}", item)
                    for item in node.body
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
                )
        for qualname, unit in units:
            calls = [n for n in ast.walk(unit) if isinstance(n, ast.Call)]
            names = {name for call in calls if (name := _called_name(call))}
            found[f"{module}:{qualname}"] = (qualname.rpartition(".")[2], names, any(_writes(c) for c in calls))
    return found


def _unguarded_writers(sources: dict[str, str]) -> list[str]:
    """Functions that write a file, or call one that does, and that nothing checked with the guard
    (followed up the callers, by name, until every path meets check_outputs): each one a bug."""
    functions = _functions(sources)
    guarded = {key for key, (_, calls, _) in functions.items() if calls & GUARD_CALLS}
    pending = [key for key, (_, _, raw) in functions.items() if raw]
    seen, problems = set(), set()
    while pending:
        key = pending.pop()
        if key in seen or key in guarded or key in NOT_OUTPUTS:
            continue
        seen.add(key)
        callers = [other for other, (_, calls, _) in functions.items() if other != key and functions[key][0] in calls]
        if not callers or key.startswith("piqa_tui.cli.commands.") and key.endswith(":run"):
            problems.add(f"{key} writes a file that no check_outputs call guards")
        pending.extend(callers)
    return sorted(problems)


def test_every_file_the_program_writes_goes_through_the_output_guard() -> None:
    """Walk the code: every call that writes a file is reached only from functions that ask
    ``check_outputs`` first (or is one of the few writes that are no user output, each named above)."""
    sources = _package_sources()
    assert _unguarded_writers(sources) == []
    assert set(NOT_OUTPUTS) <= set(_functions(sources)), "a NOT_OUTPUTS entry names a function that is gone"


ROGUE_COMMANDS = {
    "atomic_write": "from piqa_tui.core.dataset.atomic import atomic_write\n\ndef run(args):\n    atomic_write(args.to, 'x')\n",
    "write_dataset": "def run(args):\n    project = open_project(args)\n    write_dataset(project.dataset, [], args.to)\n",
    "open": "def run(args):\n    with open(args.to, 'w') as fh:\n        fh.write('x')\n",
    "backup": "def run(args):\n    copy_database(connect(args.path), args.out)\n",
    "helper": "def _dump(out):\n    Path(out).write_text('x')\n\ndef run(args):\n    _dump(args.to)\n",
}


@pytest.mark.parametrize("how", sorted(ROGUE_COMMANDS))
def test_the_walk_finds_a_new_command_that_forgets_the_guard(how: str) -> None:
    """The walk itself: a new command that writes a file, any way, without check_outputs is named."""
    sources = {**_package_sources(), "piqa_tui.cli.commands.rogue": ROGUE_COMMANDS[how]}
    assert any("piqa_tui.cli.commands.rogue:run" in problem for problem in _unguarded_writers(sources))
    guarded = ROGUE_COMMANDS[how].replace(
        "def run(args):\n", "def run(args):\n    check_outputs([args.to], {}, False)\n"
    )
    sources["piqa_tui.cli.commands.rogue"] = guarded
    assert not any("rogue" in problem for problem in _unguarded_writers(sources))


def test_a_workspace_named_on_the_dataset_is_refused_before_sqlite_touches_it(voted: Path, piqa_copy: Path) -> None:
    """``--workspace data.tsv`` (or a link to it, or PIQA's labels file): one line, and no advice to move
    the dataset aside as a broken database."""
    link = voted.with_name("link.sqlite")
    link.symlink_to(voted)
    labels = piqa_copy.with_name("valid-labels.lst")
    before = {p: p.read_bytes() for p in (voted, labels)}
    for dataset, workspace in ((voted, voted), (voted, link), (piqa_copy, labels)):
        for command in (["stats", dataset], ["votes", "import", dataset, dataset]):
            code, err = run_main(*command, "--workspace", workspace)
            assert code == 2 and "not a workspace" in err and "move it aside" not in err, err
            assert err.count("\n") == 1
    assert all(p.read_bytes() == b for p, b in before.items())
