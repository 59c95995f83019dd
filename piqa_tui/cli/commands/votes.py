"""``piqa-tui votes import|export|policy PATH FILE``: votes and adjudications as long-format files, and the
decision policy."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from piqa_tui.cli.commands.dataset_args import (
    add_dataset_arguments,
    open_project,
    print_json,
    say,
    warn,
)
from piqa_tui.cli.exit_codes import DATA_PROBLEMS, OK
from piqa_tui.core.text.terminal_safe import invisible_twins, message_line, show_invisible, twins_line
from piqa_tui.core.votes.decisions import (
    parse_policy,
    policy_spec,
    project_policy,
    set_project_policy,
)
from piqa_tui.core.votes.exchange import export_votes
from piqa_tui.core.votes.files import import_votes


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "action", choices=["import", "export", "policy"], help="import/export a votes file, or show/set the policy"
    )
    add_dataset_arguments(parser)
    parser.add_argument(
        "file",
        nargs="?",
        metavar="FILE|POLICY",
        help="votes file (.tsv/.csv/.jsonl/.parquet; long or wide); for policy: majority:2/3 or unanimity:4",
    )
    parser.add_argument(
        "--current", action="store_true", help="export only each annotator's current vote (default: every vote event)"
    )
    parser.add_argument(
        "--force", action="store_true", help="export: replace FILE if it exists (never the dataset or its workspace)"
    )


def run(args: argparse.Namespace) -> int:
    project = open_project(args, create=args.action != "export")
    if args.action == "policy":
        if args.file:
            set_project_policy(project, parse_policy(args.file))
        spec = policy_spec(project_policy(project))
        print_json({"policy": spec}) if args.json else say(f"decision policy: {spec}")
        return OK
    if not args.file:
        print(f"piqa-tui votes {args.action}: error: give the votes FILE", file=sys.stderr)
        return 2
    if args.action == "export":
        if project.workspace is None:
            print(
                f"piqa-tui: error: {message_line(project.dataset.path)} has no workspace yet, so no votes to export",
                file=sys.stderr,
            )
            return 2
        project.check_outputs([Path(args.file)], replace=args.force)
        count = export_votes(project, args.file, current_only=args.current)
        if args.json:
            print_json({"written": args.file, "votes": count})
        else:
            say(f"wrote {count} votes and adjudications to {args.file}")
        return OK
    result = import_votes(project, args.file, refresh=False)  # the process ends here: no need to read them back
    if project.workspace is not None and (twins := invisible_twins(project.workspace.annotator_names())):
        warn(twins_line(twins))
    if args.json:
        print_json(
            {
                "read": result.read,
                "new": result.new,
                "shape": result.shape,
                "stamped": result.stamped,
                "adjudications": result.adjudications,
                "new_adjudications": result.new_adjudications,
                "bad": [{b.unit: b.line, "reason": b.reason} for b in result.bad],
            }
        )
        return DATA_PROBLEMS if result.bad else OK
    for bad in result.bad:  # an id or a name with a zero-width character in it is shown with it
        print(message_line(show_invisible(f"{args.file}: {bad}")), file=sys.stderr)
    if result.stamped:
        say(
            f"{args.file} has no time column: its votes count in file order, stamped with the import time {result.stamped}"
        )
    what, decided = "votes", ""
    if result.adjudications:
        what = "votes and adjudications"
        decided = f" ({result.new_adjudications} of {result.adjudications} adjudications new)"
    say(
        f"read {result.read} {what} ({result.shape} file): {result.new} new, "
        f"{result.read - result.new - len(result.bad)} already recorded, {len(result.bad)} rejected{decided}"
    )
    return DATA_PROBLEMS if result.bad else OK
