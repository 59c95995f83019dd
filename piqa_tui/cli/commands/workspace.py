"""``piqa-tui workspace check|backup|merge|conflicts``: the workspace file as a whole.

``check PATH`` runs SQLite's integrity check and says what the file holds (events,
votes, annotators, items, scores); exit 1 when it is damaged. ``backup PATH OUT`` writes
a consistent single-file copy with SQLite's online backup, safe to take while
annotators work; OUT is written atomically and replaced only with ``--force``.
``merge DATASET OTHER`` brings another copy's work into the dataset's workspace
(see ``core.workspace.merge``); ``conflicts DATASET`` lists the fields two people
changed concurrently, exit 1 when there are any.
"""

from __future__ import annotations

import argparse
from dataclasses import asdict
from pathlib import Path

from piqa_tui.cli.commands.dataset_args import open_project, print_json, say
from piqa_tui.cli.exit_codes import DATA_PROBLEMS, OK
from piqa_tui.core.errors import PiqaError
from piqa_tui.core.text.terminal_safe import message_line, shortened, show_invisible
from piqa_tui.core.workspace.integrity import (
    Contents,
    backup_workspace,
    check_workspace,
)
from piqa_tui.core.workspace.merge import MergeReport, merge_workspace
from piqa_tui.core.workspace.outputs import check_outputs, workspace_protected_files
from piqa_tui.core.workspace.project import FieldConflict, Project


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "action",
        choices=["check", "backup", "merge", "conflicts"],
        help="check the file, copy it while others work, merge another copy's work in, or list conflicts",
    )
    parser.add_argument(
        "path", metavar="PATH", help="check/backup: the workspace file (DATASET.piqa.sqlite); merge/conflicts: DATASET"
    )
    parser.add_argument(
        "out", nargs="?", metavar="OUT", help="backup: the file to write the copy to; merge: the other copy's workspace"
    )
    parser.add_argument(
        "--workspace", metavar="FILE", help="merge/conflicts: the dataset's workspace (default: DATASET.piqa.sqlite)"
    )
    parser.add_argument("--annotator", metavar="NAME", help="merge/conflicts: who is acting")
    parser.add_argument(
        "--force",
        action="store_true",
        help="backup: replace OUT if it exists; merge: merge a copy made on a different dataset file",
    )
    parser.add_argument("--json", action="store_true", help="machine-readable output on stdout")


def run(args: argparse.Namespace) -> int:
    if args.action == "merge":
        return merge(args)
    if args.action == "conflicts":
        if args.out:
            raise PiqaError("workspace conflicts takes only DATASET: piqa-tui workspace conflicts DATASET")
        return list_conflicts(open_project(args), args.json)
    if args.workspace:
        raise PiqaError(f"workspace {args.action} takes the workspace file as PATH, not --workspace")
    path = Path(args.path)
    if args.action == "check":
        if args.out:
            raise PiqaError("workspace check takes only PATH; did you mean: piqa-tui workspace backup PATH OUT")
        return report(check_workspace(path), args.json, "")
    if not args.out:
        raise PiqaError("workspace backup needs OUT: piqa-tui workspace backup PATH OUT")
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
    """Merge the other copy into the dataset's workspace, then say what came and what is in conflict."""
    if not args.out:
        raise PiqaError("workspace merge needs the other copy: piqa-tui workspace merge DATASET OTHER.piqa.sqlite")
    project = open_project(args, create=True)
    assert project.workspace is not None  # opened to write
    report = merge_workspace(project.workspace, Path(args.out), force=args.force)
    project.refresh()
    conflicts = project.conflicts()
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
