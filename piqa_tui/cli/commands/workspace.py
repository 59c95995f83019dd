"""``piqa-tui workspace check|backup|merge|conflicts``: the workspace file as a whole.

Each action is a subcommand with arguments of its own, named for what they are:
``check WORKSPACE`` runs SQLite's integrity check and says what the file holds (events,
votes, annotators, items, scores); exit 1 when it is damaged. ``backup WORKSPACE OUT`` writes
a consistent single-file copy with SQLite's online backup, safe to take while
annotators work; OUT is written atomically and replaced only with ``--force``.
``merge DATASET OTHER`` brings another copy's work into the dataset's workspace: the two logs
are merged first (``core.sync.merge``: the other file read-only, every event through the gate,
the binding checked from the binding rows and the dataset file's hash), then the state is derived
once, for the conflicts it names. ``conflicts DATASET`` lists the fields two people changed
concurrently, exit 1 when there are any.
"""

from __future__ import annotations

import argparse
from dataclasses import asdict
from pathlib import Path

from piqa_tui.cli.commands.dataset_args import open_project, print_json, say, warn
from piqa_tui.cli.exit_codes import DATA_PROBLEMS, OK
from piqa_tui.core.dataset.reading import read_source
from piqa_tui.core.sync.merge import MergeReport, merge_workspace
from piqa_tui.core.text.terminal_safe import message_line, shortened, show_invisible
from piqa_tui.core.workspace.integrity import (
    Contents,
    backup_workspace,
    check_workspace,
)
from piqa_tui.core.workspace.log import Workspace, default_location
from piqa_tui.core.workspace.outputs import check_outputs, check_workspace_path, workspace_protected_files
from piqa_tui.core.workspace.project import FieldConflict, Project


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", required=True, metavar="{check,backup,merge,conflicts}")
    check = actions.add_parser("check", help="SQLite's integrity check and what the file holds; exit 1 when damaged")
    check.add_argument("workspace_file", metavar="WORKSPACE", help="the workspace file (DATASET.piqa.sqlite)")
    backup = actions.add_parser("backup", help="a consistent single-file copy, safe while others work")
    backup.add_argument("workspace_file", metavar="WORKSPACE", help="the workspace file (DATASET.piqa.sqlite)")
    backup.add_argument("out", metavar="OUT", help="the file to write the copy to")
    backup.add_argument("--force", action="store_true", help="replace OUT if it exists")
    merge = actions.add_parser("merge", help="bring another copy's work into the dataset's workspace")
    merge.add_argument("path", metavar="DATASET", help="the dataset file whose workspace receives the work")
    merge.add_argument("other", metavar="OTHER", help="the other copy's workspace file (OTHER.piqa.sqlite)")
    merge.add_argument("--force", action="store_true", help="merge a copy made on a different dataset file")
    conflicts = actions.add_parser("conflicts", help="list the fields two people changed concurrently")
    conflicts.add_argument("path", metavar="DATASET", help="the dataset file")
    for action in (merge, conflicts):
        action.add_argument(
            "--workspace", metavar="FILE", help="the dataset's workspace (default: DATASET.piqa.sqlite)"
        )
        action.add_argument("--annotator", metavar="NAME", help="who is acting")
    for action in (check, backup, merge, conflicts):
        action.add_argument("--json", action="store_true", help="machine-readable output on stdout")


def run(args: argparse.Namespace) -> int:
    if args.action == "merge":
        return merge(args)
    if args.action == "conflicts":
        return list_conflicts(open_project(args), args.json)
    path = Path(args.workspace_file)
    if args.action == "check":
        return report(check_workspace(path), args.json, "")
    out = Path(args.out)
    check_outputs([out], workspace_protected_files(path), replace=args.force)  # the dataset too
    return report(backup_workspace(path, out), args.json, f"copied {path} to {out}: ")


def report(contents: Contents, as_json: bool, prefix: str) -> int:
    if as_json:
        print_json(contents.to_json())
    elif contents.ok:
        held = ", ".join(f"{n} {name}" for name, n in contents.counts.items())
        say(f"{prefix}{contents.path}: ok ({held})")  # paths are data: shown terminal-safe, any bytes
    else:
        for problem in contents.problems:
            say(message_line(f"{contents.path}: {problem}"))
        say(f"{contents.path}: damaged; restore it from a backup (piqa-tui workspace backup makes one)")
    return OK if contents.ok else DATA_PROBLEMS


def merge(args: argparse.Namespace) -> int:
    """Merge the other copy's log into the dataset's workspace, then derive the state once and say what came and
    what is in conflict."""
    dataset = read_source(args.path)  # its hash is what the binding is checked against; nothing is parsed
    ws_path = Path(args.workspace) if args.workspace else default_location(dataset.path)
    check_workspace_path(dataset.path, ws_path, dataset.identity)  # --workspace data.tsv: never SQLite pages in it
    target = Workspace(ws_path)
    for notice in target.take_notices():
        warn(notice)
    try:
        if target.binding() is None:  # a new workspace: bound to this dataset file, as opening it binds it
            target.bind(dataset.path, dataset.size, dataset.sha256)
        report = merge_workspace(target, Path(args.other), force=args.force, dataset_sha256=dataset.sha256)
    finally:
        target.close()
    del dataset
    conflicts = open_project(args, create=True).conflicts()  # the one replay, of the merged log
    if args.json:
        print_json({**report.to_json(), "conflicts": len(conflicts)})
    else:
        say(message_line(merge_line(report, len(conflicts), args.path), limit=4000))
    return OK


def merge_line(report: MergeReport, conflicts: int, dataset: str) -> str:
    """One line: new events by kind, how many were here already, settings, conflicts."""
    kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(report.new.items())) or "nothing new"
    parts = [f"merged {report.source}: {report.added} new events ({kinds}), {report.already} already here"]
    if report.meta_taken:
        parts.append("took " + ", ".join(report.meta_taken))
    if report.meta_differences:
        parts.append("settings differ (this workspace's kept): " + "; ".join(report.meta_differences))
    if conflicts:
        parts.append(
            f"{conflicts} conflict{'s' if conflicts != 1 else ''}: resolve them in the TUI (queue conflicts) "
            f"or list them with piqa-tui workspace conflicts {dataset}"
        )
    else:
        parts.append("no conflicts")
    return "; ".join(parts)


def list_conflicts(project: Project, as_json: bool) -> int:
    """One line per field in conflict (both values shown terminal-safe, who and when); exit 1 when any."""
    conflicts = project.conflicts()
    if as_json:
        print_json([asdict(c) for c in conflicts])
    else:
        for conflict in conflicts:
            say(conflict_line(conflict))
        if not conflicts:
            say(f"{project.workspace_path}: no conflicts")
    return DATA_PROBLEMS if conflicts else OK


def conflict_line(c: FieldConflict) -> str:
    """Item, field, the value in force and the concurrent one (who, when, and an adjudication's reason), and the
    value both were made on; data shown terminal-safe with its invisible characters named."""

    def shown(text: str) -> str:
        return f"“{shortened(show_invisible(text), 60)}”"

    def why(reason: str) -> str:  # an adjudication's reason, when it gave one
        return f" because {shown(reason)}" if reason else ""

    item, field, by, other_by = map(show_invisible, (c.item_id, c.field, c.current_by, c.other_by))
    return (
        f"{item} {field}: {shown(c.current)} by {by} at {c.current_time}{why(c.current_reason)} (in force) "
        f"| {shown(c.other)} by {other_by} at {c.other_time}{why(c.other_reason)} (both changed from {shown(c.base)})"
    )
