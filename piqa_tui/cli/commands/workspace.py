"""``piqa-tui workspace check PATH`` and ``piqa-tui workspace backup PATH OUT``: the workspace file as a whole.

``check`` runs SQLite's integrity check and says what the file holds (events,
votes, annotators, items, scores); exit 1 when it is damaged. ``backup`` writes
a consistent single-file copy with SQLite's online backup, safe to take while
annotators work; OUT is written atomically and replaced only with ``--force``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from piqa_tui.cli.commands.dataset_args import print_json, say
from piqa_tui.cli.exit_codes import DATA_PROBLEMS, OK
from piqa_tui.core.errors import PiqaError
from piqa_tui.core.text.terminal_safe import message_line
from piqa_tui.core.workspace.integrity import (
    Contents,
    backup_workspace,
    check_workspace,
)
from piqa_tui.core.workspace.outputs import check_outputs, workspace_protected_files


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["check", "backup"], help="check the file, or copy it while others work")
    parser.add_argument("path", metavar="PATH", help="the workspace file (DATASET.piqa.sqlite)")
    parser.add_argument("out", nargs="?", metavar="OUT", help="backup: the file to write the copy to")
    parser.add_argument("--force", action="store_true", help="backup: replace OUT if it exists")
    parser.add_argument("--json", action="store_true", help="machine-readable output on stdout")


def run(args: argparse.Namespace) -> int:
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
